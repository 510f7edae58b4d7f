"""Creating threads: the stream first, its first entry, then the row beside it."""

import time

from arbe_site.ids import time_ordered_id
from houses.models import Agent, House
from threads.entries import Entry, ThreadCreated
from threads.models import Thread, new_thread_id, stream_name_for
from threads.recency import announce_row, stream_writer

JSON = "application/json"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def new_entry(payload, *, author: str | None = None, entry_id: str | None = None) -> Entry:
    """An entry stamped by the server: a time-ordered id unless the caller supplied one."""
    return Entry(id=entry_id or time_ordered_id(), ts=now_ms(), payload=payload, authorId=author)


def create_thread(
    *,
    house: House,
    title: str,
    by: Agent | None,
    parent: Thread | None = None,
    thread_id: str | None = None,
) -> Thread:
    """Create the thread's stream, append ``signal.thread.created``, then store the row.

    The stream comes first so that a row never points at a stream that isn't there; a
    stream whose row failed to save is an unreferenced log, harmless and visible.
    """
    thread_id = thread_id or new_thread_id()
    writer = stream_writer()
    writer.create(stream_name_for(thread_id), content_type=JSON)
    created = new_entry(
        ThreadCreated(title=title, parentThreadId=parent.id if parent else None),
        author=by.id if by else None,
    )
    writer.append(stream_name_for(thread_id), created)
    thread = Thread.objects.create(
        id=thread_id,
        house=house,
        title=title,
        created_by=by,
        parent=parent,
        last_entry_ts=created.ts,
    )
    announce_row(thread.id)
    return thread
