"""One write transaction: applies ops in order against rows locked once.

Each op validates before it writes anything, so an op that fails (a 409, a
bad JSON body) leaves no trace and the others in the batch still commit.
Messages, producer state and stream rows are flushed together at the end.
"""

import time

from streams.server import store
from streams.server.flush import flush
from streams.server.offsets import format_offset
from streams.server.ops import AppendOp, CreateOp, DeleteOp, Outcome, TouchOp
from streams.server.protocol import (
    DEFAULT_TYPE,
    ProtocolError,
    is_json,
    json_messages,
    json_values,
    normalize_content_type,
    require_live,
)

NEXT = "Stream-Next-Offset"
CLOSED = "Stream-Closed"
P_EPOCH = "Producer-Epoch"
P_SEQ = "Producer-Seq"


class Batch:
    def __init__(self, cursor, postgres: bool):
        self.cursor = cursor
        self.postgres = postgres
        self.now = time.time()
        self.streams: dict[str, store.StreamRow | None] = {}
        self.producers: dict[tuple[int, str], list[int]] = {}
        self.dirty_producers: set[tuple[int, str]] = set()
        self.dirty_streams: dict[int, store.StreamRow] = {}
        self.messages: list[tuple[int, int, bytes]] = []
        # name -> (tail, closed, gone) for the wake-ups after commit.
        self.changed: dict[str, tuple[int, bool, bool]] = {}
        # stream id -> its tail before this batch (see deliveries()).
        self.initial_tails: dict[int, int] = {}
        # Rows decided from the writer's memory: id -> mutable values to check (fastpath.py).
        self.expected: dict[int, list] | None = None

    # Loading -------------------------------------------------------------

    def preload(self, ops) -> None:
        """Lock every stream the batch names in one query (in id order: no deadlocks)."""
        names = {op.name for op in ops}
        names.update(op.forked_from for op in ops if getattr(op, "forked_from", None))
        names = sorted(names)
        marks = ", ".join(["%s"] * len(names))
        lock = " ORDER BY id FOR UPDATE" if self.postgres else ""
        self.cursor.execute(
            f"SELECT {store.STREAM_COLUMNS} FROM streams_stream WHERE name IN ({marks}){lock}",
            names,
        )
        found = {row.name: row for row in map(store.row_from_values, self.cursor.fetchall())}
        for name in names:
            if name not in self.streams:
                self.admit(name, found.get(name))

    def load(self, name: str) -> store.StreamRow | None:
        """The stream locked for this transaction; expired ones are collected."""
        if name in self.streams:
            return self.streams[name]
        return self.admit(name, store.load_stream(self.cursor, name, lock=self.postgres))

    def admit(self, name: str, row: store.StreamRow | None) -> store.StreamRow | None:
        self.streams[name] = row
        if row is not None:
            self.initial_tails.setdefault(row.id, row.tail)
        if row is not None and row.expired(self.now) and not row.soft_deleted:
            if row.ref_count > 0:
                row.soft_deleted = True
                self.dirty(row)
            else:
                self.remove(row)
                return None
        return row

    def load_id(self, stream_id: int) -> store.StreamRow | None:
        for row in self.streams.values():
            if row is not None and row.id == stream_id:
                return row
        row = store.load_stream_by_id(self.cursor, stream_id, lock=self.postgres)
        if row is not None:
            self.streams[row.name] = row
        return row

    def deliveries(self) -> dict[str, tuple[int, store.StreamRow, list[tuple[int, bytes]]]]:
        """name -> (tail before the batch, row after it, the messages it appended).

        A long-poll waiting at that earlier tail answers with these (once
        committed) instead of re-reading what the writer just wrote.
        """
        appended: dict[int, list[tuple[int, bytes]]] = {}
        for stream_id, position, data in self.messages:
            appended.setdefault(stream_id, []).append((position, data))
        found = {}
        for row in self.dirty_streams.values():
            messages = appended.get(row.id)
            if not messages or row.soft_deleted or row.id not in self.initial_tails:
                continue
            if sum(len(data) for _, data in messages) <= store.READ_BUDGET:
                found[row.name] = (self.initial_tails[row.id], row, messages)
        return found

    def dirty(self, row: store.StreamRow) -> None:
        self.dirty_streams[row.id] = row
        self.changed[row.name] = (row.tail, row.closed, row.soft_deleted)

    def producer(self, row: store.StreamRow, producer_id: str) -> list[int] | None:
        key = (row.id, producer_id)
        if key not in self.producers:
            self.cursor.execute(
                "SELECT epoch, last_seq FROM streams_producer "
                "WHERE stream_id = %s AND producer_id = %s",
                [row.id, producer_id],
            )
            found = self.cursor.fetchone()
            self.producers[key] = list(found) if found else None
        return self.producers[key]

    # Operations ----------------------------------------------------------

    def apply(self, op) -> Outcome | None:
        try:
            if isinstance(op, AppendOp):
                return self.append(op)
            if isinstance(op, CreateOp):
                return self.create(op)
            if isinstance(op, DeleteOp):
                return self.delete(op)
            if isinstance(op, TouchOp):
                return self.touch(op)
            raise TypeError(op)
        except ProtocolError as error:
            return Outcome(error.status, error.headers, error.message.encode())

    def touch(self, op: TouchOp) -> None:
        row = self.load(op.name)
        if row is not None and row.ttl_seconds is not None and row.accessed_at < self.now:
            row.accessed_at = self.now
            self.dirty_streams[row.id] = row

    def append(self, op: AppendOp) -> Outcome:
        row = require_live(self.load(op.name))
        producer = op.producer
        if row.closed:
            if producer is not None and (
                row.closed_by_id,
                row.closed_by_epoch,
                row.closed_by_seq,
            ) == (producer.id, producer.epoch, producer.seq):
                headers = {NEXT: format_offset(row.tail), CLOSED: "true"}
                headers.update({P_EPOCH: str(producer.epoch), P_SEQ: str(producer.seq)})
                return Outcome(204, headers)
            if not op.body and producer is None:
                return Outcome(204, {NEXT: format_offset(row.tail), CLOSED: "true"})
            raise ProtocolError(
                409, "Stream is closed", {CLOSED: "true", NEXT: format_offset(row.tail)}
            )
        if op.body and normalize_content_type(op.content_type) != normalize_content_type(
            row.content_type
        ):
            raise ProtocolError(409, "Content-type mismatch")
        proposed = None
        if producer is not None:
            state = self.producer(row, producer.id)
            if state is None:
                if producer.seq != 0:
                    raise self.gap(0, producer.seq)
            elif producer.epoch < state[0]:
                raise ProtocolError(403, "Stale producer epoch", {P_EPOCH: str(state[0])})
            elif producer.epoch > state[0]:
                if producer.seq != 0:
                    raise ProtocolError(400, "New epoch must start with sequence 0")
            elif producer.seq <= state[1]:
                headers = {P_EPOCH: str(producer.epoch), P_SEQ: str(state[1])}
                return Outcome(204, headers)
            elif producer.seq != state[1] + 1:
                raise self.gap(state[1] + 1, producer.seq)
            proposed = [producer.epoch, producer.seq]
        data = b""
        if op.body:
            if op.seq is not None and row.last_seq is not None and op.seq <= row.last_seq:
                raise ProtocolError(409, "Sequence conflict")
            data = json_messages(op.body) if is_json(row.content_type) else op.body
        # Validated: from here on the op writes.
        if proposed is not None:
            key = (row.id, producer.id)
            self.producers[key] = proposed
            self.dirty_producers.add(key)
        if data:
            row.tail += len(data)
            self.messages.append((row.id, row.tail, data))
            if op.seq is not None:
                row.last_seq = op.seq
        if op.close:
            row.closed = True
            if producer is not None:
                row.closed_by_id = producer.id
                row.closed_by_epoch = producer.epoch
                row.closed_by_seq = producer.seq
        row.accessed_at = max(row.accessed_at, self.now)
        self.dirty(row)
        headers = {NEXT: format_offset(row.tail)}
        if op.close:
            headers[CLOSED] = "true"
        if producer is not None:
            headers[P_EPOCH] = str(producer.epoch)
            headers[P_SEQ] = str(producer.seq)
            return Outcome(204 if not data else 200, headers)
        return Outcome(204, headers)

    @staticmethod
    def gap(expected: int, received: int) -> ProtocolError:
        headers = {"Producer-Expected-Seq": str(expected), "Producer-Received-Seq": str(received)}
        return ProtocolError(409, "Producer sequence gap", headers)

    def create(self, op: CreateOp) -> Outcome:
        row = self.load(op.name)
        source = None
        if op.forked_from is not None:
            source = self.load(op.forked_from)
        if row is not None:
            if row.soft_deleted:
                raise ProtocolError(
                    409, "stream was deleted but still has active forks; the path can't be reused"
                )
            if not self.same_config(row, op, source):
                raise ProtocolError(409, "Stream already exists with different configuration")
            return Outcome(200, self.created_headers(row))
        content_type = op.content_type
        ttl_seconds, expires_at, expires_at_ts = op.ttl_seconds, op.expires_at, op.expires_at_ts
        prefix = b""
        fork_offset = None
        if op.forked_from is not None:
            if source is None:
                raise ProtocolError(404, "Source stream not found")
            if source.soft_deleted:
                raise ProtocolError(409, "source stream was deleted but still has active forks")
            if content_type and normalize_content_type(content_type) != normalize_content_type(
                source.content_type
            ):
                raise ProtocolError(409, "Content type mismatch with source stream")
            content_type = source.content_type
            fork_offset = source.tail if op.fork_offset is None else op.fork_offset
            if fork_offset > source.tail:
                raise ProtocolError(400, "Fork offset beyond source stream length")
            if op.fork_sub_offset:
                prefix = self.sub_offset_prefix(source, fork_offset, op.fork_sub_offset)
            if ttl_seconds is None and expires_at is None:
                ttl_seconds = source.ttl_seconds
                expires_at, expires_at_ts = source.expires_at, source.expires_at_ts
        content_type = content_type or DEFAULT_TYPE
        data = b""
        if op.body:
            data = json_messages(op.body, allow_empty=True) if is_json(content_type) else op.body
        tail = fork_offset or 0
        self.cursor.execute(
            "INSERT INTO streams_stream (name, content_type, ttl_seconds, expires_at, "
            "expires_at_ts, created_at, accessed_at, tail, closed, forked_from_id, fork_offset, "
            "fork_sub_offset, ref_count, soft_deleted) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 0, %s) RETURNING id",
            [
                op.name,
                content_type,
                ttl_seconds,
                expires_at,
                expires_at_ts,
                self.now,
                self.now,
                tail,
                op.closed,
                source.id if source else None,
                fork_offset,
                op.fork_sub_offset,
                False,
            ],
        )
        stream_id = self.cursor.fetchone()[0]
        row = store.StreamRow(
            stream_id, op.name, content_type, ttl_seconds, expires_at, expires_at_ts,
            self.now, self.now, tail, op.closed, None, None, None, None,
            source.id if source else None, fork_offset, op.fork_sub_offset, 0, False,
        )  # fmt: skip
        self.streams[op.name] = row
        for chunk in (prefix, data):
            if chunk:
                row.tail += len(chunk)
                self.messages.append((row.id, row.tail, chunk))
        if source is not None:
            source.ref_count += 1
            self.dirty(source)
        self.dirty(row)
        return Outcome(201, self.created_headers(row))

    def same_config(self, row, op: CreateOp, source) -> bool:
        wanted = normalize_content_type(op.content_type)
        if not wanted:
            wanted = normalize_content_type(source.content_type) if source else DEFAULT_TYPE
        if op.forked_from is None:
            ttl, expires = op.ttl_seconds, op.expires_at
            if row.forked_from_id is not None:
                return False
        else:
            if source is None or row.forked_from_id != source.id:
                return False
            if op.fork_offset is not None and op.fork_offset != row.fork_offset:
                return False
            if op.fork_sub_offset != row.fork_sub_offset:
                return False
            ttl, expires = op.ttl_seconds, op.expires_at
            if ttl is None and expires is None:
                ttl, expires = source.ttl_seconds, source.expires_at
        return (
            wanted == normalize_content_type(row.content_type)
            and ttl == row.ttl_seconds
            and expires == row.expires_at
            and op.closed == row.closed
        )

    @staticmethod
    def created_headers(row) -> dict[str, str]:
        headers = {"Content-Type": row.content_type, NEXT: format_offset(row.tail)}
        if row.closed:
            headers[CLOSED] = "true"
        return headers

    def sub_offset_prefix(self, source, fork_offset: int, sub_offset: int) -> bytes:
        first = store.first_message_after(self.cursor, source, fork_offset)
        if first is None:
            raise ProtocolError(400, "Invalid fork sub-offset: no data past the fork offset")
        if is_json(source.content_type):
            values = json_values(first)
            if sub_offset > len(values):
                raise ProtocolError(400, "Invalid fork sub-offset: beyond the message count")
            return b",".join(values[:sub_offset])
        if sub_offset > len(first):
            raise ProtocolError(400, "Invalid fork sub-offset: beyond the message length")
        return first[:sub_offset]

    def delete(self, op: DeleteOp) -> Outcome:
        row = require_live(self.load(op.name))
        if row.ref_count > 0:
            row.soft_deleted = True
            self.dirty(row)
        else:
            self.remove(row)
        return Outcome(204)

    def remove(self, row: store.StreamRow) -> None:
        """Delete a stream outright, then any soft-deleted source it was the last fork of."""
        for table in ("streams_message", "streams_producer"):
            self.cursor.execute(f"DELETE FROM {table} WHERE stream_id = %s", [row.id])
        self.cursor.execute("DELETE FROM streams_stream WHERE id = %s", [row.id])
        self.messages = [m for m in self.messages if m[0] != row.id]
        self.dirty_streams.pop(row.id, None)
        self.dirty_producers = {k for k in self.dirty_producers if k[0] != row.id}
        self.streams[row.name] = None
        self.changed[row.name] = (row.tail, row.closed, True)
        if row.forked_from_id is not None:
            parent = self.load_id(row.forked_from_id)
            if parent is not None:
                parent.ref_count = max(0, parent.ref_count - 1)
                self.dirty(parent)
                if parent.ref_count == 0 and (parent.soft_deleted or parent.expired(self.now)):
                    self.remove(parent)

    def flush(self) -> None:
        flush(self)
