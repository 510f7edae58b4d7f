"""What each engine keeps: the stored tsvector and its GIN index, or the FTS5 table."""

import pytest
from django.db import connection

from search.backends import Plan, backend
from search.models import FTS_TABLE, SearchDoc
from search.query import Term
from threads.entries import Chat
from threads.lifecycle import new_entry
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def say(world, text) -> str:
    entry = new_entry(Chat(text=text), author=world.author.agent.id)
    stream_writer().append(world.thread.stream_name, entry)
    return entry.id


def hits(world, *terms, negative=()) -> list[str]:
    plan = Plan(
        houses=("%s", [world.house.id]),
        positive=[Term(t) for t in terms],
        negative=[Term(t) for t in negative],
    )
    return [row.entry_id for row in backend().page(plan)]


@pytest.mark.postgres
def test_postgres_stores_the_vector_behind_a_gin_index_without_fastupdate(world):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (make test-stack)")
    say(world, "Deploying the x-ray service")
    (sv,) = SearchDoc.objects.values_list("sv", flat=True)
    assert "'deploying'" in sv and "'x-ray'" in sv  # "simple": lower-cased, not stemmed
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT am.amname, c.reloptions FROM pg_class c JOIN pg_am am ON am.oid = c.relam"
            " WHERE c.relname = 'search_doc_sv'"
        )
        assert cursor.fetchone() == ("gin", ["fastupdate=off"])


@pytest.mark.postgres
def test_postgres_follows_the_search_language(world, settings):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (make test-stack)")
    settings.SEARCH_LANGUAGE = "english"
    deployed = say(world, "We deployed it")
    assert hits(world, "deploying") == [deployed]  # stems both sides
    settings.SEARCH_LANGUAGE = "simple"
    assert hits(world, "deploying") == []


def test_sqlite_keeps_an_fts5_row_per_document(world):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite only")
    first, second = say(world, "alpha beta"), say(world, "beta gamma")
    docs = list(SearchDoc.objects.order_by("pk").values_list("pk", "body"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT rowid, body FROM {FTS_TABLE} WHERE rowid IN (%s, %s) ORDER BY rowid",
            [pk for pk, _ in docs],
        )
        assert cursor.fetchall() == docs
    assert hits(world, "beta") == [second, first]


@pytest.mark.parametrize(
    "term",
    ['"', 'a"b', "AND", "OR", "NOT", "NEAR", "x-ray", "col:umn", "*", "^start", "a+b", "(", ")"],
)
def test_any_term_is_taken_literally(world, term):
    """Nothing typed reaches the engine's own query syntax (FTS5 raises on most of these)."""
    mine = say(world, f"literal {term} here")
    assert mine in hits(world, "literal", term) or hits(world, "literal", term) == []
    assert hits(world, "literal", negative=[term]) in ([], [mine])
