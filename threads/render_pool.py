"""Rendering off the event loop: the few threads the socket code renders fragments in.

A thread page's socket and its tail render chat (Markdown), Pi transcripts and the
Now panel for every batch. On the event loop, one slow render would hold every
request and socket of the process; here it holds one of :data:`THREADS` threads.
Rendering is also bounded in itself (``threads.markup``): this is the second half
of "nothing a writer sends can stall the server".

Its own small pool, not the loop's default executor: rendering is CPU work and
holds the GIL, so more threads than cores buy nothing, and a burst of renders
never takes the threads that database calls wait for. No database work belongs
here (each thread would keep a connection of its own): read first, render here.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async

THREADS = 2
P = ParamSpec("P")
R = TypeVar("R")

_pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="arbe-render")


async def off_loop(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(*args, **kwargs)`` on a render thread; the awaiting task resumes with its result."""
    return await sync_to_async(fn, thread_sensitive=False, executor=_pool)(*args, **kwargs)
