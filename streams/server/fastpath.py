"""Appends without the row-lock round trip (PostgreSQL).

The writer remembers each stream row as its last commit left it. A batch made only of plain
appends (no producer headers) to remembered, unexpired streams skips ``SELECT … FOR
UPDATE``: it decides from copies of the remembered rows, and its flush updates each row only
where the row still holds the remembered values (``CHECKED_FLUSH_SQL``). If another process
changed or deleted a row meanwhile, the statement fails, the transaction rolls back (nothing
of the batch is kept or acknowledged), and the writer redoes the batch the locked way.
"""

import copy

from streams.server.ops import AppendOp
from streams.server.store import MUTABLE_COLUMNS

# Remembered rows; past this many the memory starts over (the next batches lock again).
MAX_ROWS = 10_000


class RowMemory:
    def __init__(self):
        self.rows: dict = {}

    def admit(self, work, batch: list) -> bool:
        """Load ``work`` from remembered rows if every op qualifies; False if not."""
        rows = {}
        for op in batch:
            if type(op) is not AppendOp or op.producer is not None:
                return False
            row = self.rows.get(op.name)
            if row is None or row.expired(work.now):
                return False
            rows[op.name] = row
        work.expected = {}
        for name, row in rows.items():
            row = copy.copy(row)
            work.admit(name, row)
            work.expected[row.id] = [getattr(row, column) for column, _ in MUTABLE_COLUMNS]
            # Every row used is checked, also those no op changes (a 409 decided from it).
            work.dirty_streams[row.id] = row
        return True

    def remember(self, work) -> None:
        """What ``work`` committed: its rows as they now are in the database."""
        if len(self.rows) > MAX_ROWS:
            self.rows.clear()
        for name, row in work.streams.items():
            if row is None or row.soft_deleted:
                self.rows.pop(name, None)
            else:
                self.rows[name] = copy.copy(row)

    def forget(self, batch: list) -> None:
        for op in batch:
            self.rows.pop(op.name, None)


def decide_in_one_statement(work, batch: list) -> list:
    """Decide the batch and write it with its flush, the only statement it runs.

    On an autocommit connection (Django's default) that statement is a transaction of its
    own: PostgreSQL answers it once it has committed and flushed the WAL (synchronous_commit
    on), and if it fails nothing of it stays. No BEGIN, no COMMIT, no pipeline.
    """
    work.cursor = OneStatement(work.cursor)
    outcomes = [work.apply(op) for op in batch]
    work.flush()
    return outcomes


class OneStatement:
    """A cursor that runs one statement: a second one would not be atomic with the first."""

    def __init__(self, cursor):
        self.cursor = cursor
        self.used = False

    def execute(self, query, params=None):
        if self.used:
            raise RuntimeError("the lock-free path ran a second statement")
        self.used = True
        return self.cursor.execute(query, params)
