"""Every cache of a thread's log, rebuilt from the log: what an import runs once a
thread's entries are appended (they are appended without the seam: ``archives.restore``).

``REBUILDS`` is the one list. Each step takes the thread row and its log read once
(entries, history windows and marks); a new cache kept at the write seam (``threads.seam``)
gets its rebuild here as one more line, and every import (an archive, a Slack export)
rebuilds it. The order follows the seam's: who reads first (everything after asks
``houses.access``), the chat index before the counts that read it, status last.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby

from django.db import transaction

import notify.inbox
import search.index
from search.backends import backend
from search.index import doc_of
from threads import chat_index, readers, unread, windows
from threads.last_entry import bump_last_entry_ts
from threads.models import Thread
from threads.projection import chat_projection
from threads.status_sync import sync_status

# (thread row, its log read once, what the steps gather for the whole house)
Rebuild = Callable[[Thread, "windows.Rebuilt", dict], None]


def _readers(thread: Thread, log: windows.Rebuilt, house: dict) -> None:
    readers.rebuild_readers(thread, log.entries)


def _chat_index(thread: Thread, log: windows.Rebuilt, house: dict) -> None:
    chat_index.rebuild(thread, log.entries, log.windows)
    windows.store_marks(thread, log.marks)


def _chat_cache(thread: Thread, log: windows.Rebuilt, house: dict) -> None:
    unread.rebuild_chat_cache(thread.pk, log.entries)


def _search(thread: Thread, log: windows.Rebuilt, house: dict) -> None:
    # Gathered, then indexed for the whole house in the order the messages were written
    # (``_index_search``): documents are numbered as they are stored, results with equal
    # rank come in that order, and a restored house must list them as the original did.
    docs = [doc_of(e) for e in chat_projection(log.entries)]
    house.setdefault("search", []).append((thread, docs))


def _index_search(house: dict, upto: int) -> None:
    gathered = house.get("search", [])
    ordered = []
    for n, (thread, docs) in enumerate(gathered):
        backend().rebuild(thread.pk, thread.house_id, [], upto)
        ordered += [(d.ts, n, i, thread.pk, d) for i, d in enumerate(docs)]
    ordered.sort(key=lambda row: row[:3])
    with transaction.atomic():
        # Runs of one thread's documents go in one call each.
        for thread_id, run in groupby(ordered, key=lambda row: row[3]):
            backend().apply(thread_id, [row[4] for row in run], ())


def _inbox(thread: Thread, log: windows.Rebuilt, house: dict) -> None:
    notify.inbox.rebuild_thread(thread, log.entries)


def _recency(thread: Thread, log: windows.Rebuilt, house: dict) -> None:
    if log.entries:
        bump_last_entry_ts(thread.pk, max(e.ts for e in log.entries))


def _status(thread: Thread, log: windows.Rebuilt, house: dict) -> None:
    sync_status(thread.pk)


# Each step runs for every thread; a step that needs every thread first leaves what it
# gathered in the house dict for its ``FINISH`` step.
REBUILDS: list[tuple[str, Rebuild]] = [
    ("readers", _readers),  # the access table (private threads, direct conversations)
    ("chat_index", _chat_index),  # chat locations, tombstones, edits, reactions, windows
    ("chat_cache", _chat_cache),  # chat positions and the last message (unread counts)
    ("search", _search),
    ("inbox", _inbox),  # mentions and bots' replies
    ("recency", _recency),
    ("status", _status),
]
FINISH: list[Callable[[dict, int], None]] = [_index_search]


def rebuild_threads(
    threads: Sequence[Thread], progress: Callable[[int, int], None] | None = None
) -> None:
    """Read each thread's log once and rebuild every cache of it (``REBUILDS``, ``FINISH``)."""
    upto = search.index.high_water()  # taken before the reads (search.index.rebuild_thread)
    house: dict = {}
    for n, thread in enumerate(threads, 1):
        log = windows.read_for_rebuild(thread)
        for _name, step in REBUILDS:
            step(thread, log, house)
        if progress:
            progress(n, len(threads))
    for finish in FINISH:
        finish(house, upto)
