"""Owners manage who is in a house; members create threads; the last owner stays."""

import json

import pytest

from houses.models import Membership
from tests.factories import make_user
from threads.models import Thread
from threads.reading import read_entries

pytestmark = pytest.mark.django_db(transaction=True)


def api(client, method, path, body=None):
    return client.generic(
        method, path, json.dumps(body) if body is not None else "", content_type="application/json"
    )


def test_owners_add_and_remove_people(world):
    newcomer = make_user("nia")
    owner = world.client_for(world.owner)
    response = api(owner, "POST", "/api/houses/h/members", {"username": "nia"})
    assert response.status_code == 201
    assert response.json()["member"]["role"] == "member"
    assert Membership.objects.filter(house=world.house, user=newcomer).exists()
    assert api(owner, "DELETE", "/api/houses/h/members/nia").status_code == 204
    assert not Membership.objects.filter(house=world.house, user=newcomer).exists()


def test_members_cannot_manage_members(world):
    make_user("nia")
    member = world.client_for(world.member)
    assert api(member, "POST", "/api/houses/h/members", {"username": "nia"}).status_code == 403
    assert api(member, "DELETE", "/api/houses/h/members/ari").status_code == 403
    stranger = world.client_for(world.stranger)
    assert api(stranger, "POST", "/api/houses/h/members", {"username": "nia"}).status_code == 404


def test_a_member_may_leave_but_the_last_owner_may_not(world):
    assert (
        api(world.client_for(world.member), "DELETE", "/api/houses/h/members/mia").status_code
        == 204
    )
    response = api(world.client_for(world.owner), "DELETE", "/api/houses/h/members/olive")
    assert response.status_code == 409
    assert "last owner" in response.json()["error"]
    response = api(
        world.client_for(world.owner),
        "POST",
        "/api/houses/h/members",
        {"username": "olive", "role": "member"},
    )
    assert response.status_code == 409


def test_bad_member_input_names_the_field(world):
    owner = world.client_for(world.owner)
    response = api(owner, "POST", "/api/houses/h/members", {"username": "nobody"})
    assert (response.status_code, response.json()["error"][:8]) == (400, "username")
    response = api(owner, "POST", "/api/houses/h/members", {"username": "mia", "role": "king"})
    assert response.status_code == 400 and "role" in response.json()["error"]


def test_owners_add_and_retire_bots(world):
    owner = world.client_for(world.owner)
    response = api(owner, "POST", "/api/houses/h/bots", {"handle": "coder", "model": "demo"})
    assert response.status_code == 201
    assert response.json()["bot"]["handle"] == "coder"
    response = api(owner, "POST", "/api/houses/h/bots", {"handle": "coder"})
    assert response.status_code == 400 and response.json()["error"].startswith("handle")
    response = api(owner, "POST", "/api/houses/h/bots", {"handle": "Not Valid"})
    assert response.status_code == 400 and response.json()["error"].startswith("handle")
    assert api(owner, "DELETE", "/api/houses/h/bots/coder").status_code == 204
    listed = api(owner, "GET", "/api/houses/h/members").json()
    assert [b["handle"] for b in listed["bots"]] == ["helper"]
    assert (
        api(world.client_for(world.member), "DELETE", "/api/houses/h/bots/helper").status_code
        == 403
    )


def test_the_members_page_is_for_owners(world):
    assert world.client_for(world.owner).get("/houses/h/members/").status_code == 200
    assert world.client_for(world.member).get("/houses/h/members/").status_code == 403
    assert world.client_for(world.stranger).get("/houses/h/members/").status_code == 404


def test_owners_manage_members_from_the_page(world):
    make_user("nia")
    owner = world.client_for(world.owner)
    owner.post("/houses/h/members/add", {"username": "nia", "role": "member"})
    nia = Membership.objects.get(house=world.house, user__username="nia")
    owner.post(f"/houses/h/members/{nia.pk}/remove")
    assert not Membership.objects.filter(pk=nia.pk).exists()
    mine = Membership.objects.get(house=world.house, user=world.owner)
    response = owner.post(f"/houses/h/members/{mine.pk}/remove", follow=True)
    assert "last owner" in response.content.decode()
    owner.post("/houses/h/bots/add", {"handle": "scribe"})
    assert world.house.bots.filter(handle="scribe", active=True).exists()
    owner.post("/houses/h/bots/scribe/retire")
    assert not world.house.bots.filter(handle="scribe", active=True).exists()


def test_members_start_threads_from_the_house_page(world):
    member = world.client_for(world.member)
    response = member.post("/houses/h/threads/new", {"title": "From the page"})
    thread = Thread.objects.get(title="From the page")
    assert (response.status_code, response["Location"]) == (302, f"/threads/{thread.id}/")
    assert read_entries(thread.id)[0][0].type == "signal.thread.created"
    assert "From the page" in member.get("/houses/h/").content.decode()
    stranger = world.client_for(world.stranger)
    assert stranger.post("/houses/h/threads/new", {"title": "x"}).status_code == 404


def test_the_members_page_offers_no_remove_for_the_last_owner(world):
    def removable() -> set[int]:
        html = world.client_for(world.owner).get("/houses/h/members/").content.decode()
        return {
            m.pk for m in Membership.objects.filter(house=world.house) if f"/{m.pk}/remove" in html
        }

    mine = Membership.objects.get(house=world.house, user=world.owner)
    others = set(
        Membership.objects.filter(house=world.house)
        .exclude(pk=mine.pk)
        .values_list("pk", flat=True)
    )
    assert removable() == others  # everyone but the one owner
    promoted = Membership.objects.get(house=world.house, user=world.member)
    promoted.role = Membership.Role.OWNER
    promoted.save()
    assert removable() == others | {mine.pk}  # with two owners either may go
