"""Your account: display name, password (the session stays), time zone; tokens under it."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_display_name_changes_everywhere_the_agent_is_named(world):
    client = world.client_for(world.member)
    page = client.get("/account/")
    assert page.status_code == 200 and world.member.agent.display_name in page.content.decode()
    response = client.post("/account/", {"display_name": "  Mia Ramos ", "time_zone": ""})
    assert response.status_code == 302
    world.member.agent.refresh_from_db()
    assert world.member.agent.display_name == "Mia Ramos"


@pytest.mark.parametrize(
    ("name", "error"),
    [("", "This field is required."), ("mia\u202e", "invisible or text-direction")],
)
def test_a_bad_display_name_is_a_400_with_a_sentence(world, name, error):
    response = world.client_for(world.member).post("/account/", {"display_name": name})
    assert response.status_code == 400
    assert error in response.content.decode()


def test_the_time_zone_is_validated_and_pinned_in_the_tz_cookie(world):
    client = world.client_for(world.member)
    bad = client.post("/account/", {"display_name": "mia", "time_zone": "Mars/Olympus"})
    assert bad.status_code == 400 and "is not a time zone" in bad.content.decode()
    ok = client.post("/account/", {"display_name": "mia", "time_zone": "Asia/Tokyo"})
    assert ok.cookies["tz"].value == "Asia/Tokyo" and ok.cookies["tz_pinned"].value == "1"
    assert 'value="Asia/Tokyo"' in client.get("/account/").content.decode()
    auto = client.post("/account/", {"display_name": "mia", "time_zone": ""})
    assert auto.cookies["tz_pinned"].value == ""  # unpinned: the browser's zone again


def test_changing_the_password_keeps_this_session_and_ends_others(world):
    world.member.set_password("old-secret-123")
    world.member.save()
    # Sessions made after the password is set carry its hash, as a sign-in's would.
    here, elsewhere = world.client_for(world.member), world.client_for(world.member)
    new = {"new_password1": "n3w-Secret-99", "new_password2": "n3w-Secret-99"}
    wrong = here.post("/account/password/", {"old_password": "nope", **new})
    assert wrong.status_code == 200 and "incorrectly" in wrong.content.decode()
    response = here.post("/account/password/", {"old_password": "old-secret-123", **new})
    assert response.status_code == 302 and response["Location"] == "/account/"
    assert here.get("/account/").status_code == 200  # still signed in
    assert elsewhere.get("/account/").status_code == 302  # the other session ended
    world.member.refresh_from_db()
    assert world.member.check_password("n3w-Secret-99")


def test_the_old_tokens_address_redirects_and_signed_out_people_sign_in(world):
    client = world.client_for(world.member)
    moved = client.get("/tokens/")
    assert moved.status_code == 302 and moved["Location"] == "/account/tokens/"
    assert Client().get("/account/").status_code == 302
