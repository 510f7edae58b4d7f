"""Thread leases: one engine at a time runs a thread's passes, replies and runs.

Every step is one compare-and-set statement on a ``ThreadLease`` row, so the same code
serialises work on SQLite and PostgreSQL, across any number of workers.

- ``acquire``: a wake marks the thread wanted, then holds it if nobody does (a new row)
  or if its holder stopped renewing (a takeover). Marking first is what keeps a wake
  from being lost: a holder lets go only while the row is not wanted (``release``).
- ``begin``: the holder clears ``wanted`` before each pass, which then reads the log.
  A wake whose entry the pass might have missed sets it again after the clear.
- ``release``: deletes the row only if nothing wanted it since ``begin``; otherwise the
  holder keeps it and runs another pass.
- ``renew``: the heartbeat, for every thread an engine holds, in one statement; it
  returns the threads the engine still holds, so one that lost its lease (a pause
  longer than the lease) stops its work there.
- ``expired``: rows whose holder stopped renewing, for the takeover tick.
- ``known``: whether any lease row covers the thread, live or lapsed: the sweep leaves a
  coding run so covered to its holder or to the takeover, however long its worker sits in
  one tool call (``dispatch.supervision``).
- ``hand_over``: a worker shutting down lapses its row at once, for a takeover elsewhere.

Every acquire (fresh or a takeover) also bumps the thread's lease epoch (``ThreadEpoch``,
never deleted) and stores it on the row it takes, in one transaction: ``epoch`` reads it
back for the holder, who fences its appends with it (``dispatch.fencing``).
"""

from __future__ import annotations

import datetime
import enum

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from dispatch.models import ThreadEpoch, ThreadLease

HANDED_OVER = "(handed over)"


class Taken(enum.Enum):
    FRESH = "fresh"  # nobody held the thread
    TAKEN_OVER = "taken over"  # its holder stopped renewing: its work died with it


def _until(seconds: float) -> datetime.datetime:
    return timezone.now() + datetime.timedelta(seconds=seconds)


def acquire(thread_id: str, holder: str, seconds: float, holding: bool = False) -> Taken | None:
    """Ask for a pass over ``thread_id``; hold it if nobody alive does.

    None: a live holder has it and runs another pass after its current one. ``holding``:
    this engine is running the thread now, so its own row, however late its renewal,
    is never taken over by itself.
    """
    for _ in range(3):
        if ThreadLease.objects.filter(pk=thread_id).update(wanted=True):
            with transaction.atomic():
                lapsed = ThreadLease.objects.filter(pk=thread_id, until__lte=timezone.now())
                if holding:
                    lapsed = lapsed.exclude(holder=holder)
                if not lapsed.update(holder=holder, until=_until(seconds)):
                    return None
                ThreadLease.objects.filter(pk=thread_id).update(epoch=_next_epoch(thread_id))
            return Taken.TAKEN_OVER
        try:
            with transaction.atomic():
                ThreadLease.objects.create(
                    thread_id=thread_id,
                    holder=holder,
                    until=_until(seconds),
                    wanted=True,
                    epoch=_next_epoch(thread_id),
                )
            return Taken.FRESH
        except IntegrityError:
            continue  # another engine made the row first: mark it wanted
    return None


def _next_epoch(thread_id: str) -> int:
    """Inside the acquiring transaction: the thread's next lease epoch."""
    if not ThreadEpoch.objects.filter(pk=thread_id).update(epoch=F("epoch") + 1):
        try:
            with transaction.atomic():
                ThreadEpoch.objects.create(thread_id=thread_id, epoch=1)
            return 1
        except IntegrityError:  # another engine made it first
            ThreadEpoch.objects.filter(pk=thread_id).update(epoch=F("epoch") + 1)
    return ThreadEpoch.objects.values_list("epoch", flat=True).get(pk=thread_id)


def epoch(thread_id: str, holder: str) -> int | None:
    """The lease epoch ``holder`` holds ``thread_id`` at; None if it no longer holds it."""
    return (
        ThreadLease.objects.filter(pk=thread_id, holder=holder)
        .values_list("epoch", flat=True)
        .first()
    )


def begin(thread_id: str, holder: str) -> bool:
    """Before a pass: clear ``wanted``; False if ``holder`` no longer holds the thread."""
    return bool(ThreadLease.objects.filter(pk=thread_id, holder=holder).update(wanted=False))


def wanted(thread_id: str, holder: str) -> bool:
    """Whether a wake marked the thread ``holder`` holds since its last ``begin``."""
    return ThreadLease.objects.filter(pk=thread_id, holder=holder, wanted=True).exists()


def release(thread_id: str, holder: str) -> bool:
    """After a pass that started nothing: let go, unless a wake came in meanwhile."""
    deleted, _ = ThreadLease.objects.filter(pk=thread_id, holder=holder, wanted=False).delete()
    return bool(deleted)


def drop(thread_id: str, holder: str) -> None:
    """Let go whatever the flag says (work cancelled, or an engine shutting down)."""
    ThreadLease.objects.filter(pk=thread_id, holder=holder).delete()


def hand_over(thread_id: str, holder: str) -> None:
    """A worker shutting down with work cut short: lapse its lease (kept, wanted), so the
    next acquire anywhere is a takeover that fences it and answers its reply again."""
    # No holder's name: a heartbeat of the old holder already under way renews nothing.
    ThreadLease.objects.filter(pk=thread_id, holder=holder).update(
        holder=HANDED_OVER, until=timezone.now() - datetime.timedelta(seconds=1), wanted=True
    )


def renew(holder: str, thread_ids: set[str], seconds: float) -> set[str]:
    """Heartbeat: extend ``holder``'s leases on ``thread_ids``; the ones it still holds."""
    if not thread_ids:
        return set()
    mine = ThreadLease.objects.filter(holder=holder, pk__in=thread_ids)
    mine.update(until=_until(seconds))
    return set(mine.values_list("pk", flat=True))


def known(thread_id: str) -> bool:
    """Any lease row for ``thread_id``, live or lapsed (a lapsed one is the takeover's)."""
    return ThreadLease.objects.filter(pk=thread_id).exists()


def expired() -> list[str]:
    """Threads whose holder stopped renewing (or a wake whose taker stopped halfway)."""
    return list(ThreadLease.objects.filter(until__lte=timezone.now()).values_list("pk", flat=True))
