"""Raw-SQL access to the stream tables, shared by readers and the writer.

Every function takes a DB-API cursor from a Django connection that the
calling thread owns; none of them opens transactions.
"""

import time
from dataclasses import dataclass, fields

from django.db import DatabaseError

STREAM_COLUMNS = (
    "id, name, content_type, ttl_seconds, expires_at, expires_at_ts, created_at, accessed_at, "
    "tail, closed, closed_by_id, closed_by_epoch, closed_by_seq, last_seq, forked_from_id, "
    "fork_offset, fork_sub_offset, ref_count, soft_deleted"
)
# Rows per query while paging through messages.
PAGE_ROWS = 2000
# A catch-up response stops after this many bytes; the client loops (no Up-To-Date).
READ_BUDGET = 4 * 1024 * 1024
UNBOUNDED = 1 << 62


@dataclass(slots=True)
class StreamRow:
    id: int
    name: str
    content_type: str
    ttl_seconds: int | None
    expires_at: str | None
    expires_at_ts: float | None
    created_at: float
    accessed_at: float
    tail: int
    closed: bool
    closed_by_id: str | None
    closed_by_epoch: int | None
    closed_by_seq: int | None
    last_seq: str | None
    forked_from_id: int | None
    fork_offset: int | None
    fork_sub_offset: int
    ref_count: int
    soft_deleted: bool

    def expired(self, now: float) -> bool:
        if self.expires_at_ts is not None and now >= self.expires_at_ts:
            return True
        return self.ttl_seconds is not None and now >= self.accessed_at + self.ttl_seconds


UPDATE_COLUMNS = [f.name for f in fields(StreamRow) if f.name not in ("id", "name")]
# What the writer changes after a create, with PostgreSQL array types for bulk updates.
MUTABLE_COLUMNS = [
    ("tail", "bigint"), ("closed", "boolean"), ("closed_by_id", "text"),
    ("closed_by_epoch", "bigint"), ("closed_by_seq", "bigint"), ("last_seq", "text"),
    ("accessed_at", "float8"), ("ref_count", "integer"), ("soft_deleted", "boolean"),
]  # fmt: skip


try:
    from psycopg import Error as _PsycopgError
except ImportError:  # pragma: no cover - psycopg is a dependency
    _PsycopgError = ()

# Errors from Django's cursors and from the raw psycopg cursors of cursor_for().
DB_ERRORS = (DatabaseError, _PsycopgError)


def cursor_for(connection):
    """A cursor on a Django connection for the raw queries here.

    On PostgreSQL it is a server-side-binding psycopg cursor with binary
    results and prepared statements: Django's default client-side binding
    would inline every bytea as escaped text and re-parse it, which dominates
    large reads and batches.
    """
    if connection.vendor != "postgresql":
        return connection.cursor()
    import psycopg

    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # Django turns psycopg's prepared statements off (for transaction-mode poolers);
        # ours are a few fixed queries run thousands of times, where planning each one
        # costs more than running it. OPTIONS["prepare_threshold"] = None keeps them off.
        raw.prepare_threshold = connection.settings_dict["OPTIONS"].get("prepare_threshold", 2)
    cursor = psycopg.Cursor(raw)
    cursor.format = psycopg.pq.Format.BINARY
    return cursor


def row_from_values(values) -> StreamRow:
    row = StreamRow(*values)
    # SQLite hands booleans back as integers.
    row.closed = bool(row.closed)
    row.soft_deleted = bool(row.soft_deleted)
    return row


def load_stream(cursor, name: str, *, lock: bool = False) -> StreamRow | None:
    suffix = " FOR UPDATE" if lock else ""
    cursor.execute(f"SELECT {STREAM_COLUMNS} FROM streams_stream WHERE name = %s{suffix}", [name])
    values = cursor.fetchone()
    return None if values is None else row_from_values(values)


def load_stream_by_id(cursor, stream_id: int, *, lock: bool = False) -> StreamRow | None:
    suffix = " FOR UPDATE" if lock else ""
    cursor.execute(
        f"SELECT {STREAM_COLUMNS} FROM streams_stream WHERE id = %s{suffix}", [stream_id]
    )
    values = cursor.fetchone()
    return None if values is None else row_from_values(values)


def live_stream(cursor, name: str, now: float | None = None) -> StreamRow | None:
    """The stream as a reader sees it: ``None`` when missing or expired.

    An expired stream that still has forks reads as soft-deleted (410).
    """
    row = load_stream(cursor, name)
    if row is None:
        return None
    if row.expired(time.time() if now is None else now):
        if row.ref_count > 0:
            row.soft_deleted = True
            return row
        return None
    return row


def segments(cursor, row: StreamRow) -> list[tuple[int, int, int]]:
    """``(stream_id, after, up_to)`` ranges whose messages make up ``row``.

    A fork inherits its source's messages up to its fork offset (recursively),
    then has its own; the whole chain shares one offset space.
    """
    parts = [(row.id, row.fork_offset if row.forked_from_id else -1, row.tail)]
    cap = row.fork_offset
    source_id = row.forked_from_id
    while source_id is not None:
        source = load_stream_by_id(cursor, source_id)
        if source is None:
            break
        start = source.fork_offset if source.forked_from_id else -1
        parts.append((source.id, start, min(cap, source.tail)))
        cap = min(cap, start) if source.forked_from_id else cap
        source_id = source.forked_from_id
    parts.reverse()
    return parts


def read_messages(
    cursor, row: StreamRow, after: int, budget: int = READ_BUDGET
) -> tuple[list[tuple[int, bytes]], bool]:
    """Messages past position ``after`` up to the tail read with ``row``.

    Returns the messages and whether they reach that tail (so the response may
    say ``Stream-Up-To-Date``).
    """
    if after >= row.tail:
        return [], True
    parts = segments(cursor, row) if row.forked_from_id else [(row.id, -1, row.tail)]
    messages: list[tuple[int, bytes]] = []
    size = 0
    for stream_id, start, up_to in parts:
        low = max(after, start)
        while low < up_to:
            cursor.execute(
                "SELECT position, data FROM streams_message WHERE stream_id = %s "
                "AND position > %s AND position <= %s ORDER BY position LIMIT %s",
                [stream_id, low, up_to, PAGE_ROWS],
            )
            page = cursor.fetchall()
            if not page:
                break
            for position, data in page:
                messages.append((position, data))
                size += len(data)
                if size >= budget:
                    return messages, position >= row.tail
            low = page[-1][0]
            if len(page) < PAGE_ROWS:
                break
    return messages, True


def first_message_after(cursor, row: StreamRow, after: int) -> bytes | None:
    """The message that starts at position ``after`` in ``row`` (fork sub-offsets)."""
    messages, _ = read_messages(cursor, row, after, budget=1)
    return bytes(messages[0][1]) if messages else None
