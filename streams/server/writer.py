"""The per-process writer: group commit of concurrently pending writes.

Requests put their op on a queue and await a future. One thread takes every
op that is waiting, applies them in order in ONE transaction (stream rows
locked: ``FOR UPDATE`` on PostgreSQL, an IMMEDIATE transaction on SQLite) and
commits once, so N concurrent appends cost one commit instead of N.
"""

import logging
import queue
import threading
from concurrent.futures import Future

from django.db import connections, transaction

from streams.server import store
from streams.server.batch import Batch
from streams.server.ops import Outcome
from streams.server.wake import hub

logger = logging.getLogger(__name__)

MAX_BATCH = 512


class Writer:
    def __init__(self, alias: str = "default"):
        self.alias = alias
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._synced = None  # the SQLite connection that has synchronous=FULL

    def submit(self, op) -> Future:
        op.future = Future()
        self.submit_nowait(op)
        return op.future

    def submit_nowait(self, op) -> None:
        if self._thread is None:
            self._start()
        self.queue.put(op)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="streams-writer", daemon=True)
                thread.start()
                self._thread = thread

    def _run(self) -> None:
        while True:
            batch = [self.queue.get()]
            while len(batch) < MAX_BATCH:
                try:
                    batch.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._commit(batch, retry=True)
            except BaseException:  # keep the writer alive whatever happens
                logger.exception("streams writer failed a batch")
                self._answer(batch, None)

    def _commit(self, batch: list, retry: bool) -> None:
        connection = connections[self.alias]
        postgres = connection.vendor == "postgresql"
        try:
            if postgres:
                work, outcomes = self._apply_postgres(connection, batch)
            else:
                self._sqlite_durable(connection)
                with transaction.atomic(using=self.alias), connection.cursor() as cursor:
                    work, outcomes = self._apply(Batch(cursor, False), batch)
        except store.DB_ERRORS:
            # A lost connection or a race between processes (a duplicate create):
            # retry each op alone, so one bad op can't fail the others.
            connection.errors_occurred = True  # raw psycopg errors bypass Django's wrapper
            connection.close_if_unusable_or_obsolete()
            if not retry:
                logger.exception("streams write failed")
                self._answer(batch, None)
                return
            if len(batch) == 1:
                self._commit(batch, retry=False)
            else:
                for op in batch:
                    self._commit([op], retry=True)
            return
        self._answer(batch, outcomes)
        if work.changed:
            hub.notify(work.changed, work.deliveries() if hub.count else None)

    @staticmethod
    def _apply(work: Batch, batch: list) -> tuple[Batch, list]:
        work.preload(batch)
        outcomes = [work.apply(op) for op in batch]
        work.flush()
        return work, outcomes

    def _apply_postgres(self, connection, batch: list) -> tuple[Batch, list]:
        """The transaction in two round trips: BEGIN with the row locks, then the
        flush with COMMIT (psycopg pipeline mode). It has committed when this returns:
        leaving the pipeline waits for COMMIT's answer and raises on any error."""
        with store.cursor_for(connection) as cursor:
            raw = cursor.connection
            if raw.info.backend_pid not in hub.own_backends:
                hub.own_backends = frozenset([raw.info.backend_pid])
            with raw.pipeline(), raw.transaction():
                return self._apply(Batch(cursor, True), batch)

    def _sqlite_durable(self, connection) -> None:
        """Make each commit survive power loss, as an acknowledged append must.

        The project's SQLite default (WAL, synchronous=NORMAL) syncs only at
        checkpoints; FULL syncs the WAL at every commit, which group commit
        amortises over a batch. Set on this thread's connection only.
        """
        connection.ensure_connection()
        if connection.connection is not self._synced:
            connection.connection.execute("PRAGMA synchronous=FULL")
            self._synced = connection.connection

    @staticmethod
    def _answer(batch: list, outcomes: list | None) -> None:
        for index, op in enumerate(batch):
            if op.future is None or op.future.done():
                continue
            if outcomes is None:
                op.future.set_result(Outcome(503, {}, b"Storage unavailable, retry"))
            else:
                op.future.set_result(outcomes[index])


writer = Writer()
