"""Live dispatch: the director and replies run in-process, Pi talks to the loopback fake."""

import json
import time

import pytest

from houses.models import Agent
from tests.peers.fake_llm import MODEL, PROVIDER
from tests.peers.pi_home import write_pi_home
from threads.reading import read_entries


@pytest.fixture
def live(world, fake_llm, settings, tmp_path):
    """The world's bot answers with Pi on the fake model; returns helpers for the test."""
    settings.PI_HOME = tmp_path / "pi"
    settings.PI_AGENT_DIR = str(write_pi_home(tmp_path / "agent", fake_llm.base_url))
    settings.DISPATCH_EVENT_IDLE_S = 20
    Agent.objects.filter(pk=world.bot.pk).update(provider=PROVIDER, model=MODEL)
    return Live(world, fake_llm)


class Live:
    def __init__(self, world, fake):
        self.world, self.fake = world, fake
        self.client = world.client_for(world.member)

    def post(self, text: str, thread=None) -> str:
        thread = thread or self.world.thread
        response = self.client.post(
            f"/api/threads/{thread.id}/entries",
            json.dumps({"payload": {"type": "chat", "text": text}}),
            content_type="application/json",
        )
        assert response.status_code == 201, response.content
        return response.json()["entry"]["id"]

    def settle(self, timeout: float = 90.0) -> None:
        from dispatch.backstage import backstage

        backstage().wait_idle(timeout)

    def entries(self, thread=None):
        return read_entries((thread or self.world.thread).id)[0]

    def types(self, thread=None, *, skip=("signal.dispatch.phase",)) -> list[str]:
        return [e.type for e in self.entries(thread) if e.type not in skip]

    def now(self, thread=None) -> dict:
        thread = thread or self.world.thread
        return self.client.get(f"/api/threads/{thread.id}/now").json()

    def wait_for(self, predicate, timeout: float = 60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = predicate()
            if found:
                return found
            time.sleep(0.05)
        raise AssertionError("condition not reached")
