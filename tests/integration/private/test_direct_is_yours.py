"""Every message of a direct conversation is addressed to its other people: an inbox item,
a notification for "mentions and replies" (the default), email when unread; nobody outside
it learns of it, the author gets nothing, and the index rebuilds from the log the same."""

import pytest
from django.core.management import call_command

from notify.models import InboxItem, Outbox
from notify.recipients import Reason, recipients
from threads import privacy

pytestmark = pytest.mark.django_db(transaction=True)


def post(world, user, text, thread) -> str:
    response = world.client_for(user).post(f"/api/threads/{thread.id}/entries", {"text": text})
    assert response.status_code == 201, response.content
    return response.json()["entry"]["id"]


def items(world, user) -> list[dict]:
    response = world.client_for(user).get("/api/inbox")
    assert response.status_code == 200
    return response.json()["items"]


def test_a_direct_message_is_in_the_inbox_of_its_other_people_only(world):
    direct, _ = privacy.open_direct(
        world.house, world.member.agent, [world.owner.agent.pk, world.author.agent.pk]
    )
    said = post(world, world.member, "lunch at noon?", direct)
    post(world, world.member, "plain chat elsewhere", world.thread)
    for user in (world.owner, world.author):
        [item] = items(world, user)
        assert item["entryId"] == said and item["kind"] == "direct"
    assert items(world, world.member) == []  # the author
    lone, _ = privacy.open_direct(world.house, world.owner.agent, [world.member.agent.pk])
    post(world, world.owner, "just us", lone)
    [mine] = items(world, world.member)
    assert mine["kind"] == "direct"
    assert mine["threadTitle"] == world.owner.agent.display_name  # by the other people
    assert len(items(world, world.author)) == 1  # not in that one
    assert items(world, world.stranger) == []


def test_a_direct_message_notifies_at_the_default_level_and_nobody_outside(world):
    direct, _ = privacy.open_direct(world.house, world.member.agent, [world.owner.agent.pk])
    said = post(world, world.member, "are you there?", direct)
    item = Outbox.objects.get(entry_id=said)
    told = recipients(item, direct, world.member.agent)
    assert [(r.user_id, r.reason) for r in told] == [(world.owner.pk, Reason.DIRECT)]


def test_the_index_rebuilds_direct_items_from_the_log_and_a_tombstone_removes_them(world):
    direct, _ = privacy.open_direct(world.house, world.member.agent, [world.owner.agent.pk])
    kept = post(world, world.member, "kept", direct)
    gone = post(world, world.member, "taken back", direct)
    assert set(InboxItem.objects.values_list("entry_id", flat=True)) == {kept, gone}
    response = world.client_for(world.member).delete(f"/api/threads/{direct.id}/entries/{gone}")
    assert response.status_code in (200, 201, 204), response.content
    assert list(InboxItem.objects.values_list("entry_id", "kind")) == [(kept, "direct")]
    InboxItem.objects.all().delete()
    call_command("rebuild_inbox")
    assert list(InboxItem.objects.values_list("entry_id", "kind", "user_id")) == [
        (kept, "direct", world.owner.pk)
    ]
