"""Reading thread logs: the read half of the stream service client, and nothing that writes.

Readers (``threads.reading``, status tracking, the tail hub, sockets, replies, the
admin) take a ``LogReader``; writers take the recency writer from ``threads.recency``.
Keeping them apart keeps the write seam's dependencies one way: the writer's hooks
read through this module, and this module knows nothing of writing.
"""

from __future__ import annotations

import threading

from arbe_lib.per_loop import per_loop
from streams.client import (
    AsyncDurableStreamClient,
    DurableStreamClient,
    async_service_client,
    service_client,
)
from streams.wire import START


class LogReader:
    """Catch-up reads, long-polls, heads and tails of streams (blocking)."""

    def __init__(self, client: DurableStreamClient):
        self._client = client

    def head(self, name: str):
        return self._client.head(name)

    def read(self, name: str, offset: str = START, *, page_bytes: int | None = None):
        return self._client.read(name, offset, page_bytes=page_bytes)

    def catch_up(self, name: str, offset: str = START):
        return self._client.catch_up(name, offset)

    def long_poll(self, name: str, offset: str, cursor: str | None = None):
        return self._client.long_poll(name, offset, cursor)

    def tail(self, name: str, offset: str = START):
        return self._client.tail(name, offset)

    def sse(self, name: str, offset: str = START):
        """Results with an offset after each batch the server sends (history repair)."""
        return self._client.sse(name, offset)


class AsyncLogReader:
    """The same reads for async code; bound to the event loop that made it."""

    def __init__(self, client: AsyncDurableStreamClient):
        self._client = client

    async def head(self, name: str):
        return await self._client.head(name)

    async def read(self, name: str, offset: str = START, *, page_bytes: int | None = None):
        return await self._client.read(name, offset, page_bytes=page_bytes)

    async def catch_up(self, name: str, offset: str = START):
        return await self._client.catch_up(name, offset)

    async def long_poll(self, name: str, offset: str, cursor: str | None = None):
        return await self._client.long_poll(name, offset, cursor)

    def tail(self, name: str, offset: str = START):
        return self._client.tail(name, offset)


_reader: LogReader | None = None
_reader_lock = threading.Lock()


def log_reader() -> LogReader:
    """The process's reader (one pooled client, shared by threads)."""
    global _reader
    with _reader_lock:
        if _reader is None:
            _reader = LogReader(service_client())
        return _reader


def log_reader_at(url: str, secret: str) -> LogReader:
    """A reader of another stream server: a restored copy (``manage.py check_restore``)."""
    return LogReader(DurableStreamClient(url, secret=secret))


_async_readers = per_loop(lambda: AsyncLogReader(async_service_client()))


def async_log_reader() -> AsyncLogReader:
    """The running event loop's reader (httpx's async clients are bound to their loop)."""
    return _async_readers()
