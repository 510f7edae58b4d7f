"""Waking this process's notifiers: the append seam calls ``wake`` (any thread); each
notifier's loop listens while it runs. Kept apart from the worker so the seam needs none of
the worker's imports (it is on every write path)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

_wakers: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
_lock = threading.Lock()


def wake() -> None:
    """Thread-safe: tell this process's notifiers there is work (no-op without one)."""
    with _lock:
        wakers = list(_wakers)
    for loop, event in wakers:
        with contextlib.suppress(RuntimeError):  # a closed loop
            loop.call_soon_threadsafe(event.set)


@contextlib.contextmanager
def listening() -> Iterator[asyncio.Event]:
    """On a running loop: an event ``wake`` sets until the block ends."""
    waker = (asyncio.get_running_loop(), asyncio.Event())
    with _lock:
        _wakers.add(waker)
    try:
        yield waker[1]
    finally:
        with _lock:
            _wakers.discard(waker)
