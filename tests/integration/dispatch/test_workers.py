"""Several workers: two backstage engines on one database, as two workers would be.

Each engine has its own event loop and holder name; wakes alternate between them, the way
the channel layer hands each message to one of several workers.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections import Counter

import pytest

from dispatch import backstage as module
from dispatch import thread_leases
from dispatch.backstage import Backstage
from dispatch.models import ThreadLease
from dispatch.takeover import REPLY_INTERRUPTED
from threads.entries import (
    Chat,
    DispatchFailed,
    DispatchFinished,
    DispatchStarted,
    DispatchSteered,
    ThreadTakenOver,
)

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


class Probe:
    """Counts director passes and replies running at once, per thread, across engines."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: Counter = Counter()
        self.most = 0
        self.holders: set[str] = set()

    def enter(self, key) -> None:
        with self.lock:
            self.running[key] += 1
            self.most = max(self.most, self.running[key])

    def leave(self, key) -> None:
        with self.lock:
            self.running[key] -= 1


@pytest.fixture
def probe(monkeypatch):
    from dispatch import director, replies

    probe = Probe()
    real_pass, real_reply, real_begin = (
        director.director_pass,
        replies.run_reply,
        thread_leases.begin,
    )

    def director_pass(thread_id, writer=None):
        probe.enter(thread_id)  # a pass and a reply of one thread count together
        try:
            return real_pass(thread_id, writer)
        finally:
            probe.leave(thread_id)

    async def run_reply(start, fence=None, resume=None, warm=None):
        probe.enter(start.thread_id)
        try:
            await real_reply(start, fence, resume, warm)
        finally:
            probe.leave(start.thread_id)

    def begin(thread_id, holder):
        probe.holders.add(holder)
        return real_begin(thread_id, holder)

    monkeypatch.setattr(director, "director_pass", director_pass)
    monkeypatch.setattr(replies, "run_reply", run_reply)
    monkeypatch.setattr(thread_leases, "begin", begin)
    return probe


class Pair:
    def __init__(self, monkeypatch) -> None:
        self.engines = [Backstage("w1"), Backstage("w2")]
        for engine in self.engines:
            engine.start_in_thread()
        self.turn = itertools.cycle(self.engines)
        self.to: Backstage | None = None  # where the next post's wake goes; None: in turn
        monkeypatch.setattr(module, "wake", self.wake)

    def wake(self, thread_id: str) -> None:
        (self.to or next(self.turn)).wake(thread_id)

    def settle(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for engine in self.engines:
                engine.wait_idle(timeout)
            if not ThreadLease.objects.exists() and not any(e.busy() for e in self.engines):
                return
            time.sleep(0.05)
        raise AssertionError("the engines did not settle")

    def shut(self) -> None:
        for engine in self.engines:
            stop(engine)


def run_on(engine: Backstage, coro_fn, timeout: float = 30.0):
    return asyncio.run_coroutine_threadsafe(coro_fn(), engine.loop).result(timeout)


def stop(engine: Backstage) -> None:
    """End an engine's tasks (its work is cancelled, its leases dropped), then its loop."""

    async def end() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    run_on(engine, end)
    engine.loop.call_soon_threadsafe(engine.loop.stop)


def freeze(engine: Backstage) -> None:
    """The worker stops dead, as under kill -9: no heartbeat, no cleanup, no more appends."""
    engine.loop.call_soon_threadsafe(engine.loop.stop)
    deadline = time.monotonic() + 10
    while engine.loop.is_running():  # stopped at the end of its current step
        assert time.monotonic() < deadline, "the engine did not stop"
        time.sleep(0.01)


def thaw(engine: Backstage) -> None:
    threading.Thread(target=engine.loop.run_forever, daemon=True).start()


@pytest.fixture
def pair(monkeypatch, settings):
    settings.BACKSTAGE_LEASE_S = 10
    # Leases handed between workers at every quiet pass: no engine keeps a thread for a warm
    # bot (test_warm_bots.py covers warm processes and their leases).
    settings.DISPATCH_WARM_MAX = 0
    pair = Pair(monkeypatch)
    yield pair
    pair.shut()


def assert_one_reply_at_a_time(entries) -> None:
    """In log order, a reply ends before the next one starts."""
    running = None
    for e in entries:
        p = e.payload
        if isinstance(p, DispatchStarted):
            assert running is None, f"{p.dispatchId} started while {running} ran"
            running = p.dispatchId
        elif isinstance(p, DispatchFinished | DispatchFailed) and p.dispatchId == running:
            running = None if getattr(p, "final", True) else running
    assert running is None


def taken_in(entries) -> Counter:
    """How many times each message was taken in by a reply (started with it, or steered)."""
    counts: Counter = Counter()
    for e in entries:
        if isinstance(e.payload, DispatchStarted | DispatchSteered):
            counts.update(e.payload.entryIds)
    return counts


def test_fifty_wakes_over_two_workers_run_one_pass_or_reply_at_a_time(live, pair, probe):
    world = live.world
    pair.to = pair.engines[0]
    posted = [live.post("@helper first, at worker one")]
    pair.settle()
    pair.to = pair.engines[1]
    posted.append(live.post("@helper second, at worker two"))
    pair.settle()
    pair.to = None
    for i in range(48):  # 8 posts among 48 wakes, alternating between the workers
        if i % 6 == 0:
            posted.append(live.post(f"@helper message {i}"))
        else:
            pair.wake(world.thread.id)
    pair.settle()

    assert probe.most == 1
    assert {"w1", "w2"} <= probe.holders
    entries = live.entries()
    assert_one_reply_at_a_time(entries)
    assert all(taken_in(entries)[i] == 1 for i in posted)  # each message answered once
    answers = [e for e in entries if isinstance(e.payload, Chat) and e.authorId == world.bot.id]
    started = [e for e in entries if isinstance(e.payload, DispatchStarted)]
    assert len(answers) == len(started)
    assert live.types()[-1] == "signal.thread_director.outcome"
    assert live.now()["now"]["waiting"] == []


def test_a_frozen_workers_reply_is_answered_once_by_the_worker_that_takes_over(
    live, pair, probe, settings
):
    from ops.metrics import REGISTRY

    settings.BACKSTAGE_LEASE_S = 2
    takeovers = REGISTRY.get_sample_value("arbe_lease_takeovers_total")
    doomed, survivor = pair.engines
    gate = live.fake.hold()
    pair.to = doomed
    asked = live.post("@helper this reply will lose its worker")
    assert gate.arrived.wait(60)  # the reply is running on the doomed worker
    freeze(doomed)
    try:
        pair.to = survivor
        live.wait_for(lambda: "signal.thread.taken_over" in live.types())
        assert REGISTRY.get_sample_value("arbe_lease_takeovers_total") >= takeovers + 1
        # Whichever request the gate holds goes on: the frozen worker's Pi answers into a
        # frozen worker, and the survivor's reply (if a slow heartbeat had let it take the
        # thread before the freeze, the gate may hold its request) answers the mention.
        gate.release()
        live.wait_for(lambda: bot_chats(live) and live.types()[-1] == OUTCOME)
        pair.engines = [survivor]
        pair.settle()
        settled = live.entries()
        # The frozen worker thaws with its Pi's answer waiting: every append it tries is
        # refused.
        thaw(doomed)
        doomed.wait_idle(60)
        assert [e.id for e in live.entries()] == [e.id for e in settled]
    finally:
        stop(doomed)
        gate.release()

    entries = live.entries()
    (started,) = [e for e in entries if isinstance(e.payload, DispatchStarted)]
    dispatch_id = started.payload.dispatchId
    # A loaded machine can make the survivor's own renewal late too, and another engine
    # takes over again: each takeover fences first, then says the reply goes on.
    taken = [i for i, e in enumerate(entries) if isinstance(e.payload, ThreadTakenOver)]
    failed = [i for i, e in enumerate(entries) if isinstance(e.payload, DispatchFailed)]
    assert failed and len(failed) <= len(taken)
    assert taken[0] < failed[0]  # fenced before it read the log
    assert all(entries[i].payload.stage == "worker" for i in failed)
    assert entries[failed[0]].payload == DispatchFailed(
        stage="worker", error=REPLY_INTERRUPTED, dispatchId=dispatch_id, final=False
    )
    assert entries[failed[0]].authorId == live.world.bot.id
    assert_one_reply_at_a_time(entries)
    assert taken_in(entries)[asked] == 1  # one reply took it in ...
    assert len(bot_chats(live)) == 1  # ... and answered it once
    finished = [e for e in entries if isinstance(e.payload, DispatchFinished)]
    assert [e.payload.dispatchId for e in finished] == [dispatch_id]
    assert probe.holders - {"w1"}  # another engine holds the thread now
    after_takeover = live.now()
    assert after_takeover["now"]["reply"] is None
    assert after_takeover["status"]["state"] != "working"

    # The survivor goes on answering the thread.
    live.post("@helper are you still there?")
    pair.settle()
    assert live.types()[-3:] == ["chat", "signal.dispatch.finished", OUTCOME]


OUTCOME = "signal.thread_director.outcome"


def bot_chats(live) -> list:
    bot = live.world.bot.id
    return [e for e in live.entries() if isinstance(e.payload, Chat) and e.authorId == bot]


def test_a_wake_that_gets_no_lease_is_recorded_in_the_log(live, pair, monkeypatch):
    def acquire(*args):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(thread_leases, "acquire", acquire)
    pair.engines[0].wake(live.world.thread.id)
    (failed,) = live.wait_for(
        lambda: [e for e in live.entries() if isinstance(e.payload, DispatchFailed)]
    )
    assert failed.payload.stage == "wake" and failed.payload.dispatchId is None
    assert "the database went away" in failed.payload.error
