"""The trace observer on hand-made Pi events: pairing, invalid data, the allowlist."""

from dispatch.pi.events import (
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnStart,
    decode_event,
)
from dispatch.traces import allowlist
from dispatch.traces.observer import TraceObserver


def observe(events, error=""):
    sent = []
    ticks = iter(range(1000))
    trace = TraceObserver(
        session_id="th_1",
        distinct_id="ag_bot",
        name="reply",
        send=lambda name, who, props, at: sent.append((name, props)),
        clock=lambda: float(next(ticks)),
    )
    for event in events:
        trace.see(event)
    trace.close(error)
    return sent


USAGE = {
    "input": 100,
    "output": 7,
    "cacheRead": 20,
    "cacheWrite": 0,
    "totalTokens": 127,
    "cost": {
        "input": 0.0003,
        "output": 0.000105,
        "cacheRead": 6e-06,
        "cacheWrite": 0,
        "total": 4e-4,
    },
}


def assistant(stop="stop", usage=USAGE, calls=(), **extra):
    content = [{"type": "toolCall", "id": c, "name": "bash", "arguments": {"x": 1}} for c in calls]
    return {
        "role": "assistant",
        "content": content or [{"type": "text", "text": "private answer"}],
        "provider": "fakellm",
        "model": "fake-model",
        "usage": usage,
        "stopReason": stop,
        **extra,
    }


def turn(message):
    return [TurnStart(), MessageStart(message={"role": "assistant"}), MessageEnd(message=message)]


def test_a_tool_run_pairs_with_the_generation_that_called_it():
    sent = observe(
        [
            *turn(assistant("toolUse", calls=["call_a"])),
            ToolExecutionStart(toolCallId="call_a", toolName="bash", args={"command": "ls"}),
            ToolExecutionEnd(toolCallId="call_a", toolName="bash", result="x", isError=True),
            *turn(assistant()),
        ]
    )
    names = [name for name, _ in sent]
    assert names == ["$ai_generation", "$ai_span", "$ai_generation", "$ai_trace"]
    first, span, second, root = (props for _, props in sent)
    assert span["$ai_parent_id"] == first["$ai_span_id"] != second["$ai_span_id"]
    assert span["$ai_is_error"] is True and span["$ai_latency"] == 1.0
    assert first["$ai_input_tokens"] == 100 and first["$ai_cache_read_input_tokens"] == 20
    assert first["$ai_cache_reporting_exclusive"] is True
    assert first["$ai_input_cost_usd"] == 0.000306 and first["$ai_total_cost_usd"] == 4e-4
    assert root["$ai_is_error"] is False and root["$ai_span_name"] == "reply"
    assert {first["$ai_trace_id"], root["$ai_trace_id"]} == {root["$ai_trace_id"]}


def test_invalid_data_is_dropped_and_the_valid_spend_kept():
    bad_usage = {"input": "lots", "output": -3, "cacheRead": 5, "cost": {"total": "free"}}
    sent = observe(
        [
            ToolExecutionEnd(toolCallId="call_ghost", toolName="bash"),  # a result without a call
            *turn(assistant(usage=bad_usage, model="a model with spaces")),
            *turn(assistant(usage=[1, 2])),
            MessageEnd(message=assistant()),  # its start was lost
            decode_event(b'{"type":"message_end","message":"not a message"}'),
            MessageStart(message={"role": "assistant"}),  # a crash mid-turn: never ends
            MessageUpdate(),
        ],
        error="Pi exited (1) before finishing.",
    )
    names = [name for name, _ in sent]
    assert names == ["$ai_generation"] * 3 + ["$ai_trace"]
    first, second, third, root = (props for _, props in sent)
    assert first["$ai_cache_read_input_tokens"] == 5 and "$ai_input_tokens" not in first
    assert "$ai_output_tokens" not in first and "$ai_total_cost_usd" not in first
    assert "$ai_model" not in first and first["$ai_provider"] == "fakellm"
    assert "$ai_input_tokens" not in second and second["$ai_stop_reason"] == "stop"
    assert third["$ai_input_tokens"] == 100 and "$ai_latency" not in third
    assert root["$ai_is_error"] is True and "exited" in root["$ai_error"]


def test_only_allowlisted_properties_and_tool_names_leave():
    sent = observe(
        [
            *turn(assistant("toolUse", calls=["call_a", "call_b"])),
            ToolExecutionStart(toolCallId="call_a", toolName="read"),
            ToolExecutionStart(toolCallId="call_b", toolName="my_secret_tool"),
            ToolExecutionEnd(toolCallId="call_b", toolName="my_secret_tool"),
            ToolExecutionEnd(toolCallId="call_a", toolName="read"),
        ]
    )
    assert [p["$ai_span_name"] for n, p in sent if n == "$ai_span"] == ["other", "read"]
    for _, props in sent:
        assert set(props) <= allowlist.OWN_PROPERTIES
        assert "call_a" not in repr(props) and "private" not in repr(props)


def test_the_backstop_drops_what_is_not_on_the_allowlist():
    event = {
        "event": "$ai_generation",
        "properties": {"$ai_input": "hi", "$ai_model": "m", "$lib": "posthog-python", "x": 1},
    }
    assert allowlist.backstop(event)["properties"] == {"$ai_model": "m", "$lib": "posthog-python"}
    assert allowlist.backstop({"event": "$pageview", "properties": {}}) is None


def test_error_summaries_keep_no_paths_quotes_urls_or_ids():
    text = (
        "429 rate limited for 'Zelda' at https://api.example.com/v1 reading /home/z/.key "
        "user@example.org req_abc123def456ghi\nsecond line"
    )
    summary = allowlist.error_summary(text)
    assert summary.startswith("429 rate limited for")
    for leak in ("Zelda", "example", "/home", ".key", "req_abc", "second"):
        assert leak not in summary
    assert allowlist.http_status(text) == 429


def test_a_generation_is_timed_from_pis_own_start_stamp():
    sent = []
    trace = TraceObserver(
        session_id="th_1",
        distinct_id="ag_bot",
        name="reply",
        send=lambda name, who, props, at: sent.append(props),
        clock=lambda: 5.0,  # read late, all in one burst
        wall=lambda: 1_000.0,
    )
    trace.see(MessageStart(message={"role": "assistant", "timestamp": 997_500}))
    trace.see(MessageEnd(message=assistant()))
    trace.see(MessageStart(message={"role": "assistant", "timestamp": "soon"}))
    trace.see(MessageEnd(message=assistant()))
    assert [props["$ai_latency"] for props in sent] == [2.5, 0.0]
