"""A bot's key variable is checked by name wherever a bot is configured: the bots API, the
members page, the admin and seed_demo. A server setting is refused always; any other name
must carry the operator's prefix or be on their list; no answer tells whether it is set."""

import html
import json

import pytest
from django.core.management import CommandError, call_command

from houses.admin import BotForm, BotInline
from houses.models import Agent

RULE = "its name must start with ARBE_BOTKEY_ or be listed in ARBE_BOT_KEY_ALLOW"
SERVER = "is one of the server's own settings, which no bot may read"


def post_bot(world, **fields):
    client = world.client_for(world.owner)
    body = json.dumps({"handle": "writer", "provider": "openai", "model": "gpt-4o", **fields})
    return client.post("/api/houses/h/bots", body, content_type="application/json")


@pytest.mark.parametrize("name", ["DURABLE_STREAMS_SECRET", "SECRET_KEY", "DATABASE_URL"])
def test_the_api_refuses_a_server_setting_even_when_the_operator_lists_it(
    world, settings, monkeypatch, name
):
    settings.ARBE_BOT_KEY_ALLOW = [name]
    settings.ARBE_BOT_KEY_PREFIX = name[:3]
    monkeypatch.setenv(name, "x")
    response = post_bot(world, apiKeyEnv=name)
    assert response.status_code == 400
    assert response.json()["error"] == f"apiKeyEnv: {name} {SERVER}."
    patch = json.dumps({"apiKeyEnv": name, "provider": "openai"})
    client = world.client_for(world.owner)
    response = client.patch("/api/houses/h/bots/helper", patch, content_type="application/json")
    assert response.status_code == 400 and SERVER in response.json()["error"]
    assert not Agent.objects.filter(api_key_env=name).exists()


def test_the_answer_is_the_same_whether_the_variable_exists(world, monkeypatch):
    answers = []
    for present in (False, True):
        for name in ("OPENAI_API_KEY", "NOT_A_BOT_KEY", "ARBE_BOTKEY_W"):
            if present:
                monkeypatch.setenv(name, "x")
            else:
                monkeypatch.delenv(name, raising=False)
        answers.append(
            [
                (r.status_code, r.json().get("error"))
                for r in (post_bot(world, apiKeyEnv="NOT_A_BOT_KEY"), post_bot(world))
            ]
        )
    assert answers[0] == answers[1]
    refused, default = answers[0]
    assert refused == (400, f"apiKeyEnv: NOT_A_BOT_KEY is not a bot key variable ({RULE}).")
    assert default[0] == 400 and "OPENAI_API_KEY is not a bot key variable" in default[1]
    assert post_bot(world, apiKeyEnv="ARBE_BOTKEY_W").status_code == 201  # set or not


def test_the_operator_list_admits_a_name(world, settings):
    settings.ARBE_BOT_KEY_ALLOW = ["OPENAI_API_KEY", "TEAM_KEY"]
    assert post_bot(world).status_code == 201  # openai's usual variable, listed
    assert post_bot(world, handle="other", apiKeyEnv="TEAM_KEY").status_code == 201


def test_the_members_page_names_the_rule(world):
    page = world.client_for(world.owner)
    form = {"handle": "writer", "provider": "openai", "model": "gpt-4o"}
    response = page.post("/houses/h/bots/add", {**form, "api_key_env": "REDIS_URL"}, follow=True)
    assert f"REDIS_URL {SERVER}" in html.unescape(response.content.decode())
    response = page.post("/houses/h/bots/add", {**form, "api_key_env": "HOME_KEY"}, follow=True)
    assert "HOME_KEY is not a bot key variable" in response.content.decode()
    assert not Agent.objects.filter(handle="writer").exists()


def test_the_admin_checks_a_bot_like_its_owner_would(world):
    assert BotInline.form is BotForm
    fields = {"display_name": "W", "handle": "w", "provider": "openai", "model": "gpt-4o"}
    form = BotForm(data={**fields, "api_key_env": "POSTHOG_API_KEY"})
    assert not form.is_valid()
    assert form.errors["api_key_env"] == [f"POSTHOG_API_KEY {SERVER}."]
    assert BotForm(data={**fields, "api_key_env": "ARBE_BOTKEY_W"}).is_valid()


def test_seed_demo_checks_its_bot(world, settings):
    call_command("seed_demo")  # the demo bot needs no variable
    Agent.objects.filter(handle="helper", house__slug="demo").update(api_key_env="SECRET_KEY")
    with pytest.raises(CommandError, match=f"@helper: SECRET_KEY {SERVER}"):
        call_command("seed_demo")
