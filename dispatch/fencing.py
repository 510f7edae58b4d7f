"""Fenced writers: a thread's backstage entries land only while their writer holds its lease.

A lease is advice (a frozen worker thaws believing it still holds its threads); the store
is what refuses. The holder of a thread writes every backstage entry of that thread (passes,
replies, the takeover's record) as the Durable Streams idempotent producer
``backstage:<thread>`` at its lease epoch (``dispatch.thread_leases``), with sequence numbers
this writer allocates in order. An engine that takes the thread over appends at a higher
epoch; from then on the store answers the old holder's appends with 403 (a stale epoch), and
this writer raises ``Fenced``: the work stops quietly and records nothing more.

A transient failure is retried with the same sequence number, so an append that did land
the first time is answered as a duplicate and lands once.
"""

from __future__ import annotations

import logging
import threading
import time

from arbe_lib.concurrency import in_thread
from streams import errors
from streams.wire import AppendResult
from threads.entries import Entry
from threads.models import stream_name_for
from threads.recency import stream_writer

logger = logging.getLogger(__name__)
RETRIES = 4
RETRY_S = 0.2


class Fenced(Exception):
    """The store refused a stale lease epoch: another engine holds the thread now."""


def producer_id(thread_id: str) -> str:
    return f"backstage:{thread_id}"


class FencedWriter:
    """Appends to one thread's stream as ``backstage:<thread>`` at one lease epoch.

    Appends are serialised (one lock): the store wants this producer's sequence in order.
    Thread-safe; ``aappend`` is the same from the event loop.
    """

    def __init__(self, thread_id: str, epoch: int) -> None:
        self.thread_id = thread_id
        self.stream = stream_name_for(thread_id)
        self.epoch = epoch
        self.seq = 0
        self.fenced = False
        self._lock = threading.Lock()

    def append(self, stream: str, entry: Entry) -> AppendResult:
        if stream != self.stream:
            raise ValueError(f"a fenced writer of {self.stream} cannot write to {stream}")
        with self._lock:
            if self.fenced:
                raise Fenced(self.thread_id)
            producer = (producer_id(self.thread_id), self.epoch, self.seq)
            for attempt in range(RETRIES):
                try:
                    result = stream_writer().append(stream, entry, producer=producer)
                    break
                except errors.ProducerStale:
                    self.fenced = True
                    logger.warning(
                        "fenced off %s at lease epoch %d: another engine holds it now",
                        self.thread_id,
                        self.epoch,
                    )
                    raise Fenced(self.thread_id) from None
                except errors.StreamError as exc:
                    # Resend the same seq: if the first try landed, it is a duplicate.
                    if not exc.transient or attempt + 1 == RETRIES:
                        raise
                    time.sleep(RETRY_S * (attempt + 1))
            self.seq += 1
            return result

    async def aappend(self, stream: str, entry: Entry) -> AppendResult:
        return await in_thread(self.append, stream, entry)

    def for_loop(self) -> AsyncFencedWriter:
        return AsyncFencedWriter(self)


class AsyncFencedWriter:
    """The async face a reply writes through (``append`` and ``aclose``, as the async
    recency writer has)."""

    def __init__(self, fence: FencedWriter) -> None:
        self.fence = fence

    async def append(self, stream: str, entry: Entry, **options) -> AppendResult:
        return await self.fence.aappend(stream, entry)

    async def aclose(self) -> None:
        return None
