"""The add-bot form offers choices: this server's providers first, then Pi's that take a key,
each with its models; a key variable the rule accepts as the hint; and for a house with no bot
yet, the demo house's bot in one click."""

import json
import re

import pytest

from houses.founding import create_house
from houses.models import Agent
from tests.factories import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def providers_on(html: str) -> dict:
    found = re.search(r'<script id="bot-providers" type="application/json">(.*?)</script>', html)
    assert found, "no provider data on the page"
    return json.loads(found.group(1))


def test_a_new_house_offers_providers_models_a_key_hint_and_the_demo_bot(client):
    owner = make_user("nova")
    house = create_house(owner, "Studio")
    client.force_login(owner)
    html = client.get(f"/houses/{house.slug}/members/").content.decode()
    assert '<select name="provider"' in html
    providers = providers_on(html)
    assert providers["arbe-demo"] == {"models": ["demo"], "key": ""}  # a literal key
    assert "gpt-4.1" in providers["openai"]["models"]
    assert providers["openai"]["key"] == "ARBE_BOTKEY_OPENAI"
    assert "github-copilot" not in providers and "amazon-bedrock" not in providers
    assert "must start with ARBE_BOTKEY_ or be listed in ARBE_BOT_KEY_ALLOW" in html
    assert "Add the demo bot" in html

    answer = client.post(f"/houses/{house.slug}/bots/demo")
    assert answer.status_code == 302
    bot = Agent.objects.get(house=house, handle="helper")
    seeded = ("Helper (demo model)", "arbe-demo", "demo", Agent.Involvement.MENTIONS)
    assert (bot.display_name, bot.provider, bot.model, bot.involvement) == seeded
    html = client.get(f"/houses/{house.slug}/members/").content.decode()
    assert "Add the demo bot" not in html  # it has a bot now
    assert client.post(f"/houses/{house.slug}/bots/demo").status_code == 302
    assert Agent.objects.filter(house=house, kind=Agent.Kind.BOT).count() == 1


def test_the_suggested_key_variable_is_one_the_rule_accepts(client, settings):
    from dispatch.pi.providers import setting_problem

    owner = make_user("nova")
    house = create_house(owner, "Studio")
    client.force_login(owner)
    providers = providers_on(client.get(f"/houses/{house.slug}/members/").content.decode())
    for name in ("openai", "anthropic", "openrouter", "google"):
        assert setting_problem(name, providers[name]["key"], None) is None, name


def test_only_an_owner_adds_the_demo_bot(client):
    owner, member = make_user("nova"), make_user("mo")
    house = create_house(owner, "Studio")
    from houses.membership import add_member

    add_member(house, member)
    client.force_login(member)
    assert client.post(f"/houses/{house.slug}/bots/demo").status_code == 403
    client.force_login(make_user("stranger"))
    assert client.post(f"/houses/{house.slug}/bots/demo").status_code == 404
    client.logout()
    answer = client.post(f"/houses/{house.slug}/bots/demo")
    assert answer.status_code == 302 and "/login/" in answer["Location"]
    assert client.get(f"/houses/{house.slug}/bots/demo").status_code in (302, 405)
    assert not Agent.objects.filter(house=house, kind=Agent.Kind.BOT).exists()
