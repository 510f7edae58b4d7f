"""The house page's thread rows, for the page and for the house socket alike."""

import re
from datetime import UTC, datetime
from typing import NamedTuple

from django.db.models import Exists, F, FilteredRelation, OuterRef, Q, Subquery
from django.template.loader import render_to_string

from houses.access import readable
from notify.yours import mentions_of
from threads.fragments import Names, house_names
from threads.models import Thread
from threads.paging import page_of
from threads.people import label_rows
from threads.unread import deleted_past, house_unread, unread_count, unread_sum

AGENT_ID = re.compile(r"\bag_[a-z0-9]{12}\b")


def who_is_working(message: str, names: Names) -> str:
    """A status message with agent ids shown as handles ("@helper is thinking")."""
    return AGENT_ID.sub(lambda m: "@" + names.of(m.group()).handle, message)


def thread_rows(threads, names: Names, user=None) -> list[dict]:
    """One row per thread: status, last activity, last message and ``user``'s unread and
    unread-mention counts.

    Everything comes from the thread rows (caches of the log) with the person's read rows
    joined (``with_reads``; asked here when the caller's threads lack them).
    """
    threads = list(threads)
    if user is not None and not all(hasattr(t, "read_seq") for t in threads):
        read = {
            t.pk: t for t in with_reads(Thread.objects.filter(pk__in=[t.pk for t in threads]), user)
        }
        threads = [read[t.pk] for t in threads if t.pk in read]
    rows = [
        {
            "thread": t,
            "message": who_is_working(t.status_message, names),
            "active": when(t.last_entry_ts) or t.created_at,
            "last": (
                {"author": names.of(t.last_chat_author_id), "text": t.last_chat_text}
                if t.last_chat_id
                else None
            ),
            "unread": unread_count(
                t, getattr(t, "read_seq", None) or 0, getattr(t, "read_gone", 0) or 0
            ),
            "mentions": getattr(t, "read_mentions", 0) or 0,
        }
        for t in threads
    ]
    return label_rows(rows, user)  # a direct conversation by the other people's names


def when(ts_ms: int | None) -> datetime | None:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC) if ts_ms is not None else None


def row_fragment(house_id: int, thread_id: str, user=None, *, move: bool = True) -> str:
    """A thread's row freshly rendered for ``user``: moved to the top of the list (it has
    news), or replaced where it is (``move=False``: only its unread count changed)."""
    live = Thread.objects.filter(pk=thread_id, house_id=house_id, archived_at__isnull=True)
    thread = with_reads(live, user).first()
    if thread is None:
        return ""
    (row,) = thread_rows([thread], house_names(house_id, [thread.last_chat_author_id]), user)
    template = "houses/_thread_row_oob.html" if move else "houses/_thread_row_swap.html"
    total = {"unread_total": unread_total(user, house_id), "oob": True}
    return render_to_string(template, {"row": row}) + render_to_string(
        "houses/_unread_total.html", total
    )


def unread_total(user, house_id: int) -> int:
    """The person's unread messages in the house (the tab title's count)."""
    if user is None:
        return 0
    return house_unread(user, [house_id]).get(house_id, 0)


def live_threads(house_id: int):
    """A house's live threads (``threads.paging`` orders them, newest activity first)."""
    return Thread.objects.filter(house_id=house_id, archived_at__isnull=True)


ROWS = 30  # two screens of rows on a laptop; more load as the list is scrolled


def list_context(house, user, cursor: str = "", total: int | None = None) -> dict:
    """A page of the house's thread rows for ``user`` and the cursor of the next page.

    Three queries whatever the house's size: the page of threads with the person's read
    positions, the names on it, and the unread total (unless the caller has it: ``total``).
    """
    threads = with_reads(live_threads(house.pk), user)
    page = page_of(threads, cursor, ROWS)
    authors = [t.last_chat_author_id for t in page.rows]
    rows = thread_rows(page.rows, house_names(house.pk, authors), user)
    context = {"house": house, "rows": rows, "next": page.next}
    if not cursor:  # the first page carries the house's unread total (the tab title)
        context["unread_total"] = unread_total(user, house.pk) if total is None else total
    return context


def with_reads(threads, user):
    """``threads`` each with what ``user`` has read of it, in the same query: ``read_seq``
    (a join on the one read row per person and thread; None: no row), ``read_gone`` (deleted
    chat past it) and ``read_mentions`` (the person's unread inbox items there: the badge)."""
    if user is None:
        return threads
    threads = readable(threads, user)  # a private thread is in its members' lists only
    mine = FilteredRelation("reads", condition=Q(reads__user=user))
    return threads.annotate(mine=mine).annotate(
        read_seq=F("mine__read_seq"),
        read_gone=deleted_past(user),
        read_mentions=mentions_of(user),
    )


class PageFacts(NamedTuple):
    has_board: bool  # the house shows a T3 board
    unread: int  # the person's unread total there
    me_name: str  # the person's display name (the top bar's)
    muted: bool = False  # the person muted the house's notifications


def page_facts(house, user) -> PageFacts:
    """What the house page says beside its list, for ``user``: one query."""
    from houses.models import Agent, House
    from notify.models import HouseNotify

    hosts = House._meta.get_field("t3_hosts").related_model
    row = (
        House.objects.filter(pk=house.pk)
        .annotate(
            has_board=Exists(hosts.objects.filter(house=OuterRef("pk"))),
            unread=unread_sum(user, OuterRef("pk")),
            me_name=Subquery(Agent.objects.filter(user=user).values("display_name")[:1]),
            muted=Exists(HouseNotify.objects.filter(house=OuterRef("pk"), user=user)),
        )
        .values_list("has_board", "unread", "me_name", "muted")
        .get()
    )
    return PageFacts(bool(row[0]), row[1] or 0, row[2] or user.get_username(), bool(row[3]))


def list_fragment(house_id: int, user) -> str:
    """The list's first page, fresh, for a socket that just (re)connected: whatever happened
    between the page's render (or the last frame before a drop) and now is caught up. Pages
    loaded further down go with it; they load again on scroll."""
    from houses.models import House

    context = list_context(House.objects.get(pk=house_id), user) | {"oob": True}
    return render_to_string("houses/_thread_list.html", context) + render_to_string(
        "houses/_unread_total.html", context
    )
