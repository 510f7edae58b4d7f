"""Bots in private threads and direct conversations: a bot in a direct conversation
answers every message there; a bot outside a private thread is never picked, and the
thread says why; a run started there reads as its thread does."""

import pytest

from dispatch.director import director_pass
from dispatch.runs import RunRefused, claim_run
from houses import access
from houses.principals import person
from tests.factories import make_bot
from threads import entries as E
from threads import privacy
from threads.lifecycle import new_entry
from threads.models import ThreadMember
from threads.reading import read_entries
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def say(thread, author, text):
    entry = new_entry(E.Chat(text=text), author=author.pk)
    stream_writer().append(thread.stream_name, entry)
    return entry.id


def last_outcome(thread):
    found = [e.payload for e in read_entries(thread.pk)[0]]
    return next(p for p in reversed(found) if isinstance(p, E.DirectorOutcome))


def test_a_bot_in_a_direct_conversation_answers_without_a_mention(world):
    thread, _ = privacy.open_direct(world.house, world.member.agent, [world.bot.pk])
    asked = say(thread, world.member.agent, "what is on today?")
    started = director_pass(thread.pk)
    assert started is not None and started.agent_id == world.bot.pk
    assert started.entry_ids == [asked]


def test_a_group_conversation_with_a_bot_answers_every_person(world):
    others = [world.owner.agent.pk, world.bot.pk]
    thread, _ = privacy.open_direct(world.house, world.member.agent, others)
    say(thread, world.member.agent, "hi both")
    say(thread, world.owner.agent, "and me")
    started = director_pass(thread.pk)
    assert started is not None and started.agent_id == world.bot.pk
    assert len(started.entry_ids) == 2


def test_a_bot_outside_a_private_thread_is_not_picked_and_the_thread_says_why(world):
    make_bot(world.house, "chatty", involvement="everything")
    thread = privacy.start_private(world.house, "Salaries", world.owner.agent, [])
    say(thread, world.owner.agent, "@helper what do you think?")
    assert director_pass(thread.pk) is None
    reason = last_outcome(thread).reason
    assert reason == "@helper isn't in this private thread, so it can't read it or answer."
    # Once it is a member, a mention is answered.
    privacy.add_member(thread, world.bot.pk, world.owner.agent)
    say(thread, world.owner.agent, "@helper now?")
    started = director_pass(thread.pk)
    assert started is not None and started.agent_id == world.bot.pk


def test_a_run_from_a_direct_conversation_stays_private(world):
    thread, _ = privacy.open_direct(world.house, world.member.agent, [world.bot.pk])
    claim = claim_run(thread, handle="helper", task="tidy up", by=world.member.agent)
    child = type(thread).objects.get(pk=claim.child_id)
    assert child.is_private
    who = set(ThreadMember.objects.filter(thread=child).values_list("agent_id", flat=True))
    assert who == {world.member.agent.pk, world.bot.pk}
    with pytest.raises(access.Http404):
        access.access_thread(person(world.owner, world.owner.agent), child.pk)
    # A bot outside a private thread can't be handed a run in it either.
    other = privacy.start_private(world.house, "Salaries", world.owner.agent, [])
    with pytest.raises(RunRefused, match="isn't in this private thread"):
        claim_run(other, handle="helper", task="peek", by=world.owner.agent)


def test_a_runs_readers_change_only_with_its_parent(world):
    thread = privacy.start_private(world.house, "Salaries", world.owner.agent, [world.bot.pk])
    claim = claim_run(thread, handle="helper", task="sum up", by=world.owner.agent)
    child = type(thread).objects.get(pk=claim.child_id)
    with pytest.raises(privacy.PrivacyError, match="reads as its parent"):
        privacy.add_member(child, world.member.agent.pk, world.owner.agent)
    privacy.add_member(thread, world.member.agent.pk, world.owner.agent)
    who = set(ThreadMember.objects.filter(thread=child).values_list("agent_id", flat=True))
    assert world.member.agent.pk in who
