"""What counts as a mention in chat text (``@handle``): one pattern for the director's
decision (``dispatch.decide``), notifications and the current view's waiting rule."""

from __future__ import annotations

import re

MENTION = re.compile(r"(?<![\w@])@([a-z0-9][a-z0-9_-]{0,31})\b")


def mentions(text: str) -> list[str]:
    """The handles ``text`` names, lower-cased, each once, in order."""
    seen: list[str] = []
    for handle in MENTION.findall(text.lower()):
        if handle not in seen:
            seen.append(handle)
    return seen


def names_someone(text: str) -> bool:
    return MENTION.search(text.lower()) is not None
