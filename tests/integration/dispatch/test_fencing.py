"""Fencing: a thread's writer that lost its lease is refused by the store, not trusted.

Against the real stream server (embedded or reference) and database: lease epochs grow with
every acquire, a writer at an older epoch is refused once a newer one has written, a run's
sandbox writes through the proxy are refused after a takeover's orphan record, and a
takeover settles the reply it finds exactly once.
"""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from dispatch import thread_leases as leases
from dispatch.fencing import Fenced, FencedWriter
from dispatch.models import ThreadLease
from dispatch.runs import Claim, SandboxWriter, orphan
from dispatch.takeover import MAX_RESUMES, REPLY_GAVE_UP, REPLY_INTERRUPTED, recover
from threads.entries import (
    Chat,
    DispatchFailed,
    DispatchFinished,
    DispatchPhase,
    DispatchStarted,
    EntryReaction,
    PiAssistant,
    ThreadRunState,
    ThreadTakenOver,
)
from threads.lifecycle import new_entry
from threads.reading import read_entries
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def lapse(thread_id: str) -> None:
    ThreadLease.objects.filter(pk=thread_id).update(
        until=timezone.now() - datetime.timedelta(seconds=1)
    )


def test_every_acquire_takes_a_newer_epoch_even_after_the_row_is_gone():
    assert leases.acquire("t-e", "a", 60) is leases.Taken.FRESH
    first = leases.epoch("t-e", "a")
    assert leases.release("t-e", "a") is False  # wanted: a wake came in
    leases.begin("t-e", "a")
    assert leases.release("t-e", "a")  # the row is gone
    assert leases.acquire("t-e", "b", 60) is leases.Taken.FRESH
    second = leases.epoch("t-e", "b")
    lapse("t-e")
    assert leases.acquire("t-e", "c", 60) is leases.Taken.TAKEN_OVER
    third = leases.epoch("t-e", "c")
    assert first < second < third
    assert leases.epoch("t-e", "b") is None  # b no longer holds it


def test_a_writer_at_an_older_epoch_is_refused_once_a_newer_one_wrote(world):
    thread = world.thread
    old, new = FencedWriter(thread.id, 1), FencedWriter(thread.id, 2)
    old.append(thread.stream_name, new_entry(Chat(text="old holder, before")))
    new.append(thread.stream_name, new_entry(ThreadTakenOver(epoch=2)))
    with pytest.raises(Fenced):
        old.append(thread.stream_name, new_entry(Chat(text="old holder, after")))
    with pytest.raises(Fenced):  # and it stays refused without asking again
        old.append(thread.stream_name, new_entry(Chat(text="old holder, later")))
    new.append(thread.stream_name, new_entry(Chat(text="new holder")))
    texts = [e.payload.text for e in read_entries(thread.id)[0] if isinstance(e.payload, Chat)]
    assert texts[-2:] == ["old holder, before", "new holder"]


def reply_started(thread, bot, asked: list[str]) -> str:
    started = DispatchStarted(dispatchId="d_one", agentId=bot.id, entryIds=asked)
    stream_writer().append(thread.stream_name, new_entry(started, author=bot.id))
    return "d_one"


def ask(thread, member) -> str:
    entry = new_entry(Chat(text="@helper hello"), author=member.agent.id)
    stream_writer().append(thread.stream_name, entry)
    return entry.id


def test_a_takeover_answers_an_interrupted_reply_again_at_most_twice(world):
    thread, bot = world.thread, world.bot
    asked = ask(thread, world.member)
    dispatch_id = reply_started(thread, bot, [asked])
    for epoch in range(1, MAX_RESUMES + 2):
        recovered = recover(thread.id, FencedWriter(thread.id, epoch))
        last = read_entries(thread.id)[0][-1].payload
        assert isinstance(last, DispatchFailed) and last.dispatchId == dispatch_id
        assert last.attempt == epoch
        if epoch <= MAX_RESUMES:
            assert last.error == REPLY_INTERRUPTED and not last.final
            assert recovered.resume.dispatch_id == dispatch_id
            assert recovered.resume.start.entry_ids == [asked]
        else:
            assert last.error == REPLY_GAVE_UP and last.final
            assert recovered.resume is None


def test_a_takeover_settles_a_reply_whose_answer_landed_before_the_fence(world):
    thread, bot = world.thread, world.bot
    dispatch_id = reply_started(thread, bot, [ask(thread, world.member)])
    stream_writer().append(thread.stream_name, new_entry(Chat(text="the answer"), author=bot.id))
    recovered = recover(thread.id, FencedWriter(thread.id, 1))
    assert recovered.resume is None
    entries = read_entries(thread.id)[0]
    assert [type(e.payload) for e in entries[-2:]] == [ThreadTakenOver, DispatchFinished]
    assert entries[-1].payload.dispatchId == dispatch_id
    assert not [e for e in entries if isinstance(e.payload, DispatchFailed)]


async def test_a_runs_sandbox_writes_are_refused_after_a_takeover_orphaned_it(world):
    from asgiref.sync import sync_to_async

    thread, bot = world.thread, world.bot
    claim = Claim("r_fenced", thread.id, thread.id, bot.id, "a task")
    sandbox = SandboxWriter(claim, thread.stream_name, epoch=1)
    try:
        await sandbox.append(ThreadRunState(runId="r_fenced", state="running", agentId=bot.id))
        await sync_to_async(orphan)(thread, "r_fenced", bot.id, "stopped", 2)
        with pytest.raises(Fenced):
            await sandbox.append(ThreadRunState(runId="r_fenced", state="finished", agentId=bot.id))
    finally:
        await sandbox.aclose()
    entries = (await sync_to_async(read_entries)(thread.id))[0]
    states = [e.payload.state for e in entries if isinstance(e.payload, ThreadRunState)]
    assert states[-2:] == ["running", "dead"]


def reply_writes(bot_id: str, asked: str, answer: str) -> list:
    """A reply's writes in order, as ``dispatch.replies`` makes them; ``answer``: a chat,
    or an emoji answer, which is stored as the bot's reaction to what it answered."""
    answered = (
        Chat(text="the answer") if answer == "chat" else EntryReaction(entryId=asked, emoji="👍")
    )
    return [
        DispatchStarted(dispatchId="d_one", agentId=bot_id, entryIds=[asked]),
        DispatchPhase(dispatchId="d_one", phase="thinking"),
        PiAssistant(dispatchId="d_one", message={"role": "assistant"}),
        DispatchPhase(dispatchId="d_one", phase="answering"),
        answered,
        DispatchFinished(dispatchId="d_one"),
    ]


def answers(entries, bot_id: str) -> list:
    return [
        e for e in entries if e.authorId == bot_id and isinstance(e.payload, Chat | EntryReaction)
    ]


@pytest.mark.parametrize("answer", ["chat", "emoji"])
@pytest.mark.parametrize("landed", range(1, 7), ids=lambda n: f"after-write-{n}")
def test_a_takeover_after_any_write_of_a_reply_answers_it_exactly_once(world, answer, landed):
    thread, bot = world.thread, world.bot
    asked = ask(thread, world.member)
    writes = reply_writes(bot.id, asked, answer)
    for payload in writes[:landed]:  # the worker died after this many of its writes
        stream_writer().append(thread.stream_name, new_entry(payload, author=bot.id))
    fence = FencedWriter(thread.id, 1)
    recovered = recover(thread.id, fence)
    if recovered.resume is not None:  # the taker runs the reply again: its answer, its end
        assert recovered.resume.dispatch_id == "d_one"
        for payload in writes[4:]:
            fence.append(thread.stream_name, new_entry(payload, author=bot.id))
    entries = read_entries(thread.id)[0]
    assert len(answers(entries, bot.id)) == 1
    ends = [e.payload for e in entries if isinstance(e.payload, DispatchFinished | DispatchFailed)]
    assert [type(p) for p in ends][-1] is DispatchFinished
    assert not [p for p in ends if isinstance(p, DispatchFailed) and p.final]
    assert len([p for p in ends if isinstance(p, DispatchFinished)]) == 1
