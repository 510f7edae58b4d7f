"""The cross-process wake watcher lets go of its database connection when stopped."""

import threading
import time

import pytest
from django.db import connection

from streams.server.wake import WakeHub

pytestmark = pytest.mark.django_db(transaction=True)


def listening_sessions() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND query LIKE 'LISTEN streams_wake%%'"
        )
        return cursor.fetchone()[0]


def watcher_threads() -> int:
    return sum(t.name == "streams-wake" and t.is_alive() for t in threading.enumerate())


def settles(check, seconds: float = 5.0) -> bool:
    """A backend leaves pg_stat_activity a moment after its client hangs up."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_stopping_the_watcher_ends_its_thread_and_connection():
    postgres = connection.vendor == "postgresql"
    threads, sessions = watcher_threads(), listening_sessions() if postgres else 0
    hub = WakeHub()
    hub.ensure_watching(connection.vendor)
    assert hub.watching()
    assert watcher_threads() == threads + 1
    if postgres:
        assert listening_sessions() == sessions + 1
    hub.stop_watching()
    assert watcher_threads() == threads
    if postgres:
        assert settles(lambda: listening_sessions() == sessions)
