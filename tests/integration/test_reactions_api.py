"""Reacting to a chat message over the API: entries in the log, folded on the page."""

import json

import pytest

from tests.integration.robustness.conftest import log_bytes
from threads.models import EntryLocation

pytestmark = pytest.mark.django_db(transaction=True)


def chat(world, user, text="hello") -> str:
    url = f"/api/threads/{world.thread.id}/entries"
    response = world.client_for(user).post(url, {"text": text})
    assert response.status_code == 201
    return response.json()["entry"]["id"]


def react(world, user, entry_id, emoji, on=True, client=None):
    client = client or world.client_for(user)
    return client.post(
        f"/api/threads/{world.thread.id}/entries/{entry_id}/reactions",
        json.dumps({"emoji": emoji, "on": on}),
        content_type="application/json",
    )


def test_reactions_are_entries_and_the_page_shows_their_counts_and_who(world):
    entry_id = chat(world, world.member)
    assert react(world, world.owner, entry_id, "👍").status_code == 200
    assert react(world, world.author, entry_id, "👍").status_code == 200
    token = world.token_client(world.author)
    assert react(world, world.author, entry_id, "🎉", client=token).status_code == 200
    assert react(world, world.author, entry_id, "🎉", on=False).status_code == 200
    kinds = [json.loads(raw)["payload"]["type"] for raw in log_bytes(world.thread)]
    assert kinds.count("signal.entry.reaction") == 4
    assert EntryLocation.objects.get(entry_id=entry_id).reactions == {
        "👍": [world.owner.agent.id, world.author.agent.id]
    }
    page = world.client_for(world.member).get(f"/threads/{world.thread.id}/").content.decode()
    assert 'data-emoji="👍"' in page and '<span class="n">2</span>' in page
    assert 'data-emoji="🎉" data-who' not in page
    assert f"{world.owner.agent.display_name}, {world.author.agent.display_name} reacted" in page


@pytest.mark.parametrize("emoji", ["ok", "👍👍", "", "x" * 40])
def test_only_one_emoji_is_a_reaction(world, emoji):
    entry_id = chat(world, world.member)
    response = react(world, world.owner, entry_id, emoji)
    assert response.status_code == 400
    assert response.json()["error"].startswith("emoji: one emoji")


def test_a_deleted_message_takes_no_reactions_and_strangers_learn_nothing(world):
    entry_id = chat(world, world.member)
    assert react(world, world.stranger, entry_id, "👍").status_code == 404
    url = f"/api/threads/{world.thread.id}/entries/{entry_id}"
    assert world.client_for(world.member).delete(url).status_code == 200
    response = react(world, world.owner, entry_id, "👍")
    assert response.status_code == 409
    assert response.json()["error"] == "This message was deleted, so it can't take reactions."
