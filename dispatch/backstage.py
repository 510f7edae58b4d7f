"""Backstage: where director passes and replies run, on one event loop of their own.

In the embedded configuration the web process runs it in a background thread,
started with the process (``start_with_web``, from the ASGI module) so the 60 s sweep
repairs stale records from the start. In the scaled one (``BACKSTAGE=worker``), the web
process sends wakes over the channel layer and ``manage.py backstage`` runs
this engine, in as many worker processes as the deployment runs. Per thread, across
every engine, passes never overlap and one reply or run goes at a time: the engine that
holds the thread's lease (``dispatch.thread_leases``) runs them all; a wake that arrives
anywhere meanwhile makes that holder run another pass after the current one, and a
finished reply always wakes the director again. A holder that stops renewing (a killed
or frozen worker) loses its threads to the next engine's tick, which fences it off and
answers the reply it ran again (``dispatch.holding``, ``dispatch.takeover``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import secrets
import socket
import threading

from asgiref.sync import async_to_sync
from django.conf import settings

from arbe_lib.concurrency import in_thread
from dispatch import thread_leases
from dispatch.holding import DIRECTOR_CHANNEL, ThreadHolding, Wake, lease_s
from dispatch.warm import WarmPool
from ops import metrics
from ops.context import carried, wake_context

logger = logging.getLogger(__name__)
SWEEP_LEASE = "backstage-sweep"
HOLDER = f"{socket.gethostname()}:{os.getpid()}"


class Backstage(ThreadHolding):
    def __init__(self, holder: str | None = None) -> None:
        self.holder = holder or f"{HOLDER}:{secrets.token_hex(3)}"
        self.loop: asyncio.AbstractEventLoop | None = None
        self._started = threading.Lock()
        self.passes: dict[str, asyncio.Task] = {}  # thread -> the task holding its lease
        self.replies: dict[str, asyncio.Task] = {}
        self.runs: dict[str, asyncio.Task] = {}
        self.waking: set[asyncio.Task] = set()  # wakes still asking for a lease
        self.lingering: dict[str, Wake] = {}
        self.warm = WarmPool()
        self.sweeping: asyncio.Future | None = None
        self.tending: asyncio.Task | None = None
        self.notifying = None  # notify.worker: pushes and email, where the sweep runs

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
        loop.call_soon_threadsafe(self.start_tending)
        self.start_boards()

    def start_sweep(self) -> None:
        """Thread-safe: run the sweep on this engine (once), if the settings ask for one."""
        with self._started:
            if self.sweeping is None and self.loop is not None and settings.BACKSTAGE_SWEEP_S > 0:
                self.sweeping = asyncio.run_coroutine_threadsafe(
                    self.sweep_forever(settings.BACKSTAGE_SWEEP_S), self.loop
                )
                from notify.worker import start_notifier

                self.notifying = start_notifier(self.holder, self.loop)

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
        self.start_tending()

    def stop_background(self) -> None:
        """Thread-safe: stop the lease tending and the T3 board subscribers, and wait for
        them (before the database they read goes away: the end of a test session)."""
        if self.loop is None or not self.loop.is_running():
            return
        from boards.service import board_service

        async def stop() -> None:
            self.cool()
            boards = board_service()
            tasks = [self.tending, boards.task, *boards.subscribers.values()]
            # The board service is one per process: only the tasks on this engine's loop
            # are this engine's to stop (a second engine, in tests, shares the process).
            here = asyncio.get_running_loop()
            tasks = [t for t in tasks if t is not None and not t.done() and t.get_loop() is here]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=10)

    def start_tending(self) -> None:
        """On the loop: heartbeat this engine's leases and take over lapsed ones."""
        if self.tending is None or self.tending.done():
            self.tending = asyncio.get_running_loop().create_task(self.tend_forever())

    # -- wakes -------------------------------------------------------------------------

    def wake(self, thread_id: str) -> None:
        """Thread-safe: ask for a director pass over ``thread_id``."""
        if self.loop is None:
            self.start_in_thread()
        self.loop.call_soon_threadsafe(self.schedule, thread_id, context=wake_context(thread_id))

    def schedule(self, thread_id: str) -> None:
        """On the loop: ask for a pass; whoever holds the thread (any worker) runs it."""
        self._asking(self._wake(thread_id))

    def _asking(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.waking.add(task)
        task.add_done_callback(self.waking.discard)

    async def tend_forever(self) -> None:
        """Every third of a lease: renew what this engine holds, stop work on what it lost,
        and take over threads whose holder stopped renewing (a killed worker)."""
        failing = False
        while True:
            try:
                await self.tend_once()
            except Exception as exc:
                # The first failure of a run with its traceback, then one line each time:
                # a database that is down would otherwise print a traceback every few seconds.
                if failing:
                    logger.warning("backstage: tending leases still failing: %s", exc)
                else:
                    logger.exception("backstage: tending leases failed")
                failing = True
            else:
                if failing:
                    logger.info("backstage: tending leases works again")
                failing = False
            await asyncio.sleep(lease_s() / 3)

    async def tend_once(self) -> None:
        held = set(self.passes)
        kept = await in_thread(thread_leases.renew, self.holder, held, lease_s())
        for thread_id in held - kept:
            task = self.passes.get(thread_id)
            if task is not None and not task.done():
                logger.warning(
                    "lost the lease on %s: another worker holds it now (%s)", thread_id, self.holder
                )
                task.cancel()
        for thread_id in await in_thread(thread_leases.expired):
            if thread_id not in self.passes:
                self.schedule(thread_id)

    def start_run(self, claim) -> None:
        """Thread-safe: run a claimed coding run on this engine."""
        if self.loop is None:
            self.start_in_thread()
        self.loop.call_soon_threadsafe(self.spawn_run, claim)

    def spawn_run(self, claim) -> None:
        """On the loop: run a claimed coding run holding its child thread's lease."""
        self._asking(self._start_run(claim))

    async def _start_run(self, claim) -> None:
        # The child thread is new; only a wake of it can hold it, and only for one pass.
        while not await self._wake(claim.child_id, claim):
            await asyncio.sleep(0.1)

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
        from threads.seam import repair_owed
        from threads.status_sync import sweep, working_threads

        orphaned = await in_thread(orphan_silent_runs)
        # Appends whose after-append steps failed: run them again, then wake the director
        # of each thread whose chat was repaired (the status record may not have shown it).
        for thread_id in await in_thread(repair_owed):
            self.schedule(thread_id)
        count = await in_thread(sweep)
        metrics.swept(count, orphaned)
        # A wake lost on its way (Redis down, a worker killed before its pass) leaves a
        # message waiting and the thread working: a pass over each settles what is owed.
        # Passes are idempotent, and a held thread only marks its holder to pass again.
        for thread_id in await in_thread(working_threads):
            self.schedule(thread_id)
        return orphaned, count

    # -- tests and shutdown ------------------------------------------------------------

    def busy(self) -> bool:
        """Passes, replies, runs or wakes under way; a thread held only for a warm bot is idle."""
        holding = self.passes.keys() - self.lingering.keys()
        return bool(holding or self.replies or self.waking or self.runs)

    def cool_down(self, timeout: float = 60.0) -> None:
        """Thread-safe: close every warm Pi, let go of their threads, wait until idle."""
        if self.loop is None or not self.loop.is_running():
            return

        async def cool() -> None:
            self.cool()
            while self.busy() or self.passes:
                await asyncio.sleep(0.02)
            await self.warm.settle()

        asyncio.run_coroutine_threadsafe(asyncio.wait_for(cool(), timeout), self.loop).result()

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Block until no pass or reply is running (tests, shutdown)."""
        if self.loop is None:
            return

        async def idle() -> None:
            while self.busy():
                await asyncio.sleep(0.02)

        asyncio.run_coroutine_threadsafe(asyncio.wait_for(idle(), timeout), self.loop).result()


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
        _send({"type": "director.wake", "thread": thread_id, **carried()})
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
