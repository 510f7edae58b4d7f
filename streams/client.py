"""The service client: Durable Streams paths with the service secret, sync and async.

``DurableStreamClient`` and ``AsyncDurableStreamClient`` share the request
building and response decoding in ``streams.wire``; each only sends calls. They
know nothing of houses, threads or permissions (docs/streams-client.md).

The constructors and the settings factories (``service_client()``,
``async_service_client()``) are allowed only in the recency wrapper, the
sandbox proxy, scripts and tests; a test enforces it, so that no app module
appends without bumping thread recency.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import httpx

# httpcore imports sniffio on every async request; a missing package costs a sys.path walk each
# time. It is a declared dependency: fail loudly here rather than slowly there.
import sniffio  # noqa: F401

from streams import errors, wire
from streams.producers import AsyncIdempotentProducer, IdempotentProducer
from streams.sse import SSEReader
from streams.wire import (
    JSON,
    START,
    AppendResult,
    CreateResult,
    ReadResult,
    StreamInfo,
)

# The base URL of the in-process (embedded) server: requests never leave the process.
EMBEDDED_URL = "http://embedded.streams.invalid"


class _ClientBase:
    """Settings shared by both clients: base URL, auth header, timeouts."""

    def __init__(
        self,
        base_url: str,
        *,
        secret: str | None = None,
        timeout: float = 10.0,
        long_poll_timeout: float = 30.0,
    ):
        base_url = base_url.rstrip("/")
        # Accept the server root or the stream root.
        self.base_url = base_url.removesuffix(wire.STREAM_PREFIX.rstrip("/"))
        self._headers = {"authorization": f"Bearer {secret}"} if secret else {}
        self._timeout = httpx.Timeout(timeout)
        # A live read may wait the server's whole long-poll timeout before any byte.
        self._live_timeout = httpx.Timeout(timeout, read=long_poll_timeout + timeout)
        self._limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)

    def _build(self, http, call: wire.Call) -> httpx.Request:
        return http.build_request(
            call.method,
            call.path,
            params=call.params,
            headers=call.headers,
            content=call.content,
            timeout=self._live_timeout if call.live else self._timeout,
        )

    @staticmethod
    def _body(message: Any, content_type: str) -> bytes:
        if wire.is_json(content_type):
            return wire.encode_message(message)
        return message.encode() if isinstance(message, str) else bytes(message)


class DurableStreamClient(_ClientBase):
    """Blocking client over a pooled ``httpx.Client``; safe to share between threads."""

    def __init__(self, base_url: str, *, transport: httpx.BaseTransport | None = None, **kwargs):
        super().__init__(base_url, **kwargs)
        self.http = httpx.Client(
            base_url=self.base_url,
            headers=self._headers,
            timeout=self._timeout,
            limits=self._limits,
            transport=transport,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> DurableStreamClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def send(self, call: wire.Call, *, stream: bool = False) -> httpx.Response:
        try:
            return self.http.send(self._build(self.http, call), stream=stream)
        except httpx.TransportError as exc:
            raise errors.TransportError(f"{call.method} {call.path}: {exc!r}") from exc

    def create(self, name: str, *, body: Any = None, **options) -> CreateResult:
        """Create (idempotent for the same config): content_type, ttl | expires_at, closed, body."""
        content_type = options.get("content_type", JSON)
        initial = None if body is None else self._body(body, content_type)
        return wire.decode_create(self.send(wire.create_call(name, body=initial, **options)))

    def head(self, name: str) -> StreamInfo:
        return wire.decode_head(self.send(wire.Call("HEAD", wire.stream_path(name))))

    def append(self, name: str, message: Any, *, content_type: str = JSON, **options):
        """Append one message (an object for JSON streams, bytes/str otherwise); seq, close."""
        body = self._body(message, content_type)
        call = wire.append_call(name, body, content_type=content_type, **options)
        return wire.decode_append(self.send(call))

    def append_batch(self, name: str, messages: Iterable[Any], **options) -> AppendResult:
        """Append several JSON messages in one request: all of them or none."""
        call = wire.append_call(name, wire.batch_body(messages), **options)
        return wire.decode_append(self.send(call))

    def close_stream(self, name: str, message: Any = None, **options) -> AppendResult:
        """Close (optionally appending a last message atomically); idempotent when close-only."""
        content_type = options.pop("content_type", JSON)
        body = b"" if message is None else self._body(message, content_type)
        call = wire.append_call(name, body, content_type=content_type, close=True, **options)
        return wire.decode_append(self.send(call))

    def delete(self, name: str) -> None:
        wire.raise_for_status(self.send(wire.Call("DELETE", wire.stream_path(name))))

    def read(self, name: str, offset: str = START, *, page_bytes: int | None = None) -> ReadResult:
        """One catch-up page from ``offset`` (``page_bytes``: a smaller page, if the server
        honours it)."""
        call = wire.read_call(name, offset, page_bytes=page_bytes)
        return wire.decode_read(self.send(call), offset)

    def catch_up(self, name: str, offset: str = START) -> ReadResult:
        """Everything from ``offset`` to the tail, reading pages until ``Stream-Up-To-Date``."""
        reading = wire.CatchUp(name, offset)
        while not reading.feed(self.send(reading.call())):
            pass
        return reading.result()

    def long_poll(self, name: str, offset: str, cursor: str | None = None) -> ReadResult:
        """Wait for data after ``offset``; an empty result (204) means none came in time."""
        call = wire.read_call(name, offset, live="long-poll", cursor=cursor)
        return wire.decode_read(self.send(call), offset)

    def tail(self, name: str, offset: str = START) -> Iterator[ReadResult]:
        """Long-poll from ``offset`` and yield each non-empty result until the stream closes."""
        cursor = None
        while True:
            result = self.long_poll(name, offset, cursor)
            offset, cursor = result.next_offset, result.cursor or cursor
            if wire.confirm_eof(result):
                result = self.catch_up(name, offset)
            if wire.has_data(result):
                yield result
            if result.closed:
                return

    def sse(self, name: str, offset: str = START, content_type: str | None = None):
        """Read with SSE, one result per control event, reconnecting until the stream closes.

        SSE bodies are ``text/event-stream``: without ``content_type`` a HEAD tells
        whether data events hold JSON arrays.
        """
        content_type = content_type or self.head(name).content_type
        cursor = None
        while True:
            call = wire.read_call(name, offset, live="sse", cursor=cursor)
            with self.http_stream(call) as response:
                wire.raise_for_status(response)
                reader = _sse_reader(response)
                for chunk in response.iter_bytes():
                    for batch in reader.feed(chunk):
                        result = wire.sse_result(batch.chunks, batch.control, content_type)
                        offset, cursor = result.next_offset, result.cursor or cursor
                        if wire.confirm_eof(result):
                            result = self.catch_up(name, offset)
                        yield result
                        if result.closed:
                            return

    @contextlib.contextmanager
    def http_stream(self, call: wire.Call) -> Iterator[httpx.Response]:
        response = self.send(call, stream=True)
        try:
            yield response
        finally:
            response.close()

    def open(self, name: str, offset: str = START, *, live: str | None = None, cursor=None):
        """A raw handle: the unread, unchecked ``httpx.Response`` of a read, for proxies."""
        return self.http_stream(wire.read_call(name, offset, live=live, cursor=cursor))

    def producer(self, name: str, producer_id: str, **options) -> IdempotentProducer:
        return IdempotentProducer(self, name, producer_id, **options)


class AsyncDurableStreamClient(_ClientBase):
    """Async client over a pooled ``httpx.AsyncClient``; use it on one event loop."""

    def __init__(self, base_url: str, *, transport: httpx.AsyncBaseTransport | None = None, **kw):
        super().__init__(base_url, **kw)
        self.http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=self._headers,
            timeout=self._timeout,
            limits=self._limits,
            transport=transport,
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncDurableStreamClient:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()

    async def send(self, call: wire.Call, *, stream: bool = False) -> httpx.Response:
        try:
            return await self.http.send(self._build(self.http, call), stream=stream)
        except httpx.TransportError as exc:
            raise errors.TransportError(f"{call.method} {call.path}: {exc!r}") from exc

    async def create(self, name: str, *, body: Any = None, **options) -> CreateResult:
        content_type = options.get("content_type", JSON)
        initial = None if body is None else self._body(body, content_type)
        return wire.decode_create(await self.send(wire.create_call(name, body=initial, **options)))

    async def head(self, name: str) -> StreamInfo:
        return wire.decode_head(await self.send(wire.Call("HEAD", wire.stream_path(name))))

    async def append(self, name: str, message: Any, *, content_type: str = JSON, **options):
        body = self._body(message, content_type)
        call = wire.append_call(name, body, content_type=content_type, **options)
        return wire.decode_append(await self.send(call))

    async def append_batch(self, name: str, messages: Iterable[Any], **options) -> AppendResult:
        call = wire.append_call(name, wire.batch_body(messages), **options)
        return wire.decode_append(await self.send(call))

    async def close_stream(self, name: str, message: Any = None, **options) -> AppendResult:
        content_type = options.pop("content_type", JSON)
        body = b"" if message is None else self._body(message, content_type)
        call = wire.append_call(name, body, content_type=content_type, close=True, **options)
        return wire.decode_append(await self.send(call))

    async def delete(self, name: str) -> None:
        wire.raise_for_status(await self.send(wire.Call("DELETE", wire.stream_path(name))))

    async def read(
        self, name: str, offset: str = START, *, page_bytes: int | None = None
    ) -> ReadResult:
        call = wire.read_call(name, offset, page_bytes=page_bytes)
        return wire.decode_read(await self.send(call), offset)

    async def catch_up(self, name: str, offset: str = START) -> ReadResult:
        reading = wire.CatchUp(name, offset)
        while not reading.feed(await self.send(reading.call())):
            pass
        return reading.result()

    async def long_poll(self, name: str, offset: str, cursor: str | None = None) -> ReadResult:
        call = wire.read_call(name, offset, live="long-poll", cursor=cursor)
        return wire.decode_read(await self.send(call), offset)

    async def tail(self, name: str, offset: str = START) -> AsyncIterator[ReadResult]:
        cursor = None
        while True:
            result = await self.long_poll(name, offset, cursor)
            offset, cursor = result.next_offset, result.cursor or cursor
            if wire.confirm_eof(result):
                result = await self.catch_up(name, offset)
            if wire.has_data(result):
                yield result
            if result.closed:
                return

    async def sse(self, name: str, offset: str = START, content_type: str | None = None):
        content_type = content_type or (await self.head(name)).content_type
        cursor = None
        while True:
            call = wire.read_call(name, offset, live="sse", cursor=cursor)
            async with self.http_stream(call) as response:
                wire.raise_for_status(response)
                reader = _sse_reader(response)
                async for chunk in response.aiter_bytes():
                    for batch in reader.feed(chunk):
                        result = wire.sse_result(batch.chunks, batch.control, content_type)
                        offset, cursor = result.next_offset, result.cursor or cursor
                        if wire.confirm_eof(result):
                            result = await self.catch_up(name, offset)
                        yield result
                        if result.closed:
                            return

    @contextlib.asynccontextmanager
    async def http_stream(self, call: wire.Call) -> AsyncIterator[httpx.Response]:
        response = await self.send(call, stream=True)
        try:
            yield response
        finally:
            await response.aclose()

    def open(self, name: str, offset: str = START, *, live: str | None = None, cursor=None):
        return self.http_stream(wire.read_call(name, offset, live=live, cursor=cursor))

    def producer(self, name: str, producer_id: str, **options) -> AsyncIdempotentProducer:
        return AsyncIdempotentProducer(self, name, producer_id, **options)


def _sse_reader(response: httpx.Response) -> SSEReader:
    return SSEReader(base64_data=response.headers.get(wire.SSE_ENCODING, "").lower() == "base64")


# Settings factories --------------------------------------------------------------------


@functools.cache
def _embedded_app():
    from streams.server import create_app

    return create_app()


def _settings_options() -> tuple[str, dict]:
    from django.conf import settings

    options = {
        "secret": settings.DURABLE_STREAMS_SECRET,
        "long_poll_timeout": settings.DURABLE_STREAMS_LONG_POLL_MS / 1000,
    }
    return settings.DURABLE_STREAMS_URL, options


def service_client() -> DurableStreamClient:
    """The sync client from settings: ``DURABLE_STREAMS_URL``, or the embedded server in-process."""
    from streams.transport import ASGITransport, SyncBridgeTransport, shared_loop

    url, options = _settings_options()
    if url:
        return DurableStreamClient(url, **options)
    transport = SyncBridgeTransport(ASGITransport(_embedded_app()), loop_thread=shared_loop())
    return DurableStreamClient(EMBEDDED_URL, transport=transport, **options)


def async_service_client() -> AsyncDurableStreamClient:
    """The async client from settings; in-process calls run on the caller's event loop."""
    from streams.transport import ASGITransport

    url, options = _settings_options()
    if url:
        return AsyncDurableStreamClient(url, **options)
    transport = ASGITransport(_embedded_app())
    return AsyncDurableStreamClient(EMBEDDED_URL, transport=transport, **options)
