"""The trace mirror end to end: real replies and runs, what the SDK really sends."""

import json

import pytest

from dispatch.traces import allowlist, client
from tests.peers.fake_llm import Fail, ToolCall, bash
from tests.peers.posthog_capture import KEY
from threads.models import Thread

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


def sent(posthog) -> list[dict]:
    client.flush()
    return posthog.events


def tree(events):
    """The events of each trace: {trace id: {event name: [properties, ...]}}."""
    traces: dict[str, dict[str, list[dict]]] = {}
    for event in sorted(events, key=lambda e: e["timestamp"]):
        props = event["properties"]
        traces.setdefault(props["$ai_trace_id"], {}).setdefault(event["event"], []).append(props)
    return traces


def test_one_reply_with_two_tool_rounds_is_one_trace(live, posthog):
    live.post("@helper TWOTOOLS please")
    live.settle()
    events = sent(posthog)
    assert {e["distinct_id"] for e in events} == {live.world.bot.id}
    assert set(posthog.paths) == {"/batch/"}
    (trace,) = tree(events).values()
    (root,) = trace["$ai_trace"]
    generations, spans = trace["$ai_generation"], trace["$ai_span"]
    assert [g["$ai_span_name"] for g in generations] == ["turn_1", "turn_2", "turn_3"]
    assert [g["$ai_stop_reason"] for g in generations] == ["toolUse", "toolUse", "stop"]
    assert root["$ai_session_id"] == live.world.thread.pk
    assert root["$ai_is_error"] is False and "$ai_parent_id" not in root
    for generation in generations:
        assert generation["$ai_session_id"] == live.world.thread.pk
        assert generation["$ai_parent_id"] == root["$ai_trace_id"]
        assert (generation["$ai_model"], generation["$ai_provider"]) == ("fake-model", "fakellm")
        assert generation["$ai_input_tokens"] > 0 and generation["$ai_output_tokens"] > 0
        assert generation["$ai_cache_reporting_exclusive"] is True
        assert generation["$ai_total_cost_usd"] > 0 and generation["$ai_latency"] >= 0
        assert generation["$ai_is_error"] is False
    # Each tool run hangs under the model call that asked for it.
    assert [s["$ai_span_name"] for s in spans] == ["bash", "bash"]
    assert [s["$ai_parent_id"] for s in spans] == [g["$ai_span_id"] for g in generations[:2]]
    assert all(s["$ai_span_type"] == "tool" and s["$ai_is_error"] is False for s in spans)
    # The spend PostHog sees is the spend the thread records.
    (finished,) = [e.payload for e in live.entries() if e.type == "signal.dispatch.finished"]
    tokens = sum(
        g["$ai_input_tokens"]
        + g["$ai_output_tokens"]
        + g["$ai_cache_read_input_tokens"]
        + g["$ai_cache_creation_input_tokens"]
        for g in generations
    )
    assert tokens == finished.spend.totalTokens
    for event in events:
        assert set(event["properties"]) <= allowlist.ALLOWED_PROPERTIES


def test_a_coding_run_is_a_trace_in_its_child_threads_session(live, posthog):
    response = live.client.post(
        f"/api/threads/{live.world.thread.id}/runs",
        json.dumps({"agent": "helper", "task": "USETOOL and report"}),
        content_type="application/json",
    )
    assert response.status_code == 201
    live.settle()
    child = Thread.objects.get(pk=response.json()["run"]["childThreadId"])
    (trace,) = tree(sent(posthog)).values()
    (root,) = trace["$ai_trace"]
    assert root["$ai_span_name"] == "coding_run" and root["$ai_session_id"] == child.pk
    assert [g["$ai_stop_reason"] for g in trace["$ai_generation"]] == ["toolUse", "stop"]
    (span,) = trace["$ai_span"]
    assert span["$ai_parent_id"] == trace["$ai_generation"][0]["$ai_span_id"]
    assert {p["$ai_session_id"] for ps in trace.values() for p in ps} == {child.pk}


def test_continuing_a_thread_starts_a_new_trace_in_the_same_session(live, posthog):
    live.post("@helper hello")
    live.settle()
    live.post("@helper again")
    live.settle()
    traces = tree(sent(posthog))
    assert len(traces) == 2  # Pi continued its session file; the trace id is ours, fresh
    sessions = {p["$ai_session_id"] for t in traces.values() for ps in t.values() for p in ps}
    assert sessions == {live.world.thread.pk}
    assert all(len(t["$ai_generation"]) == 1 for t in traces.values())


def test_a_model_error_is_flagged_with_a_scrubbed_summary(live, posthog, settings):
    settings.DISPATCH_MAX_ATTEMPTS = 1
    live.fake.script(Fail(500, "upstream broke reading /srv/secret/key.pem for 'mia'"))
    live.post("@helper hello")
    live.settle()
    (trace,) = tree(sent(posthog)).values()
    (generation,) = trace["$ai_generation"]
    (root,) = trace["$ai_trace"]
    assert generation["$ai_is_error"] is True and generation["$ai_stop_reason"] == "error"
    assert generation["$ai_http_status"] == 500
    assert root["$ai_is_error"] is True
    for message in (generation["$ai_error"], root["$ai_error"]):
        assert "upstream broke" in message
        assert "/srv" not in message and "key.pem" not in message and "mia" not in message


def test_an_unknown_tool_is_reported_as_other(live, posthog):
    live.fake.script(ToolCall({"path": "x"}, name="frobnicate_private_thing"))
    live.post("@helper hello")
    live.settle()
    (trace,) = tree(sent(posthog)).values()
    assert [s["$ai_span_name"] for s in trace["$ai_span"]] == ["other"]
    assert b"frobnicate" not in b"".join(posthog.decoded)


def test_nothing_private_reaches_posthog(live, posthog):
    member = live.world.member
    member.first_name, member.last_name = "Zelda", "Quixote"
    member.email = "zelda.quixote@example.org"
    member.save()
    member.agent.display_name = "Zelda Quixote"
    member.agent.save()
    Thread.objects.filter(pk=live.world.thread.pk).update(title="Pomegranate Conspiracy")
    live.fake.script(
        bash("echo argsecret-$((6*7))-walrus"),  # the result, argsecret-42-walrus, is not the arg
        bash("cat /etc/hostname; echo resultsecret-marmalade"),
    )
    live.post("@helper promptsecret-narwhal TWOTOOLS zelda.quixote@example.org")
    live.settle()
    entries = live.entries()
    call_ids = [
        part["id"]
        for e in entries
        if e.type == "pi.assistant"
        for part in e.payload.message.get("content", [])
        if part.get("type") == "toolCall"
    ]
    results = [json.dumps(e.payload.message) for e in entries if e.type == "pi.tool_result"]
    assert len(call_ids) == 2 and "argsecret-42-walrus" in results[0]
    answer = [e.payload.text for e in entries if e.type == "chat"][-1]
    events = sent(posthog)
    assert {e["event"] for e in events} == {"$ai_trace", "$ai_generation", "$ai_span"}
    corpus = [
        "promptsecret-narwhal",
        "argsecret",
        "walrus",
        "42-walrus",
        "resultsecret-marmalade",
        "etc/hostname",
        "Zelda",
        "Quixote",
        "zelda.quixote@example.org",
        "example.org",
        "Pomegranate",
        "TWOTOOLS",
        "mia",
        "olive",
        answer,
        *call_ids,
    ]
    wire = b"".join(posthog.bodies + posthog.decoded).lower()
    for secret in corpus:
        assert secret.lower().encode() not in wire, secret
    assert all(json.loads(body)["api_key"] == KEY for body in posthog.decoded)
