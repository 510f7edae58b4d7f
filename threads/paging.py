"""Thread lists a page at a time: newest activity first, a cursor on (last activity, id).

The cursor names the last row a page ended with, so rows that move up while someone
pages (news in a thread) never make a later page repeat or skip a row below them. It is
opaque to clients: ``<last_entry_ts>.<id>`` (empty time for a thread with no entries).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db.models import F, Q, QuerySet

from threads.models import Thread

PAGE = 50
MAX_PAGE = 500
CURSOR = re.compile(r"^(\d{0,16})\.([A-Za-z0-9_-]{1,16})$")
ORDER = (F("last_entry_ts").desc(nulls_last=True), F("id").desc())


class BadCursor(ValueError):
    """A cursor this server did not hand out."""


@dataclass(frozen=True)
class Page:
    rows: list[Thread]
    next: str  # the cursor for the page after, empty at the end


def cursor_of(thread: Thread) -> str:
    ts = "" if thread.last_entry_ts is None else str(thread.last_entry_ts)
    return f"{ts}.{thread.id}"


def after(cursor: str) -> Q:
    """Rows below the row ``cursor`` names, in ``ORDER``."""
    match = CURSOR.match(cursor)
    if match is None:
        raise BadCursor("That cursor is not one this server handed out.")
    ts, thread_id = match.groups()
    if not ts:
        return Q(last_entry_ts__isnull=True, id__lt=thread_id)
    ts = int(ts)
    return (
        Q(last_entry_ts__lt=ts)
        | Q(last_entry_ts=ts, id__lt=thread_id)
        | Q(last_entry_ts__isnull=True)
    )


def limit_of(value: str | None, default: int = PAGE) -> int:
    try:
        n = int(value) if value else default
    except ValueError:
        raise BadCursor("limit must be a whole number.") from None
    return max(1, min(n, MAX_PAGE))


def page_of(threads: QuerySet, cursor: str = "", limit: int = PAGE) -> Page:
    """One page of ``threads`` (one query): ``limit`` rows and the cursor after them."""
    if cursor:
        threads = threads.filter(after(cursor))
    rows = list(threads.order_by(*ORDER)[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, cursor_of(rows[-1]) if more and rows else "")
