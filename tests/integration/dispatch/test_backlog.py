"""A thread with a backlog no director pass settled (issue 28): 20,000 chats written by
another program, then a mention. The bot answers once, every entry stays small, and the
thread comes to rest instead of staying "working" for ever."""

import msgspec
import pytest

from threads.entries import Chat, DirectorOutcome, to_builtins
from threads.lifecycle import new_entry
from threads.models import Thread
from threads.now import WAITING_SHOWN
from threads.recency import stream_writer

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]

BACKLOG = 20_000
BATCH = 2_500
SMALL = 64 * 1024  # far under the 256 KiB an entry may take


def seed_backlog(thread, author_id: str) -> None:
    """Unsettled chat, appended in batches through the app's writer (as another program)."""
    writer = stream_writer()
    for start in range(0, BACKLOG, BATCH):
        batch = [
            new_entry(Chat(text=f"note {n}"), author=author_id) for n in range(start, start + BATCH)
        ]
        writer.append_batch(thread.stream_name, batch)


def test_a_backlog_of_waiting_messages_does_not_wedge_the_thread(live):
    thread = live.world.thread
    seed_backlog(thread, live.world.member.agent.id)
    assert live.now()["now"]["waitingCount"] == BACKLOG
    before = len(live.entries())

    mention = live.post("@helper round 1")
    live.settle(120)

    written = live.entries()[before:]
    assert written[0].id == mention
    sizes = [len(msgspec.json.encode(to_builtins(e))) for e in written]
    assert max(sizes) < SMALL, sizes
    types = [e.type for e in written]
    assert "signal.dispatch.failed" not in types
    assert types.count("signal.dispatch.started") == 1
    bot_chat = [e for e in written if e.type == "chat" and e.authorId == live.world.bot.id]
    assert len(bot_chat) == 1  # answered once
    (started,) = [e.payload for e in written if e.type == "signal.dispatch.started"]
    assert mention in started.entryIds and len(started.entryIds) <= WAITING_SHOWN
    expired = [e.payload for e in written if isinstance(e.payload, DirectorOutcome)]
    assert expired[0].tooOld == BACKLOG + 1 - WAITING_SHOWN  # said once, in one small entry
    assert [o.tooOld for o in expired[1:]] == [0]  # the pass after the reply ends it

    now = live.now()
    assert now["now"]["waitingCount"] == 0 and now["status"]["state"] != "working"
    row = Thread.objects.get(pk=thread.pk)
    assert row.status != "working" and row.director_offset
    assert len(msgspec.json.encode(row.director_tail)) < SMALL
