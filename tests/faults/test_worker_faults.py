"""A backstage worker fails while replies run: frozen past its lease and thawed, killed with
kill -9, or stopped with SIGTERM (a deploy), with mentions in flight over several threads.

The cluster (``tests.peers.cluster``): two Daphnes, two workers on PostgreSQL, Redis and the
reference stream server; the bot's Pi talks to a loopback fake model held at a gate, so
every thread has a reply in flight when the fault lands. Counted from the logs, each must
be zero: mentions answered 0 times, answered twice, entries written under a dispatch id
already recorded failed, and threads stored working once everything is at rest.

A delegated coding run lives while its worker holds it: one held in a tool call longer than
the silence rule (``RUN_SILENCE_S``; CI size shortens both, 20 s of silence against a 40 s
tool call, the full size runs the 90 s rule against a 120 s call) finishes ok, never
orphaned, with one report to its parent; one whose worker is killed with kill -9 is orphaned
once, by the takeover, with one report.
"""

from __future__ import annotations

import collections
import os
import signal
import time
import uuid

import httpx
import pytest

from tests.faults.sizes import sized
from tests.peers.cluster import Cluster
from tests.peers.fake_llm import MODEL, PROVIDER, FakeLLM
from tests.peers.pi_home import write_pi_home

THREADS = sized(10, 3)
PER_THREAD = 2  # mentions per thread: the second arrives while the first is answered
LEASE_S = 3
WAIT_S = 240.0
SWEEP_S = 5
RUN_SILENCE_S = sized(90, 20)  # the sweep's silence rule for runs no worker holds
LONG_TOOL_S = sized(120, 40)  # a tool call held open past it


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    fake = FakeLLM().start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def cluster(fake, tmp_path_factory):
    agent_dir = write_pi_home(tmp_path_factory.mktemp("agent"), fake.base_url)
    env = {
        "BACKSTAGE_LEASE_S": str(LEASE_S),
        "BACKSTAGE_DRAIN_S": "2",
        "PI_AGENT_DIR": str(agent_dir),
        "DISPATCH_EVENT_IDLE_S": "60",
        "RUN_SILENCE_S": str(RUN_SILENCE_S),
    }
    with Cluster(web=2, workers=2, sweep_s=SWEEP_S, extra_env=env) as cluster:
        yield cluster


@pytest.fixture
def world(cluster):
    return helper_world(cluster, THREADS)


@pytest.fixture
def run_world(cluster):
    return helper_world(cluster, 1)


def helper_world(cluster, threads: int) -> dict:
    world = cluster.world(people=1, threads=threads)
    cluster.manage(
        "shell",
        "-c",
        "from houses.models import Agent; "
        f"Agent.objects.filter(handle='helper', house__slug='{world['house']}')"
        f".update(provider='{PROVIDER}', model='{MODEL}')",
    )
    return world


def api(cluster, world, path: str, *, web: int = 0, **kwargs) -> httpx.Response:
    headers = {"Authorization": f"Bearer {world['tokens'][0]}"}
    method = "POST" if "json" in kwargs else "GET"
    url = f"{cluster.web[web].url}{path}"
    return httpx.request(method, url, headers=headers, timeout=30, **kwargs)


def post(cluster, world, thread: str, text: str, web: int) -> str:
    entry_id = uuid.uuid4().hex
    body = {"id": entry_id, "payload": {"type": "chat", "text": text}}
    response = api(cluster, world, f"/api/threads/{thread}/entries", web=web, json=body)
    assert response.status_code == 201, response.text
    return entry_id


def log_of(cluster, world, thread: str) -> list[dict]:
    out, offset = [], "-1"
    while True:
        path = f"/api/stream/arbe-thread-{thread}"
        response = api(cluster, world, path, params={"offset": offset})
        assert response.status_code == 200, response.text
        out += response.json()
        offset = response.headers["Stream-Next-Offset"]
        if response.headers.get("Stream-Up-To-Date") == "true":
            return out


def at_rest(cluster, world) -> bool:
    for thread in world["threads"]:
        now = api(cluster, world, f"/api/threads/{thread}/now").json()
        if now["now"]["reply"] is not None or now["now"]["waiting"]:
            return False
    return True


def wait_at_rest(cluster, world) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if at_rest(cluster, world):
            time.sleep(LEASE_S)  # a wake still on its way takes a thread again
            if at_rest(cluster, world):
                return
        time.sleep(0.5)
    raise AssertionError(f"not at rest within {WAIT_S}s\n{cluster.logs()}")


def lease_holders(cluster) -> collections.Counter:
    out = cluster.manage(
        "shell",
        "-c",
        "from dispatch.models import ThreadLease; "
        "print('|'.join(ThreadLease.objects.values_list('holder', flat=True)))",
    )
    return collections.Counter(h for h in out.strip().splitlines()[-1].split("|") if h)


def count(logs: dict[str, list[dict]], asked: dict[str, list[str]], bot: str) -> dict:
    """The figures that must be zero, from every thread's log."""
    unanswered = doubled = after_failure = 0
    for thread, entries in logs.items():
        taken: collections.Counter = collections.Counter()
        finished, failed, chats = set(), set(), collections.Counter()
        running = None
        for e in entries:
            p = e["payload"]
            kind, dispatch = p["type"], p.get("dispatchId")
            if dispatch is not None and dispatch in failed:
                after_failure += 1  # anything under a dispatch already recorded failed
            if kind == "signal.dispatch.started":
                running = dispatch
                taken.update(p["entryIds"])
            elif kind == "signal.dispatch.steered":
                taken.update(p["entryIds"])
            elif kind == "chat" and e.get("authorId") == bot and running:
                chats[running] += 1
            elif kind == "signal.entry.reaction" and e.get("authorId") == bot and running:
                chats[running] += p.get("on", True)  # an emoji answer
            elif kind == "signal.dispatch.finished":
                finished.add(dispatch)
            elif kind == "signal.dispatch.failed" and p.get("final", True) and dispatch:
                failed.add(dispatch)
        doubled += sum(1 for n in chats.values() if n > 1)
        for entry_id in asked[thread]:
            n = taken[entry_id]
            unanswered += n == 0
            doubled += n > 1
        unanswered += len(failed)  # a reply that ended failed answered nobody
    return {"answered_0": unanswered, "answered_twice": doubled, "after_failure": after_failure}


def working_at_rest(cluster, world) -> int:
    out = cluster.manage(
        "shell",
        "-c",
        "from threads.models import Thread; "
        f"print(Thread.objects.filter(pk__in={world['threads']!r}, status='working').count())",
    )
    return int(out.strip().splitlines()[-1])


@pytest.mark.parametrize("fault", ["freeze", "kill -9", "sigterm"])
def test_a_worker_fails_mid_reply_and_every_mention_is_answered_once(
    cluster, world, fake, fault, report
):
    gates = [fake.hold() for _ in world["threads"]]  # each thread's first model request
    asked: dict[str, list[str]] = {t: [] for t in world["threads"]}
    for n, thread in enumerate(world["threads"]):
        asked[thread].append(post(cluster, world, thread, f"@helper USETOOL first {n}", n % 2))
    for gate in gates:
        assert gate.arrived.wait(120), cluster.logs()
    for n, thread in enumerate(world["threads"]):
        asked[thread].append(post(cluster, world, thread, f"@helper second {n}", (n + 1) % 2))
    holders = lease_holders(cluster)
    busiest = holders.most_common(1)[0][0]
    (doomed,) = [w for w in cluster.workers if f":{w.pid}:" in busiest]
    started = time.monotonic()
    try:
        if fault == "freeze":
            os.kill(doomed.pid, signal.SIGSTOP)
            time.sleep(LEASE_S * 2)  # past its lease: the other worker takes its threads
            for gate in gates:
                gate.release()
            time.sleep(1)  # its Pi processes answer while it is frozen
            os.kill(doomed.pid, signal.SIGCONT)
        elif fault == "kill -9":
            doomed.kill()  # the process group: its Pi processes too
            for gate in gates:
                gate.release()
        else:
            os.kill(doomed.pid, signal.SIGTERM)  # drains 2 s, then hands over
            time.sleep(3)
            for gate in gates:
                gate.release()
            assert doomed.popen.wait(60) == 0, doomed.tail()
        wait_at_rest(cluster, world)
        recovery_s = time.monotonic() - started
    finally:
        for gate in gates:
            gate.release()
        if doomed.alive:
            os.kill(doomed.pid, signal.SIGCONT)
        else:
            doomed.start(wait=False)  # back to two workers for the next fault
    logs = {t: log_of(cluster, world, t) for t in world["threads"]}
    bot = next(
        e["authorId"]
        for entries in logs.values()
        for e in entries
        if e["payload"]["type"] == "signal.dispatch.started"
    )
    figures = count(logs, asked, bot)
    figures["working_at_rest"] = working_at_rest(cluster, world)
    kinds = collections.Counter(e["payload"]["type"] for log in logs.values() for e in log)
    report(
        fault=fault,
        mentions=sum(len(v) for v in asked.values()),
        threads=len(world["threads"]),
        held_by_doomed=holders[busiest],
        taken_over=kinds["signal.thread.taken_over"],
        dispatch_failed=kinds["signal.dispatch.failed"],
        recovery_s=round(recovery_s, 1),
        **figures,
    )
    assert figures == {
        "answered_0": 0,
        "answered_twice": 0,
        "after_failure": 0,
        "working_at_rest": 0,
    }


def start_run(cluster, world, parent: str, task: str) -> str:
    body = {"agent": "helper", "task": task}
    response = api(cluster, world, f"/api/threads/{parent}/runs", json=body)
    assert response.status_code == 201, response.text
    return response.json()["run"]["childThreadId"]


def run_record(cluster, world, parent: str, child: str) -> dict:
    """What the logs say of the run: its states, its orphan records, its parent's reports."""
    log = log_of(cluster, world, child)
    return {
        "states": [
            e["payload"]["state"] for e in log if e["payload"]["type"].endswith("run_state")
        ],
        "orphaned": sum(e["payload"]["type"] == "signal.thread.orphaned" for e in log),
        "in_tool": any(e["payload"]["type"] == "pi.assistant" for e in log),
        "reports": [
            e["payload"]
            for e in log_of(cluster, world, parent)
            if e["payload"]["type"] == "signal.thread.child_finished"
            and e["payload"]["childThreadId"] == child
        ],
    }


def wait_for_run(cluster, world, parent, child, done, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = run_record(cluster, world, parent, child)
        if done(record):
            return record
        time.sleep(1)
    raise AssertionError(f"run not there within {timeout}s: {record}\n{cluster.logs()}")


def lease_holder(cluster, thread: str) -> str:
    out = cluster.manage(
        "shell",
        "-c",
        "from dispatch.models import ThreadLease; "
        f"print(ThreadLease.objects.filter(pk='{thread}').values_list('holder', flat=True)"
        ".first() or '-')",
    )
    return out.strip().splitlines()[-1]


def ended(record: dict) -> bool:
    return bool(record["reports"]) and record["states"][-1] not in ("claimed", "running")


def test_a_run_in_a_tool_call_longer_than_the_silence_rule_finishes_ok_once(
    cluster, run_world, report
):
    parent = run_world["threads"][0]
    started = time.monotonic()
    child = start_run(cluster, run_world, parent, f"LONGTOOL{LONG_TOOL_S} and report")
    wait_for_run(cluster, run_world, parent, child, ended, LONG_TOOL_S + 180)
    took_s = time.monotonic() - started
    time.sleep(SWEEP_S * 2)  # two more sweeps: a wrong orphan would land now
    record = run_record(cluster, run_world, parent, child)
    report(
        tool_s=LONG_TOOL_S,
        silence_rule_s=RUN_SILENCE_S,
        run_s=round(took_s, 1),
        states=record["states"],
        orphaned=record["orphaned"],
        reports=len(record["reports"]),
    )
    assert record["states"] == ["claimed", "running", "finished"]
    assert record["orphaned"] == 0
    assert [r.get("ok", True) for r in record["reports"]] == [True]
    assert "slept-" in record["reports"][0]["report"]


def test_a_worker_killed_mid_run_is_orphaned_once_with_one_report(cluster, run_world, report):
    parent = run_world["threads"][0]
    child = start_run(cluster, run_world, parent, "LONGTOOL600 and report")
    wait_for_run(cluster, run_world, parent, child, lambda r: r["in_tool"], 120)
    holder = lease_holder(cluster, child)
    (doomed,) = [w for w in cluster.workers if f":{w.pid}:" in holder]
    started = time.monotonic()
    try:
        doomed.kill()  # kill -9 of its process group: its Pi and the tool call too
        wait_for_run(cluster, run_world, parent, child, ended, 120)
        recovery_s = time.monotonic() - started
        time.sleep(SWEEP_S * 2)  # two more sweeps: a second orphan would land now
        record = run_record(cluster, run_world, parent, child)
    finally:
        doomed.start(wait=False)  # back to two workers
    report(
        states=record["states"],
        orphaned=record["orphaned"],
        reports=len(record["reports"]),
        recovery_s=round(recovery_s, 1),
    )
    assert record["states"] == ["claimed", "running", "dead"]
    assert record["orphaned"] == 1
    assert [r.get("ok", True) for r in record["reports"]] == [False]
