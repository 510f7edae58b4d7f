"""The append seam's part in notifications: note what the worker has to look at, then wake it.

``threads.recency.after_append`` calls ``after_append`` for every append to a thread stream.
It only writes rows (an outbox item per chat entry or run report, who asked a bot, and
tombstones cancelling what was not sent yet) and wakes this process's notifier; deciding
and sending happen in the backstage worker (``notify.worker``), so an append never waits
on a push service or a mail server.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from houses.models import Agent
from notify.models import Asked, Notice, Outbox
from notify.wakeup import wake
from threads.entries import Chat, DispatchStarted, EntryDeleted, ThreadChildFinished
from threads.models import EntryLocation, Thread

logger = logging.getLogger(__name__)
TEXT_CHARS = 300


def after_append(thread_id: str, entries: Sequence) -> None:
    try:
        if _note(thread_id, entries):
            wake()
    except Exception:  # never fails the append: the seam records it as owed and repairs it
        logger.exception("notify: could not note entries of thread %s", thread_id)
        raise


def _note(thread_id: str, entries: Sequence) -> bool:
    chats = [e for e in entries if isinstance(e.payload, Chat)]
    runs = [e for e in entries if isinstance(e.payload, ThreadChildFinished)]
    items: list[Outbox] = []
    if chats:
        # Positions as threads.unread just counted them (it ran first at the seam).
        seq = Thread.objects.filter(pk=thread_id).values_list("chat_seq", flat=True).first() or 0
        first = seq - len(chats)
        for i, e in enumerate(chats):
            items.append(_item(thread_id, e, Outbox.Kind.CHAT, e.payload.text, first + i + 1))
    for e in runs:
        items.append(_item(thread_id, e, Outbox.Kind.RUN, e.payload.report, 0))
    if items:
        Outbox.objects.bulk_create(items, ignore_conflicts=True)  # a retried append: once
    for e in entries:
        if isinstance(e.payload, DispatchStarted) and e.payload.round == 0:
            _note_asked(thread_id, e.payload)
    deleted = [e.payload.entryId for e in entries if isinstance(e.payload, EntryDeleted)]
    if deleted:
        Outbox.objects.filter(entry_id__in=deleted, thread_id=thread_id).delete()
        Notice.objects.filter(
            entry_id__in=deleted, thread_id=thread_id, state=Notice.State.QUEUED
        ).update(state=Notice.State.GONE)
    return bool(items)


def _item(thread_id: str, e, kind: str, text: str, seq: int) -> Outbox:
    return Outbox(
        entry_id=e.id,
        thread_id=thread_id,
        kind=kind,
        author_id=e.authorId or "",
        text=" ".join(text.split())[:TEXT_CHARS],
        seq=seq,
        ts=e.ts,
    )


def _note_asked(thread_id: str, started: DispatchStarted) -> None:
    """The people whose messages a bot's reply takes up: told when its answer lands."""
    authors = EntryLocation.objects.filter(
        thread_id=thread_id, entry_id__in=started.entryIds
    ).values_list("author_id", flat=True)
    users = list(
        Agent.objects.filter(pk__in=set(authors), kind=Agent.Kind.PERSON, user__isnull=False)
        .order_by("user_id")
        .values_list("user_id", flat=True)
    )
    if not users:
        return
    Asked.objects.update_or_create(
        thread_id=thread_id, bot_id=started.agentId, defaults={"user_ids": users}
    )
