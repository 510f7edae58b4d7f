"""A thread with a backlog no director pass settled (issue 28): 20,000 chats written by
another program, then a mention. The bot answers once, every entry stays small, and the
thread comes to rest instead of staying "working" for ever."""

from functools import partial

import msgspec
import pytest

from dispatch.backstage import backstage
from threads.entries import Chat, DirectorOutcome, Entry, to_builtins
from threads.lifecycle import new_entry
from threads.models import Thread
from threads.narration import Names, narration
from threads.now import WAITING_SHOWN
from threads.recency import stream_writer

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]

BACKLOG = 20_000
BATCH = 5_000
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
    answer = live.client.get(f"/api/threads/{thread.id}/now")
    assert answer.json()["now"]["waitingCount"] == BACKLOG
    assert len(answer.content) < SMALL  # the view and the fold's state are bounded too
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


# -- a pass that fails the same way on every retry ------------------------------------


def test_a_refused_pass_is_recorded_once_and_the_thread_comes_to_rest(live, monkeypatch):
    """The director as it was before its window (every waiting message in one decision)
    over messages with the longest ids another program may choose: the store of our own
    contract refuses the decision. The failure is recorded once, what waited is settled
    with the reason, and the next message is answered."""
    import dispatch.director as director
    from threads import now as now_module

    monkeypatch.setattr(now_module, "PENDING_KEPT", 10**6)
    monkeypatch.setattr(director, "plan_pass", partial(director.plan_pass, window=10**6))
    thread, member = live.world.thread, live.world.member.agent.id
    batch = [
        Entry(id=f"{n:0128d}", ts=0, authorId=member, payload=Chat(text=f"note {n}"))
        for n in range(2_100)  # 2,100 ids of 128 characters: over 256 KiB together
    ]
    stream_writer().append_batch(thread.stream_name, batch)
    live.post("@helper round 1")
    live.settle()
    for _ in range(2):  # later wakes (the sweep, a worker's tick) find nothing to redo
        backstage().wake(thread.id)
        live.settle()

    failed = [e for e in live.entries() if e.type == "signal.dispatch.failed"]
    assert len(failed) == 1 and failed[0].payload.stage == "director"
    assert "at most 262144 bytes" in failed[0].payload.error
    line = narration(failed[0].payload, Names())
    assert line.startswith("The director couldn't decide: EntryError: An entry may be")
    row = Thread.objects.get(pk=thread.pk)
    assert row.status == "error"
    assert row.status_message.startswith("2,101 messages were not answered: EntryError")
    assert live.now()["now"]["waitingCount"] == 0

    live.post("@helper round 2")  # what waits now is small: the bot answers it
    live.settle()
    answers = [e for e in live.entries() if e.type == "chat" and e.authorId == live.world.bot.id]
    assert len(answers) == 1
    assert Thread.objects.get(pk=thread.pk).status != "working"


def test_a_backlog_nobody_is_asked_about_is_settled_in_one_pass_and_the_offset_moves(live):
    thread = live.world.thread
    writer = stream_writer()
    member = live.world.member.agent.id
    writer.append_batch(
        thread.stream_name, [new_entry(Chat(text=f"note {n}"), author=member) for n in range(300)]
    )
    live.post("lunch at noon?")  # mentions nobody: nobody answers
    live.settle()
    outcomes = [e.payload for e in live.entries() if isinstance(e.payload, DirectorOutcome)]
    assert [o.tooOld for o in outcomes] == [301 - WAITING_SHOWN, 0]
    row = Thread.objects.get(pk=thread.pk)
    assert row.director_offset and row.status == "idle"  # a quiet point: the offset moved
    assert [d["payload"]["type"] for d in row.director_tail][-2:] == [
        "signal.thread_director.outcome",
        "signal.thread_director.outcome",
    ]
    assert live.now()["now"]["waitingCount"] == 0
