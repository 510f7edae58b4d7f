"""Invite links: made by owners, shown once, joined by POST only, every miss the same 404."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from houses.invite_limits import MISSES_PER_ADDRESS
from houses.invites import make_invite
from houses.models import HouseInvite, Membership, token_digest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_limits")]


def invite_link(world) -> str:
    response = world.client_for(world.owner).post(
        f"/houses/{world.house.slug}/invites/new", {"days": "1"}
    )
    assert response.status_code == 201
    (path,) = re.findall(r'value="http://testserver(/join/[^"]+)"', response.content.decode())
    return path


def test_an_owner_makes_a_link_shown_once_and_stored_as_a_digest(world):
    path = invite_link(world)
    token = path.removeprefix("/join/")
    invite = HouseInvite.objects.get()
    assert invite.token_hash == token_digest(token) and token not in invite.token_hash
    assert timedelta(hours=23) < invite.expires_at - timezone.now() <= timedelta(days=1)
    members = world.client_for(world.owner).get(f"/houses/{world.house.slug}/members/")
    html = members.content.decode()
    assert "0 joined" in html and token not in html


def test_members_cannot_make_links(world):
    client = world.client_for(world.member)
    assert client.post(f"/houses/{world.house.slug}/invites/new").status_code == 403
    assert world.client_for(world.stranger).post("/houses/h/invites/new").status_code == 404


def test_get_only_shows_what_would_happen(world):
    path = invite_link(world)
    page = world.client_for(world.stranger).get(path)
    assert page.status_code == 200 and "Join H" in page.content.decode()
    assert not Membership.objects.filter(user=world.stranger, house=world.house).exists()
    anonymous = Client().get(path).content.decode()
    assert "Create account and join" in anonymous and f"/login/?next={path}" in anonymous


def test_an_existing_user_joins_with_a_post(world):
    path = invite_link(world)
    response = world.client_for(world.stranger).post(path)
    assert response.status_code == 302 and response["Location"] == "/houses/h/"
    membership = Membership.objects.get(user=world.stranger, house=world.house)
    assert membership.role == "member"
    assert HouseInvite.objects.get().joined_count == 1


def test_a_new_person_signs_up_through_the_link_and_lands_in_the_house(world):
    path = invite_link(world)
    client = Client()
    response = client.post(
        path,
        {
            "username": "newcomer",
            "password1": "tangerine-Orbit-42",
            "password2": "tangerine-Orbit-42",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/houses/h/"
    user = get_user_model().objects.get(username="newcomer")
    assert Membership.objects.filter(user=user, house=world.house, role="member").exists()
    assert user.agent.handle == "newcomer"
    assert client.get("/houses/h/").status_code == 200


def test_sign_up_holds_passwords_to_the_validators(world):
    path = invite_link(world)
    response = Client().post(
        path, {"username": "weak", "password1": "12345678", "password2": "12345678"}
    )
    assert response.status_code == 400
    assert "too common" in response.content.decode()
    assert not get_user_model().objects.filter(username="weak").exists()


def test_joining_again_changes_nothing_and_keeps_an_owner_an_owner(world):
    path = invite_link(world)
    for user in (world.owner, world.member):
        response = world.client_for(user).post(path)
        assert response.status_code == 302
    assert Membership.objects.get(user=world.owner, house=world.house).role == "owner"
    assert Membership.objects.filter(house=world.house).count() == 3
    assert HouseInvite.objects.get().joined_count == 0
    assert "already in H" in world.client_for(world.member).get(path).content.decode()


@pytest.mark.parametrize("spoil", ["expired", "revoked", "wrong"])
def test_expired_revoked_and_wrong_tokens_are_the_same_404(world, spoil):
    path = invite_link(world)
    if spoil == "expired":
        HouseInvite.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    elif spoil == "revoked":
        invite = HouseInvite.objects.get()
        owner = world.client_for(world.owner)
        assert owner.post(f"/houses/h/invites/{invite.pk}/revoke").status_code == 302
        assert "No invite links" in owner.get("/houses/h/members/").content.decode()
    else:
        path = path[:-3] + ("aaa" if not path.endswith("aaa") else "bbb")
    for client in (Client(), world.client_for(world.stranger)):
        assert client.get(path).status_code == 404
        assert client.post(path, {"username": "x"}).status_code == 404
    assert not Membership.objects.filter(user=world.stranger, house=world.house).exists()


def test_a_client_that_keeps_missing_still_gets_in_with_the_real_link(world):
    path = invite_link(world)
    client = Client()
    for i in range(MISSES_PER_ADDRESS):
        assert client.get(f"/join/guess-{i}").status_code == 404
    assert client.get(path).status_code == 200


def test_only_an_owner_of_the_house_revokes(world):
    invite, _ = make_invite(world.house, world.owner)
    assert (
        world.client_for(world.member).post(f"/houses/h/invites/{invite.pk}/revoke").status_code
        == 403
    )
    assert HouseInvite.objects.get().revoked_at is None
