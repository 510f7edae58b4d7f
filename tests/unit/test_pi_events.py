"""Decoding Pi's stdout lines into typed events."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dispatch.pi.events import (
    AgentEnd,
    CompactionEnd,
    MessageEnd,
    MessageUpdate,
    ProtocolError,
    Response,
    ToolExecutionStart,
    TurnStart,
    UnknownEvent,
    decode_event,
    placeholder_event,
)


def line(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode()


def test_known_events_decode_to_their_structs():
    message = {"role": "assistant", "content": [], "stopReason": "stop", "extra": {"x": 1}}
    assert decode_event(line({"type": "turn_start"})) == TurnStart()
    assert decode_event(line({"type": "message_end", "message": message})) == MessageEnd(message)
    event = decode_event(
        line(
            {
                "type": "message_update",
                "message": message,
                "assistantMessageEvent": {
                    "type": "text_delta",
                    "contentIndex": 0,
                    "delta": "Hel",
                    "partial": message,
                },
            }
        )
    )
    assert isinstance(event, MessageUpdate)
    assert (event.assistantMessageEvent.type, event.assistantMessageEvent.delta) == (
        "text_delta",
        "Hel",
    )
    tool = {"type": "tool_execution_start", "toolCallId": "c", "toolName": "bash", "args": {}}
    assert decode_event(line(tool)) == ToolExecutionStart("c", "bash", {})
    reply = {"id": "c1", "type": "response", "command": "prompt", "success": True}
    assert decode_event(line(reply)) == Response(command="prompt", success=True, id="c1")
    compaction = {"type": "compaction_end", "reason": "manual", "result": None, "aborted": True}
    assert decode_event(line(compaction)) == CompactionEnd(reason="manual", aborted=True)


def test_unknown_and_odd_events_never_fail():
    new = {"type": "session_info_changed", "name": "x"}
    assert decode_event(line(new)) == UnknownEvent(type="session_info_changed", data=new)
    odd = {"type": "turn_end", "message": "not a dict"}
    assert decode_event(line(odd)) == UnknownEvent(type="turn_end", data=odd)
    assert decode_event(b'{"no_type": 1}') == UnknownEvent(type="", data={"no_type": 1})


def test_not_json_is_a_protocol_error():
    with pytest.raises(ProtocolError):
        decode_event(b"Debugger attached.")
    with pytest.raises(ProtocolError):
        decode_event(b"[1, 2]")


@given(st.text())
def test_text_survives_line_separators_and_crlf(text):
    """U+2028/U+2029 stay inside a record; a trailing CR is tolerated."""
    raw = line({"type": "agent_end", "messages": [{"role": "user", "content": text}]})
    for framed in (raw, raw + b"\r"):
        assert decode_event(framed) == AgentEnd(messages=[{"role": "user", "content": text}])


def test_placeholder_for_an_oversized_line():
    assert placeholder_event(b'{"type":"agent_end","messages":[{"role":') == AgentEnd()
    assert placeholder_event(b'{"type":"brand_new","x') == UnknownEvent(
        type="brand_new", data={"oversized": True}
    )
    assert placeholder_event(b"garbage").type == ""
