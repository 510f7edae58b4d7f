"""The in-process transports: a streaming ASGI call, and sync over a private loop."""

import asyncio
import threading

import httpx
import pytest

from streams.transport import CANCEL, ASGITransport, Cancelled, SyncBridgeTransport

pytestmark = pytest.mark.timeout(10, func_only=True)


class StreamingApp:
    """``/echo`` echoes method, query and body; ``/drip`` sends a chunk, then waits for
    ``release`` before the next (a buffering transport would never return); ``/hang``
    never answers. It records whether the client disconnected."""

    def __init__(self):
        self.release = asyncio.Event()
        self.disconnected = asyncio.Event()

    async def __call__(self, scope, receive, send):
        message = await receive()
        path = scope["path"]
        if path == "/hang":
            await asyncio.Event().wait()
        headers = [(b"content-type", b"text/plain")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if path == "/echo":
            echo = b"%s %s %s %s" % (
                scope["method"].encode(),
                scope["query_string"],
                message["body"],
                dict(scope["headers"]).get(b"x-test", b""),
            )
            await send({"type": "http.response.body", "body": echo})
            return
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        await self.release.wait()
        await send({"type": "http.response.body", "body": b"second", "more_body": True})
        if (await receive())["type"] == "http.disconnect":
            self.disconnected.set()


async def test_request_reaches_the_app():
    async with httpx.AsyncClient(
        transport=ASGITransport(StreamingApp()), base_url="http://app"
    ) as http:
        response = await http.post(
            "/echo", params={"offset": "a b&c"}, content=b"body", headers={"x-test": "yes"}
        )
    assert response.text == "POST offset=a+b%26c body yes"


async def test_body_streams_and_close_disconnects():
    app = StreamingApp()
    async with (
        httpx.AsyncClient(transport=ASGITransport(app), base_url="http://app") as http,
        http.stream("GET", "/drip") as response,
    ):
        chunks = response.aiter_raw()
        assert await anext(chunks) == b"first"
        app.release.set()
        assert await anext(chunks) == b"second"
    # Leaving mid-body told the app the client went away.
    assert app.disconnected.is_set()


def test_sync_bridge_from_many_threads():
    app = StreamingApp()
    transport = SyncBridgeTransport(ASGITransport(app))
    results = []
    with httpx.Client(transport=transport, base_url="http://app") as http:

        def call(n: int) -> None:
            results.append(http.post("/echo", content=str(n).encode()).text)

        threads = [threading.Thread(target=call, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(results) == sorted(f"POST  {n} " for n in range(8))


def test_sync_bridge_streams():
    app = StreamingApp()
    transport = SyncBridgeTransport(ASGITransport(app))
    with (
        httpx.Client(transport=transport, base_url="http://app") as http,
        http.stream("GET", "/drip") as response,
    ):
        chunks = response.iter_raw()
        assert next(chunks) == b"first"
        app.release._loop.call_soon_threadsafe(app.release.set)
        assert next(chunks) == b"second"


def test_sync_bridge_cancel_ends_a_pending_request():
    transport = SyncBridgeTransport(ASGITransport(StreamingApp()))
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    with httpx.Client(transport=transport, base_url="http://app") as http:
        request = http.build_request("GET", "/hang", extensions={CANCEL: cancel})
        with pytest.raises(Cancelled):
            http.send(request)
