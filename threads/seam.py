"""The steps that follow every append to a thread stream, each attempted on its own.

The append is the fact; what follows it (who reads it, unread counts, history windows, the
chat index, search, recency, the status record, notifications) are caches of the log. A step
that raises never fails the append nor stops the steps after it: the steps it left owed (it,
and any that read what it writes) are recorded as a ``SeamRepair`` row with the entries, and run
again by the backstage sweep (``repair_owed``) or by a retried post of the same entry.
A wake of the director that could not even be recorded in the log owes ``wake`` too.

Every step is safe to run again: chat already counted or located is skipped, a window's
count is one transaction (a failed one wrote nothing), index and outbox writes ignore
conflicts, reactions are set-like, recency and status are guarded writes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import notify.inbox
import notify.outbox
import search.index
from ops import metrics
from threads import reactions, readers
from threads.chat_index import locate_chat
from threads.entries import Chat, Entry, EntryDeleted, decode_entries, encode_entry
from threads.failures import scrub
from threads.last_entry import throttle
from threads.models import SeamRepair
from threads.status import moves_status
from threads.status_sync import track_after_append
from threads.unread import note_appended
from threads.windows import note_append

logger = logging.getLogger(__name__)
WAKE = "wake"  # not a seam step: the director is woken once the steps are repaired
REPAIRS_PER_SWEEP = 200


def _readers(thread_id: str, entries: Sequence[Entry], next_offset: str | None, run: dict) -> None:
    # First: who may read decides who is told (notifications, the inbox).
    readers.after_append(thread_id, entries)


def _unread(thread_id: str, entries: Sequence[Entry], next_offset: str | None, run: dict) -> None:
    # Before the chat index: it skips chat already located.
    run["positions"] = note_appended(thread_id, entries)


def _windows(thread_id: str, entries: Sequence[Entry], next_offset: str | None, run: dict) -> None:
    # One transaction: a failed count wrote nothing, so running it again counts once.
    run["window"] = note_append(thread_id, entries, next_offset)


def _chat_index(
    thread_id: str, entries: Sequence[Entry], next_offset: str | None, run: dict
) -> None:
    # A repair run has no window nor positions (they were found earlier): 0, unknown.
    locate_chat(thread_id, entries, next_offset, run.get("window", 0), run.get("positions"))
    reactions.note(thread_id, entries)


def _search(thread_id: str, entries: Sequence[Entry], next_offset: str | None, run: dict) -> None:
    search.index.after_append(thread_id, entries)
    metrics.indexed(entries)  # the search index's lag


def _recency(thread_id: str, entries: Sequence[Entry], next_offset: str | None, run: dict) -> None:
    # A status write announces the row itself; otherwise recency does, so the house list
    # follows new entries too. A deletion changes unread counts whatever the status does.
    deletes = any(isinstance(e.payload, EntryDeleted) for e in entries)
    announce = deletes or not moves_status(entries)
    throttle.bump(thread_id, max(e.ts for e in entries), announce=announce)


def _status(thread_id: str, entries: Sequence[Entry], next_offset: str | None, run: dict) -> None:
    track_after_append(thread_id, entries)


def _notify(thread_id: str, entries: Sequence[Entry], next_offset: str | None, run: dict) -> None:
    notify.outbox.after_append(thread_id, entries)  # rows and a wake; the worker sends


def _inbox(thread_id: str, entries: Sequence[Entry], next_offset: str | None, run: dict) -> None:
    notify.inbox.after_append(thread_id, entries)


# (thread id, entries, next offset, what earlier steps of this run left for later ones)
Step = Callable[[str, Sequence[Entry], "str | None", dict], None]
STEPS: dict[str, Step] = {
    "readers": _readers,
    "unread": _unread,
    "windows": _windows,
    "chat_index": _chat_index,
    "search": _search,
    "recency": _recency,
    "status": _status,
    "notify": _notify,
    "inbox": _inbox,
}
# A step that reads what another writes waits for it: the chat index skips chat already
# located, so it must not run before unread counted it; notifications number chat by it;
# the inbox reads who asked a bot (``Asked``), which notifications write.
NEEDS = {"chat_index": "unread", "notify": "unread", "inbox": "notify"}
# (Notifications and the inbox ask ``houses.access`` who reads; a failed ``readers`` step
# fails closed for additions and is repaired before the sweep's next pass.)


def after_append(
    thread_id: str,
    entries: Sequence[Entry],
    next_offset: str | None = None,
    only: Sequence[str] | None = None,
) -> list[str]:
    """Run the seam's steps (``only`` those, in seam order); returns the ones still owed,
    recorded as a ``SeamRepair`` unless ``only`` was given (the caller holds the row)."""
    owed, error = run_steps(thread_id, entries, next_offset, only)
    if owed and only is None:
        owe(thread_id, entries, next_offset, owed, error)
    return owed


def run_steps(
    thread_id: str,
    entries: Sequence[Entry],
    next_offset: str | None,
    only: Sequence[str] | None = None,
) -> tuple[list[str], str]:
    owed: list[str] = []
    error = ""
    run: dict = {}
    for name, step in STEPS.items():
        if only is not None and name not in only:
            continue
        if NEEDS.get(name) in owed:
            owed.append(name)
            continue
        try:
            step(thread_id, entries, next_offset, run)
        except Exception as exc:
            logger.exception("after-append step %s failed for thread %s", name, thread_id)
            owed.append(name)
            error = scrub(f"{name}: {type(exc).__name__}: {exc}")[:300]
    return owed, error


def owe(
    thread_id: str,
    entries: Sequence[Entry],
    next_offset: str | None,
    steps: Sequence[str],
    error: str = "",
) -> None:
    """Record what an append still owes; if even that fails, the log says so (the sweep's
    status recount and a retried post still find the thread)."""
    body = b"[" + b",".join(encode_entry(e) for e in entries) + b"]"
    try:
        SeamRepair.objects.create(
            thread_id=thread_id,
            steps=list(steps),
            entries=body.decode(),
            next_offset=next_offset or "",
            error=error,
        )
    except Exception:
        logger.exception("could not record the steps thread %s owes: %s", thread_id, steps)


def repair_owed(thread_id: str | None = None, limit: int = REPAIRS_PER_SWEEP) -> list[str]:
    """Run again what appends still owe (one thread's, or the oldest ``limit``); returns the
    threads whose director should be woken (chat was repaired, or a wake was owed)."""
    # The least tried first: a row that keeps failing never holds up newer ones.
    rows = SeamRepair.objects.order_by("attempts", "pk")
    if thread_id is not None:
        rows = rows.filter(thread_id=thread_id)
    wake: list[str] = []
    for row in list(rows[:limit]):
        entries = decode_entries(row.entries)
        steps = [s for s in row.steps if s != WAKE]
        owed, error = run_steps(row.thread_id, entries, row.next_offset or None, steps)
        if owed:
            SeamRepair.objects.filter(pk=row.pk).update(
                steps=owed + ([WAKE] if WAKE in row.steps else []),
                attempts=row.attempts + 1,
                error=error,
            )
            continue
        SeamRepair.objects.filter(pk=row.pk).delete()
        chat = any(isinstance(e.payload, Chat) for e in entries)
        if (WAKE in row.steps or chat) and row.thread_id not in wake:
            wake.append(row.thread_id)
    return wake
