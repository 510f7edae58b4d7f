"""Warm bots: a Pi process kept between replies of one bot in one thread.

Starting Pi (Node, its modules, the session file, the sandbox) is most of what a reply
costs before the model is asked. A process that answered well is kept here, idle in
``pi --mode rpc``, for the next reply of the same bot in the same thread, under the same
lease epoch and the same configuration (``PiConfig``, and the bytes of the bot's agent
dir files, which Pi read once at its start). The engine that holds the thread's lease
keeps holding it while one of its processes is warm (``dispatch.holding``); whatever ends
that holding (idle, a lost lease, a shutdown, eviction) closes its processes, so a warm Pi
never outlives the lease it was fenced by. A process is kept only if it ended its reply
cleanly, at most ``DISPATCH_WARM_REPLIES`` times, and while it uses at most
``DISPATCH_WARM_RSS_MB``; an engine keeps at most ``DISPATCH_WARM_MAX`` (the least
recently used goes first). One taken from here that turns out dead or refuses its
prompt is closed and replaced by a cold one within the same attempt (``dispatch.replies``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from dispatch.pi.process import PiConfig, PiSession
from dispatch.pi.sandbox import AGENT_FILES
from ops import metrics

logger = logging.getLogger(__name__)


@dataclass
class Warm:
    session: PiSession
    fingerprint: tuple
    epoch: int
    replies: int
    since: float  # monotonic time it was last handed back


def fingerprint(config: PiConfig) -> tuple:
    """What a warm Pi was started with: a reply needs all of it to be the same."""
    files = hashlib.sha256()
    for name in AGENT_FILES:
        with contextlib.suppress(OSError):
            files.update(name.encode() + b"\0" + (config.agent_dir / name).read_bytes())
    return (config, files.hexdigest())


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants (bwrap, node, a tool still running)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        proc = Path("/proc") / str(current)
        with contextlib.suppress(OSError, ValueError):
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        for task in (proc / "task").glob("*/children") if proc.exists() else ():
            with contextlib.suppress(OSError, ValueError):
                todo += [int(child) for child in task.read_text().split()]
    return total


def alive(session: PiSession) -> bool:
    return session.returncode is None and not session._reader.done()


class WarmPool:
    """One engine's warm Pi processes, by (thread, bot). Used on the engine's loop only."""

    def __init__(self) -> None:
        self.kept: dict[tuple[str, str], Warm] = {}
        self.closing: set[asyncio.Task] = set()
        metrics.warm_pool(self)

    @staticmethod
    def enabled() -> bool:
        return settings.DISPATCH_WARM_MAX > 0

    def holds(self, thread_id: str) -> bool:
        return any(key[0] == thread_id for key in self.kept)

    def take(self, thread_id: str, bot_id: str, config: PiConfig, epoch: int):
        """The warm Pi for this reply, with what it was used for so far; None: start one."""
        warm = self.kept.pop((thread_id, bot_id), None)
        if warm is None:
            return None
        if warm.epoch != epoch or warm.fingerprint != fingerprint(config):
            self._close(warm)  # another lease, a changed bot: its state is not this reply's
            return None
        if not alive(warm.session) or not warm.session.drain_idle():
            self._close(warm)
            return None
        metrics.pi_reused()
        return warm

    def keep(self, thread_id: str, bot_id: str, warm: Warm) -> bool:
        """Hand a Pi back after a clean reply; False if it is not kept (then closed)."""
        warm.replies += 1
        warm.since = time.monotonic()
        limit = settings.DISPATCH_WARM_RSS_MB * 2**20
        if (
            not self.enabled()
            or warm.replies >= settings.DISPATCH_WARM_REPLIES
            or not alive(warm.session)
            or rss_bytes(warm.session.pid) > limit
        ):
            self._close(warm)
            return False
        old = self.kept.pop((thread_id, bot_id), None)
        if old is not None:
            self._close(old)
        while len(self.kept) >= settings.DISPATCH_WARM_MAX:
            oldest = min(self.kept, key=lambda key: self.kept[key].since)
            self._close(self.kept.pop(oldest))
        self.kept[(thread_id, bot_id)] = warm
        return True

    def drop_thread(self, thread_id: str) -> None:
        """Close the thread's warm processes (its holding ends)."""
        for key in [key for key in self.kept if key[0] == thread_id]:
            self._close(self.kept.pop(key))

    def drop_all(self) -> None:
        for key in list(self.kept):
            self._close(self.kept.pop(key))

    async def settle(self) -> None:
        """Wait for the closes under way (tests, shutdown)."""
        while self.closing:
            await asyncio.gather(*list(self.closing), return_exceptions=True)

    def _close(self, warm: Warm) -> None:
        task = asyncio.get_running_loop().create_task(warm.session.close())
        self.closing.add(task)
        task.add_done_callback(self.closing.discard)
