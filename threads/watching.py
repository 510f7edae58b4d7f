"""Open thread pages, counted in batches per process (docs/unread.md).

Each thread page's socket counts itself on its person's ``ThreadRead`` row while it is
open (``threads.unread.watch_changes``). Channels runs database calls one at a time on one
thread, so a thousand sockets opening or closing together (a deploy, a network blip)
would queue a thousand calls ahead of the next handshakes. Here the opens, refreshes and
closes that arrive while a write is under way are summed per person and thread and
written together in one call.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from channels.db import database_sync_to_async

from arbe_lib.per_loop import per_loop
from threads.unread import watch_changes

logger = logging.getLogger(__name__)


@dataclass
class Change:
    """What one person's pages of one thread did since the last write."""

    opened: int = 0
    closed: int = 0
    refreshed: bool = False
    waiting: list[asyncio.Future] = field(default_factory=list)


class Watching:
    """One per event loop: the changes waiting, and the one task writing them."""

    def __init__(self) -> None:
        self.pending: dict[tuple[int, str], Change] = {}
        self.writing: asyncio.Task | None = None

    def note(self, user_id: int, thread_id: str) -> Change:
        change = self.pending.setdefault((user_id, thread_id), Change())
        if self.writing is None or self.writing.done():
            self.writing = asyncio.get_running_loop().create_task(self.write())
        return change

    async def write(self) -> None:
        while self.pending:
            batch, self.pending = self.pending, {}
            changes = {key: (c.opened, c.closed, c.refreshed) for key, c in batch.items()}
            try:
                await database_sync_to_async(watch_changes)(changes)
            except Exception as exc:
                # The read marks are a cache: the next page load or refresh sets them.
                logger.exception("could not count %d open thread pages", len(changes))
                failure: BaseException | None = exc
            else:
                failure = None
            for change in batch.values():
                for waiter in change.waiting:
                    if waiter.done():
                        continue
                    if failure is None:
                        waiter.set_result(None)
                    else:
                        waiter.set_exception(failure)


_watching = per_loop(Watching)


async def opened(user_id: int, thread_id: str) -> None:
    """A page's socket opened: it reads the thread now and counts as watching.

    Returns once written, so the page's first frame follows its read mark."""
    change = _watching().note(user_id, thread_id)
    change.opened += 1
    done = asyncio.get_running_loop().create_future()
    change.waiting.append(done)
    await done


def refreshed(user_id: int, thread_id: str) -> None:
    """A page is still open: keep it counted as watching (not awaited; beside the frames)."""
    _watching().note(user_id, thread_id).refreshed = True


def closed(user_id: int, thread_id: str) -> None:
    """A page's socket closed (not awaited: nothing waits for a close)."""
    _watching().note(user_id, thread_id).closed += 1
