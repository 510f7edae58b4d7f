"""Keeping the search index in step with the logs.

``after_append`` runs at the append seam (``threads.recency.after_append``) for every
append, by server code and the sandbox proxy alike: chat from people and bots is
indexed when appended, and a tombstone removes the chat it names at once. The index is
a cache: an error here is logged and never fails the append; ``manage.py
reindex_search`` rebuilds it from the logs (``rebuild_thread``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import transaction

from search.backends import Doc, backend
from threads.entries import Chat, Entry, EntryDeleted
from threads.models import Thread
from threads.projection import chat_projection

logger = logging.getLogger(__name__)


def doc_of(entry: Entry) -> Doc:
    return Doc(entry.id, entry.authorId or "", entry.ts, entry.payload.text)


def after_append(thread_id: str, entries: Sequence[Entry]) -> None:
    """Index the chat in ``entries`` and drop what their tombstones name."""
    chats = [doc_of(e) for e in entries if isinstance(e.payload, Chat)]
    gone = [e.payload.entryId for e in entries if isinstance(e.payload, EntryDeleted)]
    if not chats and not gone:
        return
    try:
        backend().apply(thread_id, chats, gone)
    except Exception:
        logger.exception("could not update the search index for thread %s", thread_id)


def rebuild_thread(thread: Thread, entries: Sequence[Entry]) -> int:
    """Replace ``thread``'s documents with what its log says; returns how many."""
    docs = [doc_of(e) for e in chat_projection(entries)]
    with transaction.atomic():
        backend().rebuild(thread.id, thread.house_id, docs)
    return len(docs)
