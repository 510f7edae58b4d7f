"""Loading a thread's current view: the director's cached tail plus what came after.

The cost follows the tail, not the thread's length: a normal thread folds the
entries the director kept past its decided offset and everything after that
offset; a coding run folds from the ``run_offset`` its claim stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from houses.models import Agent
from threads.entries import Entry, Spend, ThreadRunState
from threads.models import Thread
from threads.now import (
    ChildRecord,
    FoldState,
    NowFold,
    ThreadNow,
    current_view,
    live_children,
)
from threads.reading import read_entries
from threads.unreadable import readable_docs


@dataclass(frozen=True)
class LoadedView:
    now: ThreadNow
    offset: str  # the stream offset the fold reached; clients tail /stream from here
    fold: FoldState  # with ``now``, what a client needs to go on folding from ``offset``


def bot_ids(house_id: int) -> list[str]:
    return list(
        Agent.objects.filter(house_id=house_id, kind=Agent.Kind.BOT).values_list("id", flat=True)
    )


def entries_for_view(thread: Thread) -> tuple[list[Entry], str]:
    if thread.parent_id is not None and not thread.run_offset:
        # A run claimed before starts were stored: only its run state is trustworthy.
        entries, offset = read_entries(thread.id)
        return [e for e in entries if isinstance(e.payload, ThreadRunState)], offset
    start = thread.run_offset or thread.director_offset or "-1"
    cached = (
        readable_docs(thread.director_tail or (), thread.stream_name)
        if not thread.run_offset
        else []
    )
    entries, offset = read_entries(thread.id, start)
    return cached + entries, offset


def load_view(thread: Thread, *, now_ms: int) -> LoadedView:
    entries, offset = entries_for_view(thread)
    fold = NowFold(bots=bot_ids(thread.house_id), run=thread.parent_id is not None)
    for entry in entries:
        fold.apply(entry)
    return LoadedView(view_of(fold, now_ms), offset, fold.state())


def view_of(fold: NowFold, now_ms: int) -> ThreadNow:
    """The current view a fold stands for at ``now_ms``: ``threads.now.current_view`` with
    its live children's records read from the database (not on a render thread)."""
    view = fold.view(now_ms)
    return current_view(view, child_records(live_children(view)))


def _run_spend(child: Thread) -> Spend:
    """What a live run has spent so far, folded from its own thread (from its start)."""
    if not child.run_offset:
        return Spend()
    entries, _ = read_entries(child.pk, child.run_offset)
    fold = NowFold(run=True)
    for entry in entries:
        fold.apply(entry)
    return fold.view().spend


def child_records(child_ids: list[str]) -> dict[str, ChildRecord]:
    """Delegated runs' child threads, unarchived ones only, each with its own stored record
    and its run's spend so far (one query for all).

    The parent's entries say when a run was claimed and when it ended; what it is doing
    is its child's business, and how it ended is held there too (``T/<childId>``).
    """
    if not child_ids:
        return {}
    children = Thread.objects.filter(pk__in=list(child_ids), archived_at__isnull=True)
    fields = ("pk", "house_id", "parent_id", "run_offset", "status", "status_message")
    return {
        child.pk: ChildRecord(child.status, child.status_message, _run_spend(child))
        for child in children.only(*fields)
    }
