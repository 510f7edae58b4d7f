"""Rendering thread entries and the current view, for the page and for live fragments.

The page and the socket use the same templates: ``threads/_entry.html`` for one
entry, ``threads/_now.html`` for the current-view panel. Fragments are
viewer-agnostic (rendered once per entry, whoever watches); the page's own
``<style>`` and body class show the author's and owners' controls.

Bot answers are Markdown rendered to HTML and cleaned by ``nh3``; everything
else goes through the template engine's autoescaping.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

import markdown
import nh3
from django.db.models import Q
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from houses.models import Agent
from threads import entries as E
from threads.narration import Name, Names, narration
from threads.now import ThreadNow
from threads.projection import tombstoned_ids, visible_entries
from threads.status import derive_thread_status

# Long tool output is folded, not shipped whole to every viewer.
MAX_TOOL_TEXT = 4000


def house_names(house_id: int) -> Names:
    """Everyone who can appear in a house's threads (one query)."""
    agents = Agent.objects.filter(Q(house_id=house_id) | Q(user__memberships__house_id=house_id))
    return Names(
        (a.id, Name(a.display_name, a.handle, a.kind == Agent.Kind.BOT, a.active))
        for a in agents.distinct()
    )


def answer_html(text: str) -> str:
    """A bot's Markdown answer as clean HTML (scripts, handlers and styles removed)."""
    return nh3.clean(markdown.markdown(text, extensions=["fenced_code", "tables", "sane_lists"]))


# -- entries --------------------------------------------------------------------------


@dataclass
class Item:
    """One entry as the page shows it, with a reply's Pi transcript folded under it."""

    entry: E.Entry
    transcript: list[E.Entry] = field(default_factory=list)


def page_items(entries: Iterable[E.Entry]) -> list[Item]:
    """Visible entries in order; Pi entries move under the ``dispatch.started`` they belong to."""
    items: list[Item] = []
    replies: dict[str, Item] = {}
    for entry in visible_entries(entries):
        payload = entry.payload
        dispatch_id = getattr(payload, "dispatchId", None)
        if isinstance(payload, E.PiPayload) and dispatch_id in replies:
            replies[dispatch_id].transcript.append(entry)
            continue
        item = Item(entry)
        if isinstance(payload, E.DispatchStarted):
            replies[payload.dispatchId] = item
        items.append(item)
    return items


def describe(entry: E.Entry, names: Names) -> dict | None:
    """What ``_entry.html`` needs for one entry, or None for entries shown as nothing."""
    p = entry.payload
    author = names.of(entry.authorId)
    base = {"id": entry.id, "ts": entry.ts, "author": author, "author_id": entry.authorId or ""}
    if isinstance(p, E.Chat):
        html = mark_safe(answer_html(p.text)) if author.is_bot else None  # cleaned by nh3
        return base | {"kind": "chat", "text": p.text, "html": html}
    if isinstance(p, E.PiAssistant):
        return base | {"kind": "pi", "parts": _assistant_parts(p.message)}
    if isinstance(p, E.PiToolResult):
        return base | {"kind": "pi", "result": _tool_result(p.message)}
    if isinstance(p, E.PiCompaction):
        return base | {"kind": "pi", "line": "Pi compacted its context."}
    if isinstance(p, E.DispatchStarted):
        return base | {
            "kind": "reply",
            "bot": names.of(p.agentId),
            "dispatch": p.dispatchId,
            "round": p.round,
        }
    line = narration(p, names, entry.authorId)
    if line is None:
        return None
    return base | {"kind": "signal", "line": line, "child": getattr(p, "childThreadId", None)}


def _assistant_parts(message: dict) -> list[dict]:
    parts = []
    for part in message.get("content") or ():
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and part.get("text"):
            parts.append({"text": part["text"]})
        elif part.get("type") == "toolCall":
            args = json.dumps(part.get("arguments", {}), indent=1, ensure_ascii=False)
            parts.append({"tool": part.get("name", "tool"), "args": args[:MAX_TOOL_TEXT]})
    return parts


def _tool_result(message: dict) -> dict:
    texts = [
        c.get("text", "")
        for c in message.get("content") or ()
        if isinstance(c, dict) and c.get("type") == "text"
    ]
    text = "\n".join(texts)
    return {
        "tool": message.get("toolName", "tool"),
        "text": text[:MAX_TOOL_TEXT] + ("…" if len(text) > MAX_TOOL_TEXT else ""),
        "error": bool(message.get("isError")),
    }


def item_context(item: Item, names: Names) -> dict | None:
    view = describe(item.entry, names)
    if view is None:
        return None
    view["transcript"] = [v for e in item.transcript if (v := describe(e, names))]
    return view


def render_entry(view: dict, thread_id: str) -> str:
    return render_to_string("threads/_entry.html", {"e": view, "thread_id": thread_id})


# -- live fragments -------------------------------------------------------------------


def entry_fragments(entries: list[E.Entry], names: Names, thread_id: str) -> list[tuple[str, str]]:
    """``(entry id, fragment)`` for entries arriving live: appends, transcript lines, deletions.

    Chat tombstoned within the same batch is never appended; a tombstone deletes its
    target wherever the page shows it.
    """
    gone = tombstoned_ids(entries)
    out = []
    for entry in E.first_of_each_id(entries):
        p = entry.payload
        if isinstance(p, E.EntryDeleted):
            html = render_to_string("threads/_deleted.html", {"entry_id": p.entryId})
            out.append((entry.id, html))
            continue
        if not p.shown or (isinstance(p, E.Chat) and entry.id in gone):
            continue
        view = describe(entry, names)
        if view is None:
            continue
        dispatch_id = getattr(p, "dispatchId", None)
        target = f"#tr-{dispatch_id}" if isinstance(p, E.PiPayload) and dispatch_id else "#entries"
        view["transcript"] = []
        html = mark_safe(render_entry(view, thread_id))
        out.append(
            (entry.id, render_to_string("threads/_append.html", {"target": target, "html": html}))
        )
    return out


def now_context(now: ThreadNow, names: Names, thread_id: str) -> dict:
    status = derive_thread_status(now, thread_id=thread_id)
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
        "thread_id": thread_id,
    }


def now_panel(now: ThreadNow, names: Names, thread_id: str) -> str:
    return render_to_string("threads/_now.html", now_context(now, names, thread_id))


def page_context(access, *, now_ms: int) -> dict:
    """Everything the thread page renders: entries from the start, the current view, offsets."""
    from urllib.parse import quote

    from threads.current import load_view
    from threads.reading import read_entries

    thread = access.thread
    names = house_names(thread.house_id)
    entries, offset = read_entries(thread.id)
    loaded = load_view(thread, now_ms=now_ms)
    items = [v for item in page_items(entries) if (v := item_context(item, names))]
    return now_context(loaded.now, names, thread.id) | {
        "thread": thread,
        "house": thread.house,
        "items": items,
        "offset": offset,
        "ws_url": f"/ws/threads/{thread.id}/?offset={quote(offset, safe='')}",
        "viewer_id": access.principal.agent_id,
        "is_owner": access.is_owner,
        "bots": sorted(
            (n for n in names.values() if n.is_bot and n.active), key=lambda n: n.handle
        ),
    }


def offset_marker(offset: str) -> str:
    """The element the page script reads to resume from the last offset it applied."""
    return render_to_string("threads/_offset.html", {"offset": offset})
