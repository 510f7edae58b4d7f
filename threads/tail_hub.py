"""One upstream tail per open thread stream in this process, fanned out to its viewers.

A ``ThreadConsumer`` subscribes to its thread; the first subscriber starts a
``ThreadTail`` and the last one to leave stops it, so a thread watched by a
thousand sockets costs one long-poll upstream. The tail folds the current view
(seeded like ``load_view``: the director's tail, then everything past its
offset) and renders each batch once — entry fragments, the panel, the offset the
batch brings a page to — for every viewer alike.

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
import weakref
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async

from threads.current import bot_ids, entries_for_view
from threads.fragments import Names, entry_fragments, house_names, now_panel, offset_marker
from threads.log import async_log_reader
from threads.models import Thread
from threads.now import NowFold
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
        self.fold: NowFold | None = None
        self.task = asyncio.create_task(self.run(), name=f"tail {thread_id}")

    async def seed(self) -> str:
        thread = await Thread.objects.select_related("house").aget(pk=self.thread_id)
        entries, offset = await sync_to_async(entries_for_view)(thread)
        bots = await sync_to_async(bot_ids)(thread.house_id)
        self.house_id = thread.house_id
        self.names = await sync_to_async(house_names)(thread.house_id)
        self.fold = NowFold(bots=bots, run=thread.parent_id is not None)
        for entry in entries:
            self.fold.apply(entry)
        self.panel = self.render_panel()
        self.offset = offset
        return offset

    def render_panel(self) -> str:
        return now_panel(self.fold.view(now_ms()), self.names, self.thread_id)

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
                    await self.publish(readable(result.messages or (), name), result.next_offset)
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
        for entry in entries:
            self.fold.apply(entry)
        parts = tuple(entry_fragments(entries, self.names, self.thread_id))
        self.panel, self.offset = self.render_panel(), offset
        frame = "".join(html for _, html in parts) + self.panel + offset_marker(offset)
        batch = Batch(tuple(e.id for e in entries), parts, self.panel, offset, frame)
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


_hubs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def hub() -> TailHub:
    """The hub of the running event loop (Daphne has one; each async test has its own)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        found = _hubs[loop] = TailHub()
    return found
