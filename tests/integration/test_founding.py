"""Your own houses: create one (you own it), rename it, hand it over, leave it."""

import pytest

from houses.models import House, Membership

pytestmark = pytest.mark.django_db(transaction=True)


def test_anyone_signed_in_creates_a_house_and_owns_it(world):
    client = world.client_for(world.stranger)
    response = client.post("/houses/new", {"name": "  Design   team "})
    house = House.objects.get(name="Design team")
    assert response.status_code == 302 and response["Location"] == f"/houses/{house.slug}/"
    assert house.slug == "design-team"
    assert Membership.objects.get(house=house, user=world.stranger).is_owner
    assert client.get(f"/houses/{house.slug}/").status_code == 200
    # The same name again gets its own address.
    client.post("/houses/new", {"name": "Design team"})
    assert House.objects.filter(slug="design-team-2").exists()


def test_a_bad_name_says_why_and_makes_nothing(world):
    client = world.client_for(world.member)
    before = House.objects.count()
    page = client.post("/houses/new", {"name": "   "}, follow=True)
    assert "A house&#x27;s name is 1–200 characters." in page.content.decode()
    assert House.objects.count() == before
    assert world.client_for(None).post("/houses/new", {"name": "x"}).status_code == 302


def test_staff_only_when_configured(world, settings):
    settings.ARBE_HOUSE_CREATION = "staff"
    before = House.objects.count()
    page = world.client_for(world.member).post("/houses/new", {"name": "Mine"}, follow=True)
    assert "Only staff can create houses here." in page.content.decode()
    assert "Create house" not in world.client_for(world.member).get("/").content.decode()
    world.member.is_staff = True
    world.member.save()
    world.client_for(world.member).post("/houses/new", {"name": "Mine"})
    assert House.objects.count() == before + 1


def test_owners_rename_and_members_cannot(world):
    url = f"/houses/{world.house.slug}/rename"
    assert world.client_for(world.member).post(url, {"name": "Mine now"}).status_code == 403
    assert world.client_for(world.stranger).post(url, {"name": "x"}).status_code == 404
    assert world.client_for(world.owner).post(url, {"name": "Plans & co"}).status_code == 302
    world.house.refresh_from_db()
    assert world.house.name == "Plans & co"


def test_the_last_owner_hands_over_before_leaving(world):
    owner = world.client_for(world.owner)
    leave = f"/houses/{world.house.slug}/leave"
    page = owner.post(leave, follow=True).content.decode()
    assert "last owner: hand it to another member before you leave" in page
    assert Membership.objects.filter(house=world.house, user=world.owner).exists()
    mia = Membership.objects.get(house=world.house, user=world.member)
    assert owner.post(f"/houses/{world.house.slug}/hand-over", {"to": mia.pk}).status_code == 302
    mia.refresh_from_db()
    assert mia.is_owner
    assert not Membership.objects.get(house=world.house, user=world.owner).is_owner
    assert owner.post(leave).status_code == 302
    assert not Membership.objects.filter(house=world.house, user=world.owner).exists()
    assert owner.get(f"/houses/{world.house.slug}/").status_code == 404


def test_members_leave_and_see_the_settings_page(world):
    client = world.client_for(world.author)
    page = client.get(f"/houses/{world.house.slug}/settings/").content.decode()
    assert "Leave" in page and "Hand ownership over" not in page
    assert client.post(f"/houses/{world.house.slug}/hand-over", {"to": 1}).status_code == 403
    assert client.post(f"/houses/{world.house.slug}/leave").status_code == 302
    assert client.get(f"/houses/{world.house.slug}/").status_code == 404
