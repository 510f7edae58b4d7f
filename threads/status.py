"""Status tracking: keeping ``Thread.status`` a repairable cache of the fold.

Called after appends to a thread stream. Only entries that can move the
record trigger work (chat, director decisions and outcomes, dispatch
lifecycle and phase, run state, pi_failed, orphaned, child_finished); tool
calls and assistant text don't.
"""

from collections.abc import Sequence

from threads.entries import Entry

STATUS_MOVING_TYPES = frozenset(
    {
        "chat",
        "signal.thread_director.decided",
        "signal.thread_director.outcome",
        "signal.dispatch.started",
        "signal.dispatch.phase",
        "signal.dispatch.steered",
        "signal.dispatch.finished",
        "signal.dispatch.failed",
        "signal.thread.run_state",
        "signal.thread.pi_failed",
        "signal.thread.orphaned",
        "signal.thread.child_finished",
    }
)


def moves_status(entries: Sequence[Entry]) -> bool:
    return any(e.type in STATUS_MOVING_TYPES for e in entries)


def track_after_append(thread_id: str, entries: Sequence[Entry]) -> None:
    """Recompute the stored record when an entry can move it.

    The fold and the ``status_rev``-guarded write arrive with the current view;
    until then the stored record stays what it was.
    """
    if not moves_status(entries):
        return
