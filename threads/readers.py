"""Who reads a thread: the log's ``signal.thread.*`` access entries folded into the access
table (``Thread.visibility``, ``Thread.direct_key``, ``ThreadMember`` rows).

A thread is open to its house until ``signal.thread.made_private`` names its members;
``member_added`` and ``member_removed`` change them after. The table is a cache of that
fold, like the status record: written by the seam step ``readers`` after each append
(``threads.seam``), rebuilt from the log by ``rebuild_readers`` (``manage.py
rebuild_thread_readers``). Access itself is decided in ``houses.access`` only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import transaction

from houses.models import Agent
from threads.entries import Entry, ThreadMadePrivate, ThreadMemberAdded, ThreadMemberRemoved
from threads.models import Thread, ThreadMember, Visibility

ACCESS_TYPES = (ThreadMadePrivate, ThreadMemberAdded, ThreadMemberRemoved)


def direct_key(agent_ids: Iterable[str]) -> str:
    """The identity of a direct conversation: its set of people and bots, order-free."""
    joined = "\n".join(sorted(set(agent_ids)))
    return hashlib.sha256(joined.encode()).hexdigest()[:40]


@dataclass(frozen=True)
class Readers:
    """The fold: who reads a thread after some entries."""

    visibility: str = Visibility.HOUSE
    members: frozenset[str] = frozenset()

    def apply(self, entry: Entry) -> Readers:
        payload = entry.payload
        if isinstance(payload, ThreadMadePrivate):
            kind = Visibility.DIRECT if payload.direct else Visibility.PRIVATE
            return Readers(kind, frozenset(payload.memberIds))
        if self.visibility == Visibility.HOUSE:
            return self  # members of an open thread mean nothing
        if isinstance(payload, ThreadMemberAdded):
            return Readers(self.visibility, self.members | {payload.agentId})
        if isinstance(payload, ThreadMemberRemoved):
            return Readers(self.visibility, self.members - {payload.agentId})
        return self

    @property
    def key(self) -> str:
        return direct_key(self.members) if self.visibility == Visibility.DIRECT else ""


def fold_readers(entries: Iterable[Entry], start: Readers | None = None) -> Readers:
    readers = start or Readers()
    for entry in entries:
        readers = readers.apply(entry)
    return readers


def readers_of_row(thread: Thread) -> Readers:
    """What the table holds now for ``thread`` (one query for a private thread)."""
    if not thread.is_private:
        return Readers()
    members = ThreadMember.objects.filter(thread=thread).values_list("agent_id", flat=True)
    return Readers(thread.visibility, frozenset(members))


def store(thread_id: str, readers: Readers) -> None:
    """Make the table say ``readers`` (one transaction; agents no longer stored are left out:
    a deleted bot or person reads nothing). Removed rows announce the end of live reads
    (``houses.revocation``)."""
    with transaction.atomic():
        thread = Thread.objects.select_for_update().filter(pk=thread_id).first()
        if thread is None:
            return  # the row is written by whoever creates the thread, with its readers
        if thread.visibility != readers.visibility or thread.direct_key != readers.key:
            Thread.objects.filter(pk=thread_id).update(
                visibility=readers.visibility, direct_key=readers.key
            )
        if thread.visibility == Visibility.HOUSE and readers.visibility != Visibility.HOUSE:
            from houses.revocation import thread_closed

            thread_closed(thread_id, thread.house_id, readers.members)  # open reads of others end
        wanted = set(Agent.objects.filter(pk__in=readers.members).values_list("pk", flat=True))
        rows = ThreadMember.objects.filter(thread_id=thread_id)
        have = set(rows.values_list("agent_id", flat=True))
        if gone := have - wanted:
            for member in ThreadMember.objects.filter(thread_id=thread_id, agent_id__in=gone):
                member.delete()  # one by one: each removal ends that person's live reads
        ThreadMember.objects.bulk_create(
            [ThreadMember(thread_id=thread_id, agent_id=a) for a in wanted - have],
            ignore_conflicts=True,
        )


def after_append(thread_id: str, entries: Sequence[Entry]) -> None:
    """The seam step: fold the appended access entries into the table (none: nothing read)."""
    if not any(isinstance(e.payload, ACCESS_TYPES) for e in entries):
        return
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None:
        return
    store(thread_id, fold_readers(entries, readers_of_row(thread)))


def rebuild_readers(thread: Thread, entries: Iterable[Entry]) -> Readers:
    """The table from the whole log of ``thread`` (repair; ``rebuild_thread_readers``)."""
    readers = fold_readers(entries)
    store(thread.pk, readers)
    return readers
