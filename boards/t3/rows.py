"""Board rows and the small value helpers the normalizer folds with.

A row is a ``dict`` with the display fields ``thread_id, title, state, last_turn_at,
last_message_snippet, host`` and one bookkeeping entry, ``"__meta__"``, which
``repr()``, ``str()`` and ``Row.display()`` leave out. Cached rows must keep it: it
is what stops a late completion of an older run, or an edit of an old message,
from replacing the current summary.
"""

from __future__ import annotations

from datetime import UTC, datetime

import regex

META = "__meta__"
FIELDS = ("thread_id", "title", "state", "last_turn_at", "last_message_snippet", "host")
_GRAPHEME = regex.compile(r"\X")


class Row(dict):
    """A board row; ``"__meta__"`` is real data but never shown.

    ``__meta__`` holds ``run`` (id, ordinal, status, requested_at, work_started_at,
    started_at, completed_at, attempts), ``message`` (id, created_at, updated_at),
    ``run_state`` (the state the row shows when it is not archived), ``archived``
    and ``sequence`` (the newest stream cursor folded into the row).
    """

    __slots__ = ()

    @classmethod
    def blank(cls, thread_id: str, host: str) -> Row:
        row = cls.fromkeys(FIELDS)
        row.update(thread_id=thread_id, host=host)
        row[META] = {}
        return row

    @property
    def meta(self) -> dict:
        return self.get(META) or {}

    def display(self) -> dict:
        """The display fields only."""
        return {key: value for key, value in self.items() if key != META}

    def copy(self) -> Row:
        """A copy whose meta can be changed without touching this row's."""
        row = Row(self)
        row[META] = {key: _copied(value) for key, value in self.meta.items()}
        return row

    def __repr__(self) -> str:
        return f"Row({self.display()!r})"

    __str__ = __repr__


def _copied(value):
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def snippet(text, length: int) -> str | None:
    """Whitespace collapsed to single spaces, at most ``length`` grapheme clusters."""
    if not isinstance(text, str):
        return None
    collapsed = " ".join(text.split())
    if len(collapsed) <= length:  # fewer code points than the limit: fewer clusters too
        return collapsed
    return "".join(_GRAPHEME.findall(collapsed)[:length])


def instant(value) -> datetime | None:
    """An ISO 8601 wire string as an aware datetime (naive ones read as UTC), or None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def latest(*values) -> str | None:
    """The latest of some ISO strings, returned exactly as it came on the wire."""
    dated = [(instant(value), value) for value in values if isinstance(value, str)]
    dated = [(when, value) for when, value in dated if when is not None]
    return max(dated, key=lambda pair: pair[0])[1] if dated else None


def later_or_same(candidate, current) -> bool | None:
    """Whether ISO ``candidate`` is not before ``current``; None when either is unknown."""
    a, b = instant(candidate), instant(current)
    if a is None or b is None:
        return None
    return a >= b


def text_or_none(value) -> str | None:
    return value if isinstance(value, str) else None


def int_or_none(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
