"""The search index follows every write path, tombstones, and rebuilds from the logs."""

import io
import json
import logging

import pytest
from django.core.management import call_command
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search import backends
from search.backends import Plan
from search.models import FTS_TABLE, SearchDoc
from search.query import Term
from tests.factories import make_house
from threads.entries import Chat, EntryDeleted
from threads.lifecycle import create_thread, new_entry
from threads.projection import chat_projection
from threads.reading import read_entries
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def post(world, user, thread, text):
    response = world.client_for(user).post(
        f"/api/threads/{thread.id}/entries",
        {"payload": {"type": "chat", "text": text}},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()["entry"]["id"]


def indexed(thread) -> dict[str, str]:
    return dict(SearchDoc.objects.filter(thread=thread).values_list("entry_id", "body"))


def found(words: str, house_ids) -> set[int]:
    house_ids = list(house_ids)
    plan = Plan(
        houses=(", ".join(["%s"] * len(house_ids)), house_ids),
        positive=[Term(w) for w in words.split()],
        limit=1000,
    )
    return {row.id for row in backends.backend().page(plan)}


def test_a_post_is_indexed_with_its_author_house_and_time(world):
    entry_id = post(world, world.author, world.thread, "Deploy the postgres upgrade tonight")
    doc = SearchDoc.objects.get(entry_id=entry_id)
    assert (doc.thread_id, doc.house_id, doc.author_id) == (
        world.thread.id,
        world.house.id,
        world.author.agent.id,
    )
    assert doc.body == "Deploy the postgres upgrade tonight"
    assert found("postgres upgrade", [world.house.id]) == {doc.id}


def test_a_bots_chat_through_the_recency_writer_is_indexed(world):
    entry = new_entry(Chat(text="I ran the migration"), author=world.bot.id)
    stream_writer().append(world.thread.stream_name, entry)
    assert indexed(world.thread) == {entry.id: "I ran the migration"}
    assert SearchDoc.objects.get(entry_id=entry.id).author_id == world.bot.id


def test_a_member_token_through_the_stream_proxy_is_indexed(world):
    client = world.token_client(world.member)
    body = [{"payload": {"type": "chat", "text": f"batch message {n}"}} for n in range(3)]
    response = client.post(
        f"/api/stream/{world.thread.stream_name}",
        json.dumps(body),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    ids = [e["id"] for e in response.json()["entries"]]
    assert set(indexed(world.thread)) == set(ids)
    assert set(SearchDoc.objects.values_list("author_id", flat=True)) == {world.member.agent.id}


def test_only_chat_is_indexed(world):
    from threads.entries import ThreadRenamed

    stream_writer().append(world.thread.stream_name, new_entry(ThreadRenamed(title="Renamed")))
    assert indexed(world.thread) == {}


def test_a_tombstone_removes_the_message_at_once(world):
    keep = post(world, world.author, world.thread, "keep this deploy note")
    gone = post(world, world.author, world.thread, "delete this deploy note")
    response = world.client_for(world.author).delete(
        f"/api/threads/{world.thread.id}/entries/{gone}"
    )
    assert response.status_code == 200
    assert set(indexed(world.thread)) == {keep}
    assert len(found("deploy", [world.house.id])) == 1
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH 'delete'")
            assert cursor.fetchone()[0] == 0


def test_a_retried_post_is_indexed_once(world):
    client = world.client_for(world.author)
    for _ in range(2):
        client.post(
            f"/api/threads/{world.thread.id}/entries",
            {"payload": {"type": "chat", "text": "only once"}, "id": "client-1"},
            content_type="application/json",
        )
    assert list(indexed(world.thread)) == ["client-1"]


def test_an_index_failure_never_fails_the_append(world, monkeypatch, caplog):
    def broken(self, thread_id, docs, gone):
        raise RuntimeError("index is down")

    monkeypatch.setattr(backends.PostgresBackend, "apply", broken)
    monkeypatch.setattr(backends.SqliteBackend, "apply", broken)
    with caplog.at_level(logging.ERROR, logger="search.index"):
        entry_id = post(world, world.author, world.thread, "still posted")
    entries, _ = read_entries(world.thread.id)
    assert entry_id in {e.id for e in entries}
    assert "could not update the search index" in caplog.text
    monkeypatch.undo()
    # The cache is repaired from the log.
    call_command("reindex_search", stdout=io.StringIO(), stderr=io.StringIO())
    assert set(indexed(world.thread)) == {entry_id}


def test_reindex_rebuilds_from_the_logs_with_a_progress_bar(world, capsys):
    a = post(world, world.author, world.thread, "first words")
    b = post(world, world.member, world.other_thread, "second words")
    gone = post(world, world.author, world.thread, "third words")
    world.client_for(world.owner).delete(f"/api/threads/{world.thread.id}/entries/{gone}")
    SearchDoc.objects.all().delete()  # a lost cache (FTS rows stay behind on SQLite)
    call_command("reindex_search")
    out = capsys.readouterr()
    assert "2 threads reindexed, 2 messages searchable." in out.out
    assert "[##############################] 2/2 threads" in out.err
    assert set(SearchDoc.objects.values_list("entry_id", flat=True)) == {a, b}
    assert found("words", [world.house.id]) == set(SearchDoc.objects.values_list("id", flat=True))


def test_reindex_one_house_leaves_the_others(world):
    elsewhere = make_house("third", owner=world.owner)
    there = create_thread(house=elsewhere, title="There", by=world.owner.agent)
    post(world, world.owner, there, "over there")
    here = post(world, world.author, world.thread, "over here")
    SearchDoc.objects.filter(entry_id=here).delete()
    call_command("reindex_search", "--house", "h", stderr=io.StringIO())
    assert SearchDoc.objects.count() == 2
    with pytest.raises(Exception, match="No house"):
        call_command("reindex_search", "--house", "nope")


words = st.sampled_from(["alpha", "beta", "gamma", "delta", "deploy", "x-ray", "naïve"])
ops = st.lists(
    st.one_of(
        st.tuples(st.just("post"), st.lists(words, min_size=1, max_size=4).map(" ".join)),
        st.tuples(st.just("delete"), st.integers(min_value=0, max_value=20)),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=ops)
def test_the_index_equals_a_fold_of_the_log(world, ops):
    """After any mix of posts and deletions, the index holds exactly the chat the log
    shows, and each word finds exactly the messages that contain it."""
    thread = create_thread(house=world.house, title="Random", by=world.owner.agent)
    posted: list[str] = []
    for op, arg in ops:
        if op == "post":
            entry = new_entry(Chat(text=arg), author=world.author.agent.id)
            stream_writer().append(thread.stream_name, entry)
            posted.append(entry.id)
        elif posted:
            target = posted[arg % len(posted)]
            tombstone = new_entry(EntryDeleted(entryId=target), author=world.author.agent.id)
            stream_writer().append(thread.stream_name, tombstone)
    entries, _ = read_entries(thread.id)
    fold = {e.id: e.payload.text for e in chat_projection(entries)}
    assert indexed(thread) == fold
    ids = dict(SearchDoc.objects.filter(thread=thread).values_list("id", "entry_id"))
    for word in ("alpha", "deploy", "ray", "naïve"):
        hits = {ids[i] for i in found(word, [world.house.id]) if i in ids}
        expected = {k for k, text in fold.items() if word in text.replace("-", " ").split()}
        assert hits == expected, word


def test_a_message_appended_while_its_thread_is_rebuilt_stays(world, monkeypatch):
    from search.management.commands import reindex_search

    real, late = reindex_search.read_entries, []

    def read_then_append(thread_id):
        answer = real(thread_id)
        if thread_id == world.thread.id and not late:  # after the read, before the rows
            entry = new_entry(Chat(text="appended meanwhile"), author=world.author.agent.id)
            stream_writer().append(world.thread.stream_name, entry)
            late.append(entry.id)
        return answer

    monkeypatch.setattr(reindex_search, "read_entries", read_then_append)
    early = post(world, world.author, world.thread, "before the rebuild")
    call_command("reindex_search", stdout=io.StringIO(), stderr=io.StringIO())
    assert set(indexed(world.thread)) == {early, *late}
