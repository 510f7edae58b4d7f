"""An asyncio driver for one long-lived ``pi --mode rpc`` process.

Commands go to Pi's stdin as JSON lines; replies and agent events come back on stdout, one
JSON object per line. Traps this module handles (see the Pi reference notes):

- Lines are split on ``\\n`` only and may be long (``agent_end`` repeats the whole run), so
  the reader's limit is 16 MiB, and a longer line is skipped rather than wedging the reader.
- stdout is drained to EOF whatever the consumer does: a closed pipe kills Pi with EPIPE.
- Pi exits 0 when the model call fails; failure is in the messages (``decode``), not here.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import logging
import os
import signal
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dispatch.pi import sandbox
from dispatch.pi.events import PiEvent, ProtocolError, Response, decode_event, placeholder_event
from dispatch.pi.layout import private_dirs, private_file
from ops import metrics
from ops.context import pi_request_script

logger = logging.getLogger(__name__)

LINE_LIMIT = 16 * 2**20
STDERR_KEPT = 64 * 1024
START_TIMEOUT = 60.0
PI_UMASK = 0o077
REPLY_TIMEOUT = 30.0
SHUTDOWN_GRACE = 2.0
_EOF = object()


@dataclass(frozen=True)
class PiConfig:
    provider: str  # models.json provider key, e.g. "arbe-demo" or "fakellm"
    model: str  # model id
    instructions: str  # appended to Pi's system prompt
    session_file: Path  # absolute .jsonl path, one per thread (and bot)
    workspace: Path  # the bot's working directory for this thread (created if missing)
    agent_dir: Path  # PI_CODING_AGENT_DIR: the bot's own models.json, settings.json (read-only)
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    tools: tuple[str, ...] | None = None  # --tools list; None = Pi's defaults

    @property
    def home(self) -> Path:
        """The bot's HOME, beside its agent dir (``layout.py``), so nothing lands in a real
        home and the agent dir itself can stay read-only."""
        return self.agent_dir.parent / "home"

    @property
    def request_file(self) -> Path:
        """Sourced by Pi's bash before each command (``BASH_ENV``): the request id of the
        reply at work (``ops.context.pi_request_script``), rewritten at each prompt."""
        return self.session_file.with_suffix(".request")

    def make_dirs(self) -> None:
        """What Pi writes to must exist before the sandbox binds it; all of it private."""
        private_dirs(self.workspace, self.session_file.parent, self.home)
        private_file(self.session_file)

    def argv(self) -> list[str]:
        """Pi's command line, hermetic: no extensions, skills, templates, themes or context
        files (AGENTS.md found by walking up from the workspace)."""
        argv = [
            *sandbox.pi_argv(),
            "--mode",
            "rpc",
            "--no-extensions",
            "--no-skills",
            "--no-prompt-templates",
            "--no-themes",
            "--no-context-files",
            "--session",
            str(self.session_file),
            "--provider",
            self.provider,
            "--model",
            self.model,
        ]
        if self.instructions:
            argv += ["--append-system-prompt", self.instructions]
        if self.tools is not None:
            argv += ["--tools", ",".join(self.tools)] if self.tools else ["--no-tools"]
        return argv


def sandbox_argv(config: PiConfig) -> list[str]:
    """bwrap's part of the command line for ``config``: its workspace, session dir and home
    writable, its agent dir's files read-only, nothing else of ours."""
    writable = [config.workspace, config.session_file.parent, config.home]
    return sandbox.bubblewrap_argv(
        workspace=config.workspace, writable=writable, config_dir=config.agent_dir
    )


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(text)


def _private_umask() -> None:
    os.umask(PI_UMASK)


class PiError(Exception):
    """Pi could not be started, broke the protocol, refused a command or died."""


class PiSession:
    """One running Pi. ``events()`` yields everything Pi writes, in order, until it exits.

    Use ``start()``, then ``prompt()`` and read ``events()`` up to ``AgentEnd``; ``close()``
    always, or use the session as an async context manager.
    """

    def __init__(self, config: PiConfig, proc: asyncio.subprocess.Process, isolation: str):
        self.config = config
        self.pid: int = proc.pid
        self.isolation = isolation  # "bubblewrap" or "none"
        self.state: dict[str, Any] = {}  # get_state's data: sessionId, sessionFile, model…
        self._proc = proc
        self._events: asyncio.Queue[Any] = asyncio.Queue()
        self._pending: dict[str, asyncio.Future[Response]] = {}
        self._ids = itertools.count(1)
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._observers: list[Callable[[PiEvent], None]] = []
        self._reader = asyncio.create_task(self._read_stdout(), name=f"pi-{proc.pid}-stdout")
        self._stderr_reader = asyncio.create_task(self._read_stderr(), name=f"pi-{proc.pid}-err")

    @classmethod
    async def start(cls, config: PiConfig) -> PiSession:
        """Spawn Pi and wait until it answers ``get_state`` (so a bad model or flag fails here)."""
        # Pi and bwrap run elsewhere than here: every path they get must be absolute.
        config = dataclasses.replace(
            config,
            session_file=config.session_file.absolute(),
            workspace=config.workspace.absolute(),
            agent_dir=config.agent_dir.absolute(),
        )
        try:
            config.make_dirs()
            argv = config.argv()
            isolation = sandbox.NO_ISOLATION
            if await asyncio.to_thread(sandbox.bubblewrap_works):
                argv = sandbox_argv(config) + argv
                isolation = sandbox.BUBBLEWRAP
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=config.workspace,
                env={
                    **sandbox.scrubbed_env(config.home, config.agent_dir, config.env),
                    "BASH_ENV": str(config.request_file),
                },
                limit=LINE_LIMIT,
                start_new_session=True,  # its own group, so close() reaches the tools it ran
                # Transcripts and workspace files: the server user's only. (uvloop takes no
                # ``umask=``; set in the child before exec, it is inherited through bwrap.)
                preexec_fn=_private_umask,
            )
        except OSError as exc:  # no node, no Pi, an unwritable workspace
            raise PiError(f"cannot start Pi: {exc}") from exc
        session = cls(config, proc, isolation)
        metrics.pi_started(session)
        try:
            reply = await session._command({"type": "get_state"}, timeout=START_TIMEOUT)
        except BaseException:
            await session.close()
            raise
        session.state = reply.data if isinstance(reply.data, dict) else {}
        return session

    async def __aenter__(self) -> PiSession:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    # Commands ---------------------------------------------------------------------------

    async def prompt(self, text: str) -> None:
        """Send a prompt; returns once Pi accepted it (its events follow on ``events()``)."""
        # This reply's request id for the commands it runs, warm Pi or not (ops.context).
        await asyncio.to_thread(_write_private, self.config.request_file, pi_request_script())
        await self._command({"type": "prompt", "message": text})

    async def steer(self, text: str) -> None:
        """Queue ``text`` for the running prompt: Pi delivers it after the current turn's tool
        calls, before the next model call."""
        await self._command({"type": "steer", "message": text})

    async def abort(self) -> None:
        await self._command({"type": "abort"})

    async def _command(self, command: dict[str, Any], timeout: float | None = None) -> Response:
        timeout = REPLY_TIMEOUT if timeout is None else timeout
        command_id = f"c{next(self._ids)}"
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._pending[command_id] = future
        try:
            await self._send({**command, "id": command_id})
            try:
                reply = await asyncio.wait_for(future, timeout)
            except TimeoutError:
                raise PiError(f"Pi did not answer {command['type']} within {timeout:g} s") from None
        finally:
            self._pending.pop(command_id, None)
        if not reply.success:
            raise PiError(f"Pi refused {command['type']}: {reply.error}")
        return reply

    async def _send(self, command: dict[str, Any]) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        if stdin.is_closing() or self._reader.done():  # done: stdout is closed, no reply comes
            raise PiError(f"Pi has exited{self._stderr_note()}")
        # ensure_ascii keeps U+2028/U+2029 escaped, whatever reader Pi uses.
        stdin.write(json.dumps(command).encode() + b"\n")
        try:
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise PiError(f"Pi has exited{self._stderr_note()}") from exc

    # Output -----------------------------------------------------------------------------

    def observe(self, callback: Callable[[PiEvent], None]) -> None:
        """Call ``callback`` with each event as it is read, before any consumer gets it (its
        timing is Pi's, not the consumer's). It must be quick and must not raise."""
        self._observers.append(callback)

    def drain_idle(self) -> bool:
        """Before a warm session's next prompt: drop what Pi wrote while idle, and the
        observers of the last reply. False if Pi's stdout has ended (it exited)."""
        self._observers.clear()
        while not self._events.empty():
            if self._events.get_nowait() is _EOF:
                self._events.put_nowait(_EOF)
                return False
        return True

    async def events(self) -> AsyncIterator[PiEvent]:
        """Pi's events and command replies, in order; ends when Pi's stdout closes.

        One consumer per session: events are handed out once.
        """
        while True:
            item = await self._events.get()
            if item is _EOF:
                self._events.put_nowait(_EOF)  # a later call ends at once too
                return
            yield item

    async def _read_stdout(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        try:
            while True:
                try:
                    line = await stdout.readuntil(b"\n")
                except asyncio.IncompleteReadError as exc:
                    line = exc.partial  # EOF; a last line without its newline still counts
                    if line:
                        self._dispatch(line)
                    return
                except asyncio.LimitOverrunError as exc:
                    self._dispatch_placeholder(await self._skip_line(stdout, exc.consumed))
                    continue
                self._dispatch(line[:-1])
        finally:
            self._events.put_nowait(_EOF)
            self._fail_pending()

    async def _skip_line(self, stdout: asyncio.StreamReader, available: int) -> bytes:
        """Discard the rest of an over-long line; return its first bytes."""
        head = await stdout.readexactly(available)
        size = len(head)
        while True:
            try:
                size += len(await stdout.readuntil(b"\n"))
                break
            except asyncio.LimitOverrunError as exc:
                size += len(await stdout.readexactly(exc.consumed))
            except asyncio.IncompleteReadError as exc:
                size += len(exc.partial)
                break
        logger.warning("Pi %s wrote a %d-byte line; dropped its content", self.pid, size)
        return head[:256]

    def _dispatch(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            event = decode_event(line)
        except ProtocolError as exc:
            logger.warning(
                "Pi %s wrote a line that is not an event (%s): %.200r", self.pid, exc, line
            )
            return
        if isinstance(event, Response) and event.id in self._pending:
            future = self._pending[event.id]
            if not future.done():
                future.set_result(event)
        self._put(event)

    def _dispatch_placeholder(self, head: bytes) -> None:
        self._put(placeholder_event(head))

    def _put(self, event: PiEvent) -> None:
        for callback in self._observers:
            callback(event)
        self._events.put_nowait(event)

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(PiError(f"Pi exited before answering{self._stderr_note()}"))

    async def _read_stderr(self) -> None:
        stderr = self._proc.stderr
        assert stderr is not None
        while chunk := await stderr.read(8192):
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > STDERR_KEPT and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())

    @property
    def stderr(self) -> str:
        """The last 64 KiB or so Pi wrote on stderr."""
        return b"".join(self._stderr).decode(errors="replace")[-STDERR_KEPT:]

    def _stderr_note(self) -> str:
        tail = self.stderr.strip()[-2000:]
        return f": {tail}" if tail else ""

    # Lifecycle --------------------------------------------------------------------------

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    async def close(self, timeout: float = 5.0) -> int:
        """Stop Pi and return its exit code (negative when a signal ended it).

        Closing stdin asks Pi to shut down cleanly (exit 0); if it is still running a moment
        later its process group gets SIGTERM, then SIGKILL after ``timeout``. Safe to call
        more than once.
        """
        proc = self._proc
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        if not await self._exited(min(SHUTDOWN_GRACE, timeout)):
            self._signal(signal.SIGTERM)
            if not await self._exited(timeout):
                self._signal(signal.SIGKILL)
                await proc.wait()
        readers = asyncio.gather(self._reader, self._stderr_reader, return_exceptions=True)
        try:
            await asyncio.wait_for(asyncio.shield(readers), 1.0)
        except TimeoutError:
            # A tool's orphan still holds Pi's pipes: it is in Pi's process group.
            self._signal(signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(readers, timeout)
        return proc.returncode  # type: ignore[return-value]

    async def _exited(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self._proc.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
