"""The search box's language, read by a small hand-written tokenizer into a ``Query``.

    deploy "release notes" -rollback from:@ari in:demo after:2026-11-01 before:2026-12-01

Words and ``"phrases"`` must all match; ``-`` leaves a word, a phrase, ``from:`` or ``in:``
out. An unterminated quote runs to the end of the query. ``foo:bar`` with an operator arbe
doesn't know stays text. Terms with no letter or digit (``-``, ``""``, ``)``) are dropped.
Only a query that can't mean anything, or is too long, is refused (``BadQuery``, a 400).
The query is never handed to a database's own parser: each backend renders the ``Query``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

MAX_QUERY_CHARS = 500
MAX_TERMS = 16
OPERATORS = ("from", "in", "before", "after")
WORD = re.compile(r"\w")
# ASCII digits only: ``\d`` also takes other scripts' digits, which ``int()`` reads.
DATE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
# Entries are stamped in unix ms; outside these days a date means nothing here, and the
# day after the last one must still be a date (``after:9999-12-31`` overflowed: a 500).
FIRST_DAY = dt.date(1970, 1, 1)
LAST_DAY = dt.date(2999, 12, 31)
# Control characters are never part of a word; NUL can't even reach PostgreSQL.
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class BadQuery(ValueError):
    """A query arbe can't run; the message says what to change."""


@dataclass(frozen=True)
class Term:
    text: str
    phrase: bool = False
    negated: bool = False


@dataclass
class Query:
    terms: list[Term] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)  # from: values, "@" stripped
    not_authors: list[str] = field(default_factory=list)
    houses: list[str] = field(default_factory=list)  # in: values
    not_houses: list[str] = field(default_factory=list)
    before: dt.date | None = None  # ts < the start of this day (in the viewer's zone)
    after: dt.date | None = None  # ts >= the start of the next day (in the viewer's zone)

    @property
    def positive(self) -> list[Term]:
        return [t for t in self.terms if not t.negated]

    @property
    def negative(self) -> list[Term]:
        return [t for t in self.terms if t.negated]

    @property
    def has_filters(self) -> bool:
        return bool(self.authors or self.not_authors or self.houses or self.not_houses) or (
            self.before is not None or self.after is not None
        )


def parse_query(text: str, *, today: dt.date | None = None) -> Query:
    """``today`` is the viewer's day (``today_in`` their zone); UTC's when not given."""
    # Read ``text`` into a ``Query``, or raise ``BadQuery`` saying why it can't run.
    if len(text) > MAX_QUERY_CHARS:
        raise BadQuery(f"q: a search may be at most {MAX_QUERY_CHARS} characters.")
    query = Query()
    for negated, phrase, word in _tokens(CONTROL.sub(" ", text)):
        name, sep, value = word.partition(":")
        if not phrase and sep and name.lower() in OPERATORS:
            _filter(query, name.lower(), value, negated, today or dt.datetime.now(dt.UTC).date())
        elif WORD.search(word):
            query.terms.append(Term(word, phrase=phrase, negated=negated))
    if len(query.terms) > MAX_TERMS:
        raise BadQuery(f"q: at most {MAX_TERMS} words and phrases in one search.")
    if not query.positive and not query.has_filters:
        if query.negative:
            raise BadQuery("q: add a word to look for; -word only leaves words out.")
        raise BadQuery('q: nothing to search for: type a word, a "phrase" or from:@handle.')
    return query


def _tokens(text: str):
    """``(negated, phrase, text)`` for each whitespace-separated token; quotes group."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return
        negated = text[i] == "-"
        if negated:
            i += 1
        if i < n and text[i] == '"':
            end = text.find('"', i + 1)
            end = n if end < 0 else end
            yield negated, True, text[i + 1 : end].strip()
            i = end + 1
            continue
        start = i
        while i < n and not text[i].isspace():
            # An operator's value may be quoted: in:"Release team".
            if text[i] == '"' and text[start:i].endswith(":"):
                end = text.find('"', i + 1)
                end = n if end < 0 else end
                yield negated, False, text[start:i] + text[i + 1 : end]
                i = end + 1
                break
            i += 1
        else:
            yield negated, False, text[start:i]


def _filter(query: Query, name: str, value: str, negated: bool, today: dt.date) -> None:
    value = value.strip()
    if not value:
        raise BadQuery(f"q: {name}: needs a value, like {EXAMPLES[name]}.")
    if name == "from":
        (query.not_authors if negated else query.authors).append(value.lstrip("@").lower())
    elif name == "in":
        (query.not_houses if negated else query.houses).append(value.lower())
    else:
        if negated:
            other = "after" if name == "before" else "before"
            raise BadQuery(f"q: -{name}: can't be negated; use {other}: instead.")
        day = parse_day(value, today)
        if name == "before":
            query.before = day if query.before is None else min(query.before, day)
        else:
            query.after = day if query.after is None else max(query.after, day)


EXAMPLES = {
    "from": "from:@ari",
    "in": "in:demo",
    "before": "before:2026-12-01",
    "after": "after:2026-11-01",
}


def parse_day(value: str, today: dt.date) -> dt.date:
    word = value.lower()
    if word == "today":
        return today
    if word == "yesterday":
        return today - dt.timedelta(days=1)
    match = DATE.match(value)
    day = None
    try:
        if match:
            day = dt.date(*(int(g) for g in match.groups()))
    except ValueError:
        pass
    if day is None:
        raise BadQuery(f"q: {value!r} is not a date; write it as 2026-11-30, today or yesterday.")
    if not FIRST_DAY <= day <= LAST_DAY:
        raise BadQuery(f"q: {value!r} is out of range; dates run from {FIRST_DAY} to {LAST_DAY}.")
    return day


def today_in(zone: dt.tzinfo) -> dt.date:
    """The viewer's today: the date it is now in their zone."""
    return dt.datetime.now(zone).date()


def day_start_ms(day: dt.date, zone: dt.tzinfo = dt.UTC) -> int:
    """Unix ms at 00:00 of ``day`` in ``zone`` (UTC unless the viewer's zone is known)."""
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=zone).timestamp() * 1000)
