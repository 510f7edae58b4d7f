"""Stored status: tracked after appends, guarded by status_rev, repaired three ways."""

import json
import threading

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.factories import make_house, make_user
from threads import entries as E
from threads.lifecycle import create_thread, new_entry
from threads.models import Thread
from threads.recency import stream_writer
from threads.status import ThreadStatus
from threads.status_sync import sweep, sync_status, working_threads, write_status

pytestmark = pytest.mark.django_db(transaction=True)


def row(thread):
    return Thread.objects.get(pk=thread.pk)


def append(thread, payload, author=None):
    entry = new_entry(payload, author=author)
    stream_writer().append(thread.stream_name, entry)
    return entry


def post(client, thread, text):
    return client.post(
        f"/api/threads/{thread.id}/entries",
        json.dumps({"payload": {"type": "chat", "text": text}}),
        content_type="application/json",
    ).json()["entry"]["id"]


def test_a_post_moves_the_stored_status_and_the_rev(world):
    before = row(world.thread)
    m = post(world.client_for(world.member), world.thread, "@helper hi")
    after = row(world.thread)
    # A mention waiting for the director's pass reads working, with what it waits for.
    assert (after.status, after.status_rev) == ("working", before.status_rev + 1)
    assert after.status_message == "Deciding who answers 1 waiting message."
    append(world.thread, E.DirectorDecided(picked=[world.bot.id], upTo=m))
    picked = row(world.thread)
    assert (picked.status, picked.status_message) == ("working", "Helper owes a reply")
    append(world.thread, E.DispatchStarted(dispatchId="d1", agentId=world.bot.id, entryIds=[m]))
    assert row(world.thread).status_message == "Helper is thinking"  # a name, never an id


def test_tool_calls_and_assistant_text_do_not_trigger_tracking(world):
    m = post(world.client_for(world.member), world.thread, "@helper hi")
    append(world.thread, E.DispatchStarted(dispatchId="d1", agentId=world.bot.id, entryIds=[m]))
    rev = row(world.thread).status_rev
    with CaptureQueriesContext(connection) as queries:
        append(world.thread, E.PiAssistant(dispatchId="d1", message={"content": []}))
    assert row(world.thread).status_rev == rev
    assert not any("status_rev" in q["sql"] for q in queries.captured_queries)


def test_now_returns_the_view_the_offset_and_the_status(world):
    client = world.client_for(world.member)
    m = post(client, world.thread, "@helper hi")
    append(world.thread, E.DirectorDecided(picked=[world.bot.id], upTo=m))
    append(world.thread, E.DispatchStarted(dispatchId="d1", agentId=world.bot.id, entryIds=[m]))
    body = client.get(f"/api/threads/{world.thread.id}/now").json()
    assert body["now"]["reply"]["agentId"] == world.bot.id
    assert body["status"]["state"] == "working"
    tail = client.get(f"/api/threads/{world.thread.id}/stream", {"offset": body["offset"]})
    assert tail.status_code == 200


def test_now_repairs_a_drifted_record(world):
    client = world.client_for(world.member)
    Thread.objects.filter(pk=world.thread.pk).update(status="blocked", status_message="stale")
    body = client.get(f"/api/threads/{world.thread.id}/now").json()
    assert body["status"]["state"] == "idle"
    assert row(world.thread).status == "idle"


def test_now_is_404_for_strangers(world):
    assert (
        world.client_for(world.stranger).get(f"/api/threads/{world.thread.id}/now").status_code
        == 404
    )


def test_the_sweep_recomputes_working_threads_whose_evidence_aged(world):
    m = post(world.client_for(world.member), world.thread, "@helper anyone?")
    append(world.thread, E.DirectorDecided(picked=[world.bot.id], upTo=m))
    assert row(world.thread).status == "working"
    later = row(world.thread).last_entry_ts + 11 * 60 * 1000
    assert sweep(at_ms=later) == 1
    assert row(world.thread).status == "idle"
    assert row(world.thread).status_message == "Nobody answered in time."


def test_the_sweep_finds_a_message_still_waiting_for_the_director(world):
    post(world.client_for(world.member), world.thread, "anyone?")
    assert row(world.thread).status == "idle"  # it names nobody: deciding, not working
    assert working_threads() == [world.thread.id]  # its wake may have been lost
    later = row(world.thread).last_entry_ts + 11 * 60 * 1000
    assert sweep(at_ms=later) == 1
    assert row(world.thread).status_message == "Nobody answered in time."
    assert working_threads() == []


def test_backfill_recomputes_every_live_thread(world, capsys):
    Thread.objects.update(status="error", status_message="made up")
    call_command("backfill_thread_status", "--house", "h")
    out = capsys.readouterr()
    assert "2 threads recomputed, 2 records changed." in out.out
    assert "[##############################] 2/2" in out.err
    assert set(Thread.objects.values_list("status", flat=True)) == {"idle"}


def test_a_stale_fold_never_overwrites_a_newer_record(world):
    stale = row(world.thread)  # read before anyone else writes
    post(world.client_for(world.member), world.thread, "@helper hi")
    fresh = row(world.thread)
    assert not write_status(stale, ThreadStatus("idle", "stale view", []))
    assert (row(world.thread).status, row(world.thread).status_rev) == (
        fresh.status,
        fresh.status_rev,
    )


def test_concurrent_trackers_leave_the_record_equal_to_the_fold(world):
    client = world.client_for(world.member)
    m = post(client, world.thread, "@helper go")
    steps = [
        E.DirectorDecided(picked=[world.bot.id], upTo=m),
        E.DispatchStarted(dispatchId="d1", agentId=world.bot.id, entryIds=[m]),
        E.DispatchPhase(dispatchId="d1", phase="tool", round=1),
        E.DispatchFinished(dispatchId="d1"),
        E.DirectorOutcome(upTo=m, picked=[], reason="Answered."),
    ]
    for payload in steps:
        append(world.thread, payload)

    barrier = threading.Barrier(4)

    def track():
        barrier.wait()
        try:
            for _ in range(3):
                sync_status(world.thread.id)
        finally:
            connection.close()

    workers = [threading.Thread(target=track) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    expected = sync_status(world.thread.id)
    assert (row(world.thread).status, row(world.thread).status_message) == (
        expected.state,
        expected.message,
    )


def test_house_status_is_rolled_up_from_live_threads(world):
    client = world.client_for(world.member)
    m = post(client, world.other_thread, "@helper urgent")
    append(world.other_thread, E.DirectorDecided(picked=[world.bot.id], upTo=m))
    archived = create_thread(house=world.house, title="Old", by=world.owner.agent)
    Thread.objects.filter(pk=archived.pk).update(status="blocked", archived_at="2026-01-01T00:00Z")
    body = client.get("/api/houses/h").json()["house"]
    assert body["status"] == "working"
    assert body["speaker"]["id"] == world.other_thread.id
    assert body["counts"] == {"blocked": 0, "working": 1, "error": 0, "done": 0, "idle": 1}
    listing = client.get("/api/houses").json()["houses"]
    assert [h["slug"] for h in listing] == ["h"]


def many_threads(house, n):
    Thread.objects.bulk_create(
        [
            Thread(house=house, title=f"t{i}", status=["idle", "working", "done"][i % 3])
            for i in range(n)
        ]
    )


@pytest.mark.parametrize("path", ["/api/houses", "/api/threads"])
def test_lists_issue_the_same_queries_for_1_and_1000_threads(path):
    owner = make_user("olive")
    small, big = make_house("small", owner=owner), make_house("big", owner=owner)
    client = Client()
    client.force_login(owner)
    many_threads(small, 1)
    with CaptureQueriesContext(connection) as one:
        assert client.get(path).status_code == 200
    many_threads(big, 1000)
    with CaptureQueriesContext(connection) as thousand:
        assert client.get(path).status_code == 200
    assert len(one) == len(thousand)
