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
from collections.abc import Sequence

from ops import metrics
from streams.client import (
    AsyncDurableStreamClient,
    DurableStreamClient,
    async_service_client,
    service_client,
)
from streams.wire import AppendResult
from threads.entries import MAX_ENTRY_BYTES, Entry, EntryError, decode_entry, encode_entry
from threads.last_entry import (  # noqa: F401 (re-exported: the seam's recency step)
    RecencyThrottle,
    announce_row,
    bump_last_entry_ts,
    throttle,
)
from threads.models import thread_id_of

logger = logging.getLogger(__name__)


def after_append(
    stream_name: str, entries: Sequence[Entry], next_offset: str | None = None
) -> None:
    """The seam's steps for every append to a thread stream, whoever wrote it; never raises
    (a failed step is recorded and repaired: ``threads.seam``)."""
    thread_id = thread_id_of(stream_name)
    if thread_id is None or not entries:
        return
    from threads import seam

    metrics.appended(entries)  # entries, posts and replies by type (ops/metrics.py)
    seam.after_append(thread_id, entries, next_offset)


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

    def restore_batch(
        self, name: str, messages: Sequence[bytes], *, producer: tuple[str, int, int]
    ) -> AppendResult:
        """Append entries an archive carries, byte for byte, without the seam's steps.

        Only ``archives.restore`` and the Slack import call this: they append a whole log
        and then rebuild every cache from it (``archives.rebuild``), and must not notify
        anyone of history. Each message is still checked whole against the contract, and
        the producer makes a resumed import's repeat a duplicate the store refuses.
        """
        for message in messages:
            if len(message) > MAX_ENTRY_BYTES:
                raise EntryError(
                    f"An entry may be at most {MAX_ENTRY_BYTES} bytes of JSON - at `$`"
                )
            decode_entry(message)
        return self._client.append_batch(name, list(messages), producer=producer)

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
