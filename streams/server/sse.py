"""``live=sse``: data events, each followed by a control event.

Binary streams (neither ``text/*`` nor JSON) are sent base64-encoded with
``Stream-SSE-Data-Encoding: base64``. The connection ends at a closed tail,
on client disconnect, or after :data:`SSE_MAX_SECONDS` (clients reconnect
with the last ``streamNextOffset``, which lets CDNs collapse requests).
"""

import asyncio
import base64
import json
import re

from streams.server import reads
from streams.server.http import encode_headers
from streams.server.offsets import format_offset, response_cursor
from streams.server.protocol import is_json, normalize_content_type, require_live
from streams.server.wake import hub, watch_disconnect

SSE_MAX_SECONDS = 60.0
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def event(kind: str, payload: str) -> str:
    # No space after "data:": clients strip exactly one, so leading spaces survive.
    lines = _LINE_BREAK.split(payload)
    return f"event: {kind}\n" + "".join(f"data:{line}\n" for line in lines) + "\n"


def control(offset: int, cursor: str | None, up_to_date: bool, closed: bool) -> str:
    data = {"streamNextOffset": format_offset(offset)}
    if closed:
        data["streamClosed"] = True
    else:
        data["streamCursor"] = cursor
        if up_to_date:
            data["upToDate"] = True
    return event("control", json.dumps(data, separators=(",", ":")))


def encoder(content_type: str):
    if is_json(content_type):
        return lambda data: "[" + data.decode("utf-8", "replace") + "]"
    if normalize_content_type(content_type).startswith("text/"):
        return lambda data: data.decode("utf-8", "replace")
    return lambda data: base64.b64encode(data).decode("ascii")


async def serve_sse(app, request, after, client_cursor, receive, send):
    waiter = hub.register(request.name)
    try:
        snap = await reads.snapshot(request.name, after)
        row = require_live(snap.row)
        app.touch(row)
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        encode = encoder(row.content_type)
        base64_mode = not is_json(row.content_type) and not normalize_content_type(
            row.content_type
        ).startswith("text/")
        if base64_mode:
            headers["Stream-SSE-Data-Encoding"] = "base64"
        await send(
            {"type": "http.response.start", "status": 200, "headers": encode_headers(headers)}
        )
        watcher = asyncio.create_task(watch_disconnect(receive, waiter))
        try:
            await _stream(app, request, snap, after, client_cursor, waiter, encode, send)
        finally:
            watcher.cancel()
    finally:
        hub.unregister(waiter)


async def _stream(app, request, snap, after, client_cursor, waiter, encode, send):
    loop = asyncio.get_running_loop()
    ends_at = loop.time() + SSE_MAX_SECONDS
    position = snap.row.tail if after is None else after
    if not hub.watching():
        await reads.run(hub.ensure_watching, app.vendor)
    while True:
        row = snap.row
        waiter.seen = (row.tail, row.closed)
        cursor = response_cursor(client_cursor)
        chunks = []
        for index, (message_position, data) in enumerate(snap.messages):
            last = index == len(snap.messages) - 1
            at_tail = last and snap.up_to_date
            chunks.append(event("data", encode(bytes(data))))
            chunks.append(control(message_position, cursor, at_tail, at_tail and row.closed))
            position = message_position
        if not snap.messages:
            position = max(position, row.tail) if snap.up_to_date else position
            chunks.append(control(position, cursor, snap.up_to_date, row.closed))
        closed_at_tail = row.closed and snap.up_to_date
        await send(
            {"type": "http.response.body", "body": "".join(chunks).encode(), "more_body": True}
        )
        if closed_at_tail:
            break
        if snap.up_to_date:
            # Wait for more, sending a keep-alive control event on each timeout.
            while True:
                remaining = min(app.long_poll, ends_at - loop.time())
                if remaining <= 0 or waiter.ended or await waiter.wait(remaining):
                    break
                keep_alive = control(position, response_cursor(client_cursor), True, False)
                await send(
                    {"type": "http.response.body", "body": keep_alive.encode(), "more_body": True}
                )
        # Disconnect, server shutdown or the connection's time limit.
        if waiter.ended or loop.time() >= ends_at:
            break
        snap = await reads.snapshot(request.name, position)
        if snap.row is None or snap.row.soft_deleted:
            break
        app.touch(snap.row)
    if waiter.ended != "disconnect":
        await send({"type": "http.response.body", "body": b"", "more_body": False})
