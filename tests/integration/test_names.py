"""Usernames, display names and handles that read as someone else's are refused: mixed-script
look-alikes, a look-alike of an existing username, bidi controls and invisible characters."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from houses.admin import CheckedUserChangeForm, CheckedUserCreationForm
from houses.invites import make_invite
from houses.membership import agent_for_user
from houses.names import ascii_handle_base, hidden_characters, skeleton
from tests.factories import make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_limits")]
PASSWORD = "tangerine-Orbit-42"
User = get_user_model()


def sign_up(world, username):
    _, token = make_invite(world.house, world.owner)
    return Client().post(
        f"/join/{token}", {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    )


@pytest.mark.parametrize(
    ("username", "says"),
    [
        ("\u03bfwner", "mixes scripts"),  # Greek omicron + Latin
        ("\u043ew\u0578er", "mixes scripts"),  # Cyrillic o, Armenian n
        ("0live", "looks like one"),  # olive exists
        ("OLlVE", "looks like one"),
        # Dotless i: mia. PostgreSQL's iexact finds it first (Django's duplicate check).
        ("m\u0131a", "already"),
        ("MIA", "already"),  # Django's own case-insensitive check
        ("ol\u202eive", "text-direction characters (U+202E)"),
        ("ol\u200bive", "text-direction characters (U+200B)"),
        # A Hangul filler is a letter to \w and draws nothing (NFKC makes it U+1160).
        ("ol\u3164ive", "text-direction characters (U+1160)"),
        ("\u3164", "U+1160"),
    ],
)
def test_sign_up_refuses_look_alikes_and_hidden_characters(world, username, says):
    response = sign_up(world, username)
    assert response.status_code == 400, response.content
    assert says in response.content.decode().replace("&#x27;", "'")
    assert User.objects.count() == 4


def test_a_whole_script_look_alike_is_refused_only_if_the_name_is_taken(world):
    cope = "\u0441\u043e\u0440\u0435"  # all Cyrillic, reads "cope"
    assert sign_up(world, cope).status_code == 302
    assert User.objects.get(username=cope).agent.handle == "cope"
    assert sign_up(world, "cope").status_code == 400
    # Real names in one script are welcome; fullwidth letters are folded (NFKC).
    assert sign_up(world, "\u0396\u03c9\u03ae").status_code == 302
    assert sign_up(world, "\uff41\uff4e\uff4e\uff41").status_code == 302
    assert User.objects.filter(username="anna").exists()


def test_the_admins_user_forms_refuse_look_alikes(world):
    form = CheckedUserCreationForm(
        {"username": "\u03bfwner", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert not form.is_valid() and "username" in form.errors
    change = CheckedUserChangeForm(instance=world.member)
    data = {**change.initial, "username": "0live"}
    data.pop("password", None)
    data = {k: v for k, v in data.items() if v is not None}
    form = CheckedUserChangeForm(data, instance=world.member)
    assert not form.is_valid() and "username" in form.errors


@pytest.mark.parametrize(
    "name", ["Help\u202eer", "Help\u200der", "Help\u2066er", "\u3164", "Help\ufe0fer"]
)
def test_a_bots_display_name_refuses_bidi_controls_and_invisible_characters(world, name):
    owner = world.token_client(world.owner)
    response = owner.post(
        "/api/houses/h/bots",
        {"handle": "second", "displayName": name, "provider": "arbe-demo", "model": "demo"},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"].startswith("displayName: ")
    response = owner.patch(
        "/api/houses/h/bots/helper", {"displayName": name}, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    world.bot.refresh_from_db()
    assert world.bot.display_name == "Helper"


@pytest.mark.parametrize("name", ["Ζωή", "李雷", "Zoë", "مساعد"])
def test_a_display_name_keeps_real_scripts(world, name):
    owner = world.token_client(world.owner)
    response = owner.patch(
        "/api/houses/h/bots/helper", {"displayName": name}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["bot"]["displayName"] == name


def test_a_handle_with_a_trailing_newline_is_refused(world):
    response = world.token_client(world.owner).post(
        "/api/houses/h/bots",
        {"handle": "second\n", "provider": "arbe-demo", "model": "demo"},
        content_type="application/json",
    )
    assert response.status_code == 400 and response.json()["error"].startswith("handle: ")


def test_names_arbe_derives_are_clean(world):
    user = User.objects.create_user("Zo\u00eb", first_name="Zo\u202e\u00eb", last_name="X")
    agent = agent_for_user(user)
    assert agent.display_name == "Zo\u00eb X" and agent.handle == "zoe"
    assert agent_for_user(make_user("\u03b6\u03c9\u03ae")).handle == "person"


def test_skeletons():
    assert skeleton("\u03bfwner") == skeleton("Owner") == skeleton("0wner") == "owner"
    assert skeleton("rnallory") == skeleton("mallory")
    assert skeleton("l1I|") == skeleton("iiii")
    assert skeleton("\uff4f\uff57\uff4e\uff45\uff52") == "owner"  # fullwidth
    assert skeleton("ari") != skeleton("mia")
    assert hidden_characters("a\u202eb\u200bc\u202e") == ["U+202E", "U+200B"]
    assert ascii_handle_base("\u043ew\u043f") == "ow"
    assert ascii_handle_base("__x") == "x"


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    username=st.text(max_size=20)
    | st.sampled_from(["MIA", "m\u0131a", "Olive", "\u03bflive", "helper", "\u0130", "\u00df"])
)
def test_any_username_at_sign_up_is_an_account_or_a_400(world, username):
    response = sign_up(world, username)
    assert response.status_code in (302, 400), response.content
