"""Private threads and direct conversations at the core: the log records who reads, the
access table follows it, and the one access module answers 404 to everyone else."""

import pytest

from houses import access
from houses.principals import person
from threads import privacy
from threads.models import ThreadMember, Visibility
from threads.readers import rebuild_readers
from threads.reading import read_entries

pytestmark = pytest.mark.django_db(transaction=True)


def reads(world, user, thread) -> bool:
    try:
        access.access_thread(person(user, user.agent), thread.pk)
    except access.Http404:
        return False
    return True


def test_a_private_thread_is_read_by_its_members_only(world):
    thread = privacy.start_private(
        world.house, "Salaries", world.owner.agent, [world.member.agent.pk]
    )
    assert thread.visibility == Visibility.PRIVATE
    assert reads(world, world.owner, thread) and reads(world, world.member, thread)
    assert not reads(world, world.author, thread)
    assert not reads(world, world.stranger, thread)
    listed = set(access.threads_of(world.author).values_list("pk", flat=True))
    assert thread.pk not in listed and world.thread.pk in listed
    assert set(access.readers_of(thread)) == {world.owner, world.member}


def test_members_added_and_removed_are_entries_the_table_follows(world):
    thread = privacy.start_private(world.house, "Draft", world.owner.agent, [])
    assert privacy.add_member(thread, world.author.agent.pk, world.owner.agent)
    assert reads(world, world.author, thread)
    assert privacy.remove_member(thread, world.author.agent.pk, world.owner.agent)
    assert not reads(world, world.author, thread)
    types = [e.type for e in read_entries(thread.pk)[0]]
    assert types[:2] == ["signal.thread.created", "signal.thread.made_private"]
    assert types[-2:] == ["signal.thread.member_added", "signal.thread.member_removed"]
    # The table is a cache: wiped, it comes back from the log alone.
    ThreadMember.objects.filter(thread=thread).delete()
    readers = rebuild_readers(thread, read_entries(thread.pk)[0])
    assert readers.members == {world.owner.agent.pk}
    assert reads(world, world.owner, thread) and not reads(world, world.author, thread)


def test_one_direct_conversation_per_set_of_people(world):
    first, new = privacy.open_direct(world.house, world.member.agent, [world.owner.agent.pk])
    again, new_again = privacy.open_direct(world.house, world.owner.agent, [world.member.agent.pk])
    assert new and not new_again and again.pk == first.pk
    assert first.is_direct and not reads(world, world.author, first)
    with_bot, _ = privacy.open_direct(world.house, world.member.agent, [world.bot.pk])
    assert with_bot.pk != first.pk
    with pytest.raises(privacy.PrivacyError):
        privacy.add_member(first, world.author.agent.pk, world.member.agent)


def test_nobody_outside_the_house_is_let_in(world):
    with pytest.raises(privacy.PrivacyError):
        privacy.start_private(world.house, "X", world.owner.agent, [world.stranger.agent.pk])
    with pytest.raises(privacy.PrivacyError):
        privacy.open_direct(world.house, world.owner.agent, [world.stranger.agent.pk])


def test_a_run_of_a_private_thread_is_private_too(world):
    from threads.lifecycle import create_thread

    parent = privacy.start_private(world.house, "Secret work", world.owner.agent, [])
    child = create_thread(house=world.house, title="T/x: job", by=world.bot, parent=parent)
    assert child.is_private and not reads(world, world.member, child)
    privacy.add_member(parent, world.member.agent.pk, world.owner.agent)
    child.refresh_from_db()
    assert reads(world, world.member, child)


def test_the_rebuild_command_restores_the_table(world):
    from django.core.management import call_command

    thread = privacy.start_private(world.house, "Kept", world.owner.agent, [world.member.agent.pk])
    ThreadMember.objects.all().delete()
    thread.__class__.objects.filter(pk=thread.pk).update(visibility=Visibility.HOUSE)
    assert reads(world, world.author, thread)  # the cache lost: the damage a rebuild repairs
    call_command("rebuild_thread_readers")
    assert not reads(world, world.author, thread) and reads(world, world.member, thread)
