"""Writing to a thread on behalf of a person: post chat, delete by tombstone.

Append first, then act: the chat is in the log before the director is woken,
and a failed wake is itself appended as ``signal.dispatch.failed``. Nothing
already appended is ever rolled back.
"""

import re
from dataclasses import dataclass

from dispatch.wake import WakeFailed, wake_director
from houses.access import ThreadAccess, access_chat_for_delete
from threads.entries import Chat, DispatchFailed, Entry, EntryDeleted
from threads.lifecycle import new_entry
from threads.models import EntryLocation
from threads.permissions import check_write
from threads.reading import find_entry
from threads.recency import stream_writer

CLIENT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


class BadEntryId(ValueError):
    """A client-supplied entry id that is not 1–128 of ``A-Za-z0-9_.:-``."""


@dataclass(frozen=True)
class Posted:
    entry: Entry
    offset: str  # the opaque offset just after the entry
    duplicate: bool = False


def post_chat(access: ThreadAccess, payload: Chat, entry_id: str | None = None) -> Posted:
    """Append a chat entry authored by the caller, then wake the director.

    A client-supplied ``entry_id`` is the dedup key: a retry appends nothing new
    and answers as the first post did. The entry's recorded location spots a retry
    without reading the stream; should that cache lack it, the append's producer id
    (kept by the server as long as the stream) still refuses a second copy.
    """
    if entry_id is not None and not CLIENT_ID.match(entry_id):
        raise BadEntryId("id: must be 1–128 characters of A-Z a-z 0-9 _ . : -")
    thread = access.thread
    if entry_id is not None and (earlier := _earlier_post(access, entry_id)):
        return earlier
    entry = new_entry(payload, author=access.principal.agent_id, entry_id=entry_id)
    check_write(access.principal.writer(), entry)
    writer = stream_writer()
    # The producer id makes the append itself idempotent when two retries race.
    producer = (f"entry:{entry.id}", 0, 0) if entry_id is not None else None
    result = writer.append(thread.stream_name, entry, producer=producer)
    if result.duplicate:
        earlier = _earlier_post(access, entry.id, appended=True)
        return earlier or Posted(entry, result.next_offset or "", True)
    _wake(access, entry)
    return Posted(entry, result.next_offset or "")


def _earlier_post(access: ThreadAccess, entry_id: str, appended: bool = False) -> Posted | None:
    """The first post with ``entry_id``, if any (``appended``: the server says there is one)."""
    location = EntryLocation.objects.filter(thread=access.thread, entry_id=entry_id).first()
    if location is None and not appended:
        return None
    found = find_entry(access.thread.stream_name, entry_id)
    if found is None:
        return None
    entry, tail = found
    offset = location.offset_after if location and location.offset_after else tail
    return Posted(entry, offset, duplicate=True)


def _wake(access: ThreadAccess, entry: Entry) -> None:
    try:
        wake_director(access.thread.id)
    except WakeFailed as exc:
        failure = new_entry(DispatchFailed(stage="wake", error=str(exc)[:500]), author=None)
        stream_writer().append(access.thread.stream_name, failure)


def delete_chat(access: ThreadAccess, entry_id: str) -> Posted:
    """Tombstone a chat entry: only its author or an owner; the original stays in the log."""
    access_chat_for_delete(access, entry_id)
    tombstone = new_entry(EntryDeleted(entryId=entry_id), author=access.principal.agent_id)
    result = stream_writer().append(access.thread.stream_name, tombstone)
    return Posted(tombstone, result.next_offset or "")
