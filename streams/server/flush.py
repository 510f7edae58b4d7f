"""Writing a batch's decisions in its transaction.

SQLite: a few ``executemany``; PostgreSQL: one statement, so one round trip.
"""

from streams.server import store


def flush(batch) -> None:
    """Write what the batch's ops decided: messages, producers, stream rows."""
    if batch.postgres:
        return flush_postgres(batch)
    cursor = batch.cursor
    if batch.messages:
        cursor.executemany(
            "INSERT INTO streams_message (stream_id, position, data) VALUES (%s, %s, %s)",
            batch.messages,
        )
    if batch.dirty_producers:
        cursor.executemany(
            "INSERT INTO streams_producer (stream_id, producer_id, epoch, last_seq, "
            "updated_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (stream_id, producer_id) "
            "DO UPDATE SET epoch = excluded.epoch, last_seq = excluded.last_seq, "
            "updated_at = excluded.updated_at",
            [(*key, *batch.producers[key], batch.now) for key in batch.dirty_producers],
        )
    if batch.dirty_streams:
        assignments = ", ".join(f"{column} = %s" for column in store.UPDATE_COLUMNS)
        cursor.executemany(
            f"UPDATE streams_stream SET {assignments} WHERE id = %s",
            [
                [getattr(row, column) for column in store.UPDATE_COLUMNS] + [row.id]
                for row in batch.dirty_streams.values()
            ],
        )


def flush_postgres(batch) -> None:
    """Messages, producers, stream rows and NOTIFYs in one round trip (arrays + CTEs)."""
    messages = batch.messages
    producers = [(*key, *batch.producers[key]) for key in batch.dirty_producers]
    rows = list(batch.dirty_streams.values())
    columns = store.MUTABLE_COLUMNS
    params = [
        [m[0] for m in messages], [m[1] for m in messages], [m[2] for m in messages],
        batch.now, [p[0] for p in producers], [p[1] for p in producers],
        [p[2] for p in producers], [p[3] for p in producers],
        [row.id for row in rows],
        *([getattr(row, column) for row in rows] for column, _ in columns),
        [wake_payload(name, *state) for name, state in batch.changed.items()],
    ]  # fmt: skip
    unnest = ", ".join(f"%s::{kind}[]" for _, kind in columns)
    names = ", ".join(column for column, _ in columns)
    assignments = ", ".join(f"{column} = v.{column}" for column, _ in columns)
    batch.cursor.execute(
        "WITH m AS (INSERT INTO streams_message (stream_id, position, data) "
        "  SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bytea[])), "
        "p AS (INSERT INTO streams_producer (stream_id, producer_id, epoch, last_seq, "
        "  updated_at) SELECT *, %s FROM unnest(%s::bigint[], %s::text[], %s::bigint[], "
        "  %s::bigint[]) ON CONFLICT (stream_id, producer_id) DO UPDATE SET "
        "  epoch = excluded.epoch, last_seq = excluded.last_seq, "
        "  updated_at = excluded.updated_at), "
        f"u AS (UPDATE streams_stream s SET {assignments} FROM unnest(%s::bigint[], {unnest}) "
        f"  AS v(id, {names}) WHERE s.id = v.id) "
        "SELECT pg_notify('streams_wake', w) FROM unnest(%s::text[]) AS w",
        params,
    )


def wake_payload(name: str, tail: int, closed: bool, gone: bool) -> str:
    return f"{tail}\t{int(closed)}\t{int(gone)}\t{name}"


def parse_wake_payload(payload: str) -> tuple[str, int, bool, bool]:
    tail, closed, gone, name = payload.split("\t", 3)
    return name, int(tail), closed == "1", gone == "1"
