"""One upstream tail per open thread stream in this process, fanned out to its viewers.

A ``ThreadConsumer`` subscribes to its thread; the first subscriber starts a
``ThreadTail`` and the last one to leave stops it, so a thread watched by a
thousand sockets costs one long-poll upstream. The tail folds the current view
(seeded like ``load_view``: the director's tail, then everything past its
offset; its panel is ``threads.now.current_view``, as ``/now``'s) and renders each
batch once — entry fragments, the panel, the offset the batch brings a page to — for
every viewer alike. The fold and the rendering run
on a render thread (``threads.render_pool``), never on the event loop; the tail
awaits each batch before it reads the next, so batches go out in offset order.
The panel is also derived again when time alone changes it (a reply going quiet past the
live-evidence cap, a delegated run's child record), without waiting for an entry.

A viewer past its catch-up with nothing queued gets the batch's frame, built once,
written straight to its socket (``threads.socket_frames``): no queue, no task, no
framework per socket, all in one turn of the loop (the kernel has each frame when its
``send`` returns). Frames that go through the queues instead go in chunks of
:data:`FANOUT_CHUNK` viewers with a turn of the event loop between them: the server
writes such a frame on a later turn, so without the breaks the first of them would
wait for the thousandth one's frame to be queued.

Delivery to a viewer is bounded: a viewer whose queue overflows gets ``None``
and is closed with 1013, and the page resumes from the last offset it applied.
Correctness never rests on the hub: the page's offset and the log do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async

from arbe_lib.per_loop import per_loop
from ops import metrics
from threads.current import bot_ids, child_records, entries_for_view
from threads.fragments import (
    Names,
    entry_fragments,
    house_names,
    now_panel,
    offset_marker,
    with_authors_now,
)
from threads.log import async_log_reader
from threads.models import Thread
from threads.now import NowFold, ThreadNow, current_view, live_children
from threads.render_pool import off_loop
from threads.socket_frames import text_frame
from threads.status import next_change_ms
from threads.status_sync import now_ms
from threads.unreadable import readable

logger = logging.getLogger(__name__)
QUEUE_SIZE = 256
RETRY_S = 1.0
FANOUT_CHUNK = 32
CHILD_REFRESH_S = 5.0  # how often a panel with a live delegated run reads its child's record


@dataclass(frozen=True)
class Batch:
    """What one upstream read brings: per-entry fragments, the panel, and the whole frame."""

    ids: tuple[str, ...]
    parts: tuple[tuple[str, str], ...]  # (entry id, fragment) for entries that show
    panel: str
    offset: str
    marker: str  # the offset marker (``fragments.offset_marker``)
    frame: str  # parts + panel + offset marker, shared by every viewer past catch-up
    wire: bytes = b""  # ``frame`` as one WebSocket frame (``threads.socket_frames``)


@dataclass(eq=False)
class Subscription:
    tail: ThreadTail
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))
    # Set by a viewer past its catch-up: writes a batch's frame straight to its socket.
    write: Callable[[Batch], bool] | None = None

    def deliver(self, batch: Batch) -> bool:
        """True if the frame went straight to the socket; False if it was queued."""
        # Straight to the socket only when nothing queued is still ahead of the batch.
        if self.write is not None and self.queue.empty() and self.write(batch):
            return True
        try:
            self.queue.put_nowait(batch)
        except asyncio.QueueFull:
            # Too far behind: drop what is queued and tell the consumer to reconnect.
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)
        return False


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
        self.view: ThreadNow | None = None
        self.watching_children = False
        self.lock = asyncio.Lock()  # one fold, folded and rendered by one build at a time
        self.moved = asyncio.Event()  # a batch went out: the refresh deadline moved
        self.task = asyncio.create_task(self.run(), name=f"tail {thread_id}")
        self.refresher: asyncio.Task | None = None

    async def seed(self) -> str:
        thread = await Thread.objects.select_related("house").aget(pk=self.thread_id)
        entries, offset = await sync_to_async(entries_for_view)(thread)
        bots = await sync_to_async(bot_ids)(thread.house_id)
        self.house_id = thread.house_id
        self.names = await sync_to_async(house_names)(thread.house_id)
        self.fold = NowFold(bots=bots, run=thread.parent_id is not None)
        batch = await self.build(entries, offset, fragments=False)
        self.panel, self.marker, self.offset = batch.panel, batch.marker, offset
        return offset

    def fold_in(self, entries, fragments: bool) -> tuple[tuple[tuple[str, str], ...], ThreadNow]:
        """On a render thread: a batch's fragments, then its entries folded in; the fold's view.

        Only under ``self.lock`` (seed, each batch, each refresh), so the fold is never
        touched by two threads at once.
        """
        parts = tuple(entry_fragments(entries, self.names, self.thread_id)) if fragments else ()
        for entry in entries:
            self.fold.apply(entry)
        return parts, self.fold.view(now_ms())

    def render_panel(self, view: ThreadNow, offset: str) -> tuple[str, str]:
        """On a render thread: the panel of ``view`` and the offset marker."""
        return now_panel(view, self.names, self.thread_id), offset_marker(offset)

    async def build(self, entries, offset: str, *, fragments: bool = True) -> Batch:
        """Fold ``entries`` in and render the batch: the panel is ``threads.now.current_view``,
        as ``/now`` builds it. Rendering runs on a render thread; a live delegated run's child
        record is read from the database first (``threads.current.child_records``)."""
        async with self.lock:
            parts, view = await off_loop(self.fold_in, entries, fragments)
            children = live_children(view)
            records = await sync_to_async(child_records)(children) if children else {}
            self.view = current_view(view, records)
            self.watching_children = bool(children)
            panel, marker = await off_loop(self.render_panel, self.view, offset)
        frame = "".join(html for _, html in parts) + panel + marker
        wire = text_frame(frame.encode())
        return Batch(tuple(e.id for e in entries), parts, panel, offset, marker, frame, wire)

    def next_refresh_s(self) -> float | None:
        """How long the panel stands before time alone may change it: the live-evidence
        deadline of its view, or ``CHILD_REFRESH_S`` while a delegated run is live (its
        record is its child's, which moves without an entry here)."""
        waits = []
        if self.view is not None and (deadline := next_change_ms(self.view)) is not None:
            waits.append(max(0.0, (deadline - now_ms()) / 1000))
        if self.watching_children:
            waits.append(CHILD_REFRESH_S)
        return min(waits) if waits else None

    async def refresh(self) -> None:
        """Re-derive the panel as time passes; a changed one goes out as a panel-only batch."""
        while True:
            self.moved.clear()
            try:
                await asyncio.wait_for(self.moved.wait(), self.next_refresh_s())
                continue  # a batch went out: its view has its own deadline
            except TimeoutError:
                pass
            try:
                await self.refresh_now()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("refreshing the panel of thread %s failed", self.thread_id)
                await asyncio.sleep(RETRY_S)

    async def refresh_now(self) -> None:
        """Derive the panel again now; a changed one goes out to every viewer."""
        batch = await self.build((), self.offset, fragments=False)
        if batch.panel != self.panel:
            self.panel = batch.panel
            self.fan_out(batch)

    async def run(self) -> None:
        try:
            offset = await self.seed()
        except Exception as exc:
            self.ready.set_exception(exc)
            return
        self.ready.set_result(offset)
        self.refresher = asyncio.create_task(self.refresh(), name=f"panel {self.thread_id}")
        name = f"arbe-thread-{self.thread_id}"
        failures = 0
        while True:
            try:
                async for result in self.hub.reader.tail(name, self.offset):
                    failures = 0
                    entries = await off_loop(readable, result.messages or (), name)
                    with metrics.FANOUT_SECONDS.time():  # read → handed to every socket
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
        authors = [e.authorId for e in entries]
        if any(a and a not in self.names for a in authors):
            self.names = await sync_to_async(house_names)(self.house_id, authors)
        else:  # a rename is a row, read after the entry: no event can arrive too late
            self.names = await sync_to_async(with_authors_now)(self.names, authors)
        batch = await self.build(entries, offset)
        self.panel, self.offset, self.marker = batch.panel, offset, batch.marker
        self.moved.set()
        await self.fan_out_chunked(batch)

    def fan_out(self, batch: Batch) -> None:
        subscribers = list(self.subscribers)
        direct = sum(1 for subscription in subscribers if subscription.deliver(batch))
        metrics.FANOUT_FRAMES.labels("direct").inc(direct)  # a panel's frames count as well
        metrics.FANOUT_FRAMES.labels("queued").inc(len(subscribers) - direct)

    async def fan_out_chunked(self, batch: Batch) -> None:
        queued = direct = 0
        for subscription in list(self.subscribers):
            if subscription.deliver(batch):
                direct += 1
            else:
                queued += 1
                if queued % FANOUT_CHUNK == 0:
                    await asyncio.sleep(0)  # let the chunk before this one reach its sockets
        metrics.FANOUT_FRAMES.labels("direct").inc(direct)
        metrics.FANOUT_FRAMES.labels("queued").inc(queued)


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
            if tail.watching_children:
                # A delegated run's record moves on its child, without an entry here: a
                # newcomer's first frame reads it now, not up to CHILD_REFRESH_S ago.
                await tail.refresh_now()
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
            if tail.refresher is not None:
                tail.refresher.cancel()


_hubs = per_loop(TailHub)
metrics.TAILS.set_function(lambda: sum(h.tail_count for h in list(_hubs.made.values())))


def hub() -> TailHub:
    """The hub of the running event loop (Daphne has one; each async test has its own)."""
    return _hubs()
