"""Every lifecycle change is a fact in a log (issue 24, item 4): renaming and archiving a
thread (API, admin) append to its stream; members and bots joining and leaving append to
the house's own stream. History narrates them."""

import json

import pytest
from django.test import RequestFactory

from houses.house_log import house_facts
from houses.membership import add_bot, add_member, remove_member, retire_bot
from houses.models import Membership
from tests.factories import make_user
from threads import entries as E
from threads.admin import ThreadAdmin
from threads.fragments import house_names
from threads.models import Thread
from threads.narration import narration
from threads.reading import read_entries

pytestmark = pytest.mark.django_db(transaction=True)


def patch(world, user, body: dict):
    return world.client_for(user).patch(
        f"/api/threads/{world.thread.id}", json.dumps(body), content_type="application/json"
    )


def lifecycle(world) -> list[E.Entry]:
    entries, _ = read_entries(world.thread.id)
    return [e for e in entries if isinstance(e.payload, E.ThreadRenamed | E.ThreadArchived)]


def told(world, entry) -> str:
    return narration(entry.payload, house_names(world.house.pk), entry.authorId)


def test_renaming_and_archiving_through_the_api_are_in_the_log(world):
    assert patch(world, world.owner, {"title": "Launch plans"}).status_code == 200
    assert patch(world, world.owner, {"archived": True}).status_code == 200
    assert patch(world, world.owner, {"archived": True}).status_code == 200  # no-op
    assert patch(world, world.owner, {"archived": False}).status_code == 200
    facts = lifecycle(world)
    assert [type(e.payload).__name__ for e in facts] == [
        "ThreadRenamed",
        "ThreadArchived",
        "ThreadArchived",
    ]
    assert all(e.authorId == world.owner.agent.id for e in facts)
    assert told(world, facts[0]) == "olive renamed the thread to “Launch plans”"
    assert told(world, facts[1]) == "olive archived the thread."
    assert told(world, facts[2]) == "olive unarchived the thread."
    thread = Thread.objects.get(pk=world.thread.pk)
    assert thread.title == "Launch plans" and thread.archived_at is None


def test_a_member_who_did_not_start_the_thread_may_not_rename_it(world):
    assert patch(world, world.member, {"title": "Mine now"}).status_code == 403
    assert patch(world, world.stranger, {"title": "Mine now"}).status_code == 404
    assert patch(world, world.owner, {"title": " "}).status_code == 400
    assert lifecycle(world) == []


def test_an_admin_change_appends_before_it_stores(world, admin_user):
    from django.contrib.admin.sites import site

    request = RequestFactory().post("/")
    request.user = admin_user
    thread = Thread.objects.get(pk=world.thread.pk)
    thread.title = "Renamed in admin"
    ThreadAdmin(Thread, site).save_model(request, thread, form=None, change=True)
    facts = lifecycle(world)
    assert [e.payload.title for e in facts] == ["Renamed in admin"]
    assert Thread.objects.get(pk=world.thread.pk).title == "Renamed in admin"


def test_members_and_bots_coming_and_going_are_in_the_house_log(world):
    newcomer = make_user("noor")
    owner = world.owner.agent
    before = len(house_facts(world.house.pk))  # the fixture's own members and bot
    assert before
    add_member(world.house, newcomer, by=owner)
    remove_member(Membership.objects.get(house=world.house, user=newcomer), by=owner)
    bot = add_bot(world.house, handle="scribe", by=owner)
    retire_bot(bot, by=owner)
    retire_bot(bot, by=owner)  # already retired: nothing more to say
    facts = house_facts(world.house.pk)[before:]
    assert [(type(e.payload).__name__, e.payload.agentId) for e in facts] == [
        ("HouseMemberAdded", newcomer.agent.id),
        ("HouseMemberRemoved", newcomer.agent.id),
        ("HouseMemberAdded", bot.id),
        ("HouseMemberRemoved", bot.id),
    ]
    assert all(e.authorId == owner.id for e in facts)
