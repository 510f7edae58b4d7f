"""One handle, one agent, in a house: a person can't join with a bot's handle, a bot can't
take a member's, and a clash left in old data resolves mentions to the bot."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client

from houses.invites import make_invite
from houses.membership import HandleTaken, add_bot, add_member, join_house
from houses.models import Agent, Membership
from tests.factories import make_bot, make_house, make_user
from threads.entries import Chat
from threads.lifecycle import new_entry
from threads.recency import stream_writer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_limits")]
PASSWORD = "tangerine-Orbit-42"


def test_sign_up_through_an_invite_cannot_take_a_bots_handle(world):
    _, token = make_invite(world.house, world.owner)
    response = Client().post(
        f"/join/{token}", {"username": "Helper", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 400
    assert "@helper is a bot in H" in response.content.decode()
    assert not get_user_model().objects.filter(username="Helper").exists()


def test_a_signed_up_persons_numbered_handle_avoids_the_houses_bots(world):
    # @ari is a person's already, so "Ari." would be @ari2: a bot's in this house.
    make_bot(world.house, "ari2")
    _, token = make_invite(world.house, world.owner)
    response = Client().post(
        f"/join/{token}", {"username": "Ari.", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 302, response.content
    assert get_user_model().objects.get(username="Ari.").agent.handle == "ari3"


def test_a_signed_in_person_with_a_bots_handle_is_told_and_not_joined(world):
    person = make_user("helper")
    _, token = make_invite(world.house, world.owner)
    response = world.client_for(person).post(f"/join/{token}")
    assert response.status_code == 409
    assert "@helper is the handle of a bot in H" in response.content.decode()
    assert not Membership.objects.filter(user=person, house=world.house).exists()


def test_an_owner_cannot_add_a_person_with_a_bots_handle(world):
    person = make_user("helper")
    owner = world.token_client(world.owner)
    response = owner.post(
        "/api/houses/h/members", {"username": "helper"}, content_type="application/json"
    )
    assert response.status_code == 409
    assert "@helper is the handle of a bot in H" in response.json()["error"]
    page = world.client_for(world.owner).post(
        "/houses/h/members/add", {"username": "helper", "role": "member"}, follow=True
    )
    assert "@helper is the handle of a bot in H" in page.content.decode()
    assert not Membership.objects.filter(user=person, house=world.house).exists()
    with pytest.raises(HandleTaken):
        join_house(world.house, person)
    # Elsewhere the handle is free: another house has no such bot.
    assert add_member(make_house("other", owner=world.owner), person).house.slug == "other"


def test_a_bot_cannot_take_a_members_or_another_bots_handle(world):
    member_handle = world.member.agent.handle
    owner = world.token_client(world.owner)
    for handle in (member_handle, "helper"):
        response = owner.post(
            "/api/houses/h/bots",
            {"handle": handle, "provider": "arbe-demo", "model": "demo"},
            content_type="application/json",
        )
        assert response.status_code == 400, response.content
        assert response.json()["error"].startswith("handle: ")
    with pytest.raises(ValidationError):
        add_bot(world.house, handle=member_handle, provider="arbe-demo", model="demo")
    # A person's handle is theirs only where they are: another house may have such a bot.
    elsewhere = make_house("other", owner=world.owner)
    assert add_bot(elsewhere, handle=member_handle, provider="arbe-demo", model="demo").pk
    assert Agent.objects.filter(kind="bot", handle="helper").count() == 1


def test_the_admin_refuses_a_clash_too(world):
    bot = Agent(kind="bot", house=world.house, handle=world.member.agent.handle)
    with pytest.raises(ValidationError) as refused:
        bot.clean()
    assert "handle" in refused.value.message_dict
    person = make_user("helper")
    with pytest.raises(ValidationError):
        Membership(house=world.house, user=person).clean()


def test_an_old_clash_links_mentions_to_the_bot_and_still_lets_the_bot_be_configured(world):
    # Data from before the rule: a member whose handle is the bot's.
    person = make_user("helper")
    Membership.objects.create(house=world.house, user=person)
    entry = new_entry(Chat(text="ask @helper please"), author=world.member.agent.id)
    stream_writer().append(world.thread.stream_name, entry)
    for _ in range(3):  # not an accident of row order
        html = world.client_for(world.member).get(f"/threads/{world.thread.id}/").content.decode()
        (link,) = re.findall(r'<a class="mention"[^>]*data-agent="([^"]+)"', html)
        assert link == world.bot.id
    owner = world.token_client(world.owner)
    response = owner.patch(
        "/api/houses/h/bots/helper", {"involvement": "everything"}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
