"""Readers survive any entry already in a log. Entries are planted through the service
client, unchecked, as another writer could; then every reader is asked to do its job:
the page, ``/now``, a live socket, a director pass, status tracking, the admin's raw view
and the CLI's decoder. None may answer 5xx, stop, or lose the readable entries around them.
"""

import json
import logging

import pytest
from asgiref.sync import sync_to_async
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatch.director import director_pass
from tests.integration.robustness.conftest import log_bytes
from tests.integration.web.conftest import frame_with, open_socket
from threads.status_sync import sync_status

pytestmark = pytest.mark.django_db(transaction=True)


def envelope(payload, **fields) -> bytes:
    return json.dumps(
        {"id": "p" + str(abs(hash(str(payload))))[:10], "ts": 1, **fields, "payload": payload}
    ).encode()


PLANTS = {
    "not-an-object": b'"just a string"',
    "number": b"42",
    "empty-object": b"{}",
    "unknown-type": envelope({"type": "chat.v2", "text": "x"}),
    "over-long-id": json.dumps(
        {"id": "a" * 200, "ts": 1, "payload": {"type": "chat", "text": "x"}}
    ).encode(),
    "slash-id": json.dumps(
        {"id": "a/b", "ts": 1, "payload": {"type": "chat", "text": "x"}}
    ).encode(),
    "chat-text-number": envelope({"type": "chat", "text": 5}),
    "negative-ts": envelope({"type": "chat", "text": "x"}, ts=-5),
    "pi-content-number": envelope(
        {"type": "pi.assistant", "dispatchId": "d1", "message": {"content": 5}}
    ),
    "pi-usage-string": envelope(
        {"type": "pi.assistant", "dispatchId": "d1", "message": {"usage": "lots"}}
    ),
    "tool-result-content-string": envelope(
        {"type": "pi.tool_result", "dispatchId": "d1", "message": {"content": "x"}}
    ),
    "deep-nesting": b'{"id": "deep", "ts": 1, "payload": {"type": "pi.assistant", "message": '
    b'{"x": ' + b"[" * 400 + b"]" * 400 + b"}}}",
    "tombstone-bad-target": envelope({"type": "signal.entry.deleted", "entryId": "x/y"}),
    "started-without-agent": envelope(
        {"type": "signal.dispatch.started", "dispatchId": "d9", "entryIds": []}
    ),
    "huge-text": envelope({"type": "chat", "text": "x" * 300_000}),
}


def plant(raw_log, thread, raws):
    for raw in raws:
        raw_log.append(thread.stream_name, raw)


def readers_stay_up(world, admin_client=None) -> None:
    member = world.client_for(world.member)
    page = member.get(f"/threads/{world.thread.id}/")
    assert page.status_code == 200
    now = member.get(f"/api/threads/{world.thread.id}/now")
    assert now.status_code == 200, now.content
    assert member.get(f"/houses/{world.house.slug}/").status_code == 200
    director_pass(world.thread.id)
    sync_status(world.thread.id)
    stream = member.get(f"/api/threads/{world.thread.id}/stream?offset=-1")
    assert stream.status_code == 200


def post(world, text):
    url = f"/api/threads/{world.thread.id}/entries"
    response = world.client_for(world.member).post(url, {"text": text})
    assert response.status_code == 201
    return response.json()["entry"]["id"]


@pytest.mark.parametrize("name", list(PLANTS))
def test_each_kind_of_unreadable_entry_is_skipped_by_every_reader(world, raw_log, name, caplog):
    before = post(world, "before")
    plant(raw_log, world.thread, [PLANTS[name], PLANTS[name]])
    after = post(world, "after")
    with caplog.at_level(logging.WARNING, logger="threads.unreadable"):
        readers_stay_up(world)
        readers_stay_up(world)
    page = world.client_for(world.member).get(f"/threads/{world.thread.id}/").content.decode()
    assert f"entry-{before}" in page and f"entry-{after}" in page  # readable ones all shown
    # Logged once per entry, not on every read (the same bytes twice: one line).
    skipped = [r for r in caplog.records if "unreadable" in r.getMessage()]
    assert len(skipped) <= 1
    # The next post still works.
    post(world, "still fine")


def test_the_admin_raw_view_shows_unreadable_entries_with_the_reason(world, raw_log):
    from tests.factories import make_user

    plant(raw_log, world.thread, [PLANTS["pi-content-number"]])
    admin = make_user("root")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client = Client()
    client.force_login(admin)
    response = client.get(f"/admin/threads/thread/{world.thread.id}/entries/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "unreadable" in text.lower()
    assert "$.payload.message.content" in text


def test_the_cli_decoder_skips_what_it_cannot_read():
    from cli.main import decoded

    class Out:
        notes: list[str] = []

        def note(self, text):
            self.notes.append(text)

    out = Out()
    docs = [
        json.loads(PLANTS["pi-content-number"]),
        json.loads(PLANTS["slash-id"]),
        {"id": "ok", "ts": 1, "payload": {"type": "chat", "text": "fine"}},
    ]
    assert [e.id for e in decoded(docs, out)] == ["ok"]
    assert len(out.notes) == 2


async def test_a_live_socket_keeps_going_past_unreadable_entries(world, raw_log):
    socket = await open_socket(f"/ws/threads/{world.thread.id}/", world.member)
    await socket.receive_from(5)  # the panel
    await sync_to_async(plant)(raw_log, world.thread, list(PLANTS.values()))
    after = await sync_to_async(post)(world, "after the plants")
    assert f"entry-{after}" in await frame_with(socket, f"entry-{after}")
    # A socket that catches up across them from the start is fine too.
    late = await open_socket(f"/ws/threads/{world.thread.id}/?offset=-1", world.member)
    assert f"entry-{after}" in await frame_with(late, f"entry-{after}")
    await socket.disconnect()
    await late.disconnect()


# -- generated ----------------------------------------------------------------------------

KNOWN_TYPES = [
    "chat",
    "pi.assistant",
    "pi.tool_result",
    "pi.compaction",
    "pi.chunk",
    "signal.entry.deleted",
    "signal.thread.created",
    "signal.thread.run_state",
    "signal.thread.child_finished",
    "signal.thread_director.decided",
    "signal.thread_director.outcome",
    "signal.dispatch.started",
    "signal.dispatch.phase",
    "signal.dispatch.steered",
    "signal.dispatch.finished",
    "signal.dispatch.failed",
]
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    [
        "text",
        "message",
        "content",
        "usage",
        "entryId",
        "dispatchId",
        "agentId",
        "entryIds",
        "picked",
        "upTo",
        "round",
        "phase",
        "tool",
        "spend",
        "stage",
        "error",
        "runId",
        "state",
        "childThreadId",
        "report",
        "title",
        "reason",
    ]
)
near_valid = st.builds(
    lambda kind, fields, eid, ts, author: json.dumps(
        {"id": eid, "ts": ts, "authorId": author, "payload": {"type": kind, **fields}}
    ).encode(),
    st.sampled_from(KNOWN_TYPES),
    st.dictionaries(field_names, json_values, max_size=5),
    st.text(min_size=1, max_size=12) | st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True),
    st.integers(min_value=-10, max_value=2**53),
    st.none() | st.sampled_from(["ag_x", "", "a/b"]),
)
anything = json_values.map(lambda v: json.dumps(v).encode())


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(near_valid | anything, min_size=1, max_size=6))
def test_generated_entries_planted_in_a_log_break_no_reader(world, raw_log, raws):
    raws = [r for r in raws if r.strip()[:1] != b"["]  # a JSON array appends its items
    tail_before = len(log_bytes(world.thread))
    plant(raw_log, world.thread, raws)
    readers_stay_up(world)
    assert len(log_bytes(world.thread)) >= tail_before + len(raws)


def test_an_entry_that_decodes_but_cannot_be_shown_is_skipped_on_the_page(world, monkeypatch):
    from threads import entry_views

    shown = entry_views._describe

    def fragile(entry, names):
        if getattr(entry.payload, "text", None) == "explodes":
            raise RuntimeError("a shape nobody foresaw")
        return shown(entry, names)

    monkeypatch.setattr(entry_views, "_describe", fragile)
    before, bad, after = post(world, "before"), post(world, "explodes"), post(world, "after")
    page = world.client_for(world.member).get(f"/threads/{world.thread.id}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert f"entry-{before}" in text and f"entry-{after}" in text
    assert f"entry-{bad}" not in text
