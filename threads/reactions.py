"""Reactions: a person or a bot marks a chat message with an emoji, or takes it back.

Each is an entry, ``signal.entry.reaction {entryId, emoji, on}`` (authorId = who reacts);
nothing is ever removed from the log. ``fold`` is the projection every view shows: per
chat, per emoji (in the order first used), who reacts now. A tombstone drops the chat's
reactions with it; a reaction to a deleted message is refused (409). The chat index keeps
the folded state (``EntryLocation.reactions``) for history windows whose reactions are
further down the log.
"""

from __future__ import annotations

from collections.abc import Iterable

import regex
from django.db import transaction

from threads.entries import Chat, Entry, EntryDeleted, EntryReaction, first_of_each_id
from threads.models import EntryLocation

# The palette the page offers first; any other single emoji may be typed.
PALETTE = ("👍", "❤️", "😄", "🎉", "👀", "✅")
MAX_EMOJI_CHARS = 32
GRAPHEME = regex.compile(r"\X")
PICTURE = regex.compile(r"[\p{Extended_Pictographic}\p{Regional_Indicator}\u20e3]")

Reactions = dict[str, list[str]]  # emoji -> agent ids, in the order they reacted


def is_emoji(text: str) -> bool:
    """One grapheme (a flag, a family, a skin tone stay one) that draws as an emoji."""
    if not text or len(text) > MAX_EMOJI_CHARS:
        return False
    return GRAPHEME.fullmatch(text) is not None and PICTURE.search(text) is not None


def apply(state: Reactions, agent: str, emoji: str, on: bool) -> Reactions:
    """``state`` after one reaction (a copy); repeating one changes nothing."""
    state = {k: list(v) for k, v in state.items()}
    who = state.setdefault(emoji, [])
    if on and agent not in who:
        who.append(agent)
    elif not on and agent in who:
        who.remove(agent)
    if not who:
        del state[emoji]
    return state


def fold(entries: Iterable[Entry]) -> dict[str, Reactions]:
    """Chat id -> its reactions now. A reaction counts after its chat, by someone, with an
    emoji; a tombstoned chat has none."""
    chats: dict[str, Reactions] = {}
    gone: set[str] = set()
    for e in first_of_each_id(list(entries)):
        p = e.payload
        if isinstance(p, Chat):
            chats.setdefault(e.id, {})
        elif isinstance(p, EntryDeleted):
            gone.add(p.entryId)
        elif (
            isinstance(p, EntryReaction) and p.entryId in chats and e.authorId and is_emoji(p.emoji)
        ):
            chats[p.entryId] = apply(chats[p.entryId], e.authorId, p.emoji, p.on)
    return {k: v for k, v in chats.items() if v and k not in gone}


def note(thread_id: str, entries: Iterable[Entry]) -> None:
    """At the append seam: fold reactions into the chat index (rebuilt by reindex_entries)."""
    for e in entries:
        p = e.payload
        if not isinstance(p, EntryReaction) or not e.authorId or not is_emoji(p.emoji):
            continue
        with transaction.atomic():
            row = (
                EntryLocation.objects.select_for_update()
                .filter(thread_id=thread_id, entry_id=p.entryId, type="chat")
                .first()
            )
            if row is not None:
                row.reactions = apply(row.reactions or {}, e.authorId, p.emoji, p.on)
                row.save(update_fields=["reactions"])


def views(state: Reactions, names) -> list[dict]:
    """What ``threads/_reactions.html`` renders for one chat's reactions."""
    import json

    out = []
    for emoji, who in state.items():
        shown = [names.of(a).display for a in who]
        out.append(
            {
                "emoji": emoji,
                "count": len(who),
                "who": " ".join(who),
                "names": json.dumps(shown, ensure_ascii=False),
                "title": ", ".join(shown) + f" reacted with {emoji}",
            }
        )
    return out
