"""Reacting to a chat message on behalf of a person (the API) or a bot (its reply).

The fold, the emoji rule and the chat index's copy are ``threads.reactions``.
"""

from __future__ import annotations

from arbe_lib.api import BadInput, Conflict
from threads.entries import EntryReaction
from threads.lifecycle import new_entry
from threads.posting import Posted, chat_location
from threads.reactions import is_emoji
from threads.recency import stream_writer


def react(access, entry_id: str, emoji: str, on: bool = True, *, as_agent: str | None = None):
    """Append a reaction by the caller (or ``as_agent``, a bot the server acts for) to the
    chat ``entry_id``: 400 for a bad emoji or anything but chat, 404 for an id the thread
    doesn't hold, 409 for a deleted message."""
    if not is_emoji(emoji):
        raise BadInput("emoji: one emoji, like 👍")
    target = chat_location(access, entry_id)
    if target.deleted_by:
        raise Conflict("This message was deleted, so it can't take reactions.")
    author = as_agent or access.principal.agent_id
    entry = new_entry(EntryReaction(entryId=entry_id, emoji=emoji, on=on), author=author)
    result = stream_writer().append(access.thread.stream_name, entry)
    return Posted(entry, result.next_offset or "")
