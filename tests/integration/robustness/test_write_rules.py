"""Every write path checks the whole entry before it appends; ids belong to their author;
deleting is idempotent and only for chat. Each case from the hardening report is named."""

import json

import pytest
from django.core.management import call_command

from tests.integration.robustness.conftest import log_bytes
from threads.entries import Chat, DispatchStarted
from threads.lifecycle import new_entry
from threads.models import EntryLocation
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def post_stream(client, thread, body, **headers):
    data = body if isinstance(body, bytes) else json.dumps(body)
    return client.post(
        f"/api/stream/{thread.stream_name}", data, content_type="application/json", **headers
    )


def post_entry(client, thread, body):
    data = body if isinstance(body, bytes) else json.dumps(body)
    return client.post(f"/api/threads/{thread.id}/entries", data, content_type="application/json")


def assert_refused(response, status, log_before, thread, field=None):
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    if field:
        assert field in error
    assert log_bytes(thread) == log_before  # nothing appended, not even part of a batch


# -- 1. ids -------------------------------------------------------------------------------


def test_an_over_long_id_through_the_stream_proxy_is_refused_and_not_stored(world):
    before = log_bytes(world.thread)
    client = world.token_client(world.member)
    body = {"id": "a" * 200, "payload": {"type": "chat", "text": "x"}}
    assert_refused(post_stream(client, world.thread, body), 400, before, world.thread, "$.id")
    # The thread stays whole: its page, /now and the next post all work.
    member = world.client_for(world.member)
    assert member.get(f"/threads/{world.thread.id}/").status_code == 200
    assert member.get(f"/api/threads/{world.thread.id}/now").status_code == 200
    assert member.post(f"/api/threads/{world.thread.id}/entries", {"text": "ok"}).status_code == 201


@pytest.mark.parametrize("bad_id", ["a/b", "a b", "<x>", "é", "a\x00b", ""])
def test_an_id_outside_the_safe_alphabet_is_refused_on_every_path(world, bad_id):
    before = log_bytes(world.thread)
    token = world.token_client(world.member)
    chat = {"type": "chat", "text": "x"}
    assert_refused(
        post_stream(token, world.thread, {"id": bad_id, "payload": chat}), 400, before, world.thread
    )
    assert_refused(
        post_entry(token, world.thread, {"id": bad_id, "payload": chat}), 400, before, world.thread
    )


def test_a_batch_is_checked_whole_before_anything_is_appended(world):
    before = log_bytes(world.thread)
    body = [
        {"payload": {"type": "chat", "text": "fine"}},
        {"id": "x" * 129, "payload": {"type": "chat", "text": "bad id"}},
    ]
    response = post_stream(world.token_client(world.member), world.thread, body)
    assert_refused(response, 400, before, world.thread, "$[1].id")


def test_one_id_twice_in_a_batch_is_refused(world):
    before = log_bytes(world.thread)
    body = [{"id": "same", "payload": {"type": "chat", "text": t}} for t in ("a", "b")]
    response = post_stream(world.token_client(world.member), world.thread, body)
    assert_refused(response, 400, before, world.thread)


def test_server_code_cannot_append_an_invalid_entry_either(world):
    from threads.entries import EntryError

    before = log_bytes(world.thread)
    bad = new_entry(DispatchStarted(dispatchId="d/1", agentId=world.bot.id, entryIds=[]))
    with pytest.raises(EntryError, match=r"\$\.payload\.dispatchId"):
        stream_writer().append(world.thread.stream_name, bad)
    huge = new_entry(Chat(text="x" * 30_000), author=world.member.agent.id)
    with pytest.raises(EntryError, match=r"\$\.payload\.text"):
        stream_writer().append(world.thread.stream_name, huge)
    assert log_bytes(world.thread) == before


# -- 2. Pi payloads -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"type": "pi.assistant", "message": {"content": 5}}, "$.payload.message.content"),
        ({"type": "pi.assistant", "message": {"content": [5]}}, "$.payload.message.content[0]"),
        ({"type": "pi.assistant", "message": {"content": [{"text": "no type"}]}}, "type"),
        ({"type": "pi.assistant", "message": {"usage": {"input": "many"}}}, "usage.input"),
        ({"type": "pi.assistant", "message": {"usage": {"cost": 3}}}, "usage.cost"),
        ({"type": "pi.assistant", "message": {"content": [{"type": "text", "text": 5}]}}, "text"),
        ({"type": "pi.tool_result", "message": {"content": "text"}}, "$.payload.message.content"),
        ({"type": "pi.tool_result", "message": {"isError": "yes"}}, "isError"),
        ({"type": "pi.tool_result", "message": {"toolCallId": 7}}, "toolCallId"),
        ({"type": "pi.compaction", "result": {"summary": 1}}, "summary"),
    ],
)
def test_a_malformed_pi_payload_is_refused(world, payload, field):
    before = log_bytes(world.thread)
    client = world.jwt_client(world.jwt(dispatch="d1"))
    response = post_stream(client, world.thread, {"payload": {**payload, "dispatchId": "d1"}})
    assert_refused(response, 400, before, world.thread, field)


def test_a_well_formed_pi_payload_with_fields_arbe_does_not_know_is_kept_as_pi_sent_it(world):
    client = world.jwt_client(world.jwt(dispatch="d1"))
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "hi"}, {"type": "future", "blob": [1, 2]}],
        "usage": {"input": 3, "output": 4, "cost": {"total": 0.01}},
        "somethingNew": {"nested": True},
    }
    payload = {"type": "pi.assistant", "dispatchId": "d1", "message": message}
    response = post_stream(client, world.thread, {"payload": payload})
    assert response.status_code == 200, response.content
    stored = json.loads(log_bytes(world.thread)[-1])
    assert stored["payload"]["message"] == message


# -- 3. bodies ----------------------------------------------------------------------------


def nested(depth: int) -> bytes:
    return b'{"payload": {"type": "chat", "text": ' + b"[" * depth + b"]" * depth + b"}}"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(nested(1000), id="nested-1000"),
        pytest.param(
            b'{"payload": {"type": "pi.assistant", "message": {"x": '
            + b"[" * 5000
            + b"]" * 5000
            + b"}}}",
            id="nested-5000-in-pi",
        ),
        pytest.param(b'{"payload": {"type": "chat", "text": "\xff\xfe"}}', id="invalid-utf8"),
        pytest.param(b"\xff", id="one-bad-byte"),
        pytest.param(b"", id="empty"),
        pytest.param(b"[]", id="empty-array"),
        pytest.param(b"null", id="null"),
        pytest.param(b'{"payload": {"type": "chat", "text": "x"}} trailing', id="trailing"),
    ],
)
def test_a_bad_body_is_a_400_on_every_json_path(world, body):
    before = log_bytes(world.thread)
    jwt = world.jwt_client(world.jwt(dispatch="d1"))
    token = world.token_client(world.member)
    assert_refused(post_stream(jwt, world.thread, body), 400, before, world.thread)
    assert_refused(post_stream(token, world.thread, body), 400, before, world.thread)
    assert_refused(post_entry(token, world.thread, body), 400, before, world.thread)


def test_an_oversized_body_is_a_413(world, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    before = log_bytes(world.thread)
    body = {"payload": {"type": "chat", "text": "x" * 20_000}}
    token = world.token_client(world.member)
    assert_refused(post_stream(token, world.thread, body), 413, before, world.thread)
    assert_refused(post_entry(token, world.thread, body), 413, before, world.thread)


# -- 4. retry ids belong to their author --------------------------------------------------


def test_another_author_reusing_a_retry_id_gets_409_and_nothing_is_lost(world):
    url = f"/api/threads/{world.thread.id}/entries"
    first = world.client_for(world.author).post(url, {"id": "k1", "text": "ari's"})
    assert first.status_code == 201
    before = log_bytes(world.thread)
    second = world.client_for(world.member).post(url, {"id": "k1", "text": "mia's"})
    assert_refused(second, 409, before, world.thread, "another author")
    # The author's own retry still answers with the first post.
    again = world.client_for(world.author).post(url, {"id": "k1", "text": "ari's"})
    assert again.status_code == 201
    assert again.json()["entry"]["payload"]["text"] == "ari's"
    assert again.json()["duplicate"] is True


def test_id_reuse_is_caught_from_the_log_when_the_chat_index_lost_it(world):
    url = f"/api/threads/{world.thread.id}/entries"
    assert world.client_for(world.author).post(url, {"id": "k2", "text": "a"}).status_code == 201
    EntryLocation.objects.filter(entry_id="k2").delete()  # the cache, not the log
    before = log_bytes(world.thread)
    second = world.client_for(world.member).post(url, {"id": "k2", "text": "b"})
    assert_refused(second, 409, before, world.thread)


def test_id_reuse_through_the_stream_proxy_is_a_409(world):
    url = f"/api/threads/{world.thread.id}/entries"
    assert world.client_for(world.author).post(url, {"id": "k3", "text": "a"}).status_code == 201
    before = log_bytes(world.thread)
    body = {"id": "k3", "payload": {"type": "chat", "text": "b"}}
    response = post_stream(world.token_client(world.member), world.thread, body)
    assert_refused(response, 409, before, world.thread)


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "pi.assistant", "dispatchId": "d_x", "message": {"role": "assistant"}},
        {"type": "signal.dispatch.started", "dispatchId": "d_x", "agentId": "BOT", "entryIds": []},
    ],
    ids=["pi.assistant", "signal.dispatch.started"],
)
@pytest.mark.parametrize("chosen", [True, False], ids=["id-chosen", "id-minted"])
def test_a_sandbox_writer_may_not_reuse_another_authors_id_for_any_kind(world, payload, chosen):
    url = f"/api/threads/{world.thread.id}/entries"
    owner = world.client_for(world.owner)
    body = {"id": "owner-msg-1", "text": "@helper hi"} if chosen else {"text": "@helper hi"}
    asked = owner.post(url, body)
    assert asked.status_code == 201
    asked = asked.json()["entry"]["id"]
    before = log_bytes(world.thread)
    payload = {k: (world.bot.id if v == "BOT" else v) for k, v in payload.items()}
    bot = world.jwt_client(world.jwt(dispatch="d_x"))
    response = post_stream(bot, world.thread, {"id": asked, "payload": payload})
    # A person's chosen id is never of the shape other kinds take; the server's is another's.
    if chosen:
        assert_refused(response, 400, before, world.thread, "24 hex digits")
    else:
        assert_refused(response, 409, before, world.thread, "another author")


NARRATION_ID = "0192f3a4b5c6d7e8f9a0b1c2"  # 24 hex digits: the server's shape


def test_an_id_a_bot_used_for_narration_belongs_to_it(world):
    bot = world.jwt_client(world.jwt(dispatch="d_x"))
    said = {"type": "pi.assistant", "dispatchId": "d_x", "message": {"role": "assistant"}}
    first = post_stream(bot, world.thread, {"id": NARRATION_ID, "payload": said})
    assert first.status_code == 200
    before = log_bytes(world.thread)
    # Its own retry appends nothing and answers with what is there.
    again = post_stream(bot, world.thread, {"id": NARRATION_ID, "payload": said})
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert log_bytes(world.thread) == before
    # A person's chat under that id, on either path, is someone else's reuse.
    chat = {"id": NARRATION_ID, "payload": {"type": "chat", "text": "mine"}}
    response = post_stream(world.token_client(world.member), world.thread, chat)
    assert_refused(response, 409, before, world.thread)
    url = f"/api/threads/{world.thread.id}/entries"
    posted = world.client_for(world.member).post(url, {"id": NARRATION_ID, "text": "mine"})
    assert_refused(posted, 400, before, world.thread, "24 hex digits")


def test_a_chosen_id_for_anything_but_chat_has_the_servers_shape(world):
    """So a person's post, which may not choose that shape, never meets it: without this, a
    bot's narration under ``p-1`` and then a person's post ``p-1`` both landed."""
    bot = world.jwt_client(world.jwt(dispatch="d_x"))
    said = {"type": "pi.assistant", "dispatchId": "d_x", "message": {"role": "assistant"}}
    before = log_bytes(world.thread)
    response = post_stream(bot, world.thread, {"id": "p-1", "payload": said})
    assert_refused(response, 400, before, world.thread, "24 hex digits")
    # Chat may choose any id: the chat index holds every chat id.
    mine = {"id": "p-1", "payload": {"type": "chat", "text": "mine"}}
    assert post_stream(world.token_client(world.member), world.thread, mine).status_code == 200


# -- 5. deletion --------------------------------------------------------------------------


def chat(world, user, text="hello") -> str:
    url = f"/api/threads/{world.thread.id}/entries"
    response = world.client_for(user).post(url, {"text": text})
    assert response.status_code == 201
    return response.json()["entry"]["id"]


def tombstones(thread) -> list[dict]:
    entries = [json.loads(raw) for raw in log_bytes(thread)]
    return [e for e in entries if e["payload"]["type"] == "signal.entry.deleted"]


def delete(world, user, entry_id):
    return world.client_for(user).delete(f"/api/threads/{world.thread.id}/entries/{entry_id}")


def test_deleting_twice_appends_one_tombstone(world):
    entry_id = chat(world, world.member)
    first = delete(world, world.member, entry_id)
    second = delete(world, world.owner, entry_id)
    assert (first.status_code, second.status_code) == (200, 200)
    assert second.json()["duplicate"] is True
    assert second.json()["entry"]["id"] == first.json()["entry"]["id"]
    assert len(tombstones(world.thread)) == 1


def test_deleting_twice_when_the_index_forgot_the_tombstone_still_appends_one(world):
    entry_id = chat(world, world.member)
    assert delete(world, world.member, entry_id).status_code == 200
    EntryLocation.objects.filter(entry_id=entry_id).update(deleted_by="")
    assert delete(world, world.member, entry_id).status_code == 200
    assert len(tombstones(world.thread)) == 1


def test_deleting_a_non_chat_entry_is_a_400(world):
    created = json.loads(log_bytes(world.thread)[0])
    response = delete(world, world.owner, created["id"])
    assert response.status_code == 400
    assert response.json()["error"].startswith("Only chat can be deleted")
    assert tombstones(world.thread) == []


def test_deleting_an_unknown_or_malformed_id_is_a_404(world):
    assert delete(world, world.owner, "nope").status_code == 404
    assert delete(world, world.owner, "a%2Fb").status_code == 404
    assert tombstones(world.thread) == []


def test_a_chat_missing_from_the_index_is_found_in_the_log_and_deleted(world):
    entry_id = chat(world, world.member)
    EntryLocation.objects.filter(entry_id=entry_id).delete()
    assert delete(world, world.author, entry_id).status_code == 403  # still only author/owner
    assert delete(world, world.member, entry_id).status_code == 200
    assert len(tombstones(world.thread)) == 1


def test_reindex_entries_rebuilds_the_chat_index_from_the_logs(world):
    kept, gone = chat(world, world.member, "kept"), chat(world, world.author, "gone")
    assert delete(world, world.author, gone).status_code == 200
    EntryLocation.objects.all().delete()
    call_command("reindex_entries", "--thread", world.thread.id, stdout=None, stderr=None)
    rows = {r.entry_id: r for r in EntryLocation.objects.filter(thread=world.thread)}
    assert set(rows) == {kept, gone}
    assert rows[kept].author_id == world.member.agent.id and rows[kept].deleted_by == ""
    assert rows[gone].deleted_by == tombstones(world.thread)[0]["id"]
    # Every thread when no --thread is given.
    EntryLocation.objects.all().delete()
    call_command("reindex_entries", stdout=None, stderr=None)
    assert EntryLocation.objects.count() == 2


def test_a_nul_in_an_address_is_a_400_before_any_lookup(world):
    """PostgreSQL text can't hold NUL: a lookup by one failed inside the database (500)."""
    client = world.token_client(world.member)
    for url in ("/api/threads/%00", "/api/threads?house=%00", "/api/houses/a%00b"):
        response = client.get(url)
        assert response.status_code == 400 and "NUL" in response.json()["error"]
    page = world.client_for(world.member).get("/threads/%00/")
    assert page.status_code == 400


def test_a_post_the_stream_server_breaks_off_is_a_503_that_says_a_retry_is_safe(world, monkeypatch):
    from streams.errors import TransportError
    from threads.recency import RecencyTrackingWriter

    def broken(self, name, entry, **options):
        raise TransportError("connection reset while appending")

    monkeypatch.setattr(RecencyTrackingWriter, "append", broken)
    response = post_entry(
        world.client_for(world.member),
        world.thread,
        {"id": "k1", "payload": {"type": "chat", "text": "hi"}},
    )
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    text = response.json()["error"]
    assert "may or may not" in text and "same id is safe" in text
    assert "connection reset" not in text  # the stream server's own words stay in the log
