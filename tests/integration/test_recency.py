"""Recency: last_entry_ts follows appends forward only, at most one write per second."""

import threading

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from threads.entries import Chat, Entry
from threads.models import Thread
from threads.recency import RecencyThrottle, bump_last_entry_ts, stream_writer, throttle

pytestmark = pytest.mark.django_db(transaction=True)


def ts_of(thread) -> int:
    return Thread.objects.values_list("last_entry_ts", flat=True).get(pk=thread.pk)


def test_an_append_through_the_writer_moves_recency_forward(world):
    before = ts_of(world.thread)
    entry = Entry(id="later", ts=before + 5_000, payload=Chat(text="later"))
    throttle.reset()  # creating the thread opened a window; start a fresh one
    stream_writer().append(world.thread.stream_name, entry)
    assert ts_of(world.thread) == before + 5_000


def test_the_guard_never_moves_recency_backwards(world):
    now = ts_of(world.thread)
    assert bump_last_entry_ts(world.thread.id, now - 1) == 0
    assert bump_last_entry_ts(world.thread.id, now) == 0
    assert bump_last_entry_ts(world.thread.id, now + 1) == 1
    assert ts_of(world.thread) == now + 1


def test_concurrent_bumps_end_at_the_newest(world):
    start = ts_of(world.thread)
    stamps = [start + n for n in range(1, 41)]
    barrier = threading.Barrier(4)

    def bump(chunk):
        barrier.wait()
        try:
            for ts in reversed(chunk):
                bump_last_entry_ts(world.thread.id, ts)
        finally:
            connection.close()

    workers = [threading.Thread(target=bump, args=(stamps[i::4],)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert ts_of(world.thread) == stamps[-1]


def test_the_throttle_writes_once_per_window_then_the_newest_trailing(world):
    throttle = RecencyThrottle(interval_s=0.3)
    base = ts_of(world.thread)
    with CaptureQueriesContext(connection) as queries:
        for n in range(1, 11):
            throttle.bump(world.thread.id, base + n)
    updates = [q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert len(updates) == 1  # the first bump of the window; the rest wait for its end
    assert ts_of(world.thread) == base + 1
    timer = throttle._timers[world.thread.id]
    timer.join(5)
    assert ts_of(world.thread) == base + 10  # the trailing write carries the newest
