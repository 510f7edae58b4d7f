"""Unread mentions per person and thread, counted at the append seam beside unread.

A chat that mentions ``@handle`` of a person in the house adds one to their
``ThreadRead.mentions`` and moves ``mention_seq`` to its chat position, unless they have
read past it already (their own message, an open page). Reading up to ``mention_seq``
clears the count (``threads.unread.advance``), so the house page's mention badge shows
``mentions`` while ``mention_seq > read_seq``. Like unread, a cache of the log: positions
come from the seam, never from offsets.
"""

from __future__ import annotations

from django.db import connection
from django.utils import timezone

from threads.models import Thread, ThreadRead


def note_mentions(thread_id: str, fresh: list, first: int) -> None:
    """``fresh`` chats took positions ``first + 1`` onwards: count who they mention."""
    from dispatch.decide import mentions
    from houses.models import Agent

    wanted: dict[str, list[tuple[int, str | None]]] = {}
    for i, entry in enumerate(fresh):
        for handle in mentions(entry.payload.text):
            wanted.setdefault(handle, []).append((first + i + 1, entry.authorId))
    if not wanted:
        return
    house_id = Thread.objects.filter(pk=thread_id).values_list("house_id", flat=True).first()
    people = Agent.objects.filter(
        kind=Agent.Kind.PERSON, handle__in=wanted, user__memberships__house_id=house_id
    ).values_list("pk", "handle", "user_id")
    for agent_id, handle, user_id in people:
        positions = [p for p, author in wanted[handle] if author != agent_id]
        if positions:
            _count(user_id, thread_id, len(positions), max(positions))


def _count(user_id, thread_id: str, n: int, newest: int) -> None:
    """One statement: add ``n`` mentions up to position ``newest``, unless read past it."""
    table = ThreadRead._meta.db_table
    sql = (
        f"INSERT INTO {table} (user_id, thread_id, read_seq, read_at, watchers, mentions,"
        " mention_seq) VALUES (%s, %s, 0, %s, 0, %s, %s)"
        " ON CONFLICT (user_id, thread_id) DO UPDATE"
        f" SET mentions = {table}.mentions + excluded.mentions,"
        f" mention_seq = CASE WHEN excluded.mention_seq > {table}.mention_seq"
        f" THEN excluded.mention_seq ELSE {table}.mention_seq END"
        f" WHERE {table}.read_seq < excluded.mention_seq"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id, thread_id, timezone.now(), n, newest])


def unread_mentions(read_seq: int | None, mentions: int | None, mention_seq: int | None) -> int:
    """The badge's number from a person's read row (no row: none)."""
    if not mentions or not mention_seq or mention_seq <= (read_seq or 0):
        return 0
    return mentions
