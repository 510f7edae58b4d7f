"""The Durable Streams wire format, shared by the sync and async service clients.

Everything here is free of I/O: functions build a ``Call`` (one HTTP request)
and decode an ``httpx.Response`` into a typed result or a typed error, and a
small state machine (``CatchUp``) holds the loop of a catch-up read (the
producer's lives in ``streams.producers``). The clients in ``streams.client``
only send calls and sleep.

Offsets are opaque: they are read from ``Stream-Next-Offset`` and sent back
URL-encoded, never parsed or made up. ``-1`` (start) and ``now`` (tail) are the
only sentinels.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx
import msgspec

from streams import errors

STREAM_PREFIX = "/v1/stream/"
START = "-1"
NOW = "now"

JSON = "application/json"
STREAM_TTL = "stream-ttl"
STREAM_EXPIRES_AT = "stream-expires-at"
STREAM_SEQ = "stream-seq"
STREAM_UP_TO_DATE = "stream-up-to-date"
STREAM_CURSOR = "stream-cursor"
SSE_ENCODING = "stream-sse-data-encoding"
PRODUCER_ID = "producer-id"
PRODUCER_SEQ = "producer-seq"


@dataclass(frozen=True, slots=True)
class Call:
    """One request to make: a path under the client's base URL, query, headers, body."""

    method: str
    path: str
    params: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    content: bytes | None = None
    # Live reads wait up to the server's long-poll timeout before answering.
    live: bool = False


class StreamInfo(msgspec.Struct, frozen=True):
    """What ``HEAD`` (and ``PUT``) say about a stream."""

    next_offset: str
    closed: bool = False
    content_type: str | None = None
    ttl: int | None = None
    expires_at: str | None = None


class CreateResult(msgspec.Struct, frozen=True):
    created: bool
    next_offset: str
    closed: bool = False
    content_type: str | None = None


class AppendResult(msgspec.Struct, frozen=True):
    """``next_offset`` is None for a producer duplicate (the server does not repeat it)."""

    next_offset: str | None
    closed: bool = False
    duplicate: bool = False
    producer_epoch: int | None = None
    producer_seq: int | None = None


class ReadResult(msgspec.Struct, frozen=True):
    """One read: the body (``data``), and for JSON streams each message's raw bytes.

    ``up_to_date`` means this answer reached the tail, not the end of the stream;
    ``closed`` (``Stream-Closed``) is the only end.
    """

    data: bytes
    next_offset: str
    up_to_date: bool = False
    closed: bool = False
    cursor: str | None = None
    content_type: str | None = None
    messages: tuple[bytes, ...] | None = None

    def json(self, type: Any = Any) -> list[Any]:
        """The messages of a JSON stream, decoded (to ``type`` when given)."""
        if self.messages is None:
            raise ValueError(f"not a JSON stream: {self.content_type!r}")
        decoder = msgspec.json.Decoder(type)
        return [decoder.decode(message) for message in self.messages]


def stream_path(name: str) -> str:
    """The URL path of a stream; ``/`` may separate name segments, the rest is encoded."""
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in name.split("/")):
        raise ValueError(f"invalid stream name: {name!r}")
    return STREAM_PREFIX + quote(name, safe="/")


def encode_offset(offset: str) -> str:
    """Offsets are passed through untouched (httpx percent-encodes the query), even an empty
    or malformed one: the server judges it and answers 400 (``errors.BadRequest``), which the
    proxies turn into the caller's 400. Only a non-string is a programming error here."""
    if not isinstance(offset, str):
        raise TypeError(f"an offset is a string, not {type(offset).__name__}")
    return offset


def is_json(content_type: str | None) -> bool:
    return bool(content_type) and content_type.split(";")[0].strip().lower() == JSON


def encode_message(message: Any) -> bytes:
    """A JSON message's bytes: ``bytes`` pass through as already-encoded JSON."""
    if isinstance(message, bytes | bytearray | memoryview):
        return bytes(message)
    return msgspec.json.encode(message)


def batch_body(messages: Iterable[Any]) -> bytes:
    """A JSON array of messages; the server appends all of it or none (one request)."""
    encoded = [encode_message(m) for m in messages]
    if not encoded:
        raise ValueError("a batch needs at least one message (servers reject [])")
    return b"[" + b",".join(encoded) + b"]"


def _flag(value: bool) -> tuple[tuple[str, str], ...]:
    return ((errors.STREAM_CLOSED, "true"),) if value else ()


def create_call(
    name: str,
    *,
    content_type: str = JSON,
    ttl: int | None = None,
    expires_at: datetime | str | None = None,
    closed: bool = False,
    body: bytes | None = None,
) -> Call:
    if ttl is not None and expires_at is not None:
        raise ValueError("give ttl or expires_at, not both")
    headers = [("content-type", content_type)]
    if ttl is not None:
        headers.append((STREAM_TTL, str(int(ttl))))
    if expires_at is not None:
        if isinstance(expires_at, datetime):
            expires_at = expires_at.isoformat().replace("+00:00", "Z")
        headers.append((STREAM_EXPIRES_AT, expires_at))
    headers.extend(_flag(closed))
    return Call("PUT", stream_path(name), headers=tuple(headers), content=body or None)


def append_call(
    name: str,
    body: bytes,
    *,
    content_type: str = JSON,
    seq: str | None = None,
    close: bool = False,
    producer: tuple[str, int, int] | None = None,
) -> Call:
    headers = [("content-type", content_type)] if body else []
    if seq is not None:
        headers.append((STREAM_SEQ, seq))
    if producer is not None:
        producer_id, epoch, producer_seq = producer
        headers += [
            (PRODUCER_ID, producer_id),
            (errors.PRODUCER_EPOCH, str(epoch)),
            (PRODUCER_SEQ, str(producer_seq)),
        ]
    headers.extend(_flag(close))
    return Call("POST", stream_path(name), headers=tuple(headers), content=body)


def read_params(
    offset: str = START,
    *,
    live: str | None = None,
    cursor: str | None = None,
    page_bytes: int | None = None,
):
    """Query params of a read, sorted (cursor, live, offset) as the spec asks for CDN collapsing.

    A live read always names its offset; httpx percent-encodes the value. ``page_bytes`` asks
    arbe's embedded server for a smaller catch-up page; other servers ignore it.
    """
    params = [("offset", encode_offset(offset))]
    if page_bytes:
        params.append(("arbe_page_bytes", str(page_bytes)))
    if cursor:
        params.append(("cursor", cursor))
    if live:
        params.append(("live", live))
    return tuple(sorted(params))


def read_call(
    name: str, offset: str = START, *, live: str | None = None, cursor=None, page_bytes=None
) -> Call:
    params = read_params(offset, live=live, cursor=cursor, page_bytes=page_bytes)
    return Call("GET", stream_path(name), params=params, live=bool(live))


def raise_for_status(response: httpx.Response) -> None:
    if response.status_code < 300 or response.status_code == 304:
        return
    request = response.request
    raise errors.error_for_status(
        request.method, response.status_code, response.headers, str(request.url)
    )


def _closed(headers: httpx.Headers) -> bool:
    return headers.get(errors.STREAM_CLOSED, "").lower() == "true"


def _int(headers: httpx.Headers, name: str) -> int | None:
    value = headers.get(name)
    # isdigit() alone takes "²" (Latin-1, so it can arrive in a header), which int() refuses,
    # as it does more than 4,300 digits.
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > 20:
        return None
    return int(value)


def decode_create(response: httpx.Response) -> CreateResult:
    raise_for_status(response)
    headers = response.headers
    return CreateResult(
        created=response.status_code == 201,
        next_offset=headers.get(errors.STREAM_NEXT_OFFSET, ""),
        closed=_closed(headers),
        content_type=headers.get("content-type"),
    )


def decode_head(response: httpx.Response) -> StreamInfo:
    raise_for_status(response)
    headers = response.headers
    return StreamInfo(
        next_offset=headers[errors.STREAM_NEXT_OFFSET],
        closed=_closed(headers),
        content_type=headers.get("content-type"),
        ttl=_int(headers, STREAM_TTL),
        expires_at=headers.get(STREAM_EXPIRES_AT),
    )


def decode_append(response: httpx.Response) -> AppendResult:
    raise_for_status(response)
    headers = response.headers
    producer_seq = _int(headers, PRODUCER_SEQ)
    return AppendResult(
        next_offset=headers.get(errors.STREAM_NEXT_OFFSET),
        closed=_closed(headers),
        # With producer headers a new append is 200 and a duplicate 204.
        duplicate=response.status_code == 204 and producer_seq is not None,
        producer_epoch=_int(headers, errors.PRODUCER_EPOCH),
        producer_seq=producer_seq,
    )


def split_messages(data: bytes) -> tuple[bytes, ...]:
    """The raw bytes of each message of a JSON read (one array per response)."""
    if not data.strip():
        return ()
    return tuple(bytes(raw) for raw in msgspec.json.decode(data, type=list[msgspec.Raw]))


def decode_read(response: httpx.Response, offset: str) -> ReadResult:
    """A catch-up or long-poll answer; 204 (long-poll timeout or EOF) has no data."""
    raise_for_status(response)
    headers = response.headers
    content_type = headers.get("content-type")
    data = response.content if response.status_code == 200 else b""
    json_mode = is_json(content_type)
    return ReadResult(
        data=data,
        next_offset=headers.get(errors.STREAM_NEXT_OFFSET, offset),
        up_to_date=headers.get(STREAM_UP_TO_DATE, "").lower() == "true",
        closed=_closed(headers),
        cursor=headers.get(STREAM_CURSOR),
        content_type=content_type,
        # A 204 carries no content type: it holds zero messages whatever the stream's type.
        messages=split_messages(data) if json_mode else (() if not data else None),
    )


def has_data(result: ReadResult) -> bool:
    return bool(result.messages) if result.messages is not None else bool(result.data)


def confirm_eof(result: ReadResult) -> bool:
    """Whether an empty live answer saying ``Stream-Closed`` needs a catch-up read to be sure.

    A server may wake a waiting reader with "closed" for an append-and-close without
    handing over that last append (the reference server 0.3.7 does, for long-poll
    and SSE). Streams never reopen, so one catch-up read from the offset settles it.
    """
    return result.closed and not has_data(result)


def join_reads(pages: list[ReadResult]) -> ReadResult:
    """One result for a catch-up that took several pages."""
    last = pages[-1]
    if len(pages) == 1:
        return last
    if last.messages is not None or pages[0].messages is not None:
        messages = tuple(m for page in pages for m in page.messages or ())
        data = b"[" + b",".join(messages) + b"]"
    else:
        messages, data = None, b"".join(page.data for page in pages)
    return msgspec.structs.replace(last, data=data, messages=messages)


def sse_result(chunks: list[bytes], control, content_type: str | None) -> ReadResult:
    """A ``ReadResult`` for the data events before one SSE control event."""
    if is_json(content_type):
        # Each JSON data event carries an array of messages.
        messages = tuple(m for chunk in chunks for m in split_messages(chunk))
        data = b"[" + b",".join(messages) + b"]"
    else:
        messages, data = None, b"".join(chunks)
    return ReadResult(
        data=data,
        next_offset=control.streamNextOffset,
        up_to_date=control.upToDate or control.streamClosed,
        closed=control.streamClosed,
        cursor=control.streamCursor,
        content_type=content_type,
        messages=messages,
    )


@dataclass(slots=True)
class CatchUp:
    """Reads pages from ``offset`` until one says ``Stream-Up-To-Date`` (servers may page)."""

    name: str
    offset: str = START
    pages: list[ReadResult] = field(default_factory=list)

    def call(self) -> Call:
        return read_call(self.name, self.offset)

    def feed(self, response: httpx.Response) -> bool:
        """Take one answer; True when the read is complete."""
        page = decode_read(response, self.offset)
        self.pages.append(page)
        # A page that did not advance cannot be followed by another: stop rather than spin.
        done = page.up_to_date or page.closed or page.next_offset == self.offset
        self.offset = page.next_offset
        return done

    def result(self) -> ReadResult:
        return join_reads(self.pages)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with full jitter, honouring ``Retry-After`` when the server sent it."""

    attempts: int = 5
    base: float = 0.1
    cap: float = 5.0

    def delay(self, attempt: int, error: errors.StreamError | None = None) -> float:
        hint = getattr(error, "retry_after", None)
        if hint is not None:
            return min(hint, self.cap * 6)
        return random.uniform(0, min(self.cap, self.base * 2**attempt))
