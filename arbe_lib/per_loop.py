"""One object per event loop, for what is bound to the loop it was made on.

httpx's async clients, futures and the tasks an object starts belong to one loop, and a process
can run several: Daphne's, the backstage worker's loop thread, each async test's own. Objects
are keyed weakly by their loop, so a dropped loop takes its object with it; and as an object
usually holds its loop (through a task or a connection), which keeps the weak key alive,
objects of closed loops are also dropped whenever a new one is made.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerLoop(Generic[T]):
    """Calling it returns the running loop's object, made by ``factory()`` on first use."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self.factory = factory
        self.made: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(self) -> T:
        loop = asyncio.get_running_loop()
        found = self.made.get(loop)
        if found is None:
            for closed in [other for other in list(self.made.keys()) if other.is_closed()]:
                self.made.pop(closed, None)
            found = self.made[loop] = self.factory()
        return found


def per_loop(factory: Callable[[], T]) -> PerLoop[T]:
    """``thing = per_loop(Thing)``; then ``thing()`` inside a running loop."""
    return PerLoop(factory)
