"""Pure parts of the protocol: header validation and JSON-mode bodies.

Nothing here touches the database, so the rules can be unit-tested alone.
"""

import re
from dataclasses import dataclass
from datetime import UTC, datetime

import msgspec

JSON_TYPE = "application/json"
DEFAULT_TYPE = "application/octet-stream"
MAX_SAFE_INTEGER = 2**53 - 1

# Numbers are ASCII digits (``\d`` matches other scripts' digits too, and int() takes them);
# ``\Z`` because ``$`` also matches before a trailing newline. Lengths are bounded: 18 digits
# fit a 64-bit column, and int() refuses over 4,300 digits with a ValueError.
_TTL_RE = re.compile(r"^(0|[1-9][0-9]{0,17})\Z")
_INT_RE = re.compile(r"^[0-9]{1,20}\Z")
_YEAR_RE = re.compile(r"^[0-9]{4}")
_CONTENT_TYPE_RE = re.compile(r"^[\w.+-]+/[\w.+-]+")
# What a stream name may hold: it must fit in a header as it is (``Stream-Forked-From`` names
# a stream), so Latin-1 without control characters (C0, DEL, C1).
_NAME_REFUSED = re.compile(r"[^\x20-\x7e\xa0-\xff]")
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_RAW = msgspec.json.Decoder(msgspec.Raw)


class ProtocolError(Exception):
    """A request the protocol rejects: ``status`` and a short text body."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


@dataclass(frozen=True, slots=True)
class Producer:
    id: str
    epoch: int
    seq: int


def check_stream_name(name: str) -> None:
    """400 for a name that could not be put in a header, before anything is created."""
    if _NAME_REFUSED.search(name):
        raise ProtocolError(400, "Invalid stream name: Latin-1 without control characters only")


def require_live(row):
    """The stream row, if there is one to act on: 404 when missing, 410 once soft-deleted
    (a deleted stream that still has forks)."""
    if row is None:
        raise ProtocolError(404, "Stream not found")
    if row.soft_deleted:
        raise ProtocolError(410, "Stream is gone")
    return row


def normalize_content_type(value: str | None) -> str:
    """The media type alone, lower-cased (``Application/JSON; charset=utf-8`` → JSON)."""
    if not value:
        return ""
    return value.split(";", 1)[0].strip().lower()


def is_json(content_type: str | None) -> bool:
    return normalize_content_type(content_type) == JSON_TYPE


def create_content_type(value: str | None) -> str | None:
    """The type a PUT asks for; ``None`` when absent or unusable (the caller defaults it)."""
    if not value or not value.strip() or not _CONTENT_TYPE_RE.match(value.strip()):
        return None
    return value.strip()


def parse_flag(value: str | None) -> bool:
    """``Stream-Closed``: only ``true`` (any case) counts; anything else is ignored."""
    return value is not None and value.strip().lower() == "true"


def parse_ttl(value: str | None) -> int | None:
    if value is None:
        return None
    if not _TTL_RE.match(value):
        raise ProtocolError(400, "Invalid Stream-TTL value")
    return int(value)


def parse_expires_at(value: str | None) -> float | None:
    """An RFC 3339 timestamp as a unix time; naive times are taken as UTC."""
    if value is None:
        return None
    text = value.strip()
    if not text.isascii() or not _YEAR_RE.match(text):
        raise ProtocolError(400, "Invalid Stream-Expires-At timestamp")
    if text[-1] in "zZ":
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ProtocolError(400, "Invalid Stream-Expires-At timestamp") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def parse_sub_offset(value: str | None) -> int:
    if value is None:
        return 0
    if not _TTL_RE.match(value):
        raise ProtocolError(400, "Invalid Stream-Fork-Sub-Offset format")
    return int(value)


def parse_producer(producer_id: str | None, epoch: str | None, seq: str | None) -> Producer | None:
    """The three producer headers, all or none (400 otherwise)."""
    present = (producer_id is not None, epoch is not None, seq is not None)
    if not any(present):
        return None
    if not all(present):
        raise ProtocolError(
            400,
            "All producer headers (Producer-Id, Producer-Epoch, Producer-Seq) "
            "must be provided together",
        )
    if producer_id == "":
        raise ProtocolError(400, "Invalid Producer-Id: must not be empty")
    numbers = []
    for name, text in (("Producer-Epoch", epoch), ("Producer-Seq", seq)):
        if not _INT_RE.match(text) or int(text) > MAX_SAFE_INTEGER:
            raise ProtocolError(400, f"Invalid {name}: must be a non-negative integer")
        numbers.append(int(text))
    return Producer(producer_id, numbers[0], numbers[1])


def json_messages(body: bytes, *, allow_empty: bool = False) -> bytes:
    """Validate a JSON-mode body and flatten one level of array.

    Returns the stored form: the messages' own bytes joined with commas, so a
    read is ``[`` + rows joined by ``,`` + ``]`` without re-encoding anything.
    An empty array is ``b""`` when ``allow_empty`` (PUT), else an error.
    """
    stripped = body.strip()
    try:
        if stripped[:1] == b"[":
            items = _RAW_LIST.decode(stripped)
            if not items:
                if allow_empty:
                    return b""
                raise ProtocolError(400, "Empty arrays are not allowed")
            return b",".join(bytes(item).strip() for item in items)
        return bytes(_RAW.decode(stripped))
    except (msgspec.DecodeError, UnicodeDecodeError):
        raise ProtocolError(400, "Invalid JSON") from None
    except RecursionError:  # valid JSON, but deeper than any reader could follow
        raise ProtocolError(400, "JSON nested too deeply") from None


def json_values(stored: bytes) -> list[bytes]:
    """The messages inside one stored JSON row (the inverse of :func:`json_messages`)."""
    return [bytes(item).strip() for item in _RAW_LIST.decode(b"[" + stored + b"]")]
