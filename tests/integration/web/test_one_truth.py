"""One current view: the socket's panel, the page's panel, ``/now`` and ``arbe thread now``.

A scenario with a delegated run, a steer and a failure is written to the log step by
step; after every step the four must agree: the panel a fresh socket sends first, the
panel a socket open throughout shows, the page's panel, ``/now``'s status and runs, and
the CLI's view (``arbe thread now`` and the fold ``--follow`` keeps).
"""

import asyncio
import contextlib
import re

import pytest
from asgiref.sync import sync_to_async

from arbe_site.asgi import application
from cli import live
from cli.client import Api, Settings
from cli.live import Watch
from houses.models import ApiToken
from streams.transport import ASGITransport, SyncBridgeTransport
from tests.integration.test_cli import Terminal
from tests.integration.web.conftest import frame, open_socket
from threads import entries as E
from threads import tail_hub
from threads.lifecycle import create_thread, new_entry
from threads.models import Thread
from threads.reading import read_entries
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)

PANEL = re.compile(r'<div id="now" class="now-body".*?\n</div>', re.S)


def panel_of(html: str) -> str:
    found = PANEL.search(html)
    assert found, html[:2000]
    return found.group()


def state_of(panel: str) -> str:
    return re.search(r'data-status="(\w+)"', panel).group(1)


def usage(tokens: int) -> dict:
    return {"totalTokens": tokens, "input": tokens, "cost": {"total": tokens / 100_000}}


class Scenario:
    def __init__(self, world):
        self.world, self.writer = world, stream_writer()
        self.bot, self.person = world.bot.id, world.member.agent.id
        self.child = None
        self.offset = ""

    def on(self, thread, payload, author=None) -> E.Entry:
        entry = new_entry(payload, author=author)
        result = self.writer.append(thread.stream_name, entry)
        if thread.pk == self.world.thread.pk:
            self.offset = result.next_offset
        return entry

    def steps(self):
        parent, bot, person = self.world.thread, self.bot, self.person
        ask = self.on(parent, E.Chat(text="@helper please look"), person)
        yield "a mention"
        self.on(parent, E.DirectorDecided(picked=[bot], upTo=ask.id))
        self.on(parent, E.DispatchStarted(dispatchId="d1", agentId=bot, entryIds=[ask.id]))
        yield "a reply starts"
        more = self.on(parent, E.Chat(text="also this"), person)
        self.on(parent, E.DispatchSteered(dispatchId="d1", entryIds=[more.id]))
        yield "a steer"
        self.child = create_thread(
            house=self.world.house, title="T/run: tests", by=None, parent=parent
        )
        _, start = read_entries(self.child.pk)
        Thread.objects.filter(pk=self.child.pk).update(run_offset=start)
        self.on(
            parent,
            E.ThreadRunState(runId="r1", state="claimed", agentId=bot, childThreadId=self.child.pk),
        )
        self.on(self.child, E.ThreadRunState(runId="r1", state="running", agentId=bot))
        message = {"role": "assistant", "content": [], "usage": usage(1200)}
        self.on(self.child, E.PiAssistant(message=message, dispatchId="r1"))
        yield "a delegated run works"
        self.on(parent, E.DispatchFailed(stage="model", error="boom", attempt=2, dispatchId="d1"))
        yield "the reply fails while the run goes on"
        message = {"role": "assistant", "content": [], "usage": usage(800)}
        self.on(self.child, E.PiAssistant(message=message, dispatchId="r1"))
        yield "only the child moves"
        self.on(self.child, E.ThreadRunState(runId="r1", state="failed", agentId=bot))
        self.on(
            parent,
            E.ThreadChildFinished(
                childThreadId=self.child.pk, report="broke", runId="r1", ok=False
            ),
        )
        self.on(
            parent,
            E.ThreadRunState(runId="r1", state="failed", agentId=bot, childThreadId=self.child.pk),
        )
        yield "the run fails"
        self.on(parent, E.DirectorOutcome(upTo=more.id, picked=[], reason="nobody"))
        yield "the director settles"
        self.on(parent, E.Chat(text="thanks anyway"), person)
        yield "a new message"


def views(world, api: Api, watch: Watch, scenario: Scenario) -> dict:
    """Everything but the sockets, read after a step."""
    client = world.client_for(world.member)
    page = client.get(f"/threads/{world.thread.id}/")
    assert page.status_code == 200
    now = client.get(f"/api/threads/{world.thread.id}/now").json()
    with api.scoped(world.thread.id) as scoped:
        page_of_entries = scoped.read(watch.offset)
        for raw in page_of_entries.entries:
            watch.apply(E.convert_entry(raw))
        watch.offset = page_of_entries.next_offset
    followed = watch.answer()
    cli = Terminal(world.member)("thread", "now", world.thread.id)
    return {"page": panel_of(page.content.decode()), "now": now, "watch": followed, "cli": cli}


async def test_page_socket_now_and_cli_agree_after_every_step(world, monkeypatch):
    monkeypatch.setattr(tail_hub, "CHILD_REFRESH_S", 0.2)
    monkeypatch.setattr(live, "CHILD_REFRESH_S", 0)  # the CLI reads its children every time
    scenario = Scenario(world)
    _, token = await sync_to_async(ApiToken.issue)(world.member, "truth")
    api = Api(
        Settings("http://testserver", token),
        transports=lambda: SyncBridgeTransport(ASGITransport(application)),
    )
    watch = await sync_to_async(Watch)(api, world.thread.id)
    path = f"/ws/threads/{world.thread.id}/"
    staying = await open_socket(path, world.member)
    await frame(staying)
    steps = scenario.steps()
    while (step := await sync_to_async(next, thread_sensitive=True)(steps, None)) is not None:
        seen = await sync_to_async(views)(world, api, watch, scenario)
        page, now, followed = seen["page"], seen["now"], seen["watch"]
        fresh = await open_socket(path, world.member)
        first = panel_of(await frame(fresh))
        await fresh.disconnect()
        assert first == page, step
        # The socket open all along shows the same panel once the step has reached it.
        latest = ""
        for _ in range(100):
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError, AssertionError):
                latest = panel_of(await frame(staying, timeout=0.2))
            if latest == page:
                break
        assert latest == page, step
        status = now["status"]
        assert state_of(page) == status["state"], step
        assert (followed.status.state, followed.status.message) == (
            status["state"],
            status["message"],
        ), step
        runs = [(r.runId, r.status, r.spend.totalTokens) for r in followed.now.runs]
        assert runs == [
            (r["runId"], r.get("status"), r.get("spend", {}).get("totalTokens", 0))
            for r in now["now"]["runs"]
        ], step
        assert seen["cli"].out.startswith(status["state"].replace("done", "replied")), step
        if step == "a delegated run works":
            assert runs == [("r1", "working", 1200)]
            assert "T/" + scenario.child.pk in page
        if step == "only the child moves":
            assert runs == [("r1", "working", 2000)]
        if step in ("the run fails", "the director settles", "a new message"):
            assert runs == []  # an ended run's result is its child's
        if step == "a new message":
            assert status["state"] != "error"
    await staying.disconnect()
    api.close()
