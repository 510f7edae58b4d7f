"""Minimal ASGI request/response plumbing for the streams app."""

from dataclasses import dataclass
from urllib.parse import parse_qs

CORS_HEADERS = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET, POST, PUT, DELETE, HEAD, OPTIONS"),
    (
        b"access-control-allow-headers",
        b"content-type, authorization, if-none-match, Stream-Seq, Stream-TTL, "
        b"Stream-Expires-At, Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, "
        b"Stream-Forked-From, Stream-Fork-Offset, Stream-Fork-Sub-Offset",
    ),
    (
        b"access-control-expose-headers",
        b"Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, "
        b"Producer-Epoch, Producer-Seq, Producer-Expected-Seq, Producer-Received-Seq, "
        b"Stream-SSE-Data-Encoding, etag, content-type, location",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-resource-policy", b"cross-origin"),
]


@dataclass(slots=True)
class Request:
    method: str
    name: str
    headers: dict[str, str]
    query: dict[str, list[str]]
    scope: dict

    @classmethod
    def from_scope(cls, scope, name: str) -> "Request":
        headers: dict[str, str] = {}
        for key, value in scope["headers"]:
            # The first of repeated headers wins; the protocol sends each once.
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        raw_query = scope.get("query_string", b"")
        query = parse_qs(raw_query.decode("latin-1"), keep_blank_values=True) if raw_query else {}
        return cls(scope["method"], name, headers, query, scope)


def encode_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return CORS_HEADERS + [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()]


async def respond(send, status: int, headers: dict[str, str], body: bytes = b"", *, head=False):
    raw = encode_headers(headers)
    if status not in (204, 304):
        if body and "Content-Type" not in headers and "content-type" not in headers:
            raw.append((b"content-type", b"text/plain; charset=utf-8"))
        raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": b"" if head or status == 304 else body})


class BodyTooLarge(Exception):
    pass


async def read_body(receive, limit: int) -> bytes:
    chunks = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionError("client went away")
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
