"""Who may write what into a thread's stream — enforced here and only here.

The table is documented in ``docs/permissions.md``:

- a person writes ``chat`` as themselves;
- a bot writes ``chat`` as itself, ``pi.*``, and dispatch or run signals about
  the reply or run its token was minted for;
- server code writes any valid entry.

``authorId`` is always the writer's own principal, whatever a client sent.
"""

from dataclasses import dataclass
from enum import StrEnum

from threads.entries import (
    Chat,
    DispatchFailed,
    DispatchFinished,
    DispatchPhase,
    DispatchStarted,
    DispatchSteered,
    Entry,
    EnvironmentPrepared,
    FilesChanged,
    PiAssistant,
    PiCompaction,
    PiToolResult,
    ThreadPiFailed,
    ThreadRunState,
)


class WriterKind(StrEnum):
    PERSON = "person"
    BOT = "bot"
    SERVICE = "service"


@dataclass(frozen=True)
class Writer:
    kind: WriterKind
    agent_id: str | None
    kinds: frozenset[str] = frozenset()  # what a bot's token allows (narrows the table)
    dispatch: str | None = None
    run: str | None = None


class WriteRefused(Exception):
    """This writer may not append this entry; the message says why."""


PI_PAYLOADS = (PiAssistant, PiToolResult, PiCompaction)
DISPATCH_SIGNALS = (
    DispatchStarted,
    DispatchPhase,
    DispatchSteered,
    DispatchFinished,
    DispatchFailed,
    ThreadPiFailed,
)
RUN_SIGNALS = (ThreadRunState, FilesChanged)
BOT_KINDS = frozenset(
    ["chat", "pi.assistant", "pi.tool_result", "pi.compaction"]
    + [cls.__struct_config__.tag for cls in DISPATCH_SIGNALS + RUN_SIGNALS]
    + ["signal.environment.prepared"]
)


def check_write(writer: Writer, entry: Entry) -> None:
    """Raise ``WriteRefused`` unless ``writer`` may append ``entry``."""
    if writer.kind == WriterKind.SERVICE:
        return
    if entry.authorId != writer.agent_id:
        raise WriteRefused("authorId must be the writer's own principal")
    payload = entry.payload
    if isinstance(payload, Chat) and payload.sentAt is not None:
        # A message's original time is an import's to carry (archives.slack), not anyone's
        # to choose: a post that set it would show whatever time its writer liked.
        raise WriteRefused("sentAt is set only by imports")
    if writer.kind == WriterKind.PERSON:
        if not isinstance(payload, Chat):
            raise WriteRefused(f"people write chat, not {payload.type}")
        return
    if payload.type not in BOT_KINDS or payload.type not in writer.kinds:
        raise WriteRefused(f"this token may not write {payload.type}")
    if isinstance(payload, Chat | EnvironmentPrepared):
        # A chat's attachment refs are the server's, from the writer's own uploads
        # (attachments.service.claim, called by whoever appends: posting, the sandbox proxy).
        if isinstance(payload, EnvironmentPrepared) and payload.agentId != writer.agent_id:
            raise WriteRefused("a bot prepares only its own environment")
        return
    if isinstance(payload, PI_PAYLOADS + DISPATCH_SIGNALS):
        dispatch = getattr(payload, "dispatchId", None)
        if isinstance(payload, ThreadPiFailed) and payload.runId is not None:
            _own_run(writer, payload.runId)
            return
        if writer.dispatch is None or dispatch != writer.dispatch:
            raise WriteRefused("a bot writes only about the reply its token was minted for")
        if isinstance(payload, DispatchStarted) and payload.agentId != writer.agent_id:
            raise WriteRefused("a bot starts only its own reply")
        return
    if isinstance(payload, RUN_SIGNALS):
        _own_run(writer, payload.runId)
        return
    raise WriteRefused(f"this token may not write {payload.type}")  # pragma: no cover


def _own_run(writer: Writer, run_id: str | None) -> None:
    if writer.run is None or run_id != writer.run:
        raise WriteRefused("a bot writes only about the run its token was minted for")
