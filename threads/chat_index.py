"""The chat index (``EntryLocation``): where each chat entry is, who wrote it, its tombstone,
its latest edit.

A cache of the log, written at the append seam (``threads.recency.after_append``)
and rebuilt from the logs by ``manage.py reindex_entries``. Posts use it to spot
retries and id reuse, deletions to find their target without reading the whole
stream; when it lacks an entry they fall back to the log.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from threads import reactions
from threads.entries import Chat, Entry, EntryDeleted, EntryEdited, first_of_each_id
from threads.models import EntryLocation, Thread
from threads.projection import latest_texts


def locate_chat(
    thread_id: str,
    entries: Sequence[Entry],
    next_offset: str | None,
    window: int = 0,
    positions: dict[str, int] | None = None,
) -> None:
    """Record where chat entries landed (the offset is known for the last of a batch, the
    history window from ``threads.windows.note_append``, the position from
    ``threads.unread.note_appended``) and which tombstone first named each."""
    positions = positions or {}
    rows = [
        _row(
            thread_id,
            e,
            window,
            offset_after=(next_offset or "") if e is entries[-1] else "",
            seq=positions.get(e.id, 0),
        )
        for e in entries
        if isinstance(e.payload, Chat)
    ]
    if rows and Thread.objects.filter(pk=thread_id).exists():
        EntryLocation.objects.bulk_create(rows, ignore_conflicts=True)
    for e in entries:
        if isinstance(e.payload, EntryDeleted):
            EntryLocation.objects.filter(
                thread_id=thread_id, entry_id=e.payload.entryId, deleted_by=""
            ).update(deleted_by=e.id)
        elif isinstance(e.payload, EntryEdited):
            EntryLocation.objects.filter(
                thread_id=thread_id, entry_id=e.payload.entryId, author_id=e.authorId or "-"
            ).update(edited_by=e.id, edited_text=e.payload.text)


def rebuild(thread: Thread, entries: Sequence[Entry], windows: dict[str, int] | None = None) -> int:
    """Replace ``thread``'s index with what its log says; returns the chat entries indexed.

    Offsets of single entries are not known from a catch-up read, so rebuilt rows
    have none; a retry then answers with the tail offset, as documented. ``windows``
    gives each chat's history window (``threads.windows.read_for_rebuild``).
    """
    windows = windows or {}
    entries = first_of_each_id(list(entries))
    tombstones: dict[str, str] = {}
    for e in entries:
        if isinstance(e.payload, EntryDeleted):
            tombstones.setdefault(e.payload.entryId, e.id)
    texts = latest_texts(entries)
    reacts = reactions.fold(entries)
    edits = {
        e.payload.entryId: e.id
        for e in entries
        if isinstance(e.payload, EntryEdited) and e.payload.entryId in texts
    }
    seqs = {e.id: n for n, e in enumerate((e for e in entries if isinstance(e.payload, Chat)), 1)}
    rows = [
        _row(
            thread.pk,
            e,
            windows.get(e.id, 0),
            seq=seqs[e.id],
            deleted_by=tombstones.get(e.id, ""),
            edited_by=edits.get(e.id, "") if texts.get(e.id) else "",
            edited_text=texts.get(e.id, ""),
            reactions=reacts.get(e.id, {}),
        )
        for e in entries
        if isinstance(e.payload, Chat)
    ]
    with transaction.atomic():
        EntryLocation.objects.filter(thread=thread).delete()
        EntryLocation.objects.bulk_create(rows, batch_size=1000)
    return len(rows)


def _row(thread_id: str, entry: Entry, window: int, **known) -> EntryLocation:
    return EntryLocation(
        thread_id=thread_id,
        entry_id=entry.id,
        type=entry.type,
        author_id=entry.authorId or "",
        ts=entry.ts,
        window=window,
        **known,
    )
