"""Write requests handed to the writer, and what it answers."""

from concurrent.futures import Future
from dataclasses import dataclass, field

from streams.server.protocol import Producer


@dataclass(slots=True)
class Outcome:
    """A response decided by the writer (or a reader)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass(slots=True)
class CreateOp:
    name: str
    content_type: str | None
    ttl_seconds: int | None
    expires_at: str | None
    expires_at_ts: float | None
    closed: bool
    body: bytes
    forked_from: str | None = None
    fork_offset: int | None = None
    fork_sub_offset: int = 0
    future: Future | None = None


@dataclass(slots=True)
class AppendOp:
    """An append (``body`` non-empty), optionally closing; or a close-only (``body`` empty)."""

    name: str
    content_type: str | None
    body: bytes
    close: bool = False
    seq: str | None = None
    producer: Producer | None = None
    future: Future | None = None


@dataclass(slots=True)
class DeleteOp:
    name: str
    future: Future | None = None


@dataclass(slots=True)
class TouchOp:
    """Slide a TTL after a read; also collects the stream when it has expired."""

    name: str
    future: Future | None = None
