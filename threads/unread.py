"""Unread counts and the last message, kept beside each thread (docs/unread.md).

A thread's chat entries are numbered in log order as they are appended:
``Thread.chat_seq`` is how many there are, so the n-th chat is position n. A
person's ``ThreadRead.read_seq`` is the position they have read up to, and their
unread count is ``chat_seq - read_seq`` less the deleted chat past ``read_seq`` (the chat
index keeps each chat's position, ``EntryLocation.seq``). Positions come from the log's own order,
counted at the append seam; offsets stay opaque.

The append seam (``threads.recency.after_append``) calls ``note_appended`` once
per append. It also caches the newest chat still shown (author, snippet, time) on
the row, so the house page lists threads without folding streams. Both are caches
of the log: ``rebuild_chat_cache`` recomputes them from the stream.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import timedelta

from django.db import connection
from django.db.models import Case, Count, F, OuterRef, Q, Subquery, Sum, Value, When
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from arbe_lib.events import send_to_group
from threads.entries import Chat, EntryDeleted, first_of_each_id
from threads.models import EntryLocation, Thread, ThreadRead

logger = logging.getLogger(__name__)
SNIPPET_CHARS = 140
# How long an open page counts as watching without news of it (a crashed process's count).
WATCH_TTL = timedelta(minutes=10)
WHITESPACE = re.compile(r"\s+")


def reads_group(user_id) -> str:
    """Every house page one person has open: a read in one tab clears the others."""
    return f"reads-{user_id}"


def snippet(text: str) -> str:
    flat = WHITESPACE.sub(" ", text).strip()
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1].rstrip() + "…"


def note_appended(thread_id: str, entries: Sequence) -> dict[str, int]:
    """The append seam's hook: number new chat, cache the newest, and let authors have read it.

    Runs before ``locate_chat`` records the batch, so a chat already located (a retried
    append that reached the seam twice) is not counted again. Returns the position of each
    chat it counted (``locate_chat`` keeps it, for unread counts that skip deleted chat).
    """
    positions: dict[str, int] = {}
    chats = [e for e in entries if isinstance(e.payload, Chat)]
    if chats:
        known = set(
            EntryLocation.objects.filter(
                thread_id=thread_id, entry_id__in=[e.id for e in chats]
            ).values_list("entry_id", flat=True)
        )
        fresh = [e for e in first_of_each_id(chats) if e.id not in known]
        if fresh:
            positions = _count_chat(thread_id, fresh)
    deleted = {e.payload.entryId for e in entries if isinstance(e.payload, EntryDeleted)}
    if deleted and Thread.objects.filter(pk=thread_id, last_chat_id__in=deleted).exists():
        _refresh_last_chat(thread_id, deleted)
    return positions


def _count_chat(thread_id: str, fresh: list) -> dict[str, int]:
    last = fresh[-1]
    # The newest chat by time wins: two appends' hooks may run in either order.
    newer = Q(last_chat_ts__isnull=True) | Q(last_chat_ts__lte=last.ts)

    def if_newer(field: str, value):
        kind = Thread._meta.get_field(field)
        return Case(When(newer, then=Value(value, output_field=kind)), default=F(field))

    updated = Thread.objects.filter(pk=thread_id).update(
        chat_seq=F("chat_seq") + len(fresh),
        last_chat_id=if_newer("last_chat_id", last.id),
        last_chat_author_id=if_newer("last_chat_author_id", last.authorId or ""),
        last_chat_text=if_newer("last_chat_text", snippet(last.payload.text)),
        last_chat_ts=if_newer("last_chat_ts", last.ts),
    )
    if not updated:
        return {}
    # Whoever writes a message has read the thread up to it.
    seq = Thread.objects.filter(pk=thread_id).values_list("chat_seq", flat=True).first() or 0
    first = seq - len(fresh)
    positions = {e.id: first + i + 1 for i, e in enumerate(fresh)}
    position = {e.authorId: first + i + 1 for i, e in enumerate(fresh) if e.authorId}
    from houses.models import Agent

    people = Agent.objects.filter(
        pk__in=position, kind=Agent.Kind.PERSON, user__isnull=False
    ).values_list("pk", "user_id")
    for agent_id, user_id in people:
        advance(user_id, thread_id, position[agent_id])
    # People with the thread open see it land (their page's socket refreshes ``watching_until``).
    ThreadRead.objects.filter(
        thread_id=thread_id, watchers__gt=0, watching_until__gt=timezone.now(), read_seq__lt=seq
    ).update(read_seq=seq)
    return positions


def advance(user_id, thread_id: str, seq: int) -> bool:
    """Move a person's read position forward to ``seq``, never back; True if it moved.

    One statement whatever the row's state (an upsert guarded by ``read_seq < seq``), so
    the pages that mark reads keep a constant query count.
    """
    table = ThreadRead._meta.db_table
    sql = (
        f"INSERT INTO {table} (user_id, thread_id, read_seq, read_at, watchers)"
        " VALUES (%s, %s, %s, %s, 0)"
        " ON CONFLICT (user_id, thread_id) DO UPDATE"
        " SET read_seq = excluded.read_seq, read_at = excluded.read_at"
        f" WHERE {table}.read_seq < excluded.read_seq RETURNING id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id, thread_id, max(seq, 0), timezone.now()])
        return cursor.fetchone() is not None and seq > 0


def start_at_tail(user_id, house_id: int) -> None:
    """A person who just joined a house has read every thread up to now: what was said
    before they came is history, not news (their unread count starts at the join)."""
    reads, threads = ThreadRead._meta.db_table, Thread._meta.db_table
    sql = (
        f"INSERT INTO {reads} (user_id, thread_id, read_seq, read_at, watchers)"
        f" SELECT %s, id, chat_seq, %s, 0 FROM {threads} WHERE house_id = %s"
        " ON CONFLICT (user_id, thread_id) DO UPDATE SET read_seq = excluded.read_seq"
        f" WHERE {reads}.read_seq < excluded.read_seq"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id, timezone.now(), house_id])


def _behind(user):
    """Per thread (``OuterRef("pk")``): chat past the person's read position."""
    read = ThreadRead.objects.filter(user=user, thread=OuterRef("pk")).values("read_seq")[:1]
    return Greatest(F("chat_seq") - Coalesce(Subquery(read), Value(0)), Value(0))


def unread_sum(user, house_id):
    """One house's unread messages for one person, as an expression (``house_id`` may be an
    ``OuterRef``): chat past their read positions in its live threads, less the deleted chat
    among it. The deleted are counted over the house's deleted chat (few), not thread by
    thread (a house may have thousands), so the total costs what it did before deletions
    counted."""
    from houses.access import read_by

    behind = (
        Thread.objects.filter(house_id=house_id, archived_at__isnull=True)
        .filter(read_by(user))  # a private thread counts for its members only
        .values("house_id")
        .annotate(n=Sum(_behind(user)))
        .values("n")[:1]
    )
    read = ThreadRead.objects.filter(user=user, thread=OuterRef("thread")).values("read_seq")[:1]
    gone = (
        EntryLocation.objects.filter(thread__house_id=house_id, thread__archived_at__isnull=True)
        .filter(read_by(user, "thread__"))
        .exclude(deleted_by="")
        .filter(seq__gt=Coalesce(Subquery(read), Value(0)))  # seq 0: position not known
        .order_by()
        .values("thread__house_id")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    total = Coalesce(Subquery(behind), Value(0)) - Coalesce(Subquery(gone), Value(0))
    return Greatest(total, Value(0))


def house_unread(user, house_ids) -> dict[int, int]:
    """``{house id: unread messages in its live threads}`` for one person (one query)."""
    from houses.models import House

    house_ids = list(house_ids)
    if not house_ids:
        return {}
    rows = (
        House.objects.filter(pk__in=house_ids)
        .annotate(n=unread_sum(user, OuterRef("pk")))
        .values_list("pk", "n")
    )
    return {house_id: n or 0 for house_id, n in rows}


def deleted_past(user):
    """Per thread (``OuterRef("pk")``): its deleted chat past the person's read position.
    ``seq`` 0 is a position not known (indexed before positions were kept): not counted."""
    outer_read = ThreadRead.objects.filter(user=user, thread=OuterRef(OuterRef("pk")))
    past = Coalesce(Subquery(outer_read.values("read_seq")[:1]), Value(0))
    gone = (
        EntryLocation.objects.exclude(deleted_by="")
        .filter(thread=OuterRef("pk"), seq__gt=past)
        .order_by()
        .values("thread")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(gone), Value(0))


def watch_changes(changes: dict[tuple[int, str], tuple[int, int, bool]]) -> None:
    """Thread pages opened, closed or still open, summed per (person id, thread id) as
    ``(opened, closed, refreshed)`` (``threads.watching`` collects them).

    Opening or keeping a page open reads the thread. While a person has one open, chat
    that lands is read at once (``_count_chat``); ``watching_until`` stops a count left by
    a process that died from lasting.
    """
    until = timezone.now() + WATCH_TTL
    for (user_id, thread_id), (opened, closed, refreshed) in changes.items():
        mine = ThreadRead.objects.filter(user_id=user_id, thread_id=thread_id)
        if opened or refreshed:
            _mark_read(user_id, thread_id)  # makes the row too
        if opened:
            watchers = Greatest(F("watchers") + (opened - closed), Value(0))
            mine.update(watchers=watchers, watching_until=until)
            continue
        changed = {"watching_until": until} if refreshed else {}
        if closed:
            changed["watchers"] = Greatest(F("watchers") - closed, Value(0))
        if changed:
            mine.filter(watchers__gt=0).update(**changed)


def mark_read(user, thread: Thread | str) -> bool:
    """The person has seen ``thread`` to its newest chat; their other house pages are told."""
    if isinstance(thread, Thread):
        return _mark_read(user.pk, thread.pk, thread.chat_seq)
    return _mark_read(user.pk, thread)


def _mark_read(user_id, thread_id: str, seq: int | None = None) -> bool:
    if seq is None:
        seq = Thread.objects.filter(pk=thread_id).values_list("chat_seq", flat=True).first()
        if seq is None:
            return False
    if not advance(user_id, thread_id, seq):
        return False
    send_to_group(reads_group(user_id), {"type": "thread.read", "thread": thread_id})
    return True


def read_positions(user, thread_ids) -> dict[str, int]:
    """``{thread id: read_seq}`` for one person (one query; missing means nothing read)."""
    return dict(
        ThreadRead.objects.filter(user=user, thread_id__in=list(thread_ids)).values_list(
            "thread_id", "read_seq"
        )
    )


def unread_count(thread: Thread, read_seq: int, deleted: int = 0) -> int:
    """Chat past ``read_seq``, less the ``deleted`` chat among it (``deleted_past``)."""
    return max(thread.chat_seq - read_seq - deleted, 0)


# -- repair from the log --------------------------------------------------------------


def _last_shown_chat(entries):
    from threads.projection import tombstoned_ids

    gone = tombstoned_ids(entries)
    chats = [e for e in first_of_each_id(entries) if isinstance(e.payload, Chat)]
    shown = [e for e in chats if e.id not in gone]
    return chats, (shown[-1] if shown else None)


def _last_chat_fields(last) -> dict:
    if last is None:
        return {"last_chat_id": "", "last_chat_author_id": "", "last_chat_text": ""} | {
            "last_chat_ts": None
        }
    return {
        "last_chat_id": last.id,
        "last_chat_author_id": last.authorId or "",
        "last_chat_text": snippet(last.payload.text),
        "last_chat_ts": last.ts,
    }


def _refresh_last_chat(thread_id: str, deleted: set[str]) -> None:
    """The cached last chat was tombstoned (``deleted``: this append's tombstones, which the
    chat index has not recorded yet): show the newest one still shown."""
    last = newest_shown_chat(thread_id, deleted)
    Thread.objects.filter(pk=thread_id).update(**_last_chat_fields(last))


def newest_shown_chat(thread_id: str, deleted: set[str] = frozenset()):
    """The newest chat not deleted, read from the thread's newest windows; further back, from
    the window the chat index places it in. Never the whole log, unless the index can't say."""
    from threads import windows
    from threads.reading import read_entries

    tail, _, partial = windows.read_tail(thread_id, windows.WINDOW_CHATS)
    _, last = _last_shown_chat(tail)
    if last is not None or not partial:
        return last
    row = (
        EntryLocation.objects.filter(thread_id=thread_id, deleted_by="", window__gt=0)
        .exclude(entry_id__in=deleted)
        .order_by("-window", "-seq", "-ts")
        .values_list("entry_id", "window")
        .first()
    )
    if row is not None:
        span, _ = windows.read_window(thread_id, row[1])
        found = [e for e in span if e.id == row[0] and isinstance(e.payload, Chat)]
        if found:
            return found[0]
    entries, _ = read_entries(thread_id)  # an index that can't say: the log can
    return _last_shown_chat(entries)[1]


def rebuild_chat_cache(thread_id: str, entries: Sequence | None = None) -> int:
    """Recount a thread's chat from its log (read here unless ``entries`` is the whole log)
    and re-cache its last message; returns chat_seq.

    Read positions keep their distance from the newest chat, so nobody's unread count
    changes when the count is corrected (``manage.py rebuild_chat_cache``).
    """
    from threads.reading import read_entries

    if entries is None:
        entries, _ = read_entries(thread_id)
    chats, last = _last_shown_chat(entries)
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None:
        return 0
    delta = len(chats) - thread.chat_seq
    Thread.objects.filter(pk=thread_id).update(chat_seq=len(chats), **_last_chat_fields(last))
    if delta:
        reads = ThreadRead.objects.filter(thread_id=thread_id)
        kind = ThreadRead._meta.get_field("read_seq")
        shifted = Case(
            When(read_seq__lt=-delta, then=Value(0)),
            default=F("read_seq") + delta,
            output_field=kind,
        )
        reads.update(read_seq=shifted)
    return len(chats)
