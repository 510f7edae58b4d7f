"""Rendering thread entries and the current view, for the page and for live fragments.

The page and the socket use the same templates: ``threads/_entry.html`` for one
entry (``threads.entry_views`` says what each entry looks like), ``threads/_now.html``
for the current-view panel. Fragments are viewer-agnostic (rendered once per
entry, whoever watches); the page script personalises them by CSS rules made
from the viewer's id (the author's and owners' controls, the viewer's mentions).

Chat Markdown is rendered by ``threads.markup`` and cleaned by ``nh3``;
everything else goes through the template engine's autoescaping.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable

from django.db.models import Q
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from houses.models import Agent
from threads import entries as E
from threads import reactions
from threads.bot_rules import bot_rules
from threads.entry_views import (
    Item,
    avatar,
    describe,
    handles,
    item_context,
    page_items,
    phase_text,
    spend_text,
)
from threads.markup import chat_html
from threads.models import EntryLocation
from threads.narration import Name, Names, narration
from threads.now import ThreadNow
from threads.people import people_fragment
from threads.projection import latest_texts, tombstoned_ids, with_texts
from threads.readers import ACCESS_TYPES
from threads.status import derive_thread_status

__all__ = [
    "Item",
    "Names",
    "entry_fragments",
    "house_names",
    "page_context",
    "page_items",
    "window_context",
]


def house_names(house_id: int, authors: Iterable[str | None] = ()) -> Names:
    """Everyone who can appear in a house's threads (one query), and those of ``authors``
    (ids read from the house's own entries) who have left it since (a second query, only
    then): a removed member's messages keep their name and avatar."""
    agents = Agent.objects.filter(Q(house_id=house_id) | Q(user__memberships__house_id=house_id))
    names = Names((a.id, _name(a)) for a in agents.distinct())
    if gone := {a for a in authors if a and a not in names}:
        names.update((a.id, _name(a)) for a in Agent.objects.filter(pk__in=gone))
    return names


def with_authors_now(names: Names, authors: Iterable[str | None]) -> Names:
    """``names`` with ``authors`` read again (one query): a batch read from the log after a
    rename committed shows the new name, whichever process renamed and however the tail
    was told. A new mapping, not an edit: a render thread may be reading the old one."""
    wanted = {a for a in authors if a}
    if not wanted:
        return names
    fresh = {a.id: _name(a) for a in Agent.objects.filter(pk__in=wanted)}
    if all(names.get(key) == name for key, name in fresh.items()):
        return names
    return Names({**names, **fresh})


def _name(agent: Agent) -> Name:
    return Name(agent.display_name, agent.handle, agent.kind == Agent.Kind.BOT, agent.active)


def authors_of(*parts) -> set[str]:
    """The authors of history slices' entries (``threads.windows.Slice``; None skipped)."""
    return {e.authorId for part in parts if part for e in part.entries if e.authorId}


def render_entry(view: dict, thread_id: str) -> str:
    return render_to_string("threads/_entry.html", {"e": view, "thread_id": thread_id})


class RenderedEntries:
    """Rendered entries by what they show (a digest of the view): entries never change, so a
    page rendering the same window again renders only what is new (a reply's phase, a name).
    Bounded, least recently used first out; shared by the process's threads."""

    def __init__(self, size: int = 8192):
        self.size = size
        self._html: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()

    def html(self, views: list[dict], thread_id: str) -> str:
        out = []
        for view in views:
            key = hashlib.blake2b(repr((thread_id, view)).encode(), digest_size=16).digest()
            with self._lock:
                html = self._html.get(key)
                if html is not None:
                    self._html.move_to_end(key)
            if html is None:
                html = render_entry(view, thread_id)
                with self._lock:
                    self._html[key] = html
                    if len(self._html) > self.size:
                        self._html.popitem(last=False)
            out.append(html)
        return mark_safe("".join(out))

    def clear(self) -> None:
        with self._lock:
            self._html.clear()


rendered = RenderedEntries()


# -- live fragments -------------------------------------------------------------------


def reply_update(entry: E.Entry, names: Names) -> str | None:
    """An in-place change to a reply already on the page: its phase, spend or failure."""
    p = entry.payload
    match p:
        case E.DispatchPhase():
            context = {"kind": "phase", "line": phase_text(p)}
        case E.DispatchFinished():
            context = {
                "kind": "spend",
                "line": spend_text(p.spend),
                "tokens": p.spend.totalTokens,
                "cost": p.spend.costUsd,
            }
        case E.DispatchFailed(final=True) | E.ThreadOrphaned() if p.dispatchId:
            context = {
                "kind": "failed",
                "line": narration(p, names, entry.authorId) or "The reply failed.",
            }
        case E.ThreadRunState(state="failed" | "dead", childThreadId=None):
            context = {
                "kind": "failed",
                "line": narration(p, names, entry.authorId) or "The run failed.",
                "dispatch": p.runId,  # a run's line is under its run id (entry_views.reply_id)
            }
        case _:
            return None
    context = {"dispatch": getattr(p, "dispatchId", None)} | context
    return render_to_string("threads/_reply_update.html", context)


def edited_fragment(entry: E.Entry, names: Names) -> str:
    """An edit, live: the chat's new body, which the page script puts in place of the old
    one when the page shows that chat from that author (``static/arbe/live.js``), else drops."""
    p = entry.payload
    html = mark_safe(chat_html(p.text, handles(names)))  # cleaned by nh3
    return render_to_string(
        "threads/_edited.html",
        {"entry_id": p.entryId, "author_id": entry.authorId or "", "html": html},
    )


def entry_fragments(entries: list[E.Entry], names: Names, thread_id: str) -> list[tuple[str, str]]:
    """``(entry id, fragment)`` for entries arriving live: appends, reply updates, deletions.

    Chat tombstoned within the same batch is never appended; a tombstone deletes its
    target wherever the page shows it.
    """
    gone = tombstoned_ids(entries)
    out = []
    for entry in with_texts(E.first_of_each_id(entries), latest_texts(entries)):
        p = entry.payload
        if isinstance(p, E.EntryDeleted):
            html = render_to_string("threads/_deleted.html", {"entry_id": p.entryId})
            out.append((entry.id, html))
            continue
        if isinstance(p, E.EntryEdited):
            out.append((entry.id, edited_fragment(entry, names)))
            continue
        if isinstance(p, E.EntryReaction):
            if entry.authorId and reactions.is_emoji(p.emoji):
                context = {"p": p, "agent": entry.authorId, "name": names.of(entry.authorId)}
                out.append((entry.id, render_to_string("threads/_reacted.html", context)))
            continue
        if not p.shown or (isinstance(p, E.Chat) and entry.id in gone):
            continue
        if (update := reply_update(entry, names)) is not None:
            out.append((entry.id, update))
            continue
        view = describe(entry, names)
        if view is None:
            continue
        dispatch_id = getattr(p, "dispatchId", None)
        in_reply = isinstance(p, E.PiPayload | E.DispatchSteered) and dispatch_id
        target = f"#tr-{dispatch_id}" if in_reply else "#entries"
        view["transcript"] = []
        html = mark_safe(render_entry(view, thread_id))
        html = render_to_string("threads/_append.html", {"target": target, "html": html})
        # The message's files give way where it is shown; a deleted message (its files go
        # with it) is shown nowhere, and an out-of-band swap with no target is an error.
        if isinstance(p, E.FilesPurged) and not _deleted(thread_id, p.entryId, gone):
            html += render_to_string("threads/_files_purged.html", {"entry_id": p.entryId})
        if isinstance(p, ACCESS_TYPES):  # who reads it changed: every open page's panel
            ids = [e.id for e in entries if isinstance(e.payload, ACCESS_TYPES)]
            upto = ids[: ids.index(entry.id) + 1]
            html += people_fragment(thread_id, [e for e in entries if e.id in upto])
        out.append((entry.id, html))
    return out


def _deleted(thread_id: str, entry_id: str, gone: set) -> bool:
    if entry_id in gone:
        return True
    return (
        EntryLocation.objects.filter(thread_id=thread_id, entry_id=entry_id)
        .exclude(deleted_by="")
        .exists()
    )


def now_context(now: ThreadNow, names: Names, thread_id: str) -> dict:
    status = derive_thread_status(
        now, thread_id=thread_id, name_of=lambda agent: names.of(agent).display
    )
    return {
        "now": now,
        "status": status.state,
        "reply_bot": names.of(now.reply.agentId) if now.reply else None,
        "runs": [
            {"run": r, "bot": names.of(r.agentId)}
            for r in now.runs
            if r.state in ("claimed", "running")
        ],
        "owed": [names.of(a) for a in now.owed],
        "failed": [{"bot": names.of(b.agentId)} for b in now.bots if b.state == "error"],
        "thread_id": thread_id,
    }


def now_panel(now: ThreadNow, names: Names, thread_id: str) -> str:
    return render_to_string("threads/_now.html", now_context(now, names, thread_id))


def window_items(part, names: Names, thread_id: str) -> list[dict]:
    """The views of a history slice's entries (``threads.windows.Slice``)."""
    from threads.models import EntryLocation

    gone: set[str] = set()
    texts: dict[str, str] = {}
    if part.offset:  # the newest window runs to the tail: everything folds from it
        state = reactions.fold(part.entries)
    else:
        # A window above the newest part: its chat may be tombstoned, edited or reacted to
        # further down the log; the chat index knows (one query).
        state = {}
        chats = [e.id for e in part.entries if isinstance(e.payload, E.Chat)]
        rows = EntryLocation.objects.filter(thread_id=thread_id, entry_id__in=chats).filter(
            ~Q(deleted_by="") | ~Q(edited_by="") | ~Q(reactions={})
        )
        fields = ("entry_id", "deleted_by", "edited_text", "reactions")
        for entry_id, deleted_by, text, reacted in rows.values_list(*fields):
            if deleted_by:
                gone.add(entry_id)
                continue
            if text:
                texts[entry_id] = text
            if reacted:
                state[entry_id] = reacted
    items = page_items(
        part.entries, partial=part.partial, lookahead=part.lookahead, gone=gone, texts=texts
    )
    views = [v for item in items if (v := item_context(item, names))]
    for view in views:
        if view["kind"] == "chat" and state.get(view["id"]):
            view["reactions"] = reactions.views(state[view["id"]], names)
    return views


def first_unread(entries, unread: int) -> str:
    """The id of the first of the ``unread`` newest chat among ``entries`` (the top one
    when there are more unread than the slice holds); "" when nothing is unread."""
    if unread <= 0:
        return ""
    from threads.projection import tombstoned_ids

    chats = [e.id for e in E.first_of_each_id(entries) if isinstance(e.payload, E.Chat)]
    gone = tombstoned_ids(entries)  # deleted chat keeps its place in the count, not on the page
    shown = [i for i in chats[max(len(chats) - unread, 0) :] if i not in gone]
    return shown[0] if shown else ""


def page_context(access, *, now_ms: int, around: str = "", was_read: int | None = None) -> dict:
    """Everything the thread page renders: the newest history window (or the windows around
    a linked message, then the newest), the current view, offsets."""
    from urllib.parse import quote

    from threads import windows
    from threads.current import load_view

    thread = access.thread
    linked = windows.around(thread.id, around) if around else None
    part = windows.newest(thread.id)
    names = house_names(thread.house_id, authors_of(part, linked))
    loaded = load_view(thread, now_ms=now_ms)
    items = window_items(part, names, thread.id)
    above = window_items(linked, names, thread.id) if linked else []
    viewer_id = access.principal.agent_id
    first = linked or part
    finished = [e.payload.spend for e in part.entries if isinstance(e.payload, E.DispatchFinished)]
    rules = bot_rules(thread)
    return now_context(loaded.now, names, thread.id) | {
        "rules": rules,
        "solo_bot": rules.solo_bot(viewer_id),
        "thread": thread,
        "house": thread.house,
        "items_html": rendered.html(items, thread.id),
        "linked_html": rendered.html(above, thread.id),
        "older": first.older,
        "gap": linked,
        "offset": part.offset,
        "ws_url": f"/ws/threads/{thread.id}/?offset={quote(part.offset, safe='')}",
        "viewer_id": viewer_id,
        "viewer_avatar": avatar(viewer_id, names.of(viewer_id)),
        "viewer_name": names.of(viewer_id),
        "me_name": names.of(viewer_id).display,  # the top bar's
        "is_owner": access.is_owner,
        "palette": reactions.PALETTE,
        # The person's first unread message, for the "New messages" divider (static/arbe/unread.js).
        "first_unread": (
            first_unread(part.entries, thread.chat_seq - was_read)
            if was_read is not None and not linked
            else ""
        ),
        "total_tokens": part.spent_tokens + sum(s.totalTokens for s in finished),
        "total_cost": part.spent_cost + sum(s.costUsd for s in finished),
        "bots": sorted(
            (n for n in names.values() if n.is_bot and n.active), key=lambda n: n.handle
        ),
        # Who the compose box offers after "@": people and bots of the house, not oneself.
        "mentionable": sorted(
            (
                {"handle": n.handle, "name": n.display, "bot": n.is_bot}
                for agent_id, n in names.items()
                if n.active and agent_id != viewer_id
            ),
            key=lambda m: (m["bot"], m["handle"]),
        ),
    }


def window_context(access, *, upto="", before="", after="", until="") -> dict | None:
    """An older window (``upto``/``before``) or a newer one inside a gap (``after``/``until``),
    as ``threads/_window.html`` renders it; None when the key names no stored position."""
    from threads import windows

    thread = access.thread
    if after:
        part = windows.newer(thread.id, after=after, until=until)
    else:
        part = windows.older(thread.id, upto=upto, before=before)
    if part is None:
        return None
    names = house_names(thread.house_id, authors_of(part))
    return {
        "items_html": rendered.html(window_items(part, names, thread.id), thread.id),
        "older": part.older,
        "newer": part.newer,
        "until": part.until,
        "direction": "newer" if after else "older",
        "thread_id": thread.id,
    }


def offset_marker(offset: str) -> str:
    """The element the page script reads to resume from the last offset it applied."""
    return render_to_string("threads/_offset.html", {"offset": offset})
