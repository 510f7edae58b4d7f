"""Reading the inbox index (``notify.inbox`` writes it): the inbox list, the bell's count and
the per-thread and per-house mention counts the sidebar and the house page show.

Membership is checked on every read through ``houses.access.houses_of`` and ``read_by``: a
person removed from a house, or from a private thread, sees nothing of it, whatever items the
index still holds. An item is unread
while it was not marked read from the inbox (``read_at``) and the person's read position in
its thread is before it (``ThreadRead.read_seq < seq``): reading the thread past a mention
reads it, without any write to the index. Each function is one query.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db.models import BooleanField, Count, ExpressionWrapper, F, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from arbe_lib.events import send_to_group
from houses.access import houses_of, read_by
from notify.inbox import inbox_group
from notify.models import InboxItem
from threads.models import ThreadRead
from threads.people import direct_titles

PAGE = 50


def _read_seq():
    read = ThreadRead.objects.filter(user=OuterRef("user"), thread=OuterRef("thread")).values(
        "read_seq"
    )[:1]
    return Coalesce(Subquery(read), Value(0))


def mine(user):
    """The person's items in houses they belong to, each with ``is_unread``."""
    return (
        InboxItem.objects.filter(user=user, house__in=houses_of(user).values("pk"))
        .filter(read_by(user, "thread__"))  # out of a private thread: its items are hidden
        .annotate(read_seq=_read_seq())
        .annotate(
            is_unread=ExpressionWrapper(
                Q(read_at__isnull=True) & Q(seq__gt=F("read_seq")), output_field=BooleanField()
            )
        )
    )


def unread(user):
    return mine(user).filter(read_at__isnull=True, seq__gt=F("read_seq"))


def unread_total(user) -> int:
    """The bell's count: items across every house not read yet."""
    if user is None or not user.is_authenticated:
        return 0
    return unread(user).count()


def by_thread(user, thread_ids) -> dict[str, int]:
    """``{thread id: unread items}`` (the mention badge of a thread's row)."""
    rows = (
        unread(user)
        .filter(thread_id__in=list(thread_ids))
        .values("thread_id")
        .annotate(n=Count("pk"))
        .values_list("thread_id", "n")
    )
    return dict(rows)


def by_house(user) -> dict[int, int]:
    """``{house id: unread items}`` over every house of the person (one query)."""
    rows = unread(user).values("house_id").annotate(n=Count("pk")).values_list("house_id", "n")
    return dict(rows)


@dataclass(frozen=True)
class Item:
    id: int
    entry_id: str
    kind: str
    thread_id: str
    thread_title: str
    house_id: int
    house_slug: str
    house_name: str
    author_id: str
    text: str
    ts: int
    unread: bool

    @property
    def moment(self) -> datetime:
        return datetime.fromtimestamp(self.ts / 1000, tz=UTC)


def page(user, before: tuple[int, int] | None = None, limit: int = PAGE) -> list[Item]:
    """The newest items first; ``before`` is the (ts, id) of the last one shown."""
    rows = mine(user).select_related("thread", "house").order_by("-ts", "-id")
    if before is not None:
        ts, pk = before
        rows = rows.filter(Q(ts__lt=ts) | Q(ts=ts, id__lt=pk))
    rows = list(rows[:limit])
    titles = direct_titles([r.thread for r in rows], user=user)  # a DM by its other people
    return [
        Item(
            r.pk,
            r.entry_id,
            r.kind,
            r.thread_id,
            titles.get(r.thread_id, r.thread.title),
            r.house_id,
            r.house.slug,
            r.house.name,
            r.author_id,
            r.text,
            r.ts,
            bool(r.is_unread),
        )
        for r in rows
    ]


def mark_all_read(user) -> int:
    """Everything in the inbox is read (the threads' own unread counts stay as they are)."""
    ids = list(unread(user).values_list("pk", flat=True))
    done = InboxItem.objects.filter(pk__in=ids).update(read_at=timezone.now()) if ids else 0
    if done:
        send_to_group(inbox_group(user.pk), {"type": "inbox.changed", "thread": ""})
    return done


def mentions_of(user):
    """Per thread (``OuterRef("pk")``): the person's unread items there, as an expression a
    thread query annotates (the house page's rows ask it with their read positions)."""
    read = ThreadRead.objects.filter(user=user, thread=OuterRef(OuterRef("pk"))).values("read_seq")[
        :1
    ]
    items = (
        InboxItem.objects.filter(
            user=user,
            thread=OuterRef("pk"),
            read_at__isnull=True,
            seq__gt=Coalesce(Subquery(read), Value(0)),
        )
        .order_by()
        .values("thread")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(items), Value(0))
