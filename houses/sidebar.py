"""The sidebar beside every house and thread page (docs/unread.md, The sidebar).

The house's live threads by recent activity, a page at a time (``threads.paging``), each
with the person's unread count (``threads.unread``) and their unread items from the inbox
index (``notify.yours``: the mention badge), both asked with the page of threads as the
house page's rows ask them (``houses.fragments.with_reads``); then the person's other houses
with their unread totals and mentions, and the bell's count. Four queries however many
threads or houses there are: a page of threads with what the person read of each, houses,
house unread totals, house mentions (the bell's count is their sum).

The same functions render the fragments the page's socket sends (``houses.yours_socket``).
"""

from __future__ import annotations

import functools

from django.db.models import Exists, OuterRef, Subquery
from django.template.loader import render_to_string
from django.urls import reverse

from houses.access import houses_of
from houses.fragments import with_reads
from notify import yours
from notify.models import HouseNotify, ThreadMode, ThreadNotify
from threads.models import Thread
from threads.paging import page_of
from threads.people import label_rows
from threads.unread import house_unread, unread_count

ROWS = 40  # a tall screen of rows; more load from the list's last row


@functools.cache
def _thread_url_pattern() -> str:
    return reverse("thread", args=["__id__"])


def thread_url(thread_id: str) -> str:
    # One reverse per process, not per row: a page of rows renders in a fraction of the time.
    return _thread_url_pattern().replace("__id__", thread_id)


def side_rows(threads, user, current: str = "") -> list[dict]:
    """Rows of threads asked ``with_reads`` for ``user``."""
    rows = [
        {
            "thread": t,
            "url": thread_url(t.pk),
            "unread": unread_count(t, t.read_seq or 0, t.read_gone or 0),
            "mentions": t.read_mentions or 0,
            "current": t.pk == current,
            # Greyed and not bold, as Slack and Zulip show a muted channel; badges stay.
            "muted": t.side_mode == ThreadMode.MUTE
            or (t.side_house_muted and t.side_mode != ThreadMode.ALL),
        }
        for t in threads
    ]
    return label_rows(rows, user)  # a direct conversation by the other people's names


def live_threads(house_id: int):
    # Only the columns a row shows: the page at 3,000 threads reads no status or caches.
    return Thread.objects.filter(house_id=house_id, archived_at__isnull=True).only(
        "id", "title", "chat_seq", "last_entry_ts", "house_id", "visibility"
    )


def side_threads(house_id: int, user):
    """Live threads with what ``user`` read of each and whether they muted it (or its
    house), in the one query of the page of rows."""
    mode = ThreadNotify.objects.filter(user=user, thread=OuterRef("pk")).values("mode")[:1]
    return with_reads(live_threads(house_id), user).annotate(
        side_mode=Subquery(mode),
        side_house_muted=Exists(HouseNotify.objects.filter(user=user, house=OuterRef("house_id"))),
    )


def rows_page(house_id: int, user, current: str = "", cursor: str = "") -> dict:
    page = page_of(side_threads(house_id, user), cursor, ROWS)
    rows = side_rows(page.rows, user, current)
    return {"side_rows": rows, "side_next": page.next, "side_current": current}


def houses_block(user, house_id: int | None) -> dict:
    """The person's other houses with their totals, and the bell's count (three queries)."""
    muted = Exists(HouseNotify.objects.filter(user=user, house=OuterRef("pk")))
    houses = [
        h
        for h in houses_of(user).only("id", "name", "slug").annotate(muted=muted)
        if h.pk != house_id
    ]
    unread = house_unread(user, [h.pk for h in houses])  # the current house's rows show its own
    mentions = yours.by_house(user)
    others = [
        {
            "house": h,
            "unread": unread.get(h.pk, 0),
            "mentions": mentions.get(h.pk, 0),
            "muted": h.muted,
        }
        for h in houses
    ]
    return {"side_houses": others, "inbox_count": sum(mentions.values())}


def sidebar_context(house, user, current: str = "") -> dict:
    """Everything the sidebar renders on a page (four queries)."""
    return {"side_house": house} | rows_page(house.pk, user, current) | houses_block(user, house.pk)


# -- fragments for the socket ---------------------------------------------------------


def row_fragment(house_id: int, thread_id: str, user, *, current: str = "", move: bool) -> str:
    """One thread's row, fresh: moved to the top (news) or replaced in place (a read)."""
    thread = side_threads(house_id, user).filter(pk=thread_id).first()
    if thread is None:
        return ""
    (row,) = side_rows([thread], user, current)
    # Into ``#side-patch``: yours.js replaces the row (or moves it to the top), and drops it
    # when the row isn't among those loaded (a read far down the list).
    return render_to_string("houses/_side_patch.html", {"row": row, "move": move})


def rows_fragment(house_id: int, user, current: str = "") -> str:
    """The first page of rows, fresh (the inbox was marked read: every badge changed)."""
    from houses.models import House

    context = rows_page(house_id, user, current) | {"side_house": House.objects.get(pk=house_id)}
    return render_to_string("houses/_side_threads.html", context | {"oob": True})


def houses_fragment(user, house_id: int | None) -> str:
    context = houses_block(user, house_id) | {"oob": True}
    return render_to_string("houses/_side_houses.html", context) + render_to_string(
        "notify/_inbox_bell.html", context
    )


def bell_fragment(user) -> str:
    context = {"inbox_count": yours.unread_total(user), "oob": True}
    return render_to_string("notify/_inbox_bell.html", context)
