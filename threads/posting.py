"""Writing to a thread on behalf of a person: post chat, delete by tombstone.

Append first, then act: the chat is in the log before the director is woken,
and a failed wake is itself appended as ``signal.dispatch.failed``. Nothing
already appended is ever rolled back, and once the append is acknowledged the post
has landed: what fails after it is recorded and repaired (``threads.seam``), never
answered as an error.

Both writes are idempotent. A client-supplied id makes a post's retry answer as
the first post did; the id belongs to whoever used it first, so anyone else
reusing it gets ``IdTaken`` (409). Deleting what is already deleted answers
with the tombstone that is there and appends nothing.
"""

import logging
import re
from dataclasses import dataclass

import msgspec
from django.http import Http404

from attachments.service import claim, remove_with_message
from dispatch.wake import WakeFailed, wake_director
from houses.access import ThreadAccess, access_delete
from threads import seam
from threads.chat_index import locate_chat
from threads.entries import Chat, DispatchFailed, Entry, EntryDeleted
from threads.lifecycle import new_entry
from threads.models import EntryLocation, SeamRepair
from threads.permissions import check_write
from threads.reading import find_entry, read_entries
from threads.recency import stream_writer
from threads.status_sync import sync_status

logger = logging.getLogger(__name__)
CLIENT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
# The shape of every id the server mints (``arbe_lib.ids.time_ordered_id``): a person may
# not choose it, so a chosen id never meets an entry the server or a bot wrote, whatever its
# kind, and that needs no read of the log (the chat index knows every chat id).
SERVER_ID = re.compile(r"^[0-9a-f]{24}$")


class BadEntryId(ValueError):
    """A client-supplied entry id that is not 1–128 of ``A-Za-z0-9_.:-`` (400)."""


class IdTaken(Exception):
    """Another author already used this entry id in the thread (409)."""


class NotChat(ValueError):
    """The deletion target is not a chat entry (400)."""


@dataclass(frozen=True)
class Posted:
    entry: Entry
    offset: str  # the opaque offset just after the entry ("" when not known)
    duplicate: bool = False  # nothing was appended: this answers an earlier write


def post_chat(
    access: ThreadAccess,
    payload: Chat,
    entry_id: str | None = None,
    attachment_ids: list[str] | None = None,
) -> Posted:
    """Append a chat entry authored by the caller, then wake the director.

    A client-supplied ``entry_id`` is the dedup key: a retry appends nothing new
    and answers as the first post did. The entry's recorded location spots a retry
    without reading the stream; should that cache lack it, the append's producer id
    (kept by the server as long as the stream) still refuses a second copy.
    """
    if entry_id is not None and not CLIENT_ID.match(entry_id):
        raise BadEntryId("id: must be 1–128 characters of A-Z a-z 0-9 _ . : -")
    if entry_id is not None and SERVER_ID.match(entry_id):
        raise BadEntryId("id: 24 hex digits is the shape of the server's own ids; send a UUID")
    author = access.principal.agent_id
    if entry_id is not None and (earlier := _earlier_post(access, entry_id, author)):
        return _finish(access, earlier)
    entry = new_entry(payload, author=author, entry_id=entry_id)
    # Files ride as the server knows them: the poster's own uploads, linked to this entry.
    ids = attachment_ids if attachment_ids is not None else [a.id for a in payload.attachments]
    if ids or payload.attachments:
        refs = claim(access, ids, entry.id)
        entry = msgspec.structs.replace(
            entry, payload=msgspec.structs.replace(payload, attachments=refs)
        )
    check_write(access.principal.writer(), entry)
    # The producer id makes the append itself idempotent when two retries race.
    producer = (f"entry:{entry.id}", 0, 0) if entry_id is not None else None
    result = stream_writer().append(access.thread.stream_name, entry, producer=producer)
    if result.duplicate:
        earlier = _earlier_post(access, entry.id, author, appended=True)
        return _finish(access, earlier or Posted(entry, result.next_offset or "", True))
    # Appended: from here on the post has landed, whatever fails (the seam records and
    # repairs its own failures, a failed wake is a signal in the log).
    _wake(access, entry)
    return Posted(entry, result.next_offset or "")


def _earlier_post(
    access: ThreadAccess, entry_id: str, author: str, appended: bool = False
) -> Posted | None:
    """The first post with ``entry_id``, if any (``appended``: the server says there is one).

    Raises ``IdTaken`` when that post is someone else's.
    """
    location = EntryLocation.objects.filter(thread=access.thread, entry_id=entry_id).first()
    if location is None and not appended:
        return None
    if location is not None and location.author_id != author:
        raise IdTaken(f"id: {entry_id!r} is already used by another author in this thread")
    found = find_entry(access.thread.stream_name, entry_id)
    if found is None:
        return None
    entry, tail = found
    if (entry.authorId or "") != author:
        raise IdTaken(f"id: {entry_id!r} is already used by another author in this thread")
    offset = location.offset_after if location and location.offset_after else tail
    return Posted(entry, offset, duplicate=True)


def _finish(access: ThreadAccess, earlier: Posted) -> Posted:
    """A retry of a post that landed: run again what its append still owes, then wake.

    The first attempt may have answered an error after its append (or died there): the
    steps it owes are recorded (``threads.seam``); with none recorded and no trace of it in
    the chat index, the seam never ran for it. The status record is folded again either
    way, so the sweep finds a message that waits; a wake too many costs one read of the
    cached tail.
    """
    thread_id = access.thread.id
    try:
        owed = SeamRepair.objects.filter(thread_id=thread_id).exists()
        seam.repair_owed(thread_id)
        located = EntryLocation.objects.filter(thread_id=thread_id, entry_id=earlier.entry.id)
        if not owed and not located.exists():
            seam.after_append(thread_id, [earlier.entry])
        sync_status(thread_id)
    except Exception:
        logger.exception("could not repair thread %s on a retried post", thread_id)
    _wake(access, earlier.entry)
    return earlier


def _wake(access: ThreadAccess, entry: Entry) -> None:
    try:
        wake_director(access.thread.id)
    except WakeFailed as exc:
        failure = new_entry(DispatchFailed(stage="wake", error=str(exc)[:500]), author=None)
        try:
            stream_writer().append(access.thread.stream_name, failure)
        except Exception:
            # Not even the failure reached the log: the sweep wakes the thread.
            logger.exception("could not record a failed wake of thread %s", access.thread.id)
            seam.owe(access.thread.id, [entry], None, [seam.WAKE], "wake failed")


def delete_chat(access: ThreadAccess, entry_id: str) -> Posted:
    """Tombstone a chat entry: only its author or an owner; the original stays in the log.
    Then its files go (``attachments.service.remove_with_message``).

    404 for an id the thread doesn't hold, 400 for anything but chat, 403 for others'
    messages. A second delete appends nothing and answers with the first tombstone.
    """
    target = chat_location(access, entry_id)
    access_delete(access, target.author_id)
    if target.deleted_by and (earlier := _tombstone(access, target.deleted_by)):
        remove_with_message(access, entry_id)  # a retry finishes what a cut-short one left
        return earlier
    tombstone = new_entry(EntryDeleted(entryId=entry_id), author=access.principal.agent_id)
    # One tombstone per entry, even when two deletes race past the check above.
    producer = (f"delete:{entry_id}", 0, 0)
    result = stream_writer().append(access.thread.stream_name, tombstone, producer=producer)
    remove_with_message(access, entry_id)  # the log says "deleted" first, then the bytes go
    if result.duplicate:
        return _first_tombstone(access, entry_id) or Posted(tombstone, "", True)
    return Posted(tombstone, result.next_offset or "")


def chat_location(access: ThreadAccess, entry_id: str) -> EntryLocation:
    """Where the chat ``entry_id`` is: from the chat index, else found in the log and indexed."""
    if not CLIENT_ID.match(entry_id):
        raise Http404
    location = EntryLocation.objects.filter(thread=access.thread, entry_id=entry_id).first()
    if location is not None and location.type != "chat":
        raise NotChat(f"Only chat can be deleted, not {location.type}.")
    if location is not None:
        return location
    found = find_entry(access.thread.stream_name, entry_id)
    if found is None:
        raise Http404
    entry, _ = found
    if not isinstance(entry.payload, Chat):
        raise NotChat(f"Only chat can be deleted, not {entry.type}.")
    locate_chat(access.thread.id, [entry], None)
    return EntryLocation.objects.get(thread=access.thread, entry_id=entry_id)


def _tombstone(access: ThreadAccess, tombstone_id: str) -> Posted | None:
    found = find_entry(access.thread.stream_name, tombstone_id)
    return Posted(found[0], found[1], duplicate=True) if found else None


def _first_tombstone(access: ThreadAccess, entry_id: str) -> Posted | None:
    entries, tail = read_entries(access.thread.stream_name)
    for entry in entries:
        if isinstance(entry.payload, EntryDeleted) and entry.payload.entryId == entry_id:
            return Posted(entry, tail, duplicate=True)
    return None
