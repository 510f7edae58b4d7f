"""Keeping the search index in step with the logs.

``after_append`` runs at the append seam (``threads.recency.after_append``) for every
append, by server code and the sandbox proxy alike: chat from people and bots is
indexed when appended, and a tombstone removes the chat it names at once. The index is
a cache: an error here is logged and never fails the append; ``manage.py
reindex_search`` rebuilds it from the logs (``rebuild_thread``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from django.db import transaction
from django.db.models import Max

from search.backends import Doc, backend
from search.models import SearchDoc
from threads.entries import Chat, Entry, EntryDeleted, EntryEdited
from threads.models import EntryLocation, Thread
from threads.projection import chat_projection

logger = logging.getLogger(__name__)
NAME_WORDS = re.compile(r"[\W_]+")


def doc_of(entry: Entry) -> Doc:
    # Attached files are found by their names, and by the words in them: PostgreSQL's parser
    # keeps "quarterly-roadmap.pdf" as one file token, where FTS5 splits it.
    names = " ".join(f"{a.name} {NAME_WORDS.sub(' ', a.name)}" for a in entry.payload.attachments)
    body = f"{entry.payload.text}\n{names}" if names else entry.payload.text
    return Doc(entry.id, entry.authorId or "", entry.ts, body)


def after_append(thread_id: str, entries: Sequence[Entry]) -> None:
    """Index the chat in ``entries`` and drop what their tombstones name."""
    chats = [doc_of(e) for e in entries if isinstance(e.payload, Chat)]
    gone = [e.payload.entryId for e in entries if isinstance(e.payload, EntryDeleted)]
    edits = {e.payload.entryId: e for e in entries if isinstance(e.payload, EntryEdited)}
    if not chats and not gone and not edits:
        return
    try:
        backend().apply(thread_id, chats, gone)
        if edits:
            _reindex_edited(thread_id, edits)
    except Exception:
        # The seam records the step as owed and repairs it (``threads.seam``).
        logger.exception("could not update the search index for thread %s", thread_id)
        raise


def _reindex_edited(thread_id: str, edits: dict[str, Entry]) -> None:
    """Replace the documents of edited chat (the chat index says whose and when) with
    their new text; chat that is deleted or not its editor's stays as it is."""
    rows = EntryLocation.objects.filter(
        thread_id=thread_id, entry_id__in=list(edits), type="chat", deleted_by=""
    ).values_list("entry_id", "author_id", "ts")
    docs = [
        Doc(entry_id, author, ts, edits[entry_id].payload.text)
        for entry_id, author, ts in rows
        if edits[entry_id].authorId == author
    ]
    if docs:
        backend().apply(thread_id, [], [d.entry_id for d in docs])
        backend().apply(thread_id, docs, [])


def high_water() -> int:
    """The newest document's id: taken before a log is read for ``rebuild_thread``."""
    return SearchDoc.objects.aggregate(high=Max("id"))["high"] or 0


def rebuild_thread(thread: Thread, entries: Sequence[Entry], upto: int) -> int:
    """Replace ``thread``'s documents up to id ``upto`` with what its log (read after
    ``upto`` was taken) says; returns how many messages the log holds."""
    docs = [doc_of(e) for e in chat_projection(entries)]
    with transaction.atomic():
        backend().rebuild(thread.id, thread.house_id, docs, upto)
    return len(docs)
