"""A landed post is a success (issue 32, finding 2).

Once the append is acknowledged the API answers 201. Every step after it (unread, the chat
index, search, recency, the status record, notifications, the director's wake) is tried on
its own; a failure is recorded (``SeamRepair``, or ``signal.dispatch.failed`` for a wake)
and repaired by the sweep or by a retry of the same post, which wakes the director again.
"""

import asyncio
import json

import pytest

import notify.inbox
import notify.outbox
import search.index
from dispatch import backstage as backstage_module
from dispatch.backstage import backstage
from houses.access import reads_thread
from notify.models import InboxItem, Outbox
from search.models import SearchDoc
from threads import posting, privacy, readers, seam
from threads.current import load_view
from threads.entries import Chat, DispatchFailed
from threads.last_entry import throttle
from threads.models import EntryLocation, SeamRepair, Thread, WindowMark
from threads.reading import read_entries
from threads.status import derive_thread_status
from threads.status_sync import agent_name, now_ms

pytestmark = pytest.mark.django_db(transaction=True)


def broken(*args, **kwargs):
    raise RuntimeError("the database went away")


def break_recency(monkeypatch):
    monkeypatch.setattr(throttle, "bump", broken)


# Each step after the append, broken where the seam calls it, and how to see it done.
HOOKS = {
    "unread": (
        lambda mp: mp.setattr(seam, "note_appended", broken),
        lambda t, e: Thread.objects.get(pk=t).chat_seq == chat_in_log(t),
    ),
    "windows": (
        lambda mp: mp.setattr(seam, "note_append", broken),
        lambda t, e: windows_chats(t) == chat_in_log(t),
    ),
    "chat_index": (
        lambda mp: mp.setattr(seam, "locate_chat", broken),
        lambda t, e: EntryLocation.objects.filter(thread_id=t, entry_id=e).exists(),
    ),
    "search": (
        lambda mp: mp.setattr(search.index, "after_append", broken),
        lambda t, e: SearchDoc.objects.filter(thread_id=t, entry_id=e).exists(),
    ),
    "recency": (
        break_recency,
        lambda t, e: Thread.objects.get(pk=t).last_entry_ts >= entry_ts(t, e),
    ),
    "status": (
        lambda mp: mp.setattr(seam, "track_after_append", broken),
        lambda t, e: status_follows_the_log(t),
    ),
    "notify": (
        lambda mp: mp.setattr(notify.outbox, "after_append", broken),
        lambda t, e: Outbox.objects.filter(thread_id=t, entry_id=e).exists(),
    ),
    # The posts name olive (the owner), so her inbox gets an item.
    "inbox": (
        lambda mp: mp.setattr(notify.inbox, "after_append", broken),
        lambda t, e: InboxItem.objects.filter(thread_id=t, entry_id=e).exists(),
    ),
}
# ``readers`` is the one step a chat never gives work (it folds access entries): tested
# below with a member added to a private thread.


def status_follows_the_log(thread_id) -> bool:
    """The stored record is what the fold of the log derives now."""
    thread = Thread.objects.get(pk=thread_id)
    now = load_view(thread, now_ms=now_ms()).now
    derived = derive_thread_status(now, thread_id=thread_id, name_of=agent_name)
    return (thread.status, thread.status_message) == (derived.state, derived.message[:300])


def windows_chats(thread_id) -> int:
    """Chat the history windows counted (each counted once)."""
    return sum(WindowMark.objects.filter(thread_id=thread_id).values_list("chats", flat=True))


def chat_in_log(thread_id) -> int:
    return sum(isinstance(e.payload, Chat) for e in read_entries(thread_id)[0])


def entry_ts(thread_id, entry_id):
    return next(e.ts for e in read_entries(thread_id)[0] if e.id == entry_id)


def post(world, text, entry_id=None):
    body = {"payload": {"type": "chat", "text": text}}
    if entry_id:
        body["id"] = entry_id
    return world.client_for(world.member).post(
        f"/api/threads/{world.thread.id}/entries", json.dumps(body), content_type="application/json"
    )


def in_log(world, entry_id) -> bool:
    return entry_id in {e.id for e in read_entries(world.thread.id)[0]}


@pytest.mark.parametrize("step", list(HOOKS))
def test_a_failing_step_still_answers_201_and_the_sweep_repairs_it(
    world, monkeypatch, backstage_for_tests, step
):
    breaks, done = HOOKS[step]
    throttle.reset()
    with monkeypatch.context() as patched:  # the fixture's own patch (wakes) stays
        breaks(patched)
        response = post(world, "@olive the build is red")
    assert response.status_code == 201, response.content
    entry_id = response.json()["entry"]["id"]
    assert in_log(world, entry_id)
    owed = SeamRepair.objects.get(thread=world.thread)
    assert step in owed.steps
    assert "the database went away" in owed.error
    assert not done(world.thread.id, entry_id)
    assert backstage_for_tests == [world.thread.id]  # the wake is a step of its own

    assert seam.repair_owed() == [world.thread.id]  # the sweep's part: then it wakes
    throttle.flush_all()
    assert done(world.thread.id, entry_id)
    assert not SeamRepair.objects.exists()


@pytest.mark.parametrize("step", list(HOOKS))
def test_a_retry_of_the_same_post_repairs_it_and_wakes_again(
    world, monkeypatch, backstage_for_tests, step
):
    breaks, done = HOOKS[step]
    throttle.reset()
    with monkeypatch.context() as patched:
        breaks(patched)
        assert post(world, "@olive the build is red", "client-7").status_code == 201

    again = post(world, "@olive the build is red", "client-7")
    assert again.status_code == 201 and again.json()["duplicate"] is True
    throttle.flush_all()
    assert done(world.thread.id, "client-7")
    assert not SeamRepair.objects.exists()
    assert backstage_for_tests == [world.thread.id, world.thread.id]
    chats = [e for e in read_entries(world.thread.id)[0] if isinstance(e.payload, Chat)]
    assert [c.id for c in chats] == ["client-7"]
    assert Thread.objects.get(pk=world.thread.pk).chat_seq == 1  # counted once


def test_a_failing_step_does_not_stop_the_steps_after_it(world, monkeypatch):
    monkeypatch.setattr(seam, "note_appended", broken)
    entry_id = post(world, "still noted").json()["entry"]["id"]
    owed = SeamRepair.objects.get(thread=world.thread)
    # What reads the count waits for it; the rest ran.
    assert owed.steps == ["unread", "chat_index", "notify", "inbox"]
    assert SeamRepair.objects.count() == 1
    assert SearchDoc.objects.filter(entry_id=entry_id).exists()
    assert Thread.objects.get(pk=world.thread.pk).status_message.startswith("Deciding")


def test_a_failed_wake_is_in_the_log_and_the_post_landed(world, monkeypatch):
    def unreachable(thread_id):
        raise ConnectionError("the channel layer is down")

    monkeypatch.setattr(backstage_module, "wake", unreachable)
    response = post(world, "hello?")
    assert response.status_code == 201
    failed = [e.payload for e in read_entries(world.thread.id)[0] if e.type.endswith("failed")]
    assert [(f.stage, "channel layer is down" in f.error) for f in failed] == [("wake", True)]


def test_a_wake_whose_failure_cannot_be_logged_is_owed_to_the_sweep(
    world, monkeypatch, backstage_for_tests
):
    """The channel layer and then the stream fail: the post stands, the sweep wakes."""
    writer = posting.stream_writer()

    class RefusesFailures:
        def append(self, name, entry, **options):
            if isinstance(entry.payload, DispatchFailed):
                raise ConnectionError("the stream server is down")
            return writer.append(name, entry, **options)

    def unreachable(thread_id):
        raise ConnectionError("the channel layer is down")

    with monkeypatch.context() as patched:
        patched.setattr(posting, "stream_writer", RefusesFailures)
        patched.setattr(backstage_module, "wake", unreachable)
        response = post(world, "hello?")
    assert response.status_code == 201
    assert SeamRepair.objects.get(thread=world.thread).steps == [seam.WAKE]
    assert seam.repair_owed() == [world.thread.id]
    assert not SeamRepair.objects.exists()


def lose_the_post(monkeypatch):
    """Status tracking fails and the wake is lost: the thread would read idle forever."""

    def unreachable(thread_id):
        raise ConnectionError("the channel layer is down")

    monkeypatch.setattr(seam, "track_after_append", broken)
    monkeypatch.setattr(backstage_module, "wake", unreachable)


@pytest.mark.backstage
def test_the_bot_answers_a_stranded_mention_after_the_sweep(live, world, monkeypatch):
    lose_the_post(monkeypatch)
    asked = live.post(f"@{world.bot.handle} are you there?")
    monkeypatch.undo()
    assert Thread.objects.get(pk=world.thread.pk).status == "idle"  # the sweep can't see it
    assert SeamRepair.objects.filter(thread=world.thread).exists()

    engine = backstage()
    engine.start_in_thread()
    asyncio.run_coroutine_threadsafe(engine.sweep_once(), engine.loop).result(30)
    live.settle()
    replies = [
        e for e in live.entries() if isinstance(e.payload, Chat) and e.authorId == world.bot.id
    ]
    assert len(replies) == 1
    started = [e for e in live.entries() if e.type == "signal.dispatch.started"]
    assert [s.payload.entryIds for s in started] == [[asked]]
    assert not SeamRepair.objects.exists()


@pytest.mark.backstage
def test_the_bot_answers_a_stranded_mention_when_the_post_is_retried(live, world, monkeypatch):
    lose_the_post(monkeypatch)
    text = f"@{world.bot.handle} are you there?"
    assert post(world, text, "ask-1").status_code == 201
    monkeypatch.undo()

    backstage().start_in_thread()
    assert post(world, text, "ask-1").json()["duplicate"] is True
    live.wait_for(
        lambda: any(
            isinstance(e.payload, Chat) and e.authorId == world.bot.id for e in live.entries()
        )
    )
    live.settle()
    replies = [
        e for e in live.entries() if isinstance(e.payload, Chat) and e.authorId == world.bot.id
    ]
    assert len(replies) == 1
    started = [e for e in live.entries() if e.type == "signal.dispatch.started"]
    assert [s.payload.entryIds for s in started] == [["ask-1"]]


@pytest.mark.backstage
@pytest.mark.parametrize("step", list(HOOKS))
def test_the_bot_answers_once_whichever_step_failed(live, world, monkeypatch, step):
    breaks, done = HOOKS[step]
    backstage().start_in_thread()
    with monkeypatch.context() as patched:
        breaks(patched)
        asked = live.post(f"@{world.bot.handle} @olive status of the build?")
    live.wait_for(lambda: any(e.authorId == world.bot.id for e in live.entries()))
    live.settle()
    engine = backstage()
    asyncio.run_coroutine_threadsafe(engine.sweep_once(), engine.loop).result(30)
    live.settle()
    throttle.flush_all()
    assert done(world.thread.id, asked)
    assert not SeamRepair.objects.exists()
    replies = [
        e for e in live.entries() if isinstance(e.payload, Chat) and e.authorId == world.bot.id
    ]
    assert len(replies) == 1


def test_a_member_added_while_the_readers_step_fails_reads_once_it_is_repaired(world, monkeypatch):
    """Access entries go through the same seam: the change is in the log, the table that
    ``houses.access`` asks is owed it (closed until then), and the sweep repairs it."""
    owner = world.owner.agent
    thread = privacy.start_private(world.house, "plans", owner, [world.member.agent.pk])
    newcomer = world.author.agent
    assert not reads_thread(newcomer.pk, thread)
    with monkeypatch.context() as patched:
        patched.setattr(readers, "after_append", broken)
        assert privacy.add_member(thread, newcomer.pk, owner)
    added = [e for e in read_entries(thread.id)[0] if e.type == "signal.thread.member_added"]
    assert [e.payload.agentId for e in added] == [newcomer.pk]
    assert SeamRepair.objects.get(thread=thread).steps == ["readers"]
    assert not reads_thread(newcomer.pk, Thread.objects.get(pk=thread.pk))  # fails closed

    seam.repair_owed()
    assert not SeamRepair.objects.exists()
    assert reads_thread(newcomer.pk, Thread.objects.get(pk=thread.pk))
