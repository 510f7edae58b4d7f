"""Bot replies end to end: post, director, Pi on the fake model, entries, view, status."""

import pytest

from houses.models import Agent
from tests.peers.fake_llm import Fail, Text, bash
from threads.entries import Chat
from threads.models import Thread

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]

REPLY_START = ["chat", "signal.thread_director.decided", "signal.dispatch.started"]
REPLY_END = ["chat", "signal.dispatch.finished", "signal.thread_director.outcome"]


def after_created(types):
    assert types[0] == "signal.thread.created"
    return types[1:]


def test_a_plain_answer(live):
    live.post("@helper hello")
    live.settle()
    assert after_created(live.types()) == [
        *REPLY_START,
        "signal.environment.prepared",
        "pi.assistant",
        *REPLY_END,
    ]
    *_, answer, finished, outcome = live.entries()
    assert answer.authorId == live.world.bot.id
    assert answer.payload == Chat(text="Hello from fake LLM!")
    assert finished.payload.spend.totalTokens > 0 and finished.payload.spend.costUsd > 0
    assert outcome.payload.picked == [] and outcome.payload.reason is None
    body = live.now()
    assert body["status"]["state"] == "done"
    assert body["now"]["waiting"] == [] and body["now"]["reply"] is None
    assert Thread.objects.get(pk=live.world.thread.pk).status == "done"


def test_phases_narrate_the_reply(live):
    live.post("@helper hello")
    live.settle()
    phases = [e.payload.phase for e in live.entries() if e.type == "signal.dispatch.phase"]
    assert phases[0] == "thinking" and "answering" in phases


def test_a_tool_call_then_its_result_then_text(live):
    live.post("@helper please USETOOL now")
    live.settle()
    types = after_created(live.types())
    assert types[:4] == [*REPLY_START, "signal.environment.prepared"]
    assert types[4:7] == ["pi.assistant", "pi.tool_result", "pi.assistant"]
    assert types[7:] == REPLY_END
    tools = [
        e.payload.tool
        for e in live.entries()
        if e.type == "signal.dispatch.phase" and e.payload.tool
    ]
    assert tools == ["bash"]
    answer = [e for e in live.entries() if e.type == "chat"][-1]
    assert "pi-tool-ok" in answer.payload.text


def _steering(entry) -> bool:
    return entry.type == "signal.dispatch.phase" and entry.payload.phase == "steering"


def test_a_message_arriving_between_tool_rounds_is_steered_in(live):
    gate = live.fake.hold()  # hold the first model call until we have posted again
    live.fake.script(bash("echo round-1"), bash("echo round-2"), Text("done with both"))
    first = live.post("@helper do two rounds")
    assert gate.arrived.wait(30)
    second = live.post("also mention the weather")
    # Hold round 2's model call until Pi has queued the steer: otherwise a fast Pi can end
    # before the steer reaches it, and the message is left for the director instead.
    round_two = live.fake.hold()
    gate.release()
    assert round_two.arrived.wait(30)
    live.wait_for(lambda: any(_steering(e) for e in live.entries()))
    round_two.release()
    live.settle()
    steered = [e for e in live.entries() if e.type == "signal.dispatch.steered"]
    assert [s.payload.entryIds for s in steered] == [[second]]
    requests = live.fake.requests
    assert any("also mention the weather" in str(r["messages"]) for r in requests[1:])
    started = next(e for e in live.entries() if e.type == "signal.dispatch.started")
    assert started.payload.entryIds == [first]
    assert live.now()["status"]["state"] == "done"


def test_a_model_error_is_retried_then_recorded(live):
    live.fake.script(Fail(), Fail())
    live.post("@helper hello")
    live.settle()
    failures = [e.payload for e in live.entries() if e.type == "signal.dispatch.failed"]
    assert [(f.stage, f.attempt, f.final) for f in failures] == [
        ("model", 1, False),
        ("model", 2, True),
    ]
    assert "fake upstream failure" in failures[-1].error
    assert live.types()[-1] == "signal.thread_director.outcome"
    assert live.now()["status"]["state"] == "error"


def test_a_stalled_stream_is_cut_by_the_timeout(live, settings):
    settings.DISPATCH_EVENT_IDLE_S = 1
    settings.DISPATCH_MAX_ATTEMPTS = 1
    live.fake.script(Text("slow " * 50, delay=3.0))
    live.post("@helper take your time")
    live.settle()
    (failed,) = [e.payload for e in live.entries() if e.type == "signal.dispatch.failed"]
    assert (failed.stage, failed.final) == ("timeout", True)
    assert live.now()["status"]["state"] == "error"


def test_a_tool_call_longer_than_the_idle_limit_does_not_cut_the_reply(live, settings):
    # A build or a test suite: Pi says nothing while the tool runs, yet the reply works.
    settings.DISPATCH_EVENT_IDLE_S = 1
    live.fake.script(bash("sleep 3 && echo built"))
    live.post("@helper run the build")
    live.settle()
    assert [e for e in live.entries() if e.type == "signal.dispatch.failed"] == []
    answer = [e for e in live.entries() if e.type == "chat"][-1]
    assert (answer.authorId, answer.payload.text) == (live.world.bot.id, "Tool said: built")
    assert live.now()["status"]["state"] == "done"


def test_two_mentioned_bots_answer_one_after_the_other(live):
    from tests.factories import make_bot
    from tests.peers.fake_llm import MODEL, PROVIDER

    second = make_bot(live.world.house, "coder", provider=PROVIDER, model=MODEL)
    live.post("@helper and @coder, both of you")
    live.settle()
    started = [e.payload.agentId for e in live.entries() if e.type == "signal.dispatch.started"]
    assert started == [live.world.bot.id, second.id]
    answers = [e.authorId for e in live.entries() if e.type == "chat"][1:]
    assert answers == [live.world.bot.id, second.id]
    assert live.now()["status"]["state"] == "done"


def test_ordinary_chat_is_settled_without_a_word(live):
    live.post("just talking among people")
    live.settle()
    *_, outcome = live.entries()
    assert (outcome.payload.picked, outcome.payload.reason) == ([], None)
    body = live.now()
    assert body["status"]["state"] == "idle" and body["now"]["silence"] is None
    assert live.fake.requests == []


def test_an_unconfigured_bot_blocks_the_thread(live):
    Agent.objects.filter(pk=live.world.bot.pk).update(model="")
    live.post("@helper are you there?")
    live.settle()
    assert live.now()["status"]["state"] == "blocked"
    assert Thread.objects.get(pk=live.world.thread.pk).status == "blocked"


def test_a_deleted_message_never_reaches_the_model(live):
    secret = live.post("my password is hunter2")
    live.settle()
    live.post("@helper hello")
    live.settle()
    assert "hunter2" in str(live.fake.requests[-1]["messages"])  # it was handed over once…
    response = live.world.client_for(live.world.member).delete(
        f"/api/threads/{live.world.thread.id}/entries/{secret}"
    )
    assert response.status_code == 200
    live.post("@helper what did I say?")
    live.settle()
    assert "hunter2" not in str(live.fake.requests[-1]["messages"])  # …and never again


def test_now_and_the_stored_status_follow_each_step(live):
    gate = live.fake.hold()  # the model call waits: the reply is mid-flight
    live.fake.script(bash("echo step"), Text("all done"))
    live.post("@helper step by step")
    gate.arrived.wait(30)
    body = live.now()
    assert body["now"]["reply"]["agentId"] == live.world.bot.id
    assert body["now"]["reply"]["phase"] == "thinking"
    assert body["status"]["state"] == "working"
    assert Thread.objects.get(pk=live.world.thread.pk).status == "working"
    tool_gate = live.fake.hold()  # hold the answer after the tool round
    gate.release()
    tool_gate.arrived.wait(30)
    # Pi asked for round 1 once the tool ran; the reply records that as it reads Pi's events.
    body = live.wait_for(lambda: (b := live.now())["now"]["reply"]["round"] >= 1 and b)
    assert body["now"]["toolCalls"] == [] and body["status"]["state"] == "working"
    tool_gate.release()
    live.settle()
    body = live.now()
    assert (body["now"]["reply"], body["now"]["waiting"]) == (None, [])
    assert body["status"]["state"] == "done"
    assert Thread.objects.get(pk=live.world.thread.pk).status == "done"


def test_a_retry_never_steers_again_what_an_earlier_attempt_took_in(live):
    """Issue 24, item 2: attempt 1 takes a message in, then fails; attempt 2 reads it in
    its prompt and does not steer it a second time."""
    gate = live.fake.hold()
    live.fake.script(
        bash("echo round-1"),
        bash("echo round-2"),
        Fail(),  # attempt 1 fails after taking the message in
        bash("echo again"),
        Text("all done"),
    )
    live.post("@helper do two rounds")
    assert gate.arrived.wait(30)
    second = live.post("also mention the weather")
    round_two = live.fake.hold()
    gate.release()
    assert round_two.arrived.wait(30)
    live.wait_for(lambda: any(_steering(e) for e in live.entries()))
    round_two.release()
    live.settle()
    steered = [e.payload.entryIds for e in live.entries() if e.type == "signal.dispatch.steered"]
    assert steered == [[second]]
    failed = [e.payload for e in live.entries() if e.type == "signal.dispatch.failed"]
    assert [(f.attempt, f.final) for f in failed] == [(1, False)]
    retry = live.fake.requests[3]  # attempt 2's first model call
    assert "also mention the weather" in str(retry["messages"])
    replies = [e for e in live.entries() if e.type == "signal.dispatch.started"]
    assert len(replies) == 1  # nobody answers the steered message again


def test_a_retry_goes_on_counting_rounds_and_the_view_never_goes_back(live):
    """A retried attempt is the same reply: its rounds follow the earlier attempt's, so the
    thread (and ``arbe thread now --follow``) never shows round 1 going back to round 0."""
    live.fake.script(bash("echo first"), Fail(), Text("Done after a retry."))
    live.post("@helper do it")
    live.settle()
    entries = live.entries()
    failures = [e.payload for e in entries if e.type == "signal.dispatch.failed"]
    assert [(f.attempt, f.final) for f in failures] == [(1, False)]
    rounds = [e.payload.round for e in entries if e.type == "signal.dispatch.phase"]
    assert max(rounds) >= 2, rounds
    assert rounds == sorted(rounds), rounds
