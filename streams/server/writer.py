"""The per-process writer: group commit of concurrently pending writes.

Requests put their op on a queue and await a future. One thread takes every
op that is waiting, applies them in order in ONE transaction (stream rows
locked: ``FOR UPDATE`` on PostgreSQL, an IMMEDIATE transaction on SQLite) and
commits once, so N concurrent appends cost one commit instead of N.
"""

import asyncio
import contextlib
import logging
import queue
import threading
from concurrent.futures import Future

from django.db import connections, transaction

from streams.server import store
from streams.server.batch import Batch
from streams.server.fastpath import RowMemory, decide_in_one_statement
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
        self.memory = RowMemory()  # rows as committed, for lock-free append batches

    def submit(self, op) -> Future:
        op.future = Future()
        self.submit_nowait(op)
        return op.future

    def submit_async(self, op) -> asyncio.Future:
        """Submit from the event loop: the answer comes back in one loop callback per batch."""
        op.future = asyncio.get_running_loop().create_future()
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
        # Waiting readers first: the data is committed, and their wake-up is the latency
        # that counts; the appenders' answers follow in the same loop iteration.
        if work.changed:
            hub.notify(work.changed, work.deliveries() if hub.count else None)
        self._answer(batch, outcomes)

    @staticmethod
    def _apply(work: Batch, batch: list) -> tuple[Batch, list]:
        work.preload(batch)
        outcomes = [work.apply(op) for op in batch]
        work.flush()
        return work, outcomes

    def _apply_postgres(self, connection, batch: list) -> tuple[Batch, list]:
        """The transaction in one round trip when the batch can be decided from remembered
        rows (fastpath.py: a single statement), else two: BEGIN with the row locks, then the
        flush with COMMIT. It has committed when this returns (see ``in_transaction``)."""
        with store.cursor_for(connection) as cursor:
            raw = cursor.connection
            if raw.info.backend_pid not in hub.own_backends:
                hub.own_backends = frozenset([raw.info.backend_pid])
            work = Batch(cursor, True)
            if self.memory.admit(work, batch):
                try:
                    if raw.autocommit:  # Django's default: one statement, one transaction
                        outcomes = decide_in_one_statement(work, batch)
                    else:
                        outcomes = in_transaction(cursor, lambda: self._decide(work, batch))
                except store.DB_ERRORS:
                    self.memory.forget(batch)  # stale (or a real error: the locked way says)
                    if raw.closed:
                        raise
                else:
                    self.memory.remember(work)
                    return work, outcomes
            work = Batch(cursor, True)
            try:
                outcomes = in_transaction(cursor, lambda: self._apply(work, batch)[1])
            except BaseException:
                self.memory.forget(batch)
                raise
            self.memory.remember(work)
            return work, outcomes

    @staticmethod
    def _decide(work: Batch, batch: list) -> list:
        outcomes = [work.apply(op) for op in batch]
        work.flush()
        return outcomes

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
        """Resolve the batch's futures: loop-side ones in ONE thread-safe call per loop."""
        per_loop: dict = {}
        for index, op in enumerate(batch):
            future = op.future
            if future is None or future.done():
                continue
            if outcomes is None:
                outcome = Outcome(503, {}, b"Storage unavailable, retry")
            else:
                outcome = outcomes[index]
            if isinstance(future, asyncio.Future):
                per_loop.setdefault(future.get_loop(), []).append((future, outcome))
            else:
                future.set_result(outcome)
        for loop, answers in per_loop.items():
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
                loop.call_soon_threadsafe(_resolve, answers)


def _resolve(answers: list) -> None:
    for future, outcome in answers:
        if not future.done():  # a request cancelled while it waited
            future.set_result(outcome)


def in_transaction(cursor, body):
    """``body()`` between BEGIN and COMMIT in ONE pipeline (psycopg's ``transaction()``
    inside a pipeline syncs at entry and at each exit: up to three more round trips).
    Only reads ``body`` fetches wait; the rest goes out with COMMIT. Leaving the pipeline
    waits for COMMIT's answer and raises on any error, after which we roll back."""
    raw = cursor.connection
    try:
        with raw.pipeline():
            if raw.autocommit:  # else psycopg has already begun one
                cursor.execute("BEGIN")
            result = body()
            cursor.execute("COMMIT")
    except BaseException:
        if not raw.closed:
            with contextlib.suppress(*store.DB_ERRORS):
                raw.rollback()
        raise
    return result


writer = Writer()
