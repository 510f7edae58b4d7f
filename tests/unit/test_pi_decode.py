"""Pi events to thread payloads: the transcript, phase narration, spend and failures."""

from hypothesis import given
from hypothesis import strategies as st

from dispatch.pi.decode import Narration, assistant_failure, final_text, payloads_for, spend_of
from dispatch.pi.events import (
    AgentEnd,
    AssistantMessageEvent,
    AutoRetryStart,
    CompactionEnd,
    MessageEnd,
    MessageUpdate,
    ToolExecutionStart,
    TurnEnd,
    TurnStart,
    UnknownEvent,
)
from threads.entries import DispatchPhase, PiAssistant, PiCompaction, PiToolResult, Spend


def usage(input, output, cost, cache_read=0):
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": 0,
        "totalTokens": input + output + cache_read,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def assistant(*texts, stop="stop", **extra):
    content = [{"type": "text", "text": t} for t in texts]
    return {"role": "assistant", "content": content, "stopReason": stop, **extra}


def delta(text):
    return MessageUpdate(assistantMessageEvent=AssistantMessageEvent(type="text_delta", delta=text))


def test_message_end_becomes_transcript_entries():
    message = assistant("hi", usage=usage(10, 2, 0.001))
    tool = {"role": "toolResult", "toolCallId": "c1", "content": [], "isError": False}
    user = {"role": "user", "content": "hello"}

    assert payloads_for(MessageEnd(message=message), "d_1") == [
        PiAssistant(message=message, dispatchId="d_1")
    ]
    assert payloads_for(MessageEnd(message=tool), "d_1") == [
        PiToolResult(message=tool, dispatchId="d_1")
    ]
    assert payloads_for(MessageEnd(message=user), "d_1") == []
    assert payloads_for(UnknownEvent(type="session_info_changed"), "d_1") == []


def test_compaction_end_becomes_pi_compaction():
    event = CompactionEnd(reason="threshold", result={"summary": "s", "tokensBefore": 9})
    assert payloads_for(event, "d_2") == [
        PiCompaction(reason="threshold", result=event.result, aborted=False, dispatchId="d_2")
    ]


def test_phases_across_a_tool_round():
    narration = Narration()
    events = [
        TurnStart(),
        ToolExecutionStart(toolCallId="c1", toolName="bash"),
        TurnEnd(),
        TurnStart(),
        delta("Do"),
        delta("ne"),
        AutoRetryStart(attempt=1),
    ]
    phases = [p for e in events for p in payloads_for(e, "d", narration)]
    assert phases == [
        DispatchPhase(dispatchId="d", phase="thinking", round=0),
        DispatchPhase(dispatchId="d", phase="tool", round=0, tool="bash"),
        DispatchPhase(dispatchId="d", phase="thinking", round=1),
        DispatchPhase(dispatchId="d", phase="answering", round=1),
        DispatchPhase(dispatchId="d", phase="retrying", round=1),
    ]


def test_without_narration_no_phases():
    assert payloads_for(TurnStart(), "d") == []
    assert payloads_for(delta("x"), "d") == []


# A turn: its text arrives in any number of deltas, maybe after tool calls and other updates.
turn = st.tuples(
    st.lists(st.sampled_from(["bash", "read", "edit"]), max_size=3),
    st.lists(st.text(min_size=1, max_size=5), max_size=8),
    st.lists(st.sampled_from(["thinking_delta", "toolcall_delta", "text_start"]), max_size=4),
)


@given(st.lists(turn, min_size=1, max_size=6))
def test_answering_is_told_once_per_turn_that_has_text(turns):
    narration = Narration()
    events = []
    for tools, deltas, noise in turns:
        events.append(TurnStart())
        events += [
            MessageUpdate(assistantMessageEvent=AssistantMessageEvent(type=n)) for n in noise
        ]
        events += [delta(d) for d in deltas]
        events += [ToolExecutionStart(toolName=t) for t in tools]
        events.append(TurnEnd())
    phases = [p for e in events for p in payloads_for(e, "d", narration)]

    answering = [p.round for p in phases if p.phase == "answering"]
    assert answering == [i for i, (_, deltas, _) in enumerate(turns) if deltas]
    thinking = [p.round for p in phases if p.phase == "thinking"]
    assert thinking == list(range(len(turns)))
    tools = [(p.round, p.tool) for p in phases if p.phase == "tool"]
    assert tools == [(i, t) for i, (names, _, _) in enumerate(turns) for t in names]


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5)), max_size=8))
def test_spend_sums_assistant_usage_only(pairs):
    messages = [{"role": "user", "content": "q", "usage": usage(999, 999, 9.0)}]
    messages += [assistant("a", usage=usage(i, o, (i + o) / 1e6)) for i, o in pairs]
    spend = spend_of(messages)
    assert spend.input == sum(i for i, _ in pairs)
    assert spend.output == sum(o for _, o in pairs)
    assert spend.totalTokens == spend.input + spend.output
    assert abs(spend.costUsd - sum(i + o for i, o in pairs) / 1e6) < 1e-9


def test_spend_of_nothing_and_of_messages_without_usage():
    assert spend_of([]) == Spend()
    assert spend_of([{"role": "assistant", "content": []}]) == Spend()
    assert spend_of([assistant("a", usage=usage(5, 1, 0.5, cache_read=3))]).cacheRead == 3


def test_assistant_failure():
    assert assistant_failure(assistant("ok")) is None
    assert assistant_failure(assistant(stop="toolUse")) is None
    failed = assistant(stop="error", errorMessage="500 fake upstream failure")
    assert assistant_failure(failed) == "500 fake upstream failure"
    assert assistant_failure(assistant(stop="aborted")) == "the model call was aborted"
    assert assistant_failure(assistant(stop="error")) == "the model call failed"


def test_final_text_is_the_last_assistant_text():
    tool_call = {"type": "toolCall", "id": "c", "name": "bash", "arguments": {}}
    thinking = {"type": "thinking", "thinking": "hmm"}
    messages = [
        {"role": "user", "content": "q"},
        assistant("first"),
        {"role": "assistant", "content": [thinking, tool_call], "stopReason": "toolUse"},
        {"role": "toolResult", "content": [{"type": "text", "text": "out"}]},
        {
            "role": "assistant",
            "content": [
                thinking,
                {"type": "text", "text": "Done "},
                {"type": "text", "text": "here."},
            ],
        },
    ]
    assert final_text(messages) == "Done here."
    assert final_text(messages[:1]) == ""
    assert final_text(AgentEnd(messages=[assistant(" x ")]).messages) == "x"
