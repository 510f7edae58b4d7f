"""Typed errors of the Durable Streams clients.

The mapping from a response to an error uses the status code and the protocol
headers only, never the body text: bodies are free text that servers word
differently (docs/streams-client.md has the table).
"""

from __future__ import annotations

from collections.abc import Mapping

STREAM_CLOSED = "stream-closed"
STREAM_NEXT_OFFSET = "stream-next-offset"
PRODUCER_EPOCH = "producer-epoch"
PRODUCER_EXPECTED_SEQ = "producer-expected-seq"
PRODUCER_RECEIVED_SEQ = "producer-received-seq"
RETRY_AFTER = "retry-after"


class StreamError(Exception):
    """Base of every client error; ``status`` is None when no response came back."""

    # Whether sending the same request again may succeed (connection trouble, 5xx, 429).
    transient = False

    def __init__(self, message: str = "", *, status: int | None = None, url: str = ""):
        super().__init__(message or self.__class__.__name__)
        self.status = status
        self.url = url


class TransportError(StreamError):
    """No usable response: connect failure, dropped connection, timeout."""

    transient = True


class BadRequest(StreamError):
    """400: malformed headers, offset or body (an empty JSON array, invalid JSON)."""


class Unauthorized(StreamError):
    """401: missing or wrong credentials."""


class Forbidden(StreamError):
    """403 without a ``Producer-Epoch`` header: the credentials may not do this."""


class StreamNotFound(StreamError):
    """404: no such stream (or it expired)."""


class StreamExists(StreamError):
    """409 on create: the stream exists with another configuration."""


class StreamClosed(StreamError):
    """409 with ``Stream-Closed: true``: the stream is closed; ``final_offset`` is its tail."""

    def __init__(self, message: str = "", *, final_offset: str | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.final_offset = final_offset


class SeqConflict(StreamError):
    """409 on append: ``Stream-Seq`` did not increase, or the content type differs."""


class ProducerStale(StreamError):
    """403 with ``Producer-Epoch``: a newer epoch of this producer id has written."""

    def __init__(self, message: str = "", *, current_epoch: int, **kwargs):
        super().__init__(message, **kwargs)
        self.current_epoch = current_epoch


class ProducerSeqGap(StreamError):
    """409 with ``Producer-Expected-Seq``: a sequence number was skipped."""

    def __init__(self, message: str = "", *, expected: int, received: int, **kwargs):
        super().__init__(message, **kwargs)
        self.expected = expected
        self.received = received


class Gone(StreamError):
    """410: the offset is before retained data, or the stream is soft-deleted."""


class PayloadTooLarge(StreamError):
    """413: the body is over the server's limit."""


class RateLimited(StreamError):
    """429; ``retry_after`` is the server's hint in seconds, when it sent one."""

    transient = True

    def __init__(self, message: str = "", *, retry_after: float | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(StreamError):
    """5xx (and any status this client does not know)."""

    transient = True

    def __init__(self, message: str = "", *, retry_after: float | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header; HTTP dates are ignored (servers here send delays)."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _int_header(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def error_for_status(
    method: str, status: int, headers: Mapping[str, str], url: str = ""
) -> StreamError:
    """The typed error for an error response, from status and headers alone.

    ``headers`` must look names up case-insensitively (``httpx.Headers`` does).
    """
    message = f"{method} {url} -> {status}"
    common = {"status": status, "url": url}
    if status == 400:
        return BadRequest(message, **common)
    if status == 401:
        return Unauthorized(message, **common)
    if status == 403:
        epoch = _int_header(headers, PRODUCER_EPOCH)
        if epoch is not None:
            return ProducerStale(message, current_epoch=epoch, **common)
        return Forbidden(message, **common)
    if status == 404:
        return StreamNotFound(message, **common)
    if status == 409:
        if headers.get(STREAM_CLOSED, "").lower() == "true":
            return StreamClosed(message, final_offset=headers.get(STREAM_NEXT_OFFSET), **common)
        expected = _int_header(headers, PRODUCER_EXPECTED_SEQ)
        if expected is not None:
            received = _int_header(headers, PRODUCER_RECEIVED_SEQ)
            return ProducerSeqGap(
                message,
                expected=expected,
                received=received if received is not None else -1,
                **common,
            )
        if method == "PUT":
            return StreamExists(message, **common)
        return SeqConflict(message, **common)
    if status == 410:
        return Gone(message, **common)
    if status == 413:
        return PayloadTooLarge(message, **common)
    retry_after = parse_retry_after(headers.get(RETRY_AFTER))
    if status == 429:
        return RateLimited(message, retry_after=retry_after, **common)
    return ServerError(message, retry_after=retry_after, **common)
