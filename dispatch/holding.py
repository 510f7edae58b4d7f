"""Holding a thread on one engine: its passes, replies and run, one at a time, fenced.

An engine that gets a thread's lease (``dispatch.thread_leases``) holds it here until a
pass starts nothing and no wake came in meanwhile. Everything it writes for the thread goes
through one ``FencedWriter`` at the lease epoch it got, so once another engine has taken the
thread over the store refuses this one (``Fenced``): the work stops there, quietly, and
records nothing more. A takeover first fences the old holder off and settles the reply it
left (``dispatch.takeover``), running it again when it was interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from django.conf import settings

from arbe_lib.concurrency import in_thread
from dispatch import thread_leases
from dispatch.fencing import Fenced, FencedWriter
from dispatch.warm import WarmPool
from ops import context

logger = logging.getLogger(__name__)
DIRECTOR_CHANNEL = "director"  # the channel-layer queue of wakes for backstage workers
WARM_POLL_S = 0.25  # a lingering holder looks for wakes from other processes this often


def lease_s() -> float:
    return settings.BACKSTAGE_LEASE_S


class Wake(asyncio.Event):
    """What a lingering holder waits for, with its log context (``ops.context``): a wake
    here hands the next pass its own request id."""

    def __init__(self, held: context.Fields | None) -> None:
        super().__init__()
        self.held = held


class ThreadHolding:
    """The part of ``Backstage`` that holds threads (``passes``, ``replies``, ``runs``)."""

    holder: str
    passes: dict[str, asyncio.Task]
    replies: dict[str, asyncio.Task]
    runs: dict[str, asyncio.Task]
    lingering: dict[str, Wake]  # quiet threads held for a warm bot: their wake
    warm: WarmPool
    draining: bool = False

    async def _wake(self, thread_id: str, run=None) -> bool:
        if self.draining:
            return False  # shutting down: another worker takes the wake (or the sweep does)
        holding = thread_id in self.passes
        try:
            taken = await in_thread(
                thread_leases.acquire, thread_id, self.holder, lease_s(), holding
            )
        except Exception as exc:
            logger.exception("backstage: no lease for %s", thread_id)
            # The wake is lost here: the log says so, as for a wake the web side lost.
            await in_thread(record_failure, thread_id, "wake", exc)
            return False
        if taken is None:
            lingering = self.lingering.pop(thread_id, None)
            if lingering is not None:  # held here, waiting with a warm bot: pass now
                context.hand_on(lingering.held)  # that pass is this wake's work
                lingering.set()
            return False  # its holder (here or on another worker) runs another pass
        task = asyncio.get_running_loop().create_task(self._hold(thread_id, taken, run))
        self.passes[thread_id] = task
        return True

    async def _hold(self, thread_id: str, taken: thread_leases.Taken, run=None) -> None:
        """Hold ``thread_id``: its passes, replies and run, one at a time, until a pass
        starts nothing and no wake came in meanwhile."""
        from dispatch.director import director_pass

        released = cancelled = False
        try:
            epoch = await in_thread(thread_leases.epoch, thread_id, self.holder)
            if epoch is None:
                released = True  # taken over before it began
                return
            fence = FencedWriter(thread_id, epoch)
            if taken is thread_leases.Taken.TAKEN_OVER:
                recovered = await self._recover(thread_id, fence)
                if recovered is None:
                    released = True  # kept, to lapse: the next tick tries the takeover again
                    return
                if recovered.resume is not None:
                    await self._reply(thread_id, recovered.resume.start, fence, recovered.resume)
            if run is not None:
                await self._run(run, fence)
            while not self.draining and await in_thread(
                thread_leases.begin, thread_id, self.holder
            ):
                try:
                    start = await in_thread(director_pass, thread_id, fence)
                    if start is not None:
                        await self._reply(thread_id, start, fence)
                        continue  # a finished reply always wakes the director again
                except Fenced:
                    raise
                except Exception as exc:
                    logger.exception("director pass over %s failed", thread_id)
                    await in_thread(record_failure, thread_id, "director", exc, fence)
                if self.warm.holds(thread_id) and await self._linger(thread_id):
                    continue  # a wake while a bot of the thread is warm: pass again
                if released := await in_thread(thread_leases.release, thread_id, self.holder):
                    return
            # Lost to another engine (its holder now), or draining: the lease goes below.
            released = not self.draining
        except Fenced:
            released = True  # another engine holds it; the fence logged the line
        except asyncio.CancelledError:
            cancelled = True
            raise
        except Exception:
            logger.exception("backstage: holding %s failed", thread_id)
        finally:
            self.lingering.pop(thread_id, None)
            self.warm.drop_thread(thread_id)  # a warm Pi never outlives the holding
            if self.passes.get(thread_id) is asyncio.current_task():
                del self.passes[thread_id]
            if not released and self.draining:
                await shielded(self._pass_on(thread_id, interrupted=cancelled))
            elif not released:  # cancelled, or the database failed: never leave it held
                await shielded(in_thread(thread_leases.drop, thread_id, self.holder))

    async def _linger(self, thread_id: str) -> bool:
        """Keep holding a quiet thread while a bot of it is warm (``dispatch.warm``): True
        when a wake came (here at once; from another process, or during the last pass, seen
        on the lease row within ``WARM_POLL_S``), False when it is time to let go (idle,
        evicted, shutting down); the thread's warm processes are closed by then."""
        if await in_thread(thread_leases.wanted, thread_id, self.holder):
            return True
        wake = self.lingering[thread_id] = Wake(context.current())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settings.DISPATCH_WARM_IDLE_S
        try:
            while not self.draining and self.warm.holds(thread_id) and loop.time() < deadline:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), min(deadline - loop.time(), WARM_POLL_S))
                if self.draining or not self.warm.holds(thread_id):
                    break
                if wake.is_set() or await in_thread(thread_leases.wanted, thread_id, self.holder):
                    return True
        finally:
            if self.lingering.get(thread_id) is wake:
                del self.lingering[thread_id]
        self.warm.drop_thread(thread_id)
        return False

    def cool(self) -> None:
        """On the loop: close every warm process and let their threads go (tests, drain)."""
        self.warm.drop_all()
        for wake in self.lingering.values():
            wake.set()
        self.lingering.clear()

    async def _pass_on(self, thread_id: str, *, interrupted: bool) -> None:
        """Shutting down: hand the thread to another worker at once. Work cut short is
        left as a lapsed lease, so the taker fences it off and answers its reply again;
        otherwise the lease goes and a wake asks another worker for the next pass."""
        if interrupted:
            await in_thread(thread_leases.hand_over, thread_id, self.holder)
        else:
            await in_thread(thread_leases.drop, thread_id, self.holder)
        await self.pass_wake(thread_id)

    async def pass_wake(self, thread_id: str) -> None:
        """A wake for another worker (the channel layer); in-process engines have none:
        the tick of any other engine takes a lapsed lease, and the sweep a working thread."""
        from django.conf import settings

        if settings.BACKSTAGE != "worker":
            return
        from channels.layers import get_channel_layer

        try:
            await get_channel_layer().send(
                DIRECTOR_CHANNEL, {"type": "director.wake", "thread": thread_id}
            )
        except Exception:
            logger.warning("could not pass %s on; the next tick takes it", thread_id)

    async def drain(self, limit_s: float) -> int:
        """Stop taking threads; let running work finish within ``limit_s``, then hand the
        rest over (cancelled, their leases lapsed for another worker). How many were."""
        self.draining = True
        self.cool()
        deadline = asyncio.get_running_loop().time() + limit_s
        while self.passes and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.1)
        tasks = [t for t in self.passes.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.warm.settle()  # every warm Pi has exited before the worker does
        return len(tasks)

    async def _recover(self, thread_id: str, fence: FencedWriter):
        """Fence off the stopped holder and settle what it left running; None if the log
        could not say it (then no pass may run: it would take the dead reply for a live one)."""
        from dispatch.takeover import recover

        try:
            recovered = await in_thread(recover, thread_id, fence)
        except Fenced:
            raise
        except Exception:
            logger.exception("backstage: taking over %s failed", thread_id)
            return None
        logger.warning(
            "%s took over %s: %d replies (%s), %d runs had stopped",
            self.holder,
            thread_id,
            recovered.replies,
            "answering again" if recovered.resume else "settled",
            recovered.runs,
        )
        return recovered

    async def _reply(self, thread_id: str, start, fence: FencedWriter, resume=None) -> None:
        from dispatch.replies import run_reply

        self.replies[thread_id] = asyncio.current_task()
        try:
            await run_reply(start, fence, resume.dispatch_id if resume else None, self.warm)
        except Fenced:
            raise
        except Exception:
            logger.exception("reply in %s crashed", thread_id)
        finally:
            self.replies.pop(thread_id, None)

    async def _run(self, claim, fence: FencedWriter) -> None:
        from dispatch.runs import run_coding

        self.runs[claim.run_id] = asyncio.current_task()
        try:
            await run_coding(claim, fence.epoch)
        except Exception:
            logger.exception("run %s crashed", claim.run_id)
        finally:
            self.runs.pop(claim.run_id, None)


async def shielded(awaitable) -> None:
    """Finish ``awaitable`` even if the task awaiting it is being cancelled."""
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.shield(awaitable)


def record_failure(thread_id: str, stage: str, exc: Exception, fence=None) -> None:
    """``signal.dispatch.failed`` for a pass or a wake that failed before any reply began;
    through the holder's fence when there is one (a fenced holder records nothing)."""
    from threads.entries import DispatchFailed
    from threads.failures import scrub
    from threads.lifecycle import new_entry
    from threads.models import stream_name_for
    from threads.recency import stream_writer

    error = scrub(f"{type(exc).__name__}: {exc}")[:500] or type(exc).__name__
    entry = new_entry(DispatchFailed(stage=stage, error=error))
    try:
        (fence or stream_writer()).append(stream_name_for(thread_id), entry)
        if stage == "director":
            from dispatch.director import give_up, refused

            if refused(exc):  # it would fail the same way on every wake: settle, don't loop
                give_up(thread_id, error, fence)
    except Fenced:
        pass
    except Exception:
        logger.exception("could not record the %s failure of %s", stage, thread_id)
