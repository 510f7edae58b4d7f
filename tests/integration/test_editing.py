"""Editing a chat message: a new entry, only by its author, never of a deleted message;
every view shows the latest text, the raw log keeps every version."""

import json

import pytest

from search.models import SearchDoc
from tests.integration.robustness.conftest import log_bytes
from threads.entries import MAX_CHAT_CHARS
from threads.models import EntryLocation

pytestmark = pytest.mark.django_db(transaction=True)


def chat(world, user, text="hello") -> str:
    response = world.client_for(user).post(
        f"/api/threads/{world.thread.id}/entries", {"text": text}
    )
    assert response.status_code == 201
    return response.json()["entry"]["id"]


def edit(world, user, entry_id, text, client=None):
    client = client or world.client_for(user)
    return client.patch(
        f"/api/threads/{world.thread.id}/entries/{entry_id}",
        json.dumps({"text": text}),
        content_type="application/json",
    )


def logged(thread, kind):
    entries = [json.loads(raw) for raw in log_bytes(thread)]
    return [e for e in entries if e["payload"]["type"] == kind]


def test_the_author_edits_and_the_log_keeps_both_versions(world):
    entry_id = chat(world, world.member, "teh plan")
    response = edit(world, world.member, entry_id, "the plan")
    assert response.status_code == 200, response.content
    body = response.json()["entry"]
    assert body["payload"] == {
        "type": "signal.entry.edited",
        "entryId": entry_id,
        "text": "the plan",
    }
    assert body["authorId"] == world.member.agent.id
    assert [e["payload"]["text"] for e in logged(world.thread, "chat")] == ["teh plan"]
    assert len(logged(world.thread, "signal.entry.edited")) == 1
    # Its latest text, for an editor to start from.
    got = world.client_for(world.author).get(f"/api/threads/{world.thread.id}/entries/{entry_id}")
    assert got.json() == {"id": entry_id, "text": "the plan"}


def test_the_page_shows_the_latest_text_marked_edited(world):
    entry_id = chat(world, world.member, "first words")
    assert edit(world, world.member, entry_id, "second words").status_code == 200
    assert edit(world, world.member, entry_id, "third words").status_code == 200
    page = world.client_for(world.author).get(f"/threads/{world.thread.id}/").content.decode()
    assert "third words" in page and "second words" not in page and "first words" not in page
    assert "(edited)" in page


def test_only_the_author_edits_not_even_an_owner(world):
    entry_id = chat(world, world.member)
    before = log_bytes(world.thread)
    for user in (world.owner, world.author):
        response = edit(world, user, entry_id, "not mine")
        assert response.status_code == 403
        assert response.json()["error"] == "Only its author can edit a message."
    assert edit(world, world.stranger, entry_id, "x").status_code == 404
    assert log_bytes(world.thread) == before


def test_editing_a_deleted_message_is_refused_with_a_sentence(world):
    entry_id = chat(world, world.member)
    url = f"/api/threads/{world.thread.id}/entries/{entry_id}"
    assert world.client_for(world.member).delete(url).status_code == 200
    response = edit(world, world.member, entry_id, "too late")
    assert response.status_code == 409
    assert response.json()["error"] == "This message was deleted, so it can't be edited."
    assert logged(world.thread, "signal.entry.edited") == []


@pytest.mark.parametrize("text", ["", "x" * (MAX_CHAT_CHARS + 1)])
def test_an_edit_keeps_the_chat_text_limits(world, text):
    entry_id = chat(world, world.member)
    response = edit(world, world.member, entry_id, text)
    assert response.status_code == 400
    assert "$.payload.text" in response.json()["error"]


def test_only_chat_can_be_edited(world):
    created = json.loads(log_bytes(world.thread)[0])
    response = edit(world, world.owner, created["id"], "x")
    assert response.status_code == 400
    assert logged(world.thread, "signal.entry.edited") == []


def test_an_edit_through_a_token_and_the_search_index_follows(world):
    entry_id = chat(world, world.member, "deploy the walrus")
    client = world.token_client(world.member)
    assert (
        edit(world, world.member, entry_id, "deploy the narwhal", client=client).status_code == 200
    )
    docs = SearchDoc.objects.filter(entry_id=entry_id)
    assert [d.body for d in docs] == ["deploy the narwhal"]
    row = EntryLocation.objects.get(entry_id=entry_id)
    assert row.edited_text == "deploy the narwhal"


def test_reindex_rebuilds_edits_from_the_log(world):
    from django.core.management import call_command

    entry_id = chat(world, world.member, "one")
    edit(world, world.member, entry_id, "two")
    EntryLocation.objects.all().delete()
    call_command("reindex_entries", "--thread", world.thread.id, stdout=None, stderr=None)
    assert EntryLocation.objects.get(entry_id=entry_id).edited_text == "two"
    call_command("reindex_search", stdout=None, stderr=None)
    assert [d.body for d in SearchDoc.objects.filter(entry_id=entry_id)] == ["two"]


def test_an_older_window_shows_edits_and_reactions_made_further_down_the_log(world):
    """The window's own entries can't say what came after it: the chat index does."""
    from tests.integration.web.test_history import N, older_key, post

    first = post(world, 3 * N, author=world.member.agent.id)[0]
    assert edit(world, world.member, first.id, "message number 0, corrected").status_code == 200
    url = f"/api/threads/{world.thread.id}/entries/{first.id}/reactions"
    body = json.dumps({"emoji": "🎉"})
    response = world.client_for(world.owner).post(url, body, content_type="application/json")
    assert response.status_code == 200
    client = world.client_for(world.author)
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    key, seen = older_key(html), ""
    while key:
        part = client.get(f"/threads/{world.thread.id}/window", {"upto": key}).content.decode()
        seen += part
        key = older_key(part)
    assert "message number 0, corrected" in seen and "(edited)" in seen
    assert 'data-emoji="🎉"' in seen
