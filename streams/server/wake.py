"""Waking long-polls and SSE readers when a stream changes.

Same process: the writer calls :meth:`WakeHub.notify` after each commit.
Other processes: PostgreSQL ``LISTEN streams_wake`` (the writer NOTIFYs in its
transaction), or, on SQLite, a poller that reads the waited streams' tails
every :data:`POLL_INTERVAL` seconds while anyone waits. Each waiter knows the
tail it last saw, so a wake-up that changes nothing for it is ignored.
"""

import asyncio
import contextlib
import logging
import threading
from dataclasses import dataclass

logger = logging.getLogger(__name__)

POLL_INTERVAL = 0.075
# How often the PostgreSQL listener looks up from its wait to see if it should stop.
LISTEN_CHECK_S = 1.0


@dataclass(eq=False, slots=True)
class Waiter:
    name: str
    loop: asyncio.AbstractEventLoop
    # (tail, closed) as last read; None until the first read.
    seen: tuple[int, bool] | None = None
    # Why the wait must end whatever the data: "disconnect" or "shutdown".
    ended: str | None = None
    # From the writer of this process: (tail before, row, messages) it just committed.
    delivery: tuple | None = None
    # A wake-up that no wait() has taken yet, and the future a wait() is parked on.
    woken: bool = False
    parked: asyncio.Future | None = None

    def wake(self) -> None:
        self.loop.call_soon_threadsafe(self.set)

    def set(self) -> None:
        """On the loop: wake the wait in progress, or the next one."""
        self.woken = True
        parked = self.parked
        if parked is not None and not parked.done():
            parked.set_result(True)

    def end(self, reason: str) -> None:
        self.ended = self.ended or reason
        self.wake()

    async def wait(self, timeout: float) -> bool:
        """True once woken (taking the wake-up), False after ``timeout`` seconds.

        A bare future and a timer: ``asyncio.wait_for(event.wait())`` costs a task and
        two more loop iterations between the wake-up and the answer.
        """
        if not self.woken:
            parked = self.parked = self.loop.create_future()
            timer = self.loop.call_later(timeout, _expire, parked)
            try:
                await parked
            finally:
                timer.cancel()
                self.parked = None
            if not self.woken:
                return False
        self.woken = False
        return True


def _expire(parked: asyncio.Future) -> None:
    if not parked.done():
        parked.set_result(False)


class WakeHub:
    def __init__(self):
        self._lock = threading.Lock()
        self._waiters: dict[str, set[Waiter]] = {}
        self._watchers_started = False
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self.alias = "default"
        # Registered waiters; a plain int so a signal handler can read it (serve_streams).
        self.count = 0
        self.closing = False
        # PostgreSQL backend of this process's writer: it wakes local waiters itself
        # (with the committed messages), so the listener skips its NOTIFYs.
        self.own_backends: frozenset[int] = frozenset()

    def register(self, name: str) -> Waiter:
        waiter = Waiter(name, asyncio.get_running_loop())
        if self.closing:
            waiter.ended = "shutdown"
        with self._lock:
            self._waiters.setdefault(name, set()).add(waiter)
            self.count += 1
        return waiter

    def unregister(self, waiter: Waiter) -> None:
        with self._lock:
            waiters = self._waiters.get(waiter.name)
            if waiters is not None and waiter in waiters:
                waiters.discard(waiter)
                self.count -= 1
                if not waiters:
                    del self._waiters[waiter.name]

    def shutdown(self) -> None:
        """End every wait now and any later one at once (the server is stopping)."""
        self.closing = True
        with self._lock:
            waiters = [waiter for group in self._waiters.values() for waiter in group]
        for waiter in waiters:
            waiter.end("shutdown")

    def notify(self, changed: dict[str, tuple[int, bool, bool]], deliveries=None) -> None:
        """Wake the waiters of each ``name -> (tail, closed, gone)`` that saw something else.

        ``deliveries`` (the writer's, see ``Batch.deliveries``) rides along with the wake-up.
        """
        with self._lock:
            targets = [
                (waiter, name)
                for name, (tail, closed, gone) in changed.items()
                for waiter in self._waiters.get(name, ())
                if gone or waiter.seen != (tail, closed)
            ]
        per_loop: dict[asyncio.AbstractEventLoop, list[Waiter]] = {}
        for waiter, name in targets:
            if deliveries:
                waiter.delivery = deliveries.get(name)
            per_loop.setdefault(waiter.loop, []).append(waiter)
        for loop, waiters in per_loop.items():  # one thread-safe call per loop, not per waiter
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(_set_all, waiters)

    def waited_names(self) -> list[str]:
        with self._lock:
            return list(self._waiters)

    def watching(self) -> bool:
        return self._ready.is_set()

    def ensure_watching(self, vendor: str) -> None:
        """Start the cross-process watcher once; block until it listens."""
        if not self._watchers_started:
            with self._lock:
                if not self._watchers_started:
                    self._watchers_started = True
                    target = _listen_postgres if vendor == "postgresql" else _poll_sqlite
                    threading.Thread(
                        target=self._watch, args=(target,), name="streams-wake", daemon=True
                    ).start()
        self._ready.wait(5)

    def _watch(self, target) -> None:
        try:
            target(self)
        finally:
            self._stopped.set()

    def stop_watching(self, timeout: float = LISTEN_CHECK_S * 3) -> None:
        """Stop the cross-process watcher and let go of its connection (before a database
        is dropped, e.g. at the end of a test run)."""
        self._stop.set()
        if self._watchers_started:
            self._stopped.wait(timeout)


def _set_all(waiters: list[Waiter]) -> None:
    for waiter in waiters:
        waiter.set()


def _listen_postgres(hub: WakeHub) -> None:
    import psycopg
    from django.db import connections

    from streams.server.flush import parse_wake_payload

    params = connections[hub.alias].get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("server_side_binding", None)
    backoff = 0.1
    while not hub._stop.is_set():
        try:
            with psycopg.connect(**params, autocommit=True) as conn:
                conn.execute("LISTEN streams_wake")
                hub._ready.set()
                backoff = 0.1
                while not hub._stop.is_set():
                    for notify in conn.notifies(timeout=LISTEN_CHECK_S):
                        if notify.pid in hub.own_backends:
                            continue
                        name, tail, closed, gone = parse_wake_payload(notify.payload)
                        hub.notify({name: (tail, closed, gone)})
        except Exception:
            if hub._stop.is_set():
                return
            logger.exception("streams wake listener lost its connection; reconnecting")
            # Waiters may have missed a NOTIFY: wake them all to re-read.
            hub.notify(dict.fromkeys(hub.waited_names(), (-1, False, True)))
            hub._stop.wait(backoff)
            backoff = min(backoff * 2, 5.0)


def _poll_sqlite(hub: WakeHub) -> None:
    from django.db import connections

    hub._ready.set()
    connection = connections[hub.alias]
    failures = 0
    while not hub._stop.wait(POLL_INTERVAL):
        names = hub.waited_names()
        if not names:
            continue
        try:
            changed = {}
            with connection.cursor() as cursor:
                for start in range(0, len(names), 500):
                    chunk = names[start : start + 500]
                    marks = ", ".join(["%s"] * len(chunk))
                    cursor.execute(
                        "SELECT name, tail, closed, soft_deleted FROM streams_stream "
                        f"WHERE name IN ({marks})",
                        chunk,
                    )
                    found = {name: (tail, bool(closed), bool(gone)) for name, tail, closed, gone
                             in cursor.fetchall()}  # fmt: skip
                    for name in chunk:
                        changed[name] = found.get(name, (-1, False, True))
            hub.notify(changed)
            failures = 0
        except Exception:
            # The traceback once, then a line a minute while it keeps failing.
            if failures % int(60 / POLL_INTERVAL) == 0:
                logger.warning("streams wake poller failed", exc_info=failures == 0)
            failures += 1
            connection.close()
    connection.close()


async def watch_disconnect(receive, waiter: Waiter) -> None:
    """End ``waiter`` when the client goes away (run as a task while waiting).

    The request body has been read (or there is none), so the next message
    uvicorn delivers is ``http.disconnect``.
    """
    while (await receive())["type"] != "http.disconnect":
        pass
    waiter.end("disconnect")


hub = WakeHub()
