"""Editing a chat message: a new entry, never a change to the old one.

``signal.entry.edited {entryId, text}`` is appended by the server on behalf of the
chat's author, after the checks here: only chat, only its author, never a deleted
message, the same text limits as a post. The chat and every earlier edit stay in the
log; views fold the latest text (``threads.projection``). An edit wakes nobody: a
reply that already ran stays as it was, and a bot's next turn reads the latest text.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied

from arbe_lib.api import Conflict
from houses.access import ThreadAccess
from threads.entries import EntryEdited, EntryError, convert_payload
from threads.lifecycle import new_entry
from threads.posting import Posted, chat_location
from threads.projection import chat_projection
from threads.reading import read_entries
from threads.recency import stream_writer


def edit_chat(access: ThreadAccess, entry_id: str, text: str) -> Posted:
    """Append an edit of the chat ``entry_id`` by the caller: 404 for an id the thread
    doesn't hold, 400 for anything but chat or a text out of bounds, 403 for someone
    else's message, 409 for a deleted one."""
    payload = convert_payload({"type": "signal.entry.edited", "entryId": entry_id, "text": text})
    assert isinstance(payload, EntryEdited)
    target = chat_location(access, entry_id)
    if target.author_id != access.principal.agent_id:
        raise PermissionDenied("Only its author can edit a message.")
    if target.deleted_by:
        raise Conflict("This message was deleted, so it can't be edited.")
    edit = new_entry(payload, author=access.principal.agent_id)
    result = stream_writer().append(access.thread.stream_name, edit)
    return Posted(edit, result.next_offset or "")


def latest_text(access: ThreadAccess, entry_id: str) -> str:
    """What the chat ``entry_id`` says now (for an editor to start from)."""
    target = chat_location(access, entry_id)
    if target.deleted_by:
        raise Conflict("This message was deleted.")
    entries, _ = read_entries(access.thread.stream_name)
    chat = {e.id: e for e in chat_projection(entries)}
    if entry_id not in chat:
        raise EntryError("The message could not be read.")
    return chat[entry_id].payload.text
