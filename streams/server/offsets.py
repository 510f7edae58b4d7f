"""Stream offsets and long-poll cursors.

An offset is ``"%016d_%016d"``: a read-sequence (always 0 here) and the byte
position just past the message it names. Fixed width makes the strings sort
like the numbers, and forks share their source's offset space because a fork
continues from the source position it was cut at.
"""

import random
import re
import time

ZERO = 0
# ASCII digits only (``\d`` also matches other scripts' digits, which int() accepts), and
# ``\Z``, not ``$``, which would let a trailing newline through into the ETag header. Each part
# is bounded (positions past BEYOND all mean "the tail"; int() refuses over 4,300 digits).
OFFSET_RE = re.compile(r"^([0-9]{1,32})_([0-9]{1,32})\Z")
# Beyond every position this server mints (the read-sequence part is always 0).
BEYOND = 1 << 62

CURSOR_EPOCH = 1728432000.0  # 2024-10-09T00:00:00Z
CURSOR_INTERVAL = 20


class InvalidOffset(ValueError):
    pass


def format_offset(position: int) -> str:
    return f"{0:016d}_{position:016d}"


def parse_offset(value: str) -> int:
    """Return the position of a client offset; ``-1`` is the start (``-1``).

    ``now`` is resolved by the caller because it depends on the stream.
    """
    if value == "-1":
        return -1
    match = OFFSET_RE.match(value)
    if match is None:
        raise InvalidOffset(value)
    sequence, position = int(match[1]), int(match[2])
    if sequence > 0:
        return BEYOND
    return min(position, BEYOND)


def current_cursor(now: float | None = None) -> int:
    now = time.time() if now is None else now
    return int((now - CURSOR_EPOCH) // CURSOR_INTERVAL)


def response_cursor(client_cursor: str | None, now: float | None = None) -> str:
    """The cursor to answer with: never behind the client's (§10.1).

    A client already at or past the current interval gets its cursor plus
    1-3600 s of jitter, so a cache can't cycle between two values.
    """
    current = current_cursor(now)
    if not client_cursor:
        return str(current)
    if not (client_cursor.isascii() and client_cursor.isdigit()) or len(client_cursor) > 20:
        return str(current)
    client = int(client_cursor)
    if client < current:
        return str(current)
    jitter_seconds = random.randint(1, 3600)
    return str(client + max(1, -(-jitter_seconds // CURSOR_INTERVAL)))
