"""A real Pi against the loopback fake model: an agent dir per test, and a helper that runs
one prompt to its ``agent_end``."""

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from dispatch.pi.config import PI_CLI
from dispatch.pi.events import AgentEnd, PiEvent
from dispatch.pi.process import PiConfig, PiSession
from tests.peers.fake_llm import MODEL, PROVIDER, FakeLLM
from tests.peers.pi_home import write_pi_home

RUN_TIMEOUT = 30.0


@pytest.fixture
def pi_config(tmp_path, fake_llm: FakeLLM) -> Callable[..., PiConfig]:
    if not PI_CLI.is_file():
        pytest.fail(f"Pi is missing at {PI_CLI}: run `make deps`")
    agent_dir = write_pi_home(tmp_path / "agent", fake_llm.base_url)

    def make(**overrides) -> PiConfig:
        fields = {
            "provider": PROVIDER,
            "model": MODEL,
            "instructions": "You are a test bot.",
            "session_file": tmp_path / "sessions" / "thread-1.jsonl",
            "workspace": tmp_path / "workspace",
            "agent_dir": agent_dir,
            **overrides,
        }
        return PiConfig(**fields)

    return make


@pytest.fixture
async def pi(pi_config) -> AsyncIterator[PiSession]:
    session = await PiSession.start(pi_config())
    try:
        yield session
    finally:
        await session.close()


async def run_to_end(session: PiSession, events: AsyncIterator[PiEvent]) -> list[PiEvent]:
    """Collect events up to and including the next ``agent_end``."""
    seen: list[PiEvent] = []
    async with asyncio.timeout(RUN_TIMEOUT):  # a guard against a hang, not a timing check
        async for event in events:
            seen.append(event)
            if isinstance(event, AgentEnd):
                return seen
    raise AssertionError(
        f"Pi ended without agent_end (exit {session.returncode}): {session.stderr}"
    )
