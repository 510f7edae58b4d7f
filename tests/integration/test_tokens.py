"""People make, use and revoke their own API tokens; only digests are stored."""

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from houses.models import ApiToken, token_digest

pytestmark = pytest.mark.django_db(transaction=True)
RAW = re.compile(r"arbe_[A-Za-z0-9_-]{20,}")


def bearer(raw: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {raw}"})


def make_token(client, name="laptop CLI"):
    response = client.post("/tokens/new", {"name": name})
    assert response.status_code == 201
    return RAW.search(response.content.decode()).group(0)


def test_a_new_token_is_shown_once_and_works_for_the_api(world):
    client = world.client_for(world.member)
    raw = make_token(client)
    token = ApiToken.objects.get(user=world.member)
    assert token.digest == token_digest(raw) and raw not in token.digest
    assert raw not in client.get("/account/tokens/").content.decode()  # never again
    assert "laptop CLI" in client.get("/account/tokens/").content.decode()
    response = bearer(raw).get("/api/houses")
    assert response.status_code == 200
    assert [h["slug"] for h in response.json()["houses"]] == ["h"]


def test_a_revoked_token_stops_working_and_stays_listed(world):
    client = world.client_for(world.member)
    raw = make_token(client)
    token = ApiToken.objects.get(user=world.member)
    assert client.post(f"/tokens/{token.pk}/revoke").status_code == 302
    assert bearer(raw).get("/api/houses").status_code == 401
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert 'class="revoked"' in client.get("/account/tokens/").content.decode()


def test_people_see_and_revoke_only_their_own_tokens(world):
    raw = make_token(world.client_for(world.member), name="mia's")
    theirs = ApiToken.objects.get(user=world.member)
    other = world.client_for(world.stranger)
    assert "mia&#x27;s" not in other.get("/account/tokens/").content.decode()
    assert other.post(f"/tokens/{theirs.pk}/revoke").status_code == 404
    assert bearer(raw).get("/api/houses").status_code == 200


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_a_bad_name_makes_no_token(world, name):
    client = world.client_for(world.member)
    response = client.post("/tokens/new", {"name": name}, follow=True)
    assert "1–100 characters" in response.content.decode()
    assert not ApiToken.objects.filter(user=world.member).exists()


def test_token_pages_need_a_login(client):
    assert client.get("/account/tokens/").status_code == 302
    assert client.post("/tokens/new", {"name": "x"}).status_code == 302
    assert not ApiToken.objects.exists()


def test_the_admin_revokes_but_cannot_make_tokens(world, admin_client):
    raw = make_token(world.client_for(world.member))
    token = ApiToken.objects.get(user=world.member)
    assert admin_client.get("/admin/houses/apitoken/add/").status_code == 403
    response = admin_client.post(
        "/admin/houses/apitoken/", {"action": "revoke", "_selected_action": [token.pk]}
    )
    assert response.status_code == 302
    assert bearer(raw).get("/api/houses").status_code == 401


def test_issue_token_command_prints_a_working_token(world):
    out = io.StringIO()
    call_command("issue_token", world.member.username, "--name", "ops", stdout=out)
    raw = out.getvalue().strip()
    assert RAW.fullmatch(raw)
    assert bearer(raw).get("/api/houses").status_code == 200
    with pytest.raises(CommandError, match="No active user named 'nobody'"):
        call_command("issue_token", "nobody")
