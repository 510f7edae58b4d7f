"""The RPC driver's plumbing against a stand-in process (a few lines of Python), not Pi:
framing, long lines, draining, command replies and shutdown."""

import asyncio
import sys
import textwrap

import pytest

from dispatch.pi.events import AgentEnd, Response, TurnStart, UnknownEvent
from dispatch.pi.process import LINE_LIMIT, PiConfig, PiError, PiSession


async def stand_in(tmp_path, script: str) -> PiSession:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        textwrap.dedent(script),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=LINE_LIMIT,
        start_new_session=True,
    )
    config = PiConfig("p", "m", "", tmp_path / "s.jsonl", tmp_path, tmp_path)
    return PiSession(config, proc, "none")


async def test_long_lines_separators_and_garbage(tmp_path):
    session = await stand_in(
        tmp_path,
        r"""
        import sys
        out = sys.stdout.buffer
        out.write(b'{"type":"turn_start"}\r\n')
        out.write('{"type":"x","text":"a\u2028b"}\n'.encode())
        out.write(b"not json\n")
        out.write(b'{"type":"agent_end","messages":[{"pad":"' + b"x" * (17 * 2**20) + b'"}]}\n')
        out.write(b'{"type":"agent_end","messages":[]}')
        sys.stderr.write("bye\n")
        """,
    )
    events = [e async for e in session.events()]
    assert events == [
        TurnStart(),
        UnknownEvent(type="x", data={"type": "x", "text": "a\u2028b"}),
        AgentEnd(),  # the 17 MiB line, kept as its type
        AgentEnd(),  # the last line had no newline
    ]
    assert await session.close() == 0
    assert session.stderr == "bye\n"


async def test_commands_are_answered_refused_or_fail_when_pi_is_gone(tmp_path):
    session = await stand_in(
        tmp_path,
        """
        import json, sys
        for raw in sys.stdin:
            cmd = json.loads(raw)
            ok = cmd["type"] != "prompt"
            reply = {"type": "response", "id": cmd["id"], "command": cmd["type"], "success": ok}
            print(json.dumps(reply if ok else {**reply, "error": "busy"}), flush=True)
            if cmd["type"] == "abort":
                sys.exit(3)
        """,
    )
    await session.steer("look here")
    with pytest.raises(PiError, match="refused prompt: busy"):
        await session.prompt("hi")
    await session.abort()
    events = [e async for e in session.events()]
    assert [e.command for e in events if isinstance(e, Response)] == ["steer", "prompt", "abort"]
    with pytest.raises(PiError, match="exited"):
        await session.steer("too late")
    assert await session.close() == 3
    assert await session.close() == 3


async def test_close_escalates_to_sigterm(tmp_path):
    session = await stand_in(
        tmp_path,
        """
        import sys, time
        sys.stdin.close()  # ignores EOF: only a signal ends it
        while True:
            time.sleep(1)
        """,
    )
    assert await session.close(timeout=5) == -15
