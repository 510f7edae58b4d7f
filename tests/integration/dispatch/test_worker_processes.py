"""Two `manage.py backstage` processes over Redis: wakes spread; the worker running a reply
killed (kill -9), frozen past its lease (SIGSTOP, then SIGCONT) or stopped (SIGTERM) mid-reply,
and the mention answered exactly once all the same.

Run on the stack: ``python -m tests.peers.stack -- pytest tests/integration/dispatch``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from dispatch import backstage as module
from dispatch.models import ThreadLease
from dispatch.takeover import REPLY_INTERRUPTED
from tests.integration.dispatch.test_worker import ROOT, database_url_of_the_test_db
from tests.integration.dispatch.test_workers import assert_one_reply_at_a_time, taken_in
from tests.peers.ports import stop
from threads.entries import Chat, DispatchFailed, DispatchFinished, DispatchStarted

pytestmark = [
    pytest.mark.backstage,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis between processes"),
]


@pytest.fixture
def workers(live, settings):
    settings.BACKSTAGE = "worker"
    env = {
        **os.environ,
        "DATABASE_URL": database_url_of_the_test_db(),
        "BACKSTAGE": "worker",
        "BACKSTAGE_LEASE_S": "2",
        "BACKSTAGE_DRAIN_S": "1",
        # A warm Pi keeps its thread's lease while it idles; a second here, so a thread
        # settles (no lease held) soon after its answer, with the warm path still taken.
        "DISPATCH_WARM_IDLE_S": "1",
        "PI_HOME": str(settings.PI_HOME),
        "PI_AGENT_DIR": settings.PI_AGENT_DIR,
        "SECRET_KEY": settings.SECRET_KEY,
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "manage.py", "backstage", "--interval", "3600"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        for _ in range(2)
    ]
    try:
        for proc in procs:
            assert "listening" in proc.stdout.readline()
        yield procs
    finally:
        for proc in procs:
            stop(proc)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # what a killed worker left (its Pi)


def settled(live) -> bool:
    return not ThreadLease.objects.exists() and (
        live.types()[-1] == "signal.thread_director.outcome"
    )


def wait_settled(live, timeout: float = 60.0) -> None:
    """Settled twice in a row a moment apart: a wake still in Redis takes the lease again."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if settled(live):
            time.sleep(0.5)
            if settled(live):
                return
        time.sleep(0.1)
    leases = list(ThreadLease.objects.values_list("thread_id", "holder", "wanted"))
    raise AssertionError(f"not settled: {live.types()[-8:]}, leases {leases}")


def test_fifty_wakes_over_two_worker_processes(live, workers):
    thread_id = live.world.thread.id
    posted = []
    for i in range(50):  # 10 posts among 50 wakes, each wake to whichever worker takes it
        if i % 5 == 0:
            posted.append(live.post(f"@helper message {i}"))
        else:
            module.wake(thread_id)
    wait_settled(live)
    entries = live.entries()
    assert_one_reply_at_a_time(entries)
    assert all(taken_in(entries)[i] == 1 for i in posted)
    assert live.now()["now"]["waiting"] == []
    assert all(proc.poll() is None for proc in workers)


def holder_of(live, workers):
    holder = ThreadLease.objects.get(pk=live.world.thread.id).holder
    (proc,) = [p for p in workers if f":{p.pid}:" in holder]
    return proc


@pytest.mark.parametrize("fault", ["kill -9", "freeze", "sigterm"])
def test_the_worker_holding_a_reply_fails_and_the_mention_is_answered_once(live, workers, fault):
    gate = live.fake.hold()
    try:
        asked = live.post("@helper this reply loses its worker")
        assert gate.arrived.wait(60)
        doomed = holder_of(live, workers)
        if fault == "kill -9":
            os.killpg(doomed.pid, signal.SIGKILL)  # its Pi too
            doomed.wait(10)
        elif fault == "freeze":
            os.kill(doomed.pid, signal.SIGSTOP)  # its Pi waits on at the gate
        else:
            os.kill(doomed.pid, signal.SIGTERM)  # drains 1 s, then hands the reply over
        live.wait_for(lambda: failures(live))
        if fault == "freeze":
            gate.release()  # the frozen worker's Pi answers; the worker thaws
            os.kill(doomed.pid, signal.SIGCONT)
        wait_settled(live)
        if fault == "sigterm":
            assert doomed.wait(30) == 0  # it stopped cleanly once it had handed over
    finally:
        gate.release()
        with contextlib.suppress(ProcessLookupError):
            os.kill(doomed.pid, signal.SIGCONT)

    entries = live.entries()
    (started,) = [e for e in entries if isinstance(e.payload, DispatchStarted)]
    dispatch_id = started.payload.dispatchId
    assert failures(live)[0].payload == DispatchFailed(
        stage="worker", error=REPLY_INTERRUPTED, dispatchId=dispatch_id, final=False
    )
    assert_one_reply_at_a_time(entries)
    assert taken_in(entries)[asked] == 1
    bot = live.world.bot.id
    assert len([e for e in entries if isinstance(e.payload, Chat) and e.authorId == bot]) == 1
    finished = [e.payload.dispatchId for e in entries if isinstance(e.payload, DispatchFinished)]
    assert finished == [dispatch_id]
    body = live.now()
    assert body["now"]["reply"] is None and body["status"]["state"] != "working"

    # A worker still takes wakes from the channel layer.
    live.post("@helper still there?")
    wait_settled(live)
    assert live.types()[-3:] == [
        "chat",
        "signal.dispatch.finished",
        "signal.thread_director.outcome",
    ]


def failures(live) -> list:
    return [e for e in live.entries() if isinstance(e.payload, DispatchFailed)]
