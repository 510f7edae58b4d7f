"""The seam where server code gets stream-writing capability.

Thread lists sort on ``Thread.last_entry_ts`` while entries live on streams,
so the bump belongs to the writer that is handed out, not to each producer:
``stream_writer()`` is the only way app code gets a writer, and every append
to an ``arbe-thread-*`` stream through it moves ``last_entry_ts`` forward and
calls status tracking. The sandbox proxy, which appends for writers without
the service secret, calls the same ``after_append``. A test fails if the raw
service-client constructor appears anywhere else.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from django.db import close_old_connections
from django.db.models import Q

import notify.outbox
import search.index
from arbe_site.events import send_to_group
from ops import metrics
from streams.client import (
    AsyncDurableStreamClient,
    DurableStreamClient,
    async_service_client,
    service_client,
)
from streams.wire import AppendResult
from threads import reactions
from threads.chat_index import locate_chat
from threads.entries import Entry, encode_entry
from threads.models import Thread
from threads.status import moves_status
from threads.status_sync import track_after_append
from threads.unread import note_appended
from threads.windows import note_append

logger = logging.getLogger(__name__)
THREAD_STREAM_PREFIX = "arbe-thread-"
THROTTLE_S = 1.0


def thread_id_of(stream_name: str) -> str | None:
    if stream_name.startswith(THREAD_STREAM_PREFIX):
        return stream_name[len(THREAD_STREAM_PREFIX) :]
    return None


def bump_last_entry_ts(thread_id: str, ts: int) -> int:
    """Move ``last_entry_ts`` forward to ``ts``; never backwards (a guarded UPDATE)."""
    return (
        Thread.objects.filter(pk=thread_id)
        .filter(Q(last_entry_ts__isnull=True) | Q(last_entry_ts__lt=ts))
        .update(last_entry_ts=ts)
    )


def announce_row(thread_id: str) -> None:
    """Tell the house's live pages that a thread row moved; the row stays the truth."""
    house_id = Thread.objects.filter(pk=thread_id).values_list("house_id", flat=True).first()
    if house_id is not None:
        send_to_group(f"house-{house_id}", {"type": "thread.row", "thread": thread_id})


class RecencyThrottle:
    """At most one recency write per thread per second, with a trailing write.

    The first append in a window writes at once; later ones in the same window
    leave their newest ``ts`` pending, written when the window ends, so the
    row is never left behind the stream for longer than one window.
    """

    def __init__(self, interval_s: float = THROTTLE_S):
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._last_write: dict[str, float] = {}
        self._pending: dict[str, int] = {}
        self._timers: dict[str, threading.Timer] = {}

    def bump(self, thread_id: str, ts: int, *, announce: bool = True) -> None:
        with self._lock:
            now = time.monotonic()
            last = self._last_write.get(thread_id)
            if last is None or now - last >= self.interval_s:
                self._last_write[thread_id] = now
                write_now = True
            else:
                write_now = False
                self._pending[thread_id] = max(ts, self._pending.get(thread_id, ts))
                if thread_id not in self._timers:
                    timer = threading.Timer(
                        self.interval_s - (now - last), self._flush, args=(thread_id,)
                    )
                    timer.daemon = True
                    self._timers[thread_id] = timer
                    timer.start()
        if write_now and bump_last_entry_ts(thread_id, ts) and announce:
            announce_row(thread_id)

    def _flush(self, thread_id: str) -> None:
        with self._lock:
            self._timers.pop(thread_id, None)
            ts = self._pending.pop(thread_id, None)
            self._last_write[thread_id] = time.monotonic()
        if ts is None:
            return
        try:
            if bump_last_entry_ts(thread_id, ts):
                announce_row(thread_id)
        finally:
            close_old_connections()

    def reset(self) -> None:
        """Forget pending bumps and windows (between tests)."""
        with self._lock:
            for timer in self._timers.values():
                timer.cancel()
            self._timers.clear()
            self._pending.clear()
            self._last_write.clear()

    def flush_all(self) -> None:
        """Write every pending bump now (shutdown and tests)."""
        with self._lock:
            timers = list(self._timers.values())
        for timer in timers:
            timer.cancel()
        for thread_id in list(self._pending):
            self._flush(thread_id)


throttle = RecencyThrottle()


def after_append(
    stream_name: str, entries: Sequence[Entry], next_offset: str | None = None
) -> None:
    """Hooks that follow every append to a thread stream, whoever wrote it."""
    thread_id = thread_id_of(stream_name)
    if thread_id is None or not entries:
        return
    note_appended(thread_id, entries)  # before locate_chat: it skips chat already located
    locate_chat(thread_id, entries, next_offset, note_append(thread_id, entries, next_offset))
    reactions.note(thread_id, entries)
    search.index.after_append(thread_id, entries)
    metrics.after_append(entries)  # counts by type; the search index's lag (ops/metrics.py)
    # A status write announces the row itself; otherwise recency does, so the house list
    # follows new entries too.
    throttle.bump(thread_id, max(e.ts for e in entries), announce=not moves_status(entries))
    track_after_append(thread_id, entries)
    notify.outbox.after_append(thread_id, entries)  # rows and a wake; the worker sends


class RecencyTrackingWriter:
    """What server code writes to streams with: a service client whose appends are checked
    whole (``encode_entry``) and followed by ``after_append``.

    The raw client is private and only named methods are offered: creating a stream and
    appends, which go through the hooks. Anything else that could write (closing a stream,
    raw sends, producers, deleting a stream) is not offered; reads are ``threads.log``'s.
    """

    def __init__(self, client: DurableStreamClient):
        self._client = client

    def create(self, name: str, **options):
        return self._client.create(name, **options)

    def append(self, name: str, entry: Entry, **options) -> AppendResult:
        result = self._client.append(name, encode_entry(entry), **options)
        if not result.duplicate:
            after_append(name, [entry], result.next_offset)
        return result

    def append_batch(self, name: str, entries: Sequence[Entry], **options) -> AppendResult:
        result = self._client.append_batch(name, [encode_entry(e) for e in entries], **options)
        if not result.duplicate:
            after_append(name, entries, result.next_offset)
        return result

    def close(self) -> None:
        self._client.close()


class AsyncRecencyTrackingWriter:
    """The async twin of ``RecencyTrackingWriter``; hooks run in a worker thread."""

    def __init__(self, client: AsyncDurableStreamClient):
        self._client = client

    async def create(self, name: str, **options):
        return await self._client.create(name, **options)

    async def append(self, name: str, entry: Entry, **options) -> AppendResult:
        from asgiref.sync import sync_to_async

        result = await self._client.append(name, encode_entry(entry), **options)
        if not result.duplicate:
            await sync_to_async(after_append)(name, [entry], result.next_offset)
        return result

    async def aclose(self) -> None:
        await self._client.aclose()


_writer: RecencyTrackingWriter | None = None
_writer_lock = threading.Lock()


def stream_writer() -> RecencyTrackingWriter:
    """The process's writer for server code (one pooled client)."""
    global _writer
    with _writer_lock:
        if _writer is None:
            _writer = RecencyTrackingWriter(service_client())
        return _writer


def async_stream_writer() -> AsyncRecencyTrackingWriter:
    return AsyncRecencyTrackingWriter(async_service_client())
