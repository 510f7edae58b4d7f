"""The Durable Streams protocol as a raw ASGI application.

Writes go to the group-commit writer, reads to a small thread pool; live
reads wait on the wake hub between short reads. See docs/streams-server.md.
"""

import asyncio
import hmac
import logging
import re
from urllib.parse import quote

from django.conf import settings
from django.db import connections

from streams.server import reads, store
from streams.server.http import BodyTooLarge, Request, read_body, respond
from streams.server.offsets import InvalidOffset, format_offset, parse_offset, response_cursor
from streams.server.ops import AppendOp, CreateOp, DeleteOp, Outcome, TouchOp
from streams.server.protocol import (
    ProtocolError,
    check_stream_name,
    create_content_type,
    is_json,
    parse_expires_at,
    parse_flag,
    parse_producer,
    parse_sub_offset,
    parse_ttl,
    require_live,
)
from streams.server.sse import serve_sse
from streams.server.wake import hub, watch_disconnect
from streams.server.writer import writer

logger = logging.getLogger(__name__)

PREFIX = "/v1/stream/"
# Largest request body accepted (413 above it); the conformance suite's 10 MiB probe gets 413.
MAX_BODY = 8 * 1024 * 1024
# ASCII digits only (``\d`` would let other scripts' digits reach the ETag header).
_READ_OFFSET_RE = re.compile(r"^(-1|now|[0-9]{1,32}_[0-9]{1,32})\Z")
_FORK_OFFSET_RE = re.compile(r"^[0-9]{1,32}_[0-9]{1,32}\Z")
CACHEABLE = "public, max-age=60, stale-while-revalidate=300"
# arbe's own readers may ask for a smaller catch-up page (an older window of a long thread
# needs a few hundred entries, not 4 MiB). Not part of the protocol: other servers ignore
# the parameter and answer their usual page, which is still correct.
PAGE_BYTES = "arbe_page_bytes"
MIN_PAGE_BYTES = 4096


def page_budget(values: list[str] | None) -> int:
    if not values:
        return store.READ_BUDGET
    value = values[0]
    if len(values) > 1 or not (value.isascii() and value.isdigit()) or len(value) > 12:
        raise ProtocolError(400, f"{PAGE_BYTES} must be one whole number of bytes")
    return max(MIN_PAGE_BYTES, min(int(value), store.READ_BUDGET))


def stream_name(path: str) -> str:
    """The stream a ``Stream-Forked-From`` value names (a path or a full URL)."""
    if "://" in path:
        path = "/" + path.split("://", 1)[1].split("/", 1)[-1]
    return path[len(PREFIX) :] if path.startswith(PREFIX) else path.lstrip("/")


class StreamsApp:
    """ASGI3 app serving ``/v1/stream/<name>``; ``secret`` enables bearer auth.

    ``base_url`` is where clients reach this server: ``Location`` is built from it, never
    from the request's ``Host`` (which the caller controls).
    """

    def __init__(
        self,
        secret: str | None = None,
        long_poll_ms: int | None = None,
        base_url: str | None = None,
    ):
        self.secret = secret
        self.long_poll = (long_poll_ms or settings.DURABLE_STREAMS_LONG_POLL_MS) / 1000
        self.base_url = (base_url or settings.ARBE_INTERNAL_URL).rstrip("/")
        self.alias = "default"
        self.vendor = connections[self.alias].vendor

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self.lifespan(receive, send)
        if scope["type"] != "http":
            raise ValueError(f"streams app serves HTTP, not {scope['type']}")
        path = scope["path"]
        if scope["method"] == "OPTIONS":
            return await respond(send, 204, {})
        if self.secret and not self.authorized(scope):
            return await respond(send, 401, {"WWW-Authenticate": "Bearer"}, b"Unauthorized")
        if not path.startswith(PREFIX) or len(path) == len(PREFIX):
            return await respond(send, 404, {}, b"Not found")
        name = path[len(PREFIX) :]
        if name == "__ds" or name.startswith("__ds/"):
            return await respond(send, 404, {}, b"Reserved path")
        request = Request.from_scope(scope, name)
        handler = self.handlers.get(request.method)
        if handler is None:
            return await respond(send, 405, {"Allow": "GET, HEAD, POST, PUT, DELETE"}, b"")
        try:
            check_stream_name(name)
            await handler(self, request, receive, send)
        except ProtocolError as error:
            await respond(send, error.status, error.headers, error.message.encode())
        except BodyTooLarge:
            await respond(send, 413, {}, f"Body larger than {MAX_BODY} bytes".encode())
        except store.DB_ERRORS:
            logger.exception("streams storage error")
            await respond(send, 503, {"Retry-After": "1"}, b"Storage unavailable, retry")
        except ConnectionError:
            return

    async def lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    def authorized(self, scope) -> bool:
        for key, value in scope["headers"]:
            if key == b"authorization":
                expected = f"Bearer {self.secret}".encode()
                return hmac.compare_digest(value, expected)
        return False

    async def body(self, request: Request, receive) -> bytes:
        length = request.headers.get("content-length")
        # ASCII digits only ("²".isdigit() is true), and few enough for int().
        digits = bool(length) and length.isascii() and length.isdigit()
        if digits and (len(length) > 15 or int(length) > MAX_BODY):
            raise BodyTooLarge
        return await read_body(receive, MAX_BODY)

    def location(self, name: str) -> str:
        """The stream's URL: the configured base and the name, percent-encoded (ASCII)."""
        return f"{self.base_url}{PREFIX}{quote(name, safe='/')}"

    async def write(self, op) -> Outcome:
        return await writer.submit_async(op)

    # PUT -----------------------------------------------------------------

    async def create(self, request: Request, receive, send):
        h = request.headers
        ttl_header, expires_header = h.get("stream-ttl"), h.get("stream-expires-at")
        if ttl_header is not None and expires_header is not None:
            raise ProtocolError(400, "Cannot specify both Stream-TTL and Stream-Expires-At")
        forked_from = h.get("stream-forked-from")
        fork_offset = h.get("stream-fork-offset")
        sub_header = h.get("stream-fork-sub-offset")
        if sub_header is not None and forked_from is None:
            raise ProtocolError(400, "Stream-Fork-Sub-Offset requires Stream-Forked-From")
        if fork_offset is not None and not _FORK_OFFSET_RE.match(fork_offset):
            raise ProtocolError(400, "Invalid Stream-Fork-Offset format")
        op = CreateOp(
            name=request.name,
            content_type=create_content_type(h.get("content-type")),
            ttl_seconds=parse_ttl(ttl_header),
            expires_at=expires_header,
            expires_at_ts=parse_expires_at(expires_header),
            closed=parse_flag(h.get("stream-closed")),
            body=await self.body(request, receive),
            forked_from=stream_name(forked_from) if forked_from else None,
            fork_offset=parse_offset(fork_offset) if fork_offset else None,
            fork_sub_offset=parse_sub_offset(sub_header),
        )
        outcome = await self.write(op)
        if outcome.status == 201:
            outcome.headers["Location"] = self.location(request.name)
        await respond(send, outcome.status, outcome.headers, outcome.body)

    # POST ----------------------------------------------------------------

    async def append(self, request: Request, receive, send):
        h = request.headers
        producer = parse_producer(
            h.get("producer-id"), h.get("producer-epoch"), h.get("producer-seq")
        )
        close = parse_flag(h.get("stream-closed"))
        body = await self.body(request, receive)
        if not body and not close:
            raise ProtocolError(400, "Empty body")
        content_type = h.get("content-type")
        if body and not content_type:
            raise ProtocolError(400, "Content-Type header is required")
        op = AppendOp(request.name, content_type, body, close, h.get("stream-seq"), producer)
        outcome = await self.write(op)
        await respond(send, outcome.status, outcome.headers, outcome.body)

    # DELETE --------------------------------------------------------------

    async def delete(self, request: Request, receive, send):
        outcome = await self.write(DeleteOp(request.name))
        await respond(send, outcome.status, outcome.headers, outcome.body)

    # HEAD ----------------------------------------------------------------

    async def head(self, request: Request, receive, send):
        row = (await reads.snapshot(request.name, with_messages=False)).row
        if row is None:
            return await respond(send, 404, {"Content-Type": "text/plain"}, head=True)
        if row.soft_deleted:
            return await respond(send, 410, {"Content-Type": "text/plain"}, head=True)
        tail = format_offset(row.tail)
        headers = {
            "Content-Type": row.content_type,
            "Stream-Next-Offset": tail,
            "Cache-Control": "no-store",
            "ETag": f'"{row.id}:-1:{tail}{":c" if row.closed else ""}"',
        }
        if row.closed:
            headers["Stream-Closed"] = "true"
        if row.ttl_seconds is not None:
            headers["Stream-TTL"] = str(row.ttl_seconds)
        if row.expires_at:
            headers["Stream-Expires-At"] = row.expires_at
        await respond(send, 200, headers, head=True)

    # GET -----------------------------------------------------------------

    async def read(self, request: Request, receive, send):
        offsets = request.query.get("offset")
        offset = None
        if offsets is not None:
            if len(offsets) > 1:
                raise ProtocolError(400, "Multiple offset parameters not allowed")
            offset = offsets[0]
            if not _READ_OFFSET_RE.match(offset):
                raise ProtocolError(400, "Invalid offset format")
        live = (request.query.get("live") or [None])[0]
        cursor = (request.query.get("cursor") or [None])[0]
        budget = page_budget(request.query.get(PAGE_BYTES))
        if live in ("long-poll", "sse") and offset is None:
            raise ProtocolError(400, f"{'SSE' if live == 'sse' else 'Long-poll'} requires offset")
        try:
            after = None if offset == "now" else parse_offset(offset or "-1")
        except InvalidOffset:
            raise ProtocolError(400, "Invalid offset format") from None
        if live == "sse":
            return await serve_sse(self, request, after, cursor, receive, send)
        waiter = hub.register(request.name) if live == "long-poll" else None
        try:
            await self._read(request, offset, after, live, cursor, waiter, receive, send, budget)
        finally:
            if waiter is not None:
                hub.unregister(waiter)

    async def _read(self, request, offset, after, live, cursor, waiter, receive, send, budget):
        snap = await reads.snapshot(
            request.name, after, with_messages=offset != "now" or live, budget=budget
        )
        row = require_live(snap.row)
        self.touch(row)
        tail = format_offset(row.tail)
        if offset == "now" and live != "long-poll":
            headers = {
                "Content-Type": row.content_type,
                "Stream-Next-Offset": tail,
                "Stream-Up-To-Date": "true",
                "Cache-Control": "no-store",
            }
            if row.closed:
                headers["Stream-Closed"] = "true"
            return await respond(send, 200, headers, b"[]" if is_json(row.content_type) else b"")
        if after is None:
            after = row.tail
        if waiter is not None and not snap.messages and after == row.tail:
            if row.closed:
                headers = {"Stream-Next-Offset": tail, "Stream-Up-To-Date": "true"}
                headers["Stream-Closed"] = "true"
                return await respond(send, 204, headers)
            snap = await self.wait(request, after, waiter, snap, receive)
            if snap is None or not snap.messages:
                closed = snap is not None and snap.row is not None and snap.row.closed
                headers = {
                    "Stream-Next-Offset": format_offset(after),
                    "Stream-Up-To-Date": "true",
                    "Stream-Cursor": response_cursor(cursor),
                    "Cache-Control": "no-store",
                }
                if closed:
                    headers["Stream-Closed"] = "true"
                return await respond(send, 204, headers)
            row = snap.row
        await self.send_messages(request, send, snap, offset, live, cursor)

    async def wait(self, request, after, waiter, snap, receive):
        """Wait for data past ``after``; ``None`` on timeout or shutdown, else the new snapshot.

        Ends early on shutdown (answered like a timeout) and when the client
        disconnects (``ConnectionError``: nothing to answer).
        """
        if not hub.watching():
            await reads.run(hub.ensure_watching, self.vendor)
        waiter.seen = (snap.row.tail, snap.row.closed)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.long_poll
        watcher = asyncio.create_task(watch_disconnect(receive, waiter))
        try:
            while True:
                remaining = deadline - loop.time()
                waiter.delivery = None
                woken = remaining > 0 and not waiter.ended and await waiter.wait(remaining)
                if waiter.ended == "disconnect":
                    raise ConnectionError("client went away")
                if not woken or waiter.ended:
                    return snap if snap.row.closed else None
                delivered = waiter.delivery
                if delivered is not None and delivered[0] == after:
                    # Exactly the messages past ``after``, just committed: no re-read.
                    snap = reads.Snapshot(delivered[1], delivered[2], True)
                else:
                    snap = await reads.snapshot(request.name, after)
                if snap.row is None or snap.row.soft_deleted:
                    raise ProtocolError(404, "Stream not found")
                self.touch(snap.row)
                waiter.seen = (snap.row.tail, snap.row.closed)
                if snap.messages or snap.row.closed:
                    return snap
        finally:
            watcher.cancel()

    async def send_messages(self, request, send, snap, offset, live, cursor):
        row = snap.row
        messages = snap.messages
        if is_json(row.content_type):
            body = b"[" + b",".join(data for _, data in messages) + b"]"
        else:
            body = b"".join(data for _, data in messages)
        next_offset = format_offset(messages[-1][0] if messages else row.tail)
        closed = row.closed and snap.up_to_date
        headers = {"Content-Type": row.content_type, "Stream-Next-Offset": next_offset}
        if snap.up_to_date:
            headers["Stream-Up-To-Date"] = "true"
        if closed:
            headers["Stream-Closed"] = "true"
        etag = f'"{row.id}:{offset or "-1"}:{next_offset}{":c" if closed else ""}"'
        headers["ETag"] = etag
        if live == "long-poll":
            headers["Stream-Cursor"] = response_cursor(cursor)
            headers["Cache-Control"] = CACHEABLE
        else:
            # History is immutable; the tail can still grow, so revalidate it (ETag).
            headers["Cache-Control"] = "no-cache" if snap.up_to_date else CACHEABLE
        if request.headers.get("if-none-match") == etag:
            return await respond(send, 304, {"ETag": etag})
        await respond(send, 200, headers, body)

    def touch(self, row) -> None:
        """Slide the TTL (reads count as access); a no-op for streams without one."""
        if row.ttl_seconds is not None:
            writer.submit_nowait(TouchOp(row.name))

    handlers = {"PUT": create, "POST": append, "DELETE": delete, "HEAD": head, "GET": read}


FROM_SETTINGS = object()


def create_app(
    secret=FROM_SETTINGS, long_poll_ms: int | None = None, base_url: str | None = None
) -> StreamsApp:
    """The embedded server: bearer auth with ``settings.DURABLE_STREAMS_SECRET``
    unless another ``secret`` is given (``None`` serves open). ``base_url`` defaults to
    ``settings.ARBE_INTERNAL_URL``, where the site mounts it."""
    if secret is FROM_SETTINGS:
        secret = settings.DURABLE_STREAMS_SECRET or None
    return StreamsApp(secret=secret, long_poll_ms=long_poll_ms, base_url=base_url)
