"""Writing a batch's decisions in its transaction.

SQLite: a few ``executemany``; PostgreSQL: one statement, so one round trip.
"""

from json import dumps

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
    """Messages, producers, stream rows and NOTIFYs in one round trip (arrays + CTEs).

    Everything but the message bytes travels as one JSON document per table: psycopg dumps
    each list parameter in Python (~20 µs a list), json.dumps the lot in C. A batch decided
    from remembered rows (``batch.expected``, see fastpath.py) updates each row only where it
    still holds the remembered values, and the statement fails unless every row matched.
    """
    messages = batch.messages
    producers = [
        {"s": key[0], "p": key[1], "e": state[0], "q": state[1]}
        for key in batch.dirty_producers
        for state in (batch.producers[key],)
    ]
    expected = batch.expected
    rows = []
    for row in batch.dirty_streams.values():
        values = {"id": row.id, **{column: getattr(row, column) for column, _ in MUTABLE}}
        if expected is not None:
            values.update(zip(OLD_NAMES, expected[row.id], strict=True))
        rows.append(values)
    wakes = [wake_payload(name, *state) for name, state in batch.changed.items()]
    params = [
        [m[0] for m in messages], [m[1] for m in messages], [m[2] for m in messages],
        batch.now, dumps(producers), dumps(rows), dumps(wakes),
    ]  # fmt: skip
    if expected is None:
        batch.cursor.execute(FLUSH_SQL, params)
    else:
        batch.cursor.execute(CHECKED_FLUSH_SQL, [*params, len(rows)])


MUTABLE = store.MUTABLE_COLUMNS
OLD_NAMES = [f"old_{column}" for column, _ in MUTABLE]
_HEAD = (
    "WITH m AS (INSERT INTO streams_message (stream_id, position, data) "
    "  SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bytea[])), "
    "p AS (INSERT INTO streams_producer (stream_id, producer_id, epoch, last_seq, "
    "  updated_at) SELECT s, p, e, q, %s FROM json_to_recordset(%s::json) "
    "  AS x(s bigint, p text, e bigint, q bigint) ON CONFLICT (stream_id, producer_id) "
    "  DO UPDATE SET epoch = excluded.epoch, last_seq = excluded.last_seq, "
    "  updated_at = excluded.updated_at), "
    "u AS (UPDATE streams_stream s SET "
    + ", ".join(f"{column} = v.{column}" for column, _ in MUTABLE)
    + " FROM json_to_recordset(%s::json) AS v(id bigint, "
    + ", ".join(f"{column} {kind}" for column, kind in MUTABLE)
)
_NOTIFY = "SELECT pg_notify('streams_wake', w) FROM json_array_elements_text(%s::json) AS w"
FLUSH_SQL = _HEAD + ") WHERE s.id = v.id) " + _NOTIFY
# The row must still be as remembered (a row another process changed fails the match;
# re-checked on the newest version if it changes meanwhile), and all of them must match,
# else the cast fails (on purpose: a value computed at run time, never folded when planning)
# and the transaction rolls back.
CHECKED_FLUSH_SQL = (
    _HEAD
    + ", "
    + ", ".join(f"old_{column} {kind}" for column, kind in MUTABLE)
    + ") WHERE s.id = v.id AND ("
    + ", ".join(f"s.{column}" for column, _ in MUTABLE)
    + ") IS NOT DISTINCT FROM ("
    + ", ".join(f"v.old_{column}" for column, _ in MUTABLE)
    + ") RETURNING s.id) "
    f"SELECT (SELECT count(*) FROM ({_NOTIFY}) n), (SELECT CASE WHEN count(*) = %s "
    "THEN 0 ELSE ('stale stream rows: ' || count(*))::int END FROM u)"
)


def wake_payload(name: str, tail: int, closed: bool, gone: bool) -> str:
    return f"{tail}\t{int(closed)}\t{int(gone)}\t{name}"


def parse_wake_payload(payload: str) -> tuple[str, int, bool, bool]:
    tail, closed, gone, name = payload.split("\t", 3)
    return name, int(tail), closed == "1", gone == "1"
