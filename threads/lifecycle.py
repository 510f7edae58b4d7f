"""A thread's lifecycle: created (open or private), renamed, archived. The log first, then
the row beside it.

Every change appends its ``signal.thread.*`` entry through the writer seam
(``threads.recency.stream_writer``) before the row follows, so the log tells the story
and the row is a cache of it. House-level changes (members and bots) go to the house's
own log (``houses.house_log``).
"""

import time

from django.db import transaction

from arbe_lib.ids import time_ordered_id
from houses.models import Agent, House
from houses.names import clean_title
from threads.entries import Entry, ThreadArchived, ThreadCreated, ThreadMadePrivate, ThreadRenamed
from threads.models import Thread, Visibility, new_thread_id, stream_name_for
from threads.readers import Readers, readers_of_row, store
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
    readers: Readers | None = None,
) -> Thread:
    """Create the thread's stream, append ``signal.thread.created``, then store the row.

    The stream comes first so that a row never points at a stream that isn't there; a
    stream whose row failed to save is an unreferenced log, harmless and visible.
    A private thread (``readers``; a run's child thread takes its parent's) has its
    ``signal.thread.made_private`` appended before the row exists, and the row is stored
    with its members in one transaction: it is never open, not even for a moment.
    """
    title = clean_title(title)  # ValidationError: the caller's input is refused
    thread_id = thread_id or new_thread_id()
    if readers is None and parent is not None and parent.is_private:
        # The same people read it; a direct conversation's run is a private thread of
        # theirs, not a second conversation of the same set (one per set).
        readers = Readers(Visibility.PRIVATE, readers_of_row(parent).members)
    writer = stream_writer()
    writer.create(stream_name_for(thread_id), content_type=JSON)
    created = new_entry(
        ThreadCreated(title=title, parentThreadId=parent.id if parent else None),
        author=by.id if by else None,
    )
    writer.append(stream_name_for(thread_id), created)
    private = readers is not None and readers.visibility != Visibility.HOUSE
    if private:
        made = ThreadMadePrivate(
            memberIds=sorted(readers.members), direct=readers.visibility == Visibility.DIRECT
        )
        writer.append(stream_name_for(thread_id), new_entry(made, author=by.id if by else None))
    with transaction.atomic():
        thread = Thread.objects.create(
            id=thread_id,
            house=house,
            title=title,
            created_by=by,
            parent=parent,
            last_entry_ts=created.ts,
            visibility=readers.visibility if private else Visibility.HOUSE,
            direct_key=readers.key if private else "",
        )
        if private:
            store(thread.id, readers)
    announce_row(thread.id)
    return thread


def rename_thread(thread: Thread, title: str, *, by: Agent | None) -> Thread:
    """Append ``signal.thread.renamed``, then store the title; the same title is a no-op."""
    title = clean_title(title)  # ValidationError: the caller's input is refused
    if title == thread.title:
        return thread
    entry = new_entry(ThreadRenamed(title=title), author=by.id if by else None)
    stream_writer().append(thread.stream_name, entry)
    Thread.objects.filter(pk=thread.pk).update(title=title)
    thread.title = title
    announce_row(thread.id)
    return thread


def archive_thread(thread: Thread, *, by: Agent | None, archived: bool = True) -> Thread:
    """Append ``signal.thread.archived`` (``archived: false`` brings it back), then mark
    the row; asking for what already holds is a no-op."""
    from django.utils import timezone

    if (thread.archived_at is not None) == archived:
        return thread
    entry = new_entry(ThreadArchived(archived=archived), author=by.id if by else None)
    stream_writer().append(thread.stream_name, entry)
    thread.archived_at = timezone.now() if archived else None
    Thread.objects.filter(pk=thread.pk).update(archived_at=thread.archived_at)
    announce_row(thread.id)
    return thread
