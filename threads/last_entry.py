"""``Thread.last_entry_ts``: thread lists sort on it, moved forward at the append seam.

At most one write per thread per second, with a trailing write (``RecencyThrottle``);
``threads.recency`` re-exports these names.
"""

from __future__ import annotations

import logging
import threading
import time

from django.db import close_old_connections
from django.db.models import Q

from arbe_lib.events import send_to_group
from threads.models import Thread, Visibility

logger = logging.getLogger(__name__)
THROTTLE_S = 1.0


def bump_last_entry_ts(thread_id: str, ts: int) -> int:
    """Move ``last_entry_ts`` forward to ``ts``; never backwards (a guarded UPDATE)."""
    return (
        Thread.objects.filter(pk=thread_id)
        .filter(Q(last_entry_ts__isnull=True) | Q(last_entry_ts__lt=ts))
        .update(last_entry_ts=ts)
    )


def announce_row(thread_id: str) -> None:
    """Tell the house's live pages that a thread row moved; the row stays the truth."""
    from houses.access import audience

    row = Thread.objects.filter(pk=thread_id).values_list("house_id", "visibility").first()
    if row is None:
        return
    event = {"type": "thread.row", "thread": thread_id}
    if row[1] != Visibility.HOUSE:  # a private thread: only its members' pages hear of it
        event["readers"] = audience(thread_id)
    send_to_group(f"house-{row[0]}", event)


class RecencyThrottle:
    """At most one recency write per thread per second, with a trailing write.

    The first append in a window writes at once; later ones in the same window
    leave their newest ``ts`` pending, written when the window ends, so the
    row is never left behind the stream for longer than one window.
    """

    def __init__(self, interval_s: float = THROTTLE_S):
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._last_write: dict[str, float] = {}
        self._pending: dict[str, int] = {}
        self._timers: dict[str, threading.Timer] = {}

    def bump(self, thread_id: str, ts: int, *, announce: bool = True) -> None:
        with self._lock:
            now = time.monotonic()
            last = self._last_write.get(thread_id)
            if last is None or now - last >= self.interval_s:
                self._last_write[thread_id] = now
                write_now = True
            else:
                write_now = False
                self._pending[thread_id] = max(ts, self._pending.get(thread_id, ts))
                if thread_id not in self._timers:
                    timer = threading.Timer(
                        self.interval_s - (now - last), self._flush, args=(thread_id,)
                    )
                    timer.daemon = True
                    self._timers[thread_id] = timer
                    timer.start()
        if write_now and bump_last_entry_ts(thread_id, ts) and announce:
            announce_row(thread_id)

    def _flush(self, thread_id: str) -> None:
        with self._lock:
            self._timers.pop(thread_id, None)
            ts = self._pending.pop(thread_id, None)
            self._last_write[thread_id] = time.monotonic()
        if ts is None:
            return
        try:
            if bump_last_entry_ts(thread_id, ts):
                announce_row(thread_id)
        except Exception:  # the database away: the thread's next append moves it on
            logger.exception("trailing recency write for thread %s failed", thread_id)
        finally:
            close_old_connections()

    def reset(self) -> None:
        """Forget pending bumps and windows (between tests)."""
        with self._lock:
            for timer in self._timers.values():
                timer.cancel()
            self._timers.clear()
            self._pending.clear()
            self._last_write.clear()

    def flush_all(self) -> None:
        """Write every pending bump now (shutdown and tests)."""
        with self._lock:
            timers = list(self._timers.values())
        for timer in timers:
            timer.cancel()
        for thread_id in list(self._pending):
            self._flush(thread_id)


throttle = RecencyThrottle()
