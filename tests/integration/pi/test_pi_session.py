"""A real ``pi --mode rpc`` against the loopback fake model: events, decoding, steering,
failures, shutdown and the environment Pi sees."""

import asyncio
import os
from pathlib import Path

import pytest
from django.conf import settings

from dispatch.pi import sandbox
from dispatch.pi.decode import Narration, assistant_failure, final_text, payloads_for, spend_of
from dispatch.pi.events import AgentEnd, AgentStart, MessageUpdate, QueueUpdate, Response
from dispatch.pi.process import PiError, PiSession
from tests.integration.pi.conftest import run_to_end
from tests.peers.fake_llm import DEFAULT_TEXT, bash
from threads.entries import DispatchPhase, PiAssistant, PiToolResult

FORBIDDEN = ("DURABLE_STREAMS_SECRET", "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "ARBE_CANARY")


def decode_all(events, dispatch_id="d_1"):
    narration = Narration()
    return [p for e in events for p in payloads_for(e, dispatch_id, narration)]


def phases(payloads):
    return [(p.phase, p.round, p.tool) for p in payloads if isinstance(p, DispatchPhase)]


def transcript(payloads):
    return [p for p in payloads if isinstance(p, PiAssistant | PiToolResult)]


async def test_plain_text_reply(pi, fake_llm):
    events = pi.events()
    await pi.prompt("hello")
    seen = await run_to_end(pi, events)

    assert isinstance(seen[-1], AgentEnd)
    assert any(isinstance(e, AgentStart) for e in seen)
    payloads = decode_all(seen)
    [assistant] = transcript(payloads)
    assert assistant.dispatchId == "d_1"
    assert assistant.message["stopReason"] == "stop"
    assert assistant.message["usage"]["output"] > 0
    assert phases(payloads) == [("thinking", 0, None), ("answering", 0, None)]
    assert final_text(seen[-1].messages) == DEFAULT_TEXT
    spend = spend_of(seen[-1].messages)
    assert spend.input > 0 and spend.output > 0 and spend.costUsd > 0
    # What Pi sent: our instructions in the system prompt, the prompt as the user turn.
    [request] = fake_llm.requests
    assert "You are a test bot." in request["messages"][0]["content"]
    assert request["messages"][-1]["content"] == [{"type": "text", "text": "hello"}]
    assert pi.state["sessionFile"] == str(pi.config.session_file)


async def test_tool_call_then_answer(pi, fake_llm):
    events = pi.events()
    await pi.prompt("please USETOOL now")
    seen = await run_to_end(pi, events)

    payloads = decode_all(seen)
    first, result, last = transcript(payloads)
    assert isinstance(first, PiAssistant) and first.message["stopReason"] == "toolUse"
    assert isinstance(result, PiToolResult)
    assert result.message["content"][0]["text"] == "pi-tool-ok\n"
    assert isinstance(last, PiAssistant) and last.message["stopReason"] == "stop"
    assert final_text(seen[-1].messages) == "Tool said: pi-tool-ok"
    assert phases(payloads) == [
        ("thinking", 0, None),
        ("tool", 0, "bash"),
        ("thinking", 1, None),
        ("answering", 1, None),
    ]
    assert len(fake_llm.requests) == 2


async def test_steer_reaches_the_next_model_call(pi, fake_llm):
    gate = fake_llm.hold()  # the first tool round waits until the steer is queued
    events = pi.events()
    await pi.prompt("TWOTOOLS please")
    assert await asyncio.to_thread(gate.arrived.wait, 30)
    await pi.steer("also mention STEERED-42")
    gate.release()
    seen = await run_to_end(pi, events)

    first, second = fake_llm.requests[:2]
    user_texts = [str(m["content"]) for m in second["messages"] if m["role"] == "user"]
    assert any("STEERED-42" in text for text in user_texts)
    assert "STEERED-42" not in str(first["messages"])
    assert any(isinstance(e, QueueUpdate) and e.steering for e in seen)
    assert any(isinstance(e, Response) and e.command == "steer" and e.success for e in seen)


async def test_model_failure_is_in_the_message_and_pi_exits_zero(pi, fake_llm):
    events = pi.events()
    await pi.prompt("FAIL500")
    seen = await run_to_end(pi, events)

    [assistant] = transcript(decode_all(seen))
    failure = assistant_failure(assistant.message)
    assert failure is not None and failure.startswith("500")
    assert "fake upstream failure" in failure
    assert len(fake_llm.requests) == 1  # Pi's retries are off
    assert await pi.close() == 0


async def test_close_stops_a_streaming_pi(pi, fake_llm):
    events = pi.events()
    await pi.prompt("SLOW")
    async for event in events:  # wait until the slow answer is streaming
        if isinstance(event, MessageUpdate) and event.assistantMessageEvent.type == "text_delta":
            break

    code = await pi.close(timeout=2.0)

    assert code is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pi.pid, 0)
    rest = [e async for e in events]  # the stream ends once Pi is gone
    assert not any(isinstance(e, AgentEnd) for e in rest)


async def test_environment_is_scrubbed(pi_config, fake_llm, monkeypatch):
    for name in FORBIDDEN:
        monkeypatch.setenv(name, f"leak-{name}")
    repo_file = settings.BASE_DIR / "manage.py"
    fake_llm.script(
        bash(
            f"env; echo made > made.txt; test -e {repo_file} && echo REPO-SEEN || echo REPO-HIDDEN"
        )
    )
    async with await PiSession.start(pi_config(env={"BOT_API_KEY": "k-123"})) as pi:
        environ = Path(f"/proc/{pi.pid}/environ").read_bytes().decode().split("\0")
        events = pi.events()
        await pi.prompt("show me the environment")
        seen = await run_to_end(pi, events)

    [result] = [p for p in decode_all(seen) if isinstance(p, PiToolResult)]
    output = result.message["content"][0]["text"]
    names = {line.split("=", 1)[0] for line in output.splitlines() if "=" in line}
    names |= {item.split("=", 1)[0] for item in environ if item}
    assert not names & set(FORBIDDEN)
    assert "BOT_API_KEY=k-123" in output
    assert f"HOME={pi.config.home}" in output
    assert (pi.config.workspace / "made.txt").read_text() == "made\n"
    if pi.isolation == "bubblewrap":
        assert "REPO-HIDDEN" in output
    else:
        assert pi.isolation == "none"


async def test_start_fails_with_pis_own_message(pi_config):
    with pytest.raises(PiError, match="Unknown provider"):
        await PiSession.start(pi_config(provider="nobody"))


@pytest.fixture
def without_bubblewrap(settings):
    settings.PI_ISOLATION = "none"
    sandbox.bubblewrap_works.cache_clear()
    yield
    sandbox.bubblewrap_works.cache_clear()


async def test_runs_unsandboxed_when_bubblewrap_is_off(without_bubblewrap, pi_config, fake_llm):
    async with await PiSession.start(pi_config()) as pi:
        events = pi.events()
        await pi.prompt("hello")
        seen = await run_to_end(pi, events)
    assert pi.isolation == "none"
    assert final_text(seen[-1].messages) == DEFAULT_TEXT
