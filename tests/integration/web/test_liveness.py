"""Live evidence as time passes: a reply that went quiet reads idle without a new entry,
on the open page's socket and in ``arbe thread now --follow``."""

import threading

import pytest
from asgiref.sync import sync_to_async

from tests.integration.dispatch.test_cli_live import in_background
from tests.integration.test_cli import Terminal, wait_for
from tests.integration.web.conftest import frame, open_socket
from threads import entries as E
from threads import status
from threads.lifecycle import new_entry
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)
CAP_MS = 1500


async def panel_frame(socket, timeout: float = 10) -> str:
    """The next frame that carries the panel (presence frames come and go beside it)."""
    while "data-status=" not in (text := await frame(socket, timeout=timeout)):
        pass
    return text


def start_reply(world) -> None:
    writer, bot = stream_writer(), world.bot.id
    ask = new_entry(E.Chat(text="@helper hi"), author=world.member.agent.id)
    for entry in (
        ask,
        new_entry(E.DirectorDecided(picked=[bot], upTo=ask.id)),
        new_entry(E.DispatchStarted(dispatchId="d1", agentId=bot, entryIds=[ask.id])),
    ):
        writer.append(world.thread.stream_name, entry)


async def test_the_open_panel_goes_idle_when_the_reply_goes_quiet(world, monkeypatch):
    monkeypatch.setattr(status, "REPLY_TURN_CAP_MS", CAP_MS)
    await sync_to_async(start_reply)(world)
    socket = await open_socket(f"/ws/threads/{world.thread.id}/", world.member)
    assert 'data-status="working"' in await panel_frame(socket)
    # No entry comes; the panel is derived again once the live evidence runs out.
    assert 'data-status="idle"' in await panel_frame(socket, timeout=CAP_MS / 1000 + 10)
    await socket.disconnect()


def test_now_follow_goes_idle_when_the_reply_goes_quiet(world, monkeypatch):
    monkeypatch.setattr(status, "REPLY_TURN_CAP_MS", CAP_MS)
    start_reply(world)
    cancel = threading.Event()
    arbe = Terminal(world.member)
    worker, screen, ran = in_background(
        arbe, "thread", "now", world.thread.id, "--follow", cancel=cancel
    )
    wait_for(lambda: screen.getvalue().startswith("working"))
    wait_for(lambda: screen.getvalue().split("\n\n")[-1].startswith("idle"))
    cancel.set()
    worker.join(10)
    assert not worker.is_alive() and ran[0].code == 0
