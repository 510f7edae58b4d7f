"""The thread API: posting, deletion by tombstone, dedup, wake failures, bad input."""

import json

import pytest

from threads.entries import Chat, DispatchFailed, EntryDeleted
from threads.models import EntryLocation
from threads.projection import chat_projection, dispatch_history
from threads.reading import read_entries

pytestmark = pytest.mark.django_db(transaction=True)


def post(client, thread, text="hello", **body):
    return client.post(
        f"/api/threads/{thread.id}/entries",
        json.dumps({"payload": {"type": "chat", "text": text}, **body}),
        content_type="application/json",
    )


def entries_of(thread):
    return read_entries(thread.id)[0]


def test_posting_appends_chat_authored_by_the_caller(world):
    response = post(world.client_for(world.member), world.thread, "first!")
    assert response.status_code == 201
    body = response.json()
    assert body["entry"]["authorId"] == world.member.agent.id
    assert body["entry"]["payload"] == {"type": "chat", "text": "first!"}
    assert body["offset"]
    last = entries_of(world.thread)[-1]
    assert (last.id, last.payload, last.authorId) == (
        body["entry"]["id"],
        Chat(text="first!"),
        world.member.agent.id,
    )


def test_the_htmx_form_posts_chat_too(world):
    client = world.client_for(world.member)
    response = client.post(f"/api/threads/{world.thread.id}/entries", {"text": "from a form"})
    assert response.status_code == 201
    assert entries_of(world.thread)[-1].payload == Chat(text="from a form")


def test_an_api_token_posts_as_its_person(world):
    response = post(world.token_client(world.author), world.thread)
    assert response.status_code == 201
    assert response.json()["entry"]["authorId"] == world.author.agent.id


def test_a_retried_post_with_the_same_id_appends_once_and_answers_the_same(world):
    client = world.client_for(world.member)
    first = post(client, world.thread, "once", id="client-42")
    again = post(client, world.thread, "once", id="client-42")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() | {"duplicate": True}
    ids = [e.id for e in entries_of(world.thread)]
    assert ids.count("client-42") == 1


def test_a_first_post_with_an_id_does_not_read_the_stream(world, monkeypatch):
    def no_reading(*args):
        raise AssertionError("a first post read the whole stream")

    monkeypatch.setattr("threads.posting.find_entry", no_reading)
    assert post(world.client_for(world.member), world.thread, id="client-7").status_code == 201


def test_a_post_cannot_take_the_id_of_an_entry_the_server_wrote(world):
    """Ids belong to their first author for every kind: the server's own entries (a signal,
    Pi's transcript, a bot's reply) have ids of a shape no person may choose, so a post can
    never land a second entry under one of them."""
    signal = next(e for e in entries_of(world.thread) if not isinstance(e.payload, Chat))
    response = post(world.client_for(world.member), world.thread, "mine now", id=signal.id)
    assert response.status_code == 400
    assert "server's own ids" in response.json()["error"]
    assert [e.id for e in entries_of(world.thread)].count(signal.id) == 1


def test_a_retry_appends_once_even_when_its_location_was_lost(world):
    client = world.client_for(world.member)
    first = post(client, world.thread, "once", id="client-43")
    EntryLocation.objects.filter(entry_id="client-43").delete()  # the cache, not the log
    again = post(client, world.thread, "once", id="client-43")
    assert again.status_code == 201
    assert again.json()["entry"] == first.json()["entry"]
    assert [e.id for e in entries_of(world.thread)].count("client-43") == 1


def test_a_wake_failure_keeps_the_chat_and_records_a_signal(world, monkeypatch):
    def broken(thread_id):
        raise ConnectionError("backstage is down")

    monkeypatch.setattr("dispatch.backstage.wake", broken)
    response = post(world.client_for(world.member), world.thread, "still here")
    assert response.status_code == 201
    *_, chat, failure = entries_of(world.thread)
    assert chat.payload == Chat(text="still here")
    assert isinstance(failure.payload, DispatchFailed)
    assert failure.payload.stage == "wake"
    assert "backstage is down" in failure.payload.error


@pytest.fixture
def authored(world):
    response = post(world.client_for(world.author), world.thread, "to be deleted")
    return response.json()["entry"]["id"]


def delete(client, thread, entry_id):
    return client.delete(f"/api/threads/{thread.id}/entries/{entry_id}")


@pytest.mark.parametrize("who", ["author", "owner"])
def test_author_and_owner_can_delete_by_tombstone(world, authored, who):
    response = delete(world.client_for(getattr(world, who)), world.thread, authored)
    assert response.status_code == 200
    assert response.json()["entry"]["authorId"] == getattr(world, who).agent.id
    log = entries_of(world.thread)
    assert [e.id for e in log].count(authored) == 1  # the raw read keeps the chat…
    assert log[-1].payload == EntryDeleted(entryId=authored)  # …and the tombstone
    assert authored not in {e.id for e in chat_projection(log)}
    assert authored not in {e.id for e in dispatch_history(log)}


def test_others_cannot_delete(world, authored):
    assert delete(world.client_for(world.member), world.thread, authored).status_code == 403
    assert delete(world.client_for(world.stranger), world.thread, authored).status_code == 404
    assert not any(isinstance(e.payload, EntryDeleted) for e in entries_of(world.thread))


def test_deleting_twice_is_harmless(world, authored):
    client = world.client_for(world.owner)
    assert delete(client, world.thread, authored).status_code == 200
    assert delete(client, world.thread, authored).status_code == 200
    assert authored not in {e.id for e in chat_projection(entries_of(world.thread))}


def test_only_known_chat_entries_are_deletion_targets(world, authored):
    client = world.client_for(world.owner)
    assert delete(client, world.thread, "no-such-entry").status_code == 404
    created = entries_of(world.thread)[0]
    EntryLocation.objects.create(
        thread=world.thread, entry_id=created.id, type=created.type, ts=created.ts
    )
    response = delete(client, world.thread, created.id)
    assert response.status_code == 400
    assert "signal.thread.created" in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"{not json", "Malformed JSON"),
        (json.dumps({"payload": {"type": "chat"}}), "`text`"),
        (json.dumps({"payload": {"type": "chat", "text": ""}}), "$.payload.text"),
        (json.dumps({"payload": {"type": "chat", "text": "x" * 20_001}}), "$.payload.text"),
        (json.dumps({"payload": {"type": "gossip", "text": "x"}}), "$.payload.type"),
        (json.dumps({"payload": {"type": "signal.thread.archived"}}), "$.payload.type"),
        (json.dumps({"payload": {"type": "chat", "text": "x"}, "id": "bad id!"}), "id"),
        (json.dumps({"payload": {"type": "chat", "text": "x"}, "mood": 1}), "`mood`"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_appends_nothing(world, body, field):
    before = len(entries_of(world.thread))
    client = world.client_for(world.member)
    response = client.post(
        f"/api/threads/{world.thread.id}/entries", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert field in response.json()["error"]
    assert len(entries_of(world.thread)) == before


def test_a_bad_offset_is_a_400_naming_the_offset(world):
    client = world.client_for(world.member)
    response = client.get(f"/api/threads/{world.thread.id}/stream", {"offset": "not-an-offset"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("offset")
    response = client.get(f"/api/threads/{world.thread.id}/stream", {"live": "forever"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("live")


def test_creating_a_thread_creates_its_stream_with_a_created_signal(world):
    response = world.client_for(world.member).post(
        "/api/houses/h/threads", {"title": "New"}, content_type="application/json"
    )
    assert response.status_code == 201
    thread_id = response.json()["thread"]["id"]
    (created,) = read_entries(thread_id)[0]
    assert created.type == "signal.thread.created"
    assert created.authorId == world.member.agent.id


def test_a_thread_whose_stream_is_missing_says_so_and_invents_nothing(world):
    from streams.client import service_client

    service_client().delete(world.thread.stream_name)  # lost by the stream server
    client = world.client_for(world.member)
    response = client.get(f"/api/threads/{world.thread.id}/now")
    assert response.status_code == 503
    assert "missing from the stream server" in response.json()["error"]
    page = client.get(f"/threads/{world.thread.id}/")
    assert page.status_code == 503 and b"missing from the stream server" in page.content


def test_posting_to_a_thread_whose_stream_is_missing_is_a_503(world):
    from streams.client import service_client

    service_client().delete(world.thread.stream_name)  # lost by the stream server
    response = post(world.client_for(world.member), world.thread, "anyone?")
    assert response.status_code == 503
    assert "missing" in response.json()["error"] and "invalid" not in response.json()["error"]
