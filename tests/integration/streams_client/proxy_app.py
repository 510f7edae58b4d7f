"""A minimal stand-in for the app's proxy routes, for the scoped client's tests.

It serves the two routes the scoped client uses, over a real Durable Streams
server (``ARBE_TEST_DS_URL``), with the rules that matter to the client:

- ``GET  /api/threads/{id}/stream``: the DS read of ``arbe-thread-{id}``, passing
  ``Stream-Next-Offset``, ``Stream-Up-To-Date``, ``Stream-Cursor``, ``Stream-Closed``;
- ``POST /api/threads/{id}/entries``: ``{"id"?, "payload"}`` → ``{"entry", "offset"}``;
- auth: ``Authorization: Bearer arbe_test`` or the cookie ``sessionid=test-session``
  (else 401); thread ``forbidden`` is 403; a missing stream is 404;
- ``POST /_test/fail {"status", "count", "retry_after"?}``: the next ``count``
  requests to the routes above answer ``status`` (transient-failure tests).

The real routes (membership, recency, dispatch) live in the app; this one keeps
only the protocol, so the client is tested against real HTTP and a real server.
"""

import asyncio
import json
import os
import re
import time
import uuid
from urllib.parse import parse_qsl

from streams.client import AsyncDurableStreamClient

TOKEN = "arbe_test"
SESSION = "test-session"
PASSED = ("stream-next-offset", "stream-up-to-date", "stream-cursor", "stream-closed")
ROUTE = re.compile(r"^/api/threads/(?P<thread>[^/]+)/(?P<what>stream|entries)$")

_faults: list[tuple[int, str | None]] = []
_client: AsyncDurableStreamClient | None = None


def client() -> AsyncDurableStreamClient:
    global _client
    if _client is None:
        _client = AsyncDurableStreamClient(
            os.environ["ARBE_TEST_DS_URL"], secret=os.environ.get("ARBE_TEST_DS_SECRET") or None
        )
    return _client


async def respond(send, status: int, body: bytes = b"", headers=()) -> None:
    await send({"type": "http.response.start", "status": status, "headers": list(headers)})
    await send({"type": "http.response.body", "body": body})


async def respond_json(send, status: int, data) -> None:
    await respond(send, status, json.dumps(data).encode(), [(b"content-type", b"application/json")])


async def read_body(receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def authorized(scope) -> bool:
    headers = dict(scope["headers"])
    if headers.get(b"authorization", b"").decode() == f"Bearer {TOKEN}":
        return True
    return f"sessionid={SESSION}" in headers.get(b"cookie", b"").decode()


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    path, method = scope["path"], scope["method"]
    if path == "/_test/fail" and method == "POST":
        spec = json.loads(await read_body(receive))
        _faults.extend([(spec["status"], spec.get("retry_after"))] * spec.get("count", 1))
        return await respond(send, 204)
    match = ROUTE.match(path)
    if match is None:
        return await respond(send, 404)
    if _faults:
        status, retry_after = _faults.pop(0)
        headers = [(b"retry-after", retry_after.encode())] if retry_after else []
        return await respond(send, status, b"injected", headers)
    if not authorized(scope):
        return await respond(send, 401)
    if match["thread"] == "forbidden":
        return await respond(send, 403)
    stream = f"arbe-thread-{match['thread']}"
    if match["what"] == "entries" and method == "POST":
        return await post_entry(stream, receive, send)
    if match["what"] == "stream" and method == "GET":
        return await proxy_read(stream, scope, receive, send)
    return await respond(send, 405)


async def post_entry(stream: str, receive, send) -> None:
    body = json.loads(await read_body(receive))
    entry = {"id": body.get("id") or uuid.uuid4().hex, "ts": int(time.time() * 1000)}
    entry["payload"] = body["payload"]
    try:
        result = await client().append(stream, entry)
    except Exception as exc:  # the client's typed errors carry the upstream status
        return await respond(send, getattr(exc, "status", None) or 502)
    await respond_json(send, 201, {"entry": entry, "offset": result.next_offset})


async def proxy_read(stream: str, scope, receive, send) -> None:
    query = dict(parse_qsl(scope["query_string"].decode()))

    async def upstream():
        handle = client().open(
            stream, query.get("offset", "-1"), live=query.get("live"), cursor=query.get("cursor")
        )
        async with handle as response:
            headers = [
                (k.encode(), response.headers[k].encode()) for k in PASSED if k in response.headers
            ]
            if "content-type" in response.headers:
                headers.append((b"content-type", response.headers["content-type"].encode()))
            await respond(send, response.status_code, await response.aread(), headers)

    async def disconnected():
        while (await receive())["type"] != "http.disconnect":
            pass

    # A client that leaves ends the upstream long-poll too, as the real proxy must.
    reading, leaving = asyncio.create_task(upstream()), asyncio.create_task(disconnected())
    done, pending = await asyncio.wait({reading, leaving}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    if reading in done:
        reading.result()
