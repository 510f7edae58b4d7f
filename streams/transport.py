"""httpx transports that need no socket: an ASGI app called in-process, and sync over async.

- ``ASGITransport`` calls an ASGI app directly and *streams* its response
  (``httpx.ASGITransport`` buffers whole bodies, which a long-poll or an SSE
  read cannot wait for). Closing the response tells the app the client left.
- ``SyncBridgeTransport`` runs any async transport on a private event loop in
  a background thread, so sync code on any thread (a Django sync view under
  Daphne included) can use it. A request may carry a ``threading.Event`` in
  its ``CANCEL`` extension: setting it ends the wait for the response or for
  the next body chunk promptly, raising ``Cancelled``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx

# The request extension holding a threading.Event that cancels the request.
CANCEL = "arbe.cancel"
# How often a blocked sync caller looks at its cancel event (seconds).
CANCEL_POLL = 0.01


class Cancelled(Exception):
    """The caller's cancel event was set while a bridged request was waiting."""


class ASGITransport(httpx.AsyncBaseTransport):
    """Call ``app`` in-process; the response body streams as the app sends it."""

    def __init__(self, app: Callable, *, client: tuple[str, int] = ("127.0.0.1", 0)):
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = b"".join([chunk async for chunk in request.stream])  # type: ignore[union-attr]
        url = request.url
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?")[0],
            "query_string": url.query,
            "root_path": "",
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "client": self.client,
            "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
            "extensions": {},
        }
        messages: asyncio.Queue = asyncio.Queue()
        disconnected = asyncio.Event()
        request_sent = False

        async def receive() -> dict:
            nonlocal request_sent
            if not request_sent:
                request_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            await messages.put(message)

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            finally:
                await messages.put(None)

        task = asyncio.create_task(run())
        try:
            start = await messages.get()
        except BaseException:  # cancelled before the app answered: stop the app too
            task.cancel()
            raise
        if start is None:
            await task  # raises the app's exception, if any
            raise RuntimeError("the ASGI app returned without a response")
        stream = _ASGIBody(messages, task, disconnected)
        return httpx.Response(start["status"], headers=start.get("headers", []), stream=stream)


class _ASGIBody(httpx.AsyncByteStream):
    def __init__(self, messages: asyncio.Queue, task: asyncio.Task, disconnected: asyncio.Event):
        self._messages = messages
        self._task = task
        self._disconnected = disconnected
        self._complete = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while not self._complete:
            message = await self._messages.get()
            if message is None:
                self._complete = True
                await self._task
                return
            if message["type"] != "http.response.body":
                continue
            if chunk := message.get("body", b""):
                yield chunk
            if not message.get("more_body", False):
                self._complete = True

    async def aclose(self) -> None:
        self._disconnected.set()
        # A finished body leaves the app its clean-up; one left mid-way gets a moment to
        # see the disconnect (as under a real server) and is then cancelled.
        grace = 5.0 if self._complete else 0.05
        await asyncio.wait({self._task}, timeout=grace)
        if not self._task.done():
            self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


class LoopThread:
    """An event loop running forever in a daemon thread."""

    def __init__(self, name: str = "arbe-streams-loop"):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Any, cancel: threading.Event | None = None) -> Any:
        """Run ``coro`` on the loop and wait for it; ``cancel`` set means cancel it and raise."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("a bridged call cannot wait on its own loop thread")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        if cancel is None:
            return future.result()
        while True:
            try:
                return future.result(timeout=CANCEL_POLL)
            except concurrent.futures.TimeoutError:
                if cancel.is_set():
                    future.cancel()
                    raise Cancelled() from None

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
        if not self.loop.is_running():
            self.loop.close()


class SyncBridgeTransport(httpx.BaseTransport):
    """A sync transport that runs ``transport`` on a private loop in a background thread.

    Pass ``loop_thread`` to share one loop between bridges; a bridge stops only
    a loop it started itself.
    """

    def __init__(
        self, transport: httpx.AsyncBaseTransport, *, loop_thread: LoopThread | None = None
    ):
        self._transport = transport
        self._owns_loop = loop_thread is None
        self._loop_thread = loop_thread or LoopThread()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        extensions = dict(request.extensions)
        cancel = extensions.pop(CANCEL, None)
        bridged = httpx.Request(
            request.method,
            request.url,
            headers=request.headers,
            content=request.read(),
            extensions=extensions,
        )
        response = self._loop_thread.run(self._transport.handle_async_request(bridged), cancel)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_BridgedBody(self._loop_thread, response, cancel),
            extensions=response.extensions,
        )

    def close(self) -> None:
        try:
            self._loop_thread.run(self._transport.aclose())
        finally:
            if self._owns_loop:
                self._loop_thread.stop()


class _BridgedBody(httpx.SyncByteStream):
    def __init__(self, loop_thread: LoopThread, response: httpx.Response, cancel):
        self._loop_thread = loop_thread
        self._response = response
        self._cancel = cancel

    def __iter__(self) -> Iterator[bytes]:
        chunks = self._response.aiter_raw()
        while True:
            try:
                yield self._loop_thread.run(_next(chunks), self._cancel)
            except StopAsyncIteration:
                return

    def close(self) -> None:
        self._loop_thread.run(self._response.aclose())


async def _next(chunks: AsyncIterator[bytes]) -> bytes:
    return await anext(chunks)


_shared_loop: LoopThread | None = None
_shared_lock = threading.Lock()


def shared_loop() -> LoopThread:
    """The process's one loop thread for in-process (embedded) sync clients."""
    global _shared_loop
    with _shared_lock:
        if _shared_loop is None:
            _shared_loop = LoopThread("arbe-embedded-streams")
        return _shared_loop
