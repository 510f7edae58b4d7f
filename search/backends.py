"""One interface over the two full-text engines, chosen by ``connection.vendor``.

- PostgreSQL: ``search_doc.sv`` is a stored ``tsvector`` (config ``SEARCH_LANGUAGE``,
  default ``simple``) behind a GIN index; each term is a ``phraseto_tsquery`` joined with
  ``&&`` / ``!!``; relevance is ``ts_rank`` over the positive terms; snippets come from
  ``ts_headline`` on the page's rows only.
- SQLite: a regular FTS5 table ``search_fts`` whose rowid is ``search_doc.id``, written and
  deleted beside it; every term is quoted (``"x-ray"``, ``"AND"`` match literally);
  relevance is ``bm25``; snippets come from ``snippet()``.

Both order newest first by ``id`` (append order) with a keyset cursor, and put the
viewer's houses in the same statement. Highlights come back between the sentinels
``\\x02``/``\\x03`` in text that is already HTML-escaped (``ts_headline`` is given escaped
text, since it drops what looks like tags; ``snippet()``'s output is escaped after), and
``search.service`` swaps in ``<mark>``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db import connection, transaction

from search.models import FTS_TABLE
from search.query import Term

START, STOP = "\x02", "\x03"
CLEAN = re.compile("[\x00\x02\x03]")
# Chat is at most 20,000 characters; the cap also keeps a tsvector far below 1 MB.
MAX_INDEXED_CHARS = 20_000
RELEVANCE_WINDOW = 200  # "best match" ranks this many at most, then pages by offset
# Short messages are shown whole (HighlightAll keeps every character); longer ones as up
# to two fragments, which may trim short words at their ends.
WHOLE_CHARS = 400
WHOLE = f"StartSel={START}, StopSel={STOP}, HighlightAll=true"
HEADLINE = f"StartSel={START}, StopSel={STOP}, MaxWords=28, MinWords=12, ShortWord=0, " + (
    'MaxFragments=2, FragmentDelimiter=" … "'
)


@dataclass(frozen=True)
class Doc:
    """A chat entry to index."""

    entry_id: str
    author_id: str
    ts: int
    body: str


@dataclass
class Plan:
    """A query resolved for one viewer: what the backend runs."""

    # The viewer's houses as SQL: a subquery from ``houses.access.houses_of``, or ids.
    houses: tuple[str, list]
    # Private threads of those houses the viewer isn't in (``houses.access.hidden_from``).
    hidden: tuple[str, list] | None = None
    positive: list[Term] = field(default_factory=list)
    negative: list[Term] = field(default_factory=list)
    authors: list[str] | None = None  # None: anyone
    not_authors: list[str] = field(default_factory=list)
    ts_min: int | None = None  # inclusive
    ts_max: int | None = None  # exclusive
    relevance: bool = False
    before_id: int | None = None  # newest first: ids below this
    offset: int = 0  # relevance: rank position to start at
    limit: int = 20


@dataclass(frozen=True)
class Row:
    """One result as the backend reads it: the document, its thread, house and author."""

    id: int
    entry_id: str
    thread_id: str
    thread_title: str
    house_slug: str
    house_name: str
    author_id: str
    author_handle: str | None  # None: no such agent (any more)
    author_name: str | None
    author_kind: str | None
    ts: int
    body: str
    marked: str | None  # the excerpt, HTML-escaped, matches between the sentinels; if terms


ESCAPED_BODY = (
    "replace(replace(replace(replace(replace(d.body, '&', '&amp;'), '<', '&lt;'),"
    " '>', '&gt;'), '\"', '&quot;'), '''', '&#x27;')"
)

# What a page of results reads beside the document; ``page`` is the ids in result order.
ROW_COLUMNS = (
    "d.id, d.entry_id, d.thread_id, t.title, h.slug, h.name, d.author_id, a.handle,"
    " a.display_name, a.kind, d.ts, d.body"
)
ROW_JOINS = (
    " JOIN threads_thread t ON t.id = d.thread_id JOIN houses_house h ON h.id = d.house_id"
    " LEFT JOIN houses_agent a ON a.id = d.author_id"
)


def clean(text: str) -> str:
    """What is indexed: the text capped, without the highlight sentinels or NUL."""
    return CLEAN.sub(" ", text[:MAX_INDEXED_CHARS])


def placeholders(values: Sequence) -> str:
    return ", ".join(["%s"] * len(values))


class SearchBackend:
    """Index, delete, rebuild and query; every method runs on the default connection."""

    def apply(self, thread_id: str, docs: Sequence[Doc], gone: Sequence[str]) -> None:
        """Index ``docs`` and delete the documents of the entries ``gone`` (tombstoned)."""
        raise NotImplementedError

    def rebuild(self, thread_id: str, house_id: int, docs: Sequence[Doc], upto: int) -> None:
        """Replace a thread's documents with ``docs`` (its log's fold, in log order).

        Only rows up to id ``upto`` (the highest when the log was read) are replaced: a
        message appended while the rebuild ran was indexed at the seam and stays."""
        raise NotImplementedError

    def clear_all(self) -> None:
        raise NotImplementedError

    def page(self, plan: Plan) -> list[Row]:
        """Up to ``plan.limit`` matching documents, in result order."""
        raise NotImplementedError

    # Shared SQL ---------------------------------------------------------------------

    def _filters(self, plan: Plan) -> tuple[list[str], list]:
        house_sql, house_params = plan.houses
        where = [
            f"d.house_id IN ({house_sql})",
            # Archived threads are few: a hashed set the planner can't turn into a join order.
            "d.thread_id NOT IN (SELECT id FROM threads_thread WHERE archived_at IS NOT NULL)",
        ]
        params: list = list(house_params)
        if plan.hidden is not None:
            where.append(f"d.thread_id NOT IN ({plan.hidden[0]})")
            params += plan.hidden[1]
        if plan.authors is not None:
            where.append(f"d.author_id IN ({placeholders(plan.authors)})")
            params += plan.authors
        if plan.not_authors:
            where.append(f"d.author_id NOT IN ({placeholders(plan.not_authors)})")
            params += plan.not_authors
        if plan.ts_min is not None:
            where.append("d.ts >= %s")
            params.append(plan.ts_min)
        if plan.ts_max is not None:
            where.append("d.ts < %s")
            params.append(plan.ts_max)
        if not plan.relevance and plan.before_id is not None:
            where.append("d.id < %s")
            params.append(plan.before_id)
        return where, params

    def _rows(self, sql: str, params: list) -> list[Row]:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [Row(*row) for row in cursor.fetchall()]


class PostgresBackend(SearchBackend):
    @property
    def config(self) -> str:
        return settings.SEARCH_LANGUAGE

    def _tsquery(self, terms: Sequence[Term], joiner: str = " && ") -> tuple[str, list]:
        parts = ["phraseto_tsquery(%s::regconfig, %s)"] * len(terms)
        params = [p for t in terms for p in (self.config, t.text)]
        return "(" + joiner.join(parts) + ")", params

    def _match(self, plan: Plan) -> tuple[str, list]:
        """The ``tsquery`` of all terms: positives ANDed, each negative as ``!!``."""
        parts, params = [], []
        for term in plan.positive:
            parts.append("phraseto_tsquery(%s::regconfig, %s)")
            params += [self.config, term.text]
        for term in plan.negative:
            parts.append("!! phraseto_tsquery(%s::regconfig, %s)")
            params += [self.config, term.text]
        return "(" + " && ".join(parts) + ")", params

    def apply(self, thread_id: str, docs: Sequence[Doc], gone: Sequence[str]) -> None:
        statements, params = [], []
        if docs:
            statements.append(
                "INSERT INTO search_doc (entry_id, thread_id, house_id, author_id, ts, body, sv)"
                " SELECT v.e, t.id, t.house_id, v.a, v.ts, v.b, to_tsvector(%s::regconfig, v.b)"
                " FROM threads_thread t,"
                " unnest(%s::text[], %s::text[], %s::bigint[], %s::text[]) AS v(e, a, ts, b)"
                " WHERE t.id = %s ON CONFLICT (thread_id, entry_id) DO NOTHING"
            )
            params += [
                self.config,
                [d.entry_id for d in docs],
                [d.author_id for d in docs],
                [d.ts for d in docs],
                [clean(d.body) for d in docs],
                thread_id,
            ]
        if gone:
            statements.append("DELETE FROM search_doc WHERE thread_id = %s AND entry_id = ANY(%s)")
            params += [thread_id, list(gone)]
        with connection.cursor() as cursor:
            if connection.in_atomic_block:
                # Inside the caller's transaction: a savepoint, so a failure here can't
                # poison it; its commit is the caller's.
                with transaction.atomic():
                    cursor.execute("; ".join(statements), params)
                return
            # One round trip, its own transaction, committed without waiting for the WAL
            # flush: the index is a cache of logs that are durable on their own, and a
            # crash can lose at most the last moment of it (``reindex_search`` repairs).
            cursor.execute("SET LOCAL synchronous_commit TO OFF; " + "; ".join(statements), params)

    def rebuild(self, thread_id: str, house_id: int, docs: Sequence[Doc], upto: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "DELETE FROM search_doc WHERE thread_id = %s AND id <= %s", [thread_id, upto]
            )
            for start in range(0, len(docs), 2000):
                chunk = docs[start : start + 2000]
                cursor.execute(
                    "INSERT INTO search_doc (entry_id, thread_id, house_id, author_id, ts, body,"
                    " sv) SELECT v.e, %s, %s, v.a, v.ts, v.b, to_tsvector(%s::regconfig, v.b)"
                    " FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::text[])"
                    " AS v(e, a, ts, b) ON CONFLICT (thread_id, entry_id) DO NOTHING",
                    [
                        thread_id,
                        house_id,
                        self.config,
                        [d.entry_id for d in chunk],
                        [d.author_id for d in chunk],
                        [d.ts for d in chunk],
                        [clean(d.body) for d in chunk],
                    ],
                )

    def clear_all(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE search_doc")

    def page(self, plan: Plan) -> list[Row]:
        """One round trip: the matching ids (limited) in a subquery, then their rows and
        excerpts, so ``ts_headline`` runs on the page only."""
        where, params = self._filters(plan)
        match_params: list = []
        if plan.positive:
            match, match_params = self._match(plan)
            where.insert(0, f"d.sv @@ {match}")
        elif plan.negative:
            match, match_params = self._tsquery(plan.negative, " || ")
            where.insert(0, f"NOT (d.sv @@ {match})")
        rank_sql, rank_params, order = "0", [], "d.id DESC"
        if plan.relevance and plan.positive:
            rank_sql, rank_params = self._tsquery(plan.positive)
            rank_sql = f"ts_rank(d.sv, {rank_sql})"
            order = "r DESC, d.id DESC"
        inner = (
            f"SELECT d.id, {rank_sql} AS r FROM search_doc d WHERE {' AND '.join(where)}"
            f" ORDER BY {order} LIMIT %s OFFSET %s"
        )
        inner_params = rank_params + match_params + params + [plan.limit, plan.offset]
        marked, marked_params = "NULL", []
        if plan.positive:
            query, marked_params = self._tsquery(plan.positive)
            # ts_headline drops what its parser takes for tags (<b>, <img …>) and escapes
            # nothing: it is handed the text already escaped, as html.escape would.
            marked = (
                f"ts_headline(%s::regconfig, {ESCAPED_BODY}, {query},"
                f" CASE WHEN length(d.body) <= {WHOLE_CHARS} THEN %s ELSE %s END)"
            )
            marked_params = [self.config, *marked_params, WHOLE, HEADLINE]
        sql = (
            f"SELECT {ROW_COLUMNS}, {marked} FROM ({inner}) page"
            f" JOIN search_doc d ON d.id = page.id{ROW_JOINS}"
            f" ORDER BY page.r DESC, page.id DESC"
        )
        return self._rows(sql, marked_params + inner_params)


def fts_phrase(term: Term) -> str:
    """A term as an FTS5 string: always quoted, inner quotes doubled, so nothing the
    viewer typed is read as FTS5 syntax."""
    return '"' + term.text.replace('"', '""') + '"'


def fts_expression(positive: Sequence[Term], negative: Sequence[Term] = ()) -> str:
    expression = "(" + " AND ".join(fts_phrase(t) for t in positive) + ")"
    return expression + "".join(f" NOT {fts_phrase(t)}" for t in negative)


class SqliteBackend(SearchBackend):
    def apply(self, thread_id: str, docs: Sequence[Doc], gone: Sequence[str]) -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            for d in docs:
                body = clean(d.body)
                cursor.execute(
                    "INSERT INTO search_doc (entry_id, thread_id, house_id, author_id, ts, body)"
                    " SELECT %s, t.id, t.house_id, %s, %s, %s FROM threads_thread t"
                    " WHERE t.id = %s ON CONFLICT (thread_id, entry_id) DO NOTHING RETURNING id",
                    [d.entry_id, d.author_id, d.ts, body, thread_id],
                )
                row = cursor.fetchone()
                if row is not None:
                    # REPLACE: a rowid left behind by a table emptied without this one.
                    cursor.execute(
                        f"INSERT OR REPLACE INTO {FTS_TABLE} (rowid, body) VALUES (%s, %s)",
                        [row[0], body],
                    )
            if gone:
                self._drop(
                    cursor,
                    f"thread_id = %s AND entry_id IN ({placeholders(gone)})",
                    [thread_id, *gone],
                )

    def _drop(self, cursor, where: str, params: list) -> None:
        cursor.execute(
            f"DELETE FROM {FTS_TABLE} WHERE rowid IN (SELECT id FROM search_doc WHERE {where})",
            params,
        )
        cursor.execute(f"DELETE FROM search_doc WHERE {where}", params)

    def rebuild(self, thread_id: str, house_id: int, docs: Sequence[Doc], upto: int) -> None:
        with connection.cursor() as cursor:
            self._drop(cursor, "thread_id = %s AND id <= %s", [thread_id, upto])
        self.apply(thread_id, docs, ())

    def clear_all(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {FTS_TABLE}")
            cursor.execute("DELETE FROM search_doc")

    def page(self, plan: Plan) -> list[Row]:
        """Ids from FTS5 (driving the query: ``ORDER BY rowid DESC`` follows its index),
        then their rows, then excerpts for those rows only. Embedded: round trips are free."""
        ids = self._find(plan)
        if not ids:
            return []
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {ROW_COLUMNS}, NULL FROM search_doc d{ROW_JOINS}"
                f" WHERE d.id IN ({placeholders(ids)})",
                ids,
            )
            rows = {row[0]: Row(*row) for row in cursor.fetchall()}
            if plan.positive:
                cursor.execute(
                    f"SELECT rowid, snippet({FTS_TABLE}, 0, %s, %s, '…', 24) FROM {FTS_TABLE}"
                    f" WHERE {FTS_TABLE} MATCH %s AND rowid IN ({placeholders(ids)})",
                    [START, STOP, fts_expression(plan.positive), *ids],
                )
                for pk, marked in cursor.fetchall():
                    if pk in rows:
                        rows[pk] = replace(rows[pk], marked=html.escape(marked))
        return [rows[pk] for pk in ids if pk in rows]

    def _find(self, plan: Plan) -> list[int]:
        where, params = self._filters(plan)
        if plan.positive:
            sql = (
                f"SELECT d.id FROM {FTS_TABLE} f JOIN search_doc d ON d.id = f.rowid"
                f" WHERE {FTS_TABLE} MATCH %s AND " + " AND ".join(where)
            )
            params = [fts_expression(plan.positive, plan.negative), *params]
            order = "f.rank, d.id DESC" if plan.relevance else "f.rowid DESC"
        else:
            sql = "SELECT d.id FROM search_doc d"
            if plan.negative:
                negative = " OR ".join(fts_phrase(t) for t in plan.negative)
                where.insert(
                    0, f"d.id NOT IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)"
                )
                params = [negative, *params]
            sql += " WHERE " + " AND ".join(where)
            order = "d.id DESC"
        sql += f" ORDER BY {order} LIMIT %s OFFSET %s"
        with connection.cursor() as cursor:
            cursor.execute(sql, [*params, plan.limit, plan.offset])
            return [row[0] for row in cursor.fetchall()]


def backend() -> SearchBackend:
    """The backend for the default database."""
    return PostgresBackend() if connection.vendor == "postgresql" else SqliteBackend()
