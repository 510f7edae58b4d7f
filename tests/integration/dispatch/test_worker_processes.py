"""Two `manage.py backstage` processes over Redis: wakes spread, one worker killed mid-reply.

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
from dispatch.takeover import REPLY_STOPPED
from tests.integration.dispatch.test_worker import ROOT, database_url_of_the_test_db
from tests.integration.dispatch.test_workers import assert_one_reply_at_a_time, taken_in
from tests.peers.ports import stop
from threads.entries import DispatchFailed, DispatchStarted

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


def test_kill_9_of_the_worker_holding_a_reply(live, workers):
    gate = live.fake.hold()
    try:
        asked = live.post("@helper this reply loses its worker")
        assert gate.arrived.wait(60)
        holder = ThreadLease.objects.get(pk=live.world.thread.id).holder
        (doomed,) = [p for p in workers if f":{p.pid}:" in holder]
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait(10)
        failed = live.wait_for(
            lambda: [e for e in live.entries() if isinstance(e.payload, DispatchFailed)]
        )
        wait_settled(live)
    finally:
        gate.release()

    entries = live.entries()
    (started,) = [e for e in entries if isinstance(e.payload, DispatchStarted)]
    assert failed[0].payload == DispatchFailed(
        stage="worker", error=REPLY_STOPPED, dispatchId=started.payload.dispatchId
    )
    assert_one_reply_at_a_time(entries)
    assert taken_in(entries)[asked] == 1
    body = live.now()
    assert body["now"]["reply"] is None and body["status"]["state"] != "working"

    # The survivor, idle while it waited, still takes wakes from the channel layer.
    live.post("@helper still there?")
    wait_settled(live)
    assert live.types()[-3:] == [
        "chat",
        "signal.dispatch.finished",
        "signal.thread_director.outcome",
    ]
