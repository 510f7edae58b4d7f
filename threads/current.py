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
from threads.now import LIVE_RUN_STATES, FoldState, NowFold, Run, ThreadNow, with_delegated_spend
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
    now = fold.view(now_ms)
    now.runs = with_child_records(now.runs)
    with_delegated_spend(now)
    return LoadedView(now, offset, fold.state())


def _run_spend(child: Thread) -> Spend:
    """What a live run has spent so far, folded from its own thread (from its start)."""
    if not child.run_offset:
        return Spend()
    entries, _ = read_entries(child.pk, child.run_offset)
    fold = NowFold(run=True)
    for entry in entries:
        fold.apply(entry)
    return fold.view().spend


def with_child_records(runs: list[Run]) -> list[Run]:
    """Delegated runs, seen from the parent: live ones with an unarchived child only, each
    with the child thread's own stored record (one query for all).

    The parent's entries say when a run was claimed and when it ended; what it is doing
    is its child's business, and how it ended is held there too (``T/<childId>``).
    """
    kept = [r for r in runs if not r.childThreadId]
    delegated = {r.childThreadId: r for r in runs if r.childThreadId and r.state in LIVE_RUN_STATES}
    if not delegated:
        return kept
    children = Thread.objects.filter(pk__in=list(delegated), archived_at__isnull=True)
    fields = ("pk", "house_id", "parent_id", "run_offset", "status", "status_message")
    for child in children.only(*fields):
        run = delegated[child.pk]
        run.status, run.statusMessage = child.status, child.status_message
        run.spend = _run_spend(child)
        kept.append(run)
    return kept
