"""Backstage: where director passes and replies run, on one event loop of their own.

In the embedded configuration the web process runs it in a background thread,
started with the process (``start_with_web``, from the ASGI module) so the 60 s sweep
repairs stale records from the start. In the scaled one (``BACKSTAGE=worker``), the web
process sends wakes over the channel layer and ``manage.py backstage`` runs
this engine. Per thread, passes never overlap and one reply runs at a time; a
wake that arrives during a pass runs another pass after it, and a finished
reply always wakes the director again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import socket
import threading

from asgiref.sync import async_to_sync
from django.conf import settings

from arbe_site.concurrency import in_thread

logger = logging.getLogger(__name__)
DIRECTOR_CHANNEL = "director"
SWEEP_LEASE = "backstage-sweep"
HOLDER = f"{socket.gethostname()}:{os.getpid()}"


class Backstage:
    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self._started = threading.Lock()
        self.passes: dict[str, asyncio.Task] = {}
        self.replies: dict[str, asyncio.Task] = {}
        self.again: set[str] = set()
        self.runs: dict[str, asyncio.Task] = {}
        self.sweeping: asyncio.Future | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start_in_thread(self) -> None:
        with self._started:
            if self.loop is None:
                self._start_loop()
        self.start_sweep()

    def _start_loop(self) -> None:
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        threading.Thread(target=run, name="arbe-backstage", daemon=True).start()
        ready.wait()
        self.loop = loop
        self.start_boards()

    def start_sweep(self) -> None:
        """Thread-safe: run the sweep on this engine (once), if the settings ask for one."""
        with self._started:
            if self.sweeping is None and self.loop is not None and settings.BACKSTAGE_SWEEP_S > 0:
                self.sweeping = asyncio.run_coroutine_threadsafe(
                    self.sweep_forever(settings.BACKSTAGE_SWEEP_S), self.loop
                )

    def start_boards(self) -> None:
        """Thread-safe: run the T3 board subscribers (``boards.service``) on this engine."""
        if self.loop is None:
            self.start_in_thread()  # which calls back here
            return
        from boards.service import board_service

        self.loop.call_soon_threadsafe(board_service().start, self.loop)

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run on an existing loop (``manage.py backstage``)."""
        self.loop = loop

    # -- wakes -------------------------------------------------------------------------

    def wake(self, thread_id: str) -> None:
        """Thread-safe: ask for a director pass over ``thread_id``."""
        if self.loop is None:
            self.start_in_thread()
        self.loop.call_soon_threadsafe(self.schedule, thread_id)

    def schedule(self, thread_id: str) -> None:
        if thread_id in self.passes:
            self.again.add(thread_id)
            return
        self.passes[thread_id] = asyncio.get_running_loop().create_task(self._pass(thread_id))

    async def _pass(self, thread_id: str) -> None:
        from dispatch.director import director_pass

        try:
            while True:
                self.again.discard(thread_id)
                if thread_id in self.replies:
                    return  # the running reply wakes the director when it ends
                start = await in_thread(director_pass, thread_id)
                if start is not None:
                    self.replies[thread_id] = asyncio.get_running_loop().create_task(
                        self._reply(start)
                    )
                    return
                if thread_id not in self.again:
                    return
        except Exception as exc:
            logger.exception("director pass over %s failed", thread_id)
            await in_thread(_record_director_failure, thread_id, exc)
        finally:
            self.passes.pop(thread_id, None)

    async def _reply(self, start) -> None:
        from dispatch.replies import run_reply

        try:
            await run_reply(start)
        except Exception:
            logger.exception("reply in %s crashed", start.thread_id)
        finally:
            self.replies.pop(start.thread_id, None)
            self.schedule(start.thread_id)

    def start_run(self, claim) -> None:
        """Thread-safe: run a claimed coding run on this engine."""
        if self.loop is None:
            self.start_in_thread()
        self.loop.call_soon_threadsafe(self.spawn_run, claim)

    def spawn_run(self, claim) -> None:
        from dispatch.runs import run_coding

        task = asyncio.get_running_loop().create_task(run_coding(claim))
        self.runs[claim.run_id] = task
        task.add_done_callback(lambda _: self.runs.pop(claim.run_id, None))

    async def sweep_forever(self, interval: float) -> None:
        """Every ``interval`` seconds, from now: orphan silent runs, recompute working and
        blocked threads. Every process owning backstage ticks; the sweep lease lets one
        tick per interval run, whichever process it is."""
        from dispatch.models import take_lease

        while True:
            try:
                # A little under the interval, so the next tick (of any process) finds it free.
                if await in_thread(take_lease, SWEEP_LEASE, interval * 0.9, HOLDER):
                    await self.sweep_once()
            except Exception:
                logger.exception("backstage sweep failed")
            await asyncio.sleep(interval)

    async def sweep_once(self) -> tuple[int, int]:
        from dispatch.supervision import orphan_silent_runs
        from threads.status_sync import sweep

        orphaned = await in_thread(orphan_silent_runs)
        return orphaned, await in_thread(sweep)

    # -- tests and shutdown ------------------------------------------------------------

    def busy(self) -> bool:
        return bool(self.passes or self.replies or self.again or self.runs)

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Block until no pass or reply is running (tests, shutdown)."""
        if self.loop is None:
            return

        async def idle() -> None:
            while self.busy():
                await asyncio.sleep(0.02)

        asyncio.run_coroutine_threadsafe(asyncio.wait_for(idle(), timeout), self.loop).result()


def _record_director_failure(thread_id: str, exc: Exception) -> None:
    from threads.entries import DispatchFailed
    from threads.failures import scrub
    from threads.lifecycle import new_entry
    from threads.models import stream_name_for
    from threads.recency import stream_writer

    error = scrub(f"{type(exc).__name__}: {exc}")[:500] or type(exc).__name__
    failure = DispatchFailed(stage="director", error=error)
    stream_writer().append(stream_name_for(thread_id), new_entry(failure))


_backstage = Backstage()


def backstage() -> Backstage:
    return _backstage


def start_with_web() -> None:
    """The web process owns backstage in the embedded configuration: start it (and its
    sweep) now, not at the first wake. Workers start their own (``manage.py backstage``)."""
    if settings.BACKSTAGE == "inprocess" and settings.BACKSTAGE_SWEEP_S > 0:
        _backstage.start_in_thread()


def wake(thread_id: str) -> None:
    """Where a wake goes: this process's engine, or the workers over the channel layer."""
    if settings.BACKSTAGE == "worker":
        _send({"type": "director.wake", "thread": thread_id})
    else:
        _backstage.wake(thread_id)


def start_run(claim) -> None:
    if settings.BACKSTAGE == "worker":
        _send({"type": "run.start", **dataclasses.asdict(claim)})
    else:
        _backstage.start_run(claim)


def _send(message: dict) -> None:
    from channels.layers import get_channel_layer

    async_to_sync(get_channel_layer().send)(DIRECTOR_CHANNEL, message)
