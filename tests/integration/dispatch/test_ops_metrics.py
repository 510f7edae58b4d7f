"""Metrics move as a post, a reply and a failed reply happen; the request id that caused a
reply reaches Pi's environment (ops/metrics.py, ops/context.py)."""

import json
import os
import signal

import pytest

from ops import context
from ops.metrics import REGISTRY
from tests.peers.fake_llm import Fail, Text, bash

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


def value(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def snapshot() -> dict[str, float]:
    return {
        "posts": value("arbe_posts_appended_total"),
        "chat": value("arbe_entries_appended_total", type="chat"),
        "started": value("arbe_replies_total", outcome="started"),
        "finished": value("arbe_replies_total", outcome="finished"),
        "failed": value("arbe_replies_total", outcome="failed"),
        "pi": value("arbe_pi_starts_total", kind="cold"),
        "asked": value("arbe_reply_model_asked_seconds_count"),
        "visible": value("arbe_reply_visible_seconds_count"),
        "indexed": value("arbe_search_index_lag_seconds_count"),
    }


def moved(before: dict, after: dict) -> dict:
    return {k: after[k] - before[k] for k in before if after[k] != before[k]}


def test_a_post_and_its_reply_move_the_counters(live):
    before = snapshot()
    live.post("@helper hello")
    live.settle()
    assert moved(before, snapshot()) == {
        "posts": 2,  # the question and the answer
        "chat": 2,
        "started": 1,
        "finished": 1,
        "pi": 1,
        "asked": 1,
        "visible": 1,
        "indexed": 2,
    }
    assert value("arbe_pi_processes", kind="cold") == 0  # at work no more…
    assert value("arbe_pi_processes", kind="warm") == 1  # …kept for the next reply
    warm = value("arbe_pi_starts_total", kind="warm")
    live.post("@helper again")
    live.settle()
    assert moved(before, snapshot())["pi"] == 1  # the second reply started no Pi…
    assert value("arbe_pi_starts_total", kind="warm") == warm + 1  # …it took the warm one


def test_a_kept_pi_that_dies_while_idle_counts_as_running_no_more(live):
    from dispatch.backstage import backstage

    live.post("@helper hello")
    live.settle()
    (warm,) = backstage().warm.kept.values()
    assert value("arbe_pi_processes", kind="warm") == 1
    os.killpg(warm.session.pid, signal.SIGKILL)  # its own group: Pi and its sandbox
    live.wait_for(lambda: warm.session.returncode is not None)
    assert value("arbe_pi_processes", kind="warm") == 0  # still in the pool, not running
    assert value("arbe_pi_processes", kind="cold") == 0  # and no reply at work either
    live.post("@helper again")  # the pool finds it dead and a cold Pi answers
    live.settle()
    assert value("arbe_pi_processes", kind="warm") == 1


def test_a_failed_reply_counts_as_failed_once(live):
    live.fake.script(Fail(), Fail())
    before = snapshot()
    live.post("@helper hello")
    live.settle()
    change = moved(before, snapshot())
    assert change["failed"] == 1 and change["started"] == 1 and change["pi"] == 2
    assert "finished" not in change and change["posts"] == 1


def test_the_request_id_reaches_pi_through_the_wake(live):
    live.fake.script(bash("echo rid=$ARBE_REQUEST_ID"), Text("done"))
    context.begin("req-ops-test-0001")
    try:
        live.post("@helper what is your request?")
    finally:
        context.begin()  # the rest of this thread's work belongs to no request
    live.settle()
    results = [e.payload.message for e in live.entries() if e.type == "pi.tool_result"]
    assert "rid=req-ops-test-0001" in json.dumps(results)


def test_a_warm_pi_runs_each_replys_commands_with_that_replys_request_id(live):
    ids = []
    for n in range(2):
        live.fake.script(bash("echo rid=$ARBE_REQUEST_ID"), Text("done"))
        ids.append(f"req-ops-warm-{n:04d}")
        context.begin(ids[-1])
        try:
            live.post(f"@helper which request is this ({n})?")
        finally:
            context.begin()
        live.settle()
    assert value("arbe_pi_starts_total", kind="warm") >= 1  # the second took the kept Pi
    results = json.dumps([e.payload.message for e in live.entries() if e.type == "pi.tool_result"])
    assert f"rid={ids[0]}" in results and f"rid={ids[1]}" in results
