"""Running a search for a viewer: resolve the query against what they may see, ask the
backend, and shape one page of results.

Every house in a plan comes from ``houses.access.houses_of``: a house the viewer isn't
in never appears, ``in:`` resolves only among their houses, and an unknown house or
handle simply finds nothing (it says nothing about whether it exists). A private thread
the viewer isn't in is left out (``houses.access.hidden_from``): its messages aren't found.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from dataclasses import dataclass

from django.db.models import Q

from houses.access import hidden_from, houses_of
from houses.models import Agent, House
from search.backends import RELEVANCE_WINDOW, START, STOP, Plan, Row, backend
from search.query import BadQuery, Query, day_start_ms, parse_query, today_in

SORTS = ("newest", "relevance")
MAX_LIMIT = 50
SNIPPET_CHARS = 240
CURSOR = re.compile(r"^(?:n(?P<id>\d{1,18})|r(?P<offset>\d{1,4}))$")


@dataclass(frozen=True)
class Author:
    id: str
    handle: str
    display: str
    is_bot: bool


@dataclass(frozen=True)
class Hit:
    id: int
    entry_id: str
    thread_id: str
    thread_title: str
    house_slug: str
    house_name: str
    author: Author
    ts: int
    snippet: str  # HTML: escaped text, matches in <mark>

    @property
    def url(self) -> str:
        return f"/threads/{self.thread_id}/#entry-{self.entry_id}"

    @property
    def when(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.ts / 1000, tz=dt.UTC)


@dataclass(frozen=True)
class Results:
    query: Query
    hits: list[Hit]
    next_cursor: str | None
    sort: str


def run_search(
    user,
    viewer_agent_id: str | None,
    text: str,
    *,
    house: House | None = None,
    sort: str = "newest",
    cursor: str | None = None,
    limit: int = 20,
    zone: dt.tzinfo = dt.UTC,
) -> Results:
    """One page of results for ``text``; ``house`` (already access-checked) narrows it.
    Days (``after:``, ``before:``, ``today``) are the viewer's, in ``zone``."""
    if sort not in SORTS:
        raise BadQuery("sort: must be 'newest' or 'relevance'.")
    query = parse_query(text, today=today_in(zone))
    plan = plan_for(user, viewer_agent_id, query, house, zone)
    plan.relevance = sort == "relevance" and bool(query.positive)
    limit = max(1, min(limit, MAX_LIMIT))
    if cursor:
        page_from(plan, cursor)
    if plan.relevance:
        limit = min(limit, RELEVANCE_WINDOW - plan.offset)
    if plan is NOTHING or limit <= 0:
        return Results(query, [], None, sort)
    plan.limit = limit + 1
    rows = backend().page(plan)
    more, rows = len(rows) > limit, rows[:limit]
    hits = [hit_of(row) for row in rows]
    next_cursor = None
    if more and hits:
        next_cursor = f"r{plan.offset + len(hits)}" if plan.relevance else f"n{hits[-1].id}"
    return Results(query, hits, next_cursor, sort)


# A plan that can't match anything (an unknown house or handle, an empty date range).
NOTHING = Plan(houses=("NULL", []))


def plan_for(
    user, viewer_agent_id: str | None, query: Query, house: House | None, zone=dt.UTC
) -> Plan:
    """The plan for ``query``, or ``NOTHING``. The viewer's houses stay a subquery of
    ``houses_of`` unless ``in:`` or ``house`` narrow them (then they are read first)."""
    houses = houses_of(user).order_by()
    if house is not None:
        houses = houses.filter(pk=house.pk)
    if query.houses or query.not_houses:
        rows = list(houses.values_list("id", "slug", "name"))
        if query.houses:
            wanted = set(query.houses)
            rows = [h for h in rows if {h[1].lower(), h[2].lower()} & wanted]
        unwanted = set(query.not_houses)
        house_ids = [h[0] for h in rows if not {h[1].lower(), h[2].lower()} & unwanted]
        if not house_ids:
            return NOTHING
        scope = (", ".join(["%s"] * len(house_ids)), house_ids)
    else:
        sql, params = houses.values("id").query.sql_with_params()
        scope = (sql, list(params))
    hidden, hidden_params = hidden_from(user).query.sql_with_params()
    plan = Plan(
        houses=scope,
        hidden=(hidden, list(hidden_params)),
        positive=query.positive,
        negative=query.negative,
    )
    if query.authors:
        plan.authors = _agent_ids(query.authors, houses, viewer_agent_id)
        if not plan.authors:
            return NOTHING
    if query.not_authors:
        plan.not_authors = _agent_ids(query.not_authors, houses, viewer_agent_id)
    if query.before is not None:
        plan.ts_max = day_start_ms(query.before, zone)
    if query.after is not None:
        plan.ts_min = day_start_ms(query.after + dt.timedelta(days=1), zone)
    if _empty_range(plan):
        return NOTHING
    return plan


def _agent_ids(handles: list[str], houses, viewer: str | None) -> list[str]:
    """People by handle, bots by handle in the viewer's houses; ``me`` is the viewer."""
    ids = {viewer} if "me" in handles and viewer else set()
    names = [h for h in handles if h != "me"]
    if names:
        found = Agent.objects.filter(
            Q(kind=Agent.Kind.PERSON) | Q(kind=Agent.Kind.BOT, house__in=houses.values("id")),
            handle__in=names,
        ).values_list("id", flat=True)
        ids.update(found)
    return sorted(ids)


def page_from(plan: Plan, cursor: str) -> None:
    match = CURSOR.match(cursor)
    if match is None or (match["offset"] is not None) != plan.relevance:
        raise BadQuery("cursor: not a cursor this search gave out; start again without it.")
    if plan.relevance:
        plan.offset = int(match["offset"])
    else:
        plan.before_id = int(match["id"])


def _empty_range(plan: Plan) -> bool:
    return plan.ts_min is not None and plan.ts_max is not None and plan.ts_min >= plan.ts_max


def hit_of(row: Row) -> Hit:
    if row.author_handle is None:
        author = Author(row.author_id, "unknown", "Unknown", False)
    else:
        author = Author(row.author_id, row.author_handle, row.author_name, row.author_kind == "bot")
    return Hit(
        id=row.id,
        entry_id=row.entry_id,
        thread_id=row.thread_id,
        thread_title=row.thread_title,
        house_slug=row.house_slug,
        house_name=row.house_name,
        author=author,
        ts=row.ts,
        snippet=highlight(row.marked) if row.marked is not None else plain(row.body),
    )


def highlight(marked: str) -> str:
    """Escaped, sentinel-marked text as HTML: the sentinels become ``<mark>``; an unclosed
    one is closed."""
    text = marked.replace(START, "<mark>").replace(STOP, "</mark>")
    opened = text.count("<mark>") - text.count("</mark>")
    return text + "</mark>" * max(opened, 0)


def plain(body: str) -> str:
    text = " ".join(body.split())
    if len(text) > SNIPPET_CHARS:
        text = text[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"
    return html.escape(text)
