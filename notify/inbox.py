"""What is yours: the inbox index, kept at the append seam (docs/notifications.md, Inbox).

The append seam (``threads.seam``, its ``inbox`` step) calls ``after_append`` for every
append to a thread stream, whoever wrote it. A chat that mentions a person who may read the
thread, a bot's chat answering messages a person wrote (``Asked``, from
``signal.dispatch.started``), or any chat of a direct conversation (for its other people)
becomes an ``InboxItem`` for that person; a tombstone removes
the items of the chat it names; an edit by the author refreshes their text. Each person
concerned is told over the channel layer (``inbox-<user id>``), which every live page of
theirs listens to.

The index is a cache of the logs: an error here never fails the append; the seam records
the step as owed and its sweep runs it again, and ``manage.py rebuild_inbox`` rebuilds it
whole (``rebuild_thread``), keeping what was marked read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import transaction

from arbe_lib.events import send_to_group
from dispatch.decide import mentions
from houses.access import readers_of
from houses.models import Agent
from notify.models import Asked, InboxItem
from threads.entries import Chat, DispatchStarted, Entry, EntryDeleted, EntryEdited
from threads.models import EntryLocation, Thread

logger = logging.getLogger(__name__)
TEXT_CHARS = 300


def inbox_group(user_id) -> str:
    """Every live page of one person: what is addressed to them, and their inbox's reads."""
    return f"inbox-{user_id}"


def flat(text: str) -> str:
    return " ".join(text.split())[:TEXT_CHARS]


def after_append(thread_id: str, entries: Sequence[Entry]) -> None:
    chats = [e for e in entries if isinstance(e.payload, Chat)]
    deleted = [e.payload.entryId for e in entries if isinstance(e.payload, EntryDeleted)]
    edits = {e.payload.entryId: e for e in entries if isinstance(e.payload, EntryEdited)}
    told: dict[int, dict] = {}
    # Most chat addresses nobody: one query (who asked its bot authors, if any) says so.
    mentioning = any(mentions(e.payload.text) for e in chats)
    asked = _asked_now(thread_id, chats) if chats else {}
    thread = None
    if chats:
        thread = (
            Thread.objects.filter(pk=thread_id).only("house_id", "chat_seq", "visibility").first()
        )
        if thread is not None and not (mentioning or asked or thread.is_direct):
            thread = None
    if thread is not None:
        # Positions as threads.unread just counted them (it ran first at the seam).
        first = thread.chat_seq - len(chats)
        positions = {e.id: first + i + 1 for i, e in enumerate(chats)}
        items = _items_for(thread, chats, positions, asked)
        if items:
            InboxItem.objects.bulk_create(items, ignore_conflicts=True)  # a retried append
            for item in items:
                told[item.user_id] = {"type": "inbox.item", "thread": thread_id}
                told[item.user_id]["entry"] = item.entry_id
    if deleted:
        gone = InboxItem.objects.filter(thread_id=thread_id, entry_id__in=deleted)
        for user_id in set(gone.values_list("user_id", flat=True)):
            told.setdefault(user_id, {"type": "inbox.changed", "thread": thread_id})
        gone.delete()
    if edits:
        _apply_edits(thread_id, edits)
    for user_id, event in told.items():
        send_to_group(inbox_group(user_id), event)


def _asked_now(thread_id: str, chats: list[Entry]) -> dict[str, list[int]]:
    """Per bot that wrote one of ``chats``, the people its current reply answers."""
    bots = {e.authorId for e in chats if e.authorId}
    if not bots:
        return {}
    rows = Asked.objects.filter(thread_id=thread_id, bot_id__in=bots)
    return {row.bot_id: list(row.user_ids) for row in rows}


@dataclass(frozen=True)
class _Lookups:
    """Who ``chats`` can address: the thread's readers, their handles, the authors' kinds."""

    readers: set[int]
    by_handle: dict[str, int]
    kinds: dict[str, str]
    author_users: dict[str, int]


def _lookups(thread: Thread, chats: list[Entry]) -> _Lookups:
    handles = {h for e in chats for h in mentions(e.payload.text)}
    readers = set(readers_of(thread).values_list("pk", flat=True))
    people = Agent.objects.filter(kind=Agent.Kind.PERSON, user_id__in=readers)
    by_handle = dict(people.filter(handle__in=handles).values_list("handle", "user_id"))
    authors = {e.authorId for e in chats if e.authorId}
    kinds = dict(Agent.objects.filter(pk__in=authors).values_list("pk", "kind"))
    author_users = dict(people.filter(pk__in=authors).values_list("pk", "user_id"))
    return _Lookups(readers, by_handle, kinds, author_users)


def _items_for(
    thread: Thread,
    chats: list[Entry],
    positions: dict[str, int],
    asked: dict[str, list[int]],
    found: _Lookups | None = None,
) -> list[InboxItem]:
    """The items ``chats`` make: mentions of readers, bots' replies to whoever asked.
    ``found``: the lookups already made for these chats (a rebuild makes them once)."""
    found = found or _lookups(thread, chats)
    readers, by_handle = found.readers, found.by_handle
    kinds, author_users = found.kinds, found.author_users
    out: list[InboxItem] = []
    seen: set[tuple[int, str]] = set()
    for e in chats:
        own = author_users.get(e.authorId or "")
        named = [h for h in mentions(e.payload.text) if h in by_handle]
        targets = [(by_handle[h], InboxItem.Kind.MENTION) for h in named]
        if kinds.get(e.authorId or "") == Agent.Kind.BOT:
            answered = asked.get(e.authorId, [])
            targets += [(u, InboxItem.Kind.REPLY) for u in answered if u in readers]
        if thread.is_direct:  # all of it is addressed to its people (ordered: first wins)
            targets += [(u, InboxItem.Kind.DIRECT) for u in sorted(readers)]
        for user_id, kind in targets:
            if user_id == own or (user_id, e.id) in seen:
                continue  # never your own message; a mention wins over a reply
            seen.add((user_id, e.id))
            out.append(
                InboxItem(
                    user_id=user_id,
                    thread_id=thread.pk,
                    house_id=thread.house_id,
                    entry_id=e.id,
                    kind=kind,
                    author_id=e.authorId or "",
                    text=flat(e.payload.text),
                    seq=positions[e.id],
                    ts=e.ts,
                )
            )
    return out


def _apply_edits(thread_id: str, edits: dict[str, Entry]) -> None:
    """An edit by the chat's author refreshes the text its items show."""
    if not InboxItem.objects.filter(thread_id=thread_id, entry_id__in=list(edits)).exists():
        return  # the usual case: nobody was addressed by the edited chat
    rows = EntryLocation.objects.filter(
        thread_id=thread_id, entry_id__in=list(edits), type="chat", deleted_by=""
    ).values_list("entry_id", "author_id")
    for entry_id, author in rows:
        edit = edits[entry_id]
        if edit.authorId == author:
            InboxItem.objects.filter(thread_id=thread_id, entry_id=entry_id).update(
                text=flat(edit.payload.text)
            )


# -- repair from the log --------------------------------------------------------------


def items_from_log(thread: Thread, entries: Iterable[Entry]) -> tuple[list[InboxItem], int]:
    """Every item ``thread``'s log makes, as the seam would have made them one by one, and
    how many chat entries the log holds (positions up to it are covered)."""
    from threads.entries import first_of_each_id
    from threads.projection import latest_texts, tombstoned_ids

    entries = first_of_each_id(list(entries))
    gone, texts = tombstoned_ids(entries), latest_texts(entries)
    authors = {e.id: e.authorId for e in entries if isinstance(e.payload, Chat) and e.authorId}
    person_of = dict(
        Agent.objects.filter(pk__in=set(authors.values()), kind=Agent.Kind.PERSON).values_list(
            "pk", "user_id"
        )
    )
    asked: dict[str, list[int]] = {}
    out: list[InboxItem] = []
    seq = 0
    # One set of lookups for every chat that may address someone, not one per chat.
    chats = [e for e in entries if isinstance(e.payload, Chat) and e.id not in gone]
    found = _lookups(thread, chats) if chats else None
    for e in entries:
        p = e.payload
        if isinstance(p, DispatchStarted) and p.round == 0:
            users = {person_of.get(authors.get(i, "")) for i in p.entryIds} - {None}
            asked[p.agentId] = sorted(users)
        elif isinstance(p, Chat):
            seq += 1
            addressed = mentions(p.text) or asked.get(e.authorId or "") or thread.is_direct
            if e.id in gone or not addressed:
                continue
            # Who is addressed comes from the chat as sent (as at the seam); the text shown
            # is its latest edit.
            made = _items_for(thread, [e], {e.id: seq}, asked, found)
            for item in made:
                item.text = flat(texts.get(e.id, p.text))
            out += made
    return out, seq


def rebuild_thread(thread: Thread, entries: Sequence[Entry]) -> int:
    """Make ``thread``'s items what its log says; returns how many there are.

    What was marked read stays read (rows are updated in place, never replaced). An item
    past the log that was read (appended since) is left alone: it is newer than the read.
    """
    items, seen = items_from_log(thread, entries)
    wanted = {(i.user_id, i.entry_id): i for i in items}
    with transaction.atomic():
        rows = {(r.user_id, r.entry_id): r for r in InboxItem.objects.filter(thread=thread)}
        stale = [r.pk for key, r in rows.items() if key not in wanted and r.seq <= seen]
        InboxItem.objects.filter(pk__in=stale).delete()
        changed = []
        for key, item in wanted.items():
            row = rows.get(key)
            now = (item.seq, item.text, item.kind)
            if row is not None and (row.seq, row.text, row.kind) != now:
                row.seq, row.text, row.kind = item.seq, item.text, item.kind
                changed.append(row)
        InboxItem.objects.bulk_update(changed, ["seq", "text", "kind"])
        fresh = [item for key, item in wanted.items() if key not in rows]
        InboxItem.objects.bulk_create(fresh, ignore_conflicts=True)
    return len(items)
