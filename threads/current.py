"""Loading a thread's current view: the director's cached tail plus what came after.

The cost follows the tail, not the thread's length: a normal thread folds the
entries the director kept past its decided offset and everything after that
offset; a coding run folds from the ``run_offset`` its claim stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from houses.models import Agent
from threads.entries import Entry, ThreadRunState
from threads.models import Thread
from threads.now import NowFold, ThreadNow
from threads.reading import read_entries
from threads.unreadable import readable_docs


@dataclass(frozen=True)
class LoadedView:
    now: ThreadNow
    offset: str  # the stream offset the fold reached; clients tail /stream from here


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
    return LoadedView(fold.view(now_ms), offset)
