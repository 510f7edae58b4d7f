"""One upstream tail per open thread stream in this process, fanned out to its viewers.

A ``ThreadConsumer`` subscribes to its thread; the first subscriber starts a
``ThreadTail`` and the last one to leave stops it, so a thread watched by a
thousand sockets costs one long-poll upstream. The tail folds the current view
(seeded like ``load_view``: the director's tail, then everything past its
offset) and renders each batch once — entry fragments, the panel, the offset the
batch brings a page to — for every viewer alike. The fold and the rendering run
on a render thread (``threads.render_pool``), never on the event loop; the tail
awaits each batch before it reads the next, so batches go out in offset order.

Delivery goes out in chunks of :data:`FANOUT_CHUNK` viewers with a turn of the
event loop between them: the server writes a socket's frame on a later turn, so
without the breaks the first viewer would wait for the thousandth one's frame to
be queued.

Delivery to a viewer is bounded: a viewer whose queue overflows gets ``None``
and is closed with 1013, and the page resumes from the last offset it applied.
Correctness never rests on the hub: the page's offset and the log do.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async

from arbe_site.per_loop import per_loop
from threads.current import bot_ids, entries_for_view
from threads.fragments import Names, entry_fragments, house_names, now_panel, offset_marker
from threads.log import async_log_reader
from threads.models import Thread
from threads.now import NowFold
from threads.render_pool import off_loop
from threads.status_sync import now_ms
from threads.unreadable import readable

logger = logging.getLogger(__name__)
QUEUE_SIZE = 256
RETRY_S = 1.0
FANOUT_CHUNK = 32


@dataclass(frozen=True)
class Batch:
    """What one upstream read brings: per-entry fragments, the panel, and the whole frame."""

    ids: tuple[str, ...]
    parts: tuple[tuple[str, str], ...]  # (entry id, fragment) for entries that show
    panel: str
    offset: str
    marker: str  # the offset marker (``fragments.offset_marker``)
    frame: str  # parts + panel + offset marker, shared by every viewer past catch-up


@dataclass(eq=False)
class Subscription:
    tail: ThreadTail
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))

    def deliver(self, batch: Batch) -> None:
        try:
            self.queue.put_nowait(batch)
        except asyncio.QueueFull:
            # Too far behind: drop what is queued and tell the consumer to reconnect.
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)


class ThreadTail:
    """The one upstream tail of a thread stream, its fold and its latest panel."""

    def __init__(self, hub: TailHub, thread_id: str):
        self.hub, self.thread_id = hub, thread_id
        self.subscribers: set[Subscription] = set()
        self.ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self.names = Names()
        self.panel = ""
        self.offset = ""
        self.marker = ""
        self.fold: NowFold | None = None
        self.task = asyncio.create_task(self.run(), name=f"tail {thread_id}")

    async def seed(self) -> str:
        thread = await Thread.objects.select_related("house").aget(pk=self.thread_id)
        entries, offset = await sync_to_async(entries_for_view)(thread)
        bots = await sync_to_async(bot_ids)(thread.house_id)
        self.house_id = thread.house_id
        self.names = await sync_to_async(house_names)(thread.house_id)
        self.fold = NowFold(bots=bots, run=thread.parent_id is not None)
        self.panel, self.marker = await off_loop(self.fold_in, entries, offset)
        self.offset = offset
        return offset

    def fold_in(self, entries, offset: str) -> tuple[str, str]:
        """On a render thread: fold ``entries`` in; the panel and the offset marker after them.

        Only the tail's own task calls this (from ``seed``, then once per batch, each awaited
        before the next), so the fold is never touched by two threads at once.
        """
        for entry in entries:
            self.fold.apply(entry)
        panel = now_panel(self.fold.view(now_ms()), self.names, self.thread_id)
        return panel, offset_marker(offset)

    def render_batch(self, entries, offset: str) -> Batch:
        """On a render thread: a batch's fragments, the panel after it, the whole frame."""
        parts = tuple(entry_fragments(entries, self.names, self.thread_id))
        panel, marker = self.fold_in(entries, offset)
        frame = "".join(html for _, html in parts) + panel + marker
        return Batch(tuple(e.id for e in entries), parts, panel, offset, marker, frame)

    async def run(self) -> None:
        try:
            offset = await self.seed()
        except Exception as exc:
            self.ready.set_exception(exc)
            return
        self.ready.set_result(offset)
        name = f"arbe-thread-{self.thread_id}"
        failures = 0
        while True:
            try:
                async for result in self.hub.reader.tail(name, self.offset):
                    failures = 0
                    entries = await off_loop(readable, result.messages or (), name)
                    await self.publish(entries, result.next_offset)
                return  # the stream was closed: nothing more will come
            except asyncio.CancelledError:
                raise
            except Exception:
                # Once with the traceback, then a line a minute while it keeps failing.
                if failures % 60 == 0:
                    logger.warning(
                        "tail of thread %s failed; retrying every %ss",
                        self.thread_id,
                        RETRY_S,
                        exc_info=failures == 0,
                    )
                failures += 1
                await asyncio.sleep(RETRY_S)

    async def publish(self, entries, offset: str) -> None:
        if any(e.authorId and e.authorId not in self.names for e in entries):
            self.names = await sync_to_async(house_names)(
                self.house_id, [e.authorId for e in entries]
            )
        batch = await off_loop(self.render_batch, entries, offset)
        self.panel, self.offset, self.marker = batch.panel, offset, batch.marker
        subscribers = list(self.subscribers)
        for start in range(0, len(subscribers), FANOUT_CHUNK):
            if start:
                await asyncio.sleep(0)  # let the chunk before this one reach its sockets
            for subscription in subscribers[start : start + FANOUT_CHUNK]:
                subscription.deliver(batch)


class TailHub:
    """This process's tails, one per thread with viewers (per event loop)."""

    def __init__(self):
        self.tails: dict[str, ThreadTail] = {}
        self.reader = async_log_reader()

    @property
    def tail_count(self) -> int:
        return len(self.tails)

    def viewers(self, thread_id: str) -> int:
        tail = self.tails.get(thread_id)
        return len(tail.subscribers) if tail else 0

    async def subscribe(self, thread_id: str) -> Subscription:
        """Follow ``thread_id``; returns once the tail knows where it reads from."""
        tail = self.tails.get(thread_id)
        if tail is None:
            tail = self.tails[thread_id] = ThreadTail(self, thread_id)
        subscription = Subscription(tail)
        tail.subscribers.add(subscription)
        try:
            await asyncio.shield(tail.ready)
        except BaseException:
            self.unsubscribe(subscription)
            raise
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        tail = subscription.tail
        tail.subscribers.discard(subscription)
        if not tail.subscribers and self.tails.get(tail.thread_id) is tail:
            del self.tails[tail.thread_id]
            tail.task.cancel()


_hubs = per_loop(TailHub)


def hub() -> TailHub:
    """The hub of the running event loop (Daphne has one; each async test has its own)."""
    return _hubs()
