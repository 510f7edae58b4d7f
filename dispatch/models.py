"""Backstage bookkeeping kept in the database.

``Lease``: a named, timed right to do something once across every process (the 60 s
sweep). Taken by a compare-and-set on its expiry, so it needs no advisory locks and
works the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

import contextlib
import datetime

from django.db import IntegrityError, models
from django.utils import timezone


class Lease(models.Model):
    name = models.CharField(primary_key=True, max_length=64)
    holder = models.CharField(max_length=128, blank=True)
    until = models.DateTimeField()

    def __str__(self):
        return f"{self.name} held by {self.holder or 'nobody'} until {self.until:%H:%M:%S}"


def take_lease(name: str, seconds: float, holder: str) -> bool:
    """Hold ``name`` for ``seconds`` if nobody holds it now; True if this call got it."""
    now = timezone.now()
    if not Lease.objects.filter(name=name).exists():
        # Another process may make it first; the update below decides who holds it.
        with contextlib.suppress(IntegrityError):
            Lease.objects.create(name=name, holder="", until=now - datetime.timedelta(seconds=1))
    until = now + datetime.timedelta(seconds=seconds)
    return bool(Lease.objects.filter(name=name, until__lte=now).update(holder=holder, until=until))


class ThreadLease(models.Model):
    """Who runs a thread's passes, replies and runs now, across every worker.

    A row exists while some engine holds the thread; it goes when the holder is done.
    The holder renews ``until`` on a heartbeat; a row past ``until`` belongs to a holder
    that stopped (killed, or cut off), and any engine may take it over. ``wanted`` is a
    wake that arrived while the thread was held: the holder runs another pass before it
    lets go (``dispatch.thread_leases``).
    """

    thread_id = models.CharField(primary_key=True, max_length=64)
    holder = models.CharField(max_length=128)
    until = models.DateTimeField(db_index=True)
    wanted = models.BooleanField(default=False)
    epoch = models.BigIntegerField(default=0)  # this holding's lease epoch (ThreadEpoch)

    def __str__(self):
        return f"{self.thread_id} held by {self.holder} until {self.until:%H:%M:%S}"


class ThreadEpoch(models.Model):
    """A thread's lease epoch: bumped by every acquire, never deleted (the lease row is).

    The holder writes the thread's backstage entries as the idempotent producer
    ``backstage:<thread>`` at this epoch, so the store refuses a holder whose lease was
    taken over (``dispatch.fencing``).
    """

    thread_id = models.CharField(primary_key=True, max_length=64)
    epoch = models.BigIntegerField(default=0)

    def __str__(self):
        return f"{self.thread_id} at lease epoch {self.epoch}"
