"""What one entry looks like on the thread page: the dict ``threads/_entry.html`` renders.

A reply's lifecycle is folded here for the page as it is loaded: the reply's
``signal.dispatch.started`` collects its Pi transcript and its phase; when the
bot's answer arrives it takes the transcript and the spend into its footer and
the reply line is not shown; a final failure is the reply's one line. Live,
the same fold happens in the browser (``static/arbe/live.js`` moves the
reply's footer under the answer), so the loaded page and the live one agree.

Director outcomes ("nobody speaks") never show in the log: the Now panel says
what the thread is waiting for, and ordinary chat is followed by nothing.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import regex
from django.utils.safestring import mark_safe

from threads import entries as E
from threads import unreadable
from threads.attached import attachment_items
from threads.markup import chat_html
from threads.narration import Name, Names, narration
from threads.projection import visible_entries

# Long tool output is folded, not shipped whole to every viewer.
MAX_TOOL_TEXT = 4000
AVATAR_HUES = 18  # colour classes .hue-0 … .hue-17 in arbe.css


NOT_WORD = regex.compile(r"[^\w]+")
GRAPHEME = regex.compile(r"\X")


def avatar(agent_id: str, name: Name) -> dict:
    """Initials (up to two graphemes) on a colour that stays with the agent id."""
    return dict(_avatar(agent_id, name))  # a copy: views are the caller's to change


@functools.lru_cache(maxsize=1024)
def _avatar(agent_id: str, name: Name) -> dict:
    words = [w for w in NOT_WORD.split(name.display) if w] or [name.handle]
    initials = "".join(GRAPHEME.findall(w)[0] for w in words[:2])
    return {
        "initials": (initials or name.handle[:1] or "?").upper(),
        "hue": zlib.crc32(agent_id.encode()) % AVATAR_HUES,
        "bot": name.is_bot,
    }


def when(ts: int) -> dict:
    return dict(_when(ts))


@functools.lru_cache(maxsize=8192)
def _when(ts: int) -> dict:
    """A ``<time>``'s parts; the page script shows local time, the server says UTC."""
    moment = datetime.fromtimestamp(ts / 1000, tz=UTC)
    return {
        "iso": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "short": moment.strftime("%H:%M UTC"),
        "full": moment.strftime("%A %-d %B %Y, %H:%M:%S UTC"),
    }


def handles(names: Names) -> dict[str, str]:
    """Handle -> agent id for everyone who can be mentioned in the house. A handle names
    one agent in a house (``houses.models.handle_clash``); where data from before that
    rule has a person and a bot sharing one, the bot wins, as it does for the director
    (``dispatch.decide``), which answers the mention with that bot."""
    active = sorted((i, n) for i, n in names.items() if n.active)
    people = {n.handle: agent_id for agent_id, n in active if not n.is_bot}
    return people | {n.handle: agent_id for agent_id, n in active if n.is_bot}


def spend_text(spend: E.Spend | None) -> str:
    if spend is None or not spend.totalTokens:
        return ""
    text = f"{spend.totalTokens:,} tokens"
    return text + (f" · ${spend.costUsd:.4f}" if spend.costUsd else "")


PHASES = {
    "thinking": "is thinking",
    "answering": "is writing",
    "steering": "is reading new messages",
    "retrying": "is trying again",
}


def phase_text(phase: E.DispatchPhase | None) -> str:
    if phase is None:
        return "is thinking"
    if phase.phase == "tool":
        return f"is running {phase.tool}" if phase.tool else "is running a tool"
    return PHASES.get(phase.phase, "is replying")


# -- the page's fold ------------------------------------------------------------------


@dataclass
class Item:
    """One entry as the page shows it, with what folds into it."""

    entry: E.Entry
    transcript: list[E.Entry] = field(default_factory=list)
    phase: E.DispatchPhase | None = None
    spend: E.Spend | None = None
    failure: E.Entry | None = None
    answered: bool = False  # a reply whose answer carries it: not shown on its own
    reply: Item | None = None  # on an answer: the reply it ends


def page_items(
    entries: Iterable[E.Entry],
    *,
    partial: bool = False,
    lookahead: Iterable[E.Entry] = (),
    gone: set[str] | frozenset[str] = frozenset(),
    texts: dict[str, str] | None = None,
) -> list[Item]:
    """Visible entries in order, each reply folded into its answer or its failure.

    A history window (docs/history.md) is ``partial`` when it starts after the log's
    start: transcript entries of a reply begun in an earlier window belong to that
    window's reply and are left out here. ``lookahead`` (entries past the window's end)
    only completes the replies the window opened; ``gone`` are chat ids tombstoned
    after the window (from the chat index), ``texts`` the latest text of chat edited
    after it (also from the chat index).
    """
    items: list[Item] = []
    replies: dict[str, Item] = {}
    open_by_bot: dict[str, Item] = {}
    for entry in visible_entries(entries, texts):
        p = entry.payload
        if gone and entry.id in gone and isinstance(p, E.Chat):
            continue
        dispatch_id = getattr(p, "dispatchId", None)
        reply = replies.get(dispatch_id) if dispatch_id else None
        match p:
            case E.PiPayload() | E.DispatchSteered() if reply:
                reply.transcript.append(entry)
            case E.PiPayload() | E.DispatchSteered() if partial and dispatch_id:
                pass  # the transcript of a reply shown with an earlier window
            case E.DispatchStarted():
                item = replies[p.dispatchId] = open_by_bot[p.agentId] = Item(entry)
                items.append(item)
            case E.ThreadRunState(state="running", childThreadId=None, agentId=str(bot)):
                # A run, on its own thread, reads as a reply: its Pi entries carry the run id.
                item = replies[p.runId] = open_by_bot[bot] = Item(entry)
                items.append(item)
            case E.ThreadRunState(state="failed" | "dead", childThreadId=None) if (
                run := replies.get(p.runId)
            ):
                run.failure = entry
                _close(open_by_bot, run)
            case E.DispatchPhase():
                if reply:
                    reply.phase = p
            case E.Chat() if entry.authorId in open_by_bot:
                reply = open_by_bot.pop(entry.authorId)
                reply.answered = True
                items.append(Item(entry, reply=reply))
            case E.EntryReaction() if entry.authorId in open_by_bot:
                open_by_bot.pop(entry.authorId).answered = True  # a bot's "seen": its chip
            case E.DispatchFinished():
                if reply:
                    reply.spend = p.spend
                    _close(open_by_bot, reply)
            case E.DispatchFailed() | E.ThreadOrphaned() if reply:
                if getattr(p, "final", True):
                    reply.failure = entry
                    _close(open_by_bot, reply)
            case E.ThreadPiFailed() if dispatch_id:
                pass  # the reply's own dispatch.failed says it, once
            case _:
                items.append(Item(entry))
    _complete(replies, open_by_bot, lookahead)
    return [i for i in items if not i.answered]


def _complete(replies: dict[str, Item], open_by_bot: dict[str, Item], lookahead) -> None:
    """Fill the replies still open at a window's end from the entries after it: their
    transcript, phase, spend and failure. Their answers stay in the next window, where
    the page script folds the reply's footer under them, as it does live."""
    if not open_by_bot:
        return
    for entry in lookahead:
        p = entry.payload
        dispatch_id = getattr(p, "dispatchId", None)
        reply = replies.get(dispatch_id) if dispatch_id else None
        match p:
            case E.PiPayload() | E.DispatchSteered() if reply:
                reply.transcript.append(entry)
            case E.DispatchPhase() if reply:
                reply.phase = p
            case E.DispatchFinished() if reply:
                reply.spend = p.spend
            case E.DispatchFailed() | E.ThreadOrphaned() if reply and getattr(p, "final", True):
                reply.failure = entry
            case E.ThreadRunState(state="failed" | "dead", childThreadId=None) if (
                run := replies.get(p.runId)
            ):
                run.failure = entry


def reply_id(started: E.DispatchStarted | E.ThreadRunState) -> str:
    """What a reply's parts carry as their ``dispatchId``: a run's is its run id."""
    return started.runId if isinstance(started, E.ThreadRunState) else started.dispatchId


def _close(open_by_bot: dict[str, Item], reply: Item) -> None:
    agent = reply.entry.payload.agentId
    if open_by_bot.get(agent) is reply:
        del open_by_bot[agent]


def item_context(item: Item, names: Names) -> dict | None:
    view = describe(item.entry, names)
    if view is None:
        return None
    if view["kind"] == "reply":
        view["transcript"] = [v for e in item.transcript if (v := describe(e, names))]
        view["line"] = phase_text(item.phase)
        view["spend"] = spend_text(item.spend)
        if item.failure is not None:
            view["failed"] = (
                narration(item.failure.payload, names, item.failure.authorId) or "The reply failed."
            )
    elif item.reply is not None:
        reply = item.reply
        view["reply"] = {
            "dispatch": reply_id(reply.entry.payload),
            "transcript": [v for e in reply.transcript if (v := describe(e, names))],
            "spend": spend_text(reply.spend),
        }
    return view


# -- one entry ------------------------------------------------------------------------


def describe(entry: E.Entry, names: Names) -> dict | None:
    """What ``_entry.html`` needs for one entry, or None for entries shown as nothing.

    An entry that decodes but can't be shown (a shape nobody foresaw) is skipped like an
    unreadable one, and logged once: one entry never takes the page or the live tail down.
    """
    try:
        return _describe(entry, names)
    except Exception as exc:  # noqa: BLE001 - any failure to show one entry is skipped
        unreadable.report_unshowable(entry, exc)
        return None


def _describe(entry: E.Entry, names: Names) -> dict | None:
    p = entry.payload
    author = names.of(entry.authorId)
    base = {"id": entry.id, "ts": entry.ts, "author": author, "author_id": entry.authorId or ""}
    match p:
        case E.Chat():
            html = mark_safe(chat_html(p.text, handles(names)))  # cleaned by nh3
            return base | {
                "kind": "chat",
                "text": p.text,
                "html": html,
                "avatar": avatar(entry.authorId or "", author),
                "time": when(p.sentAt if p.sentAt is not None else entry.ts),
                "edited": isinstance(p, E.EditedChat),
                "files": attachment_items(p.attachments),
            }
        case E.PiAssistant():
            return base | {"kind": "pi", "parts": _assistant_parts(p.message)}
        case E.PiToolResult():
            return base | {"kind": "pi", "result": _tool_result(p.message)}
        case E.PiCompaction():
            return base | {"kind": "pi", "line": "Pi compacted its context."}
        case E.DispatchSteered():
            n = len(p.entryIds)
            return base | {"kind": "pi", "line": f"Read {n} new message{'s' * (n != 1)} mid-reply."}
        case E.DispatchStarted():
            return base | {
                "kind": "reply",
                "bot": names.of(p.agentId),
                "bot_id": p.agentId,
                "dispatch": p.dispatchId,
                "line": "is thinking",
            }
        case E.ThreadRunState(state="running", childThreadId=None, agentId=str(bot)):
            return base | {
                "kind": "reply",
                "bot": names.of(bot),
                "bot_id": bot,
                "dispatch": p.runId,
                "line": "is working",
            }
        case E.DirectorOutcome() | E.DirectorDecided() | E.DispatchFinished():
            return None  # the Now panel and the answer's footer say these
        case E.DispatchFailed() | E.ThreadPiFailed() if p.dispatchId:
            return None  # folded into the reply's line (see page_items and live_updates)
    line = narration(p, names, entry.authorId)
    if line is None:
        return None
    failed = isinstance(p, E.DispatchFailed | E.ThreadPiFailed | E.ThreadOrphaned)
    return base | {
        "kind": "signal",
        "line": line,
        "failed": failed,
        "child": getattr(p, "childThreadId", None),
    }


def _assistant_parts(message: dict) -> list[dict]:
    parts = []
    content = message.get("content") if isinstance(message, dict) else None
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"]:
            parts.append({"text": part["text"]})
        elif part.get("type") == "toolCall":
            args = json.dumps(part.get("arguments", {}), indent=1, ensure_ascii=False, default=str)
            parts.append({"tool": str(part.get("name", "tool")), "args": args[:MAX_TOOL_TEXT]})
    return parts


def _tool_result(message: dict) -> dict:
    content = message.get("content") if isinstance(message, dict) else None
    texts = [
        c["text"]
        for c in (content if isinstance(content, list) else ())
        if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str)
    ]
    text = "\n".join(texts)
    return {
        "tool": str(message.get("toolName", "tool")),
        "text": text[:MAX_TOOL_TEXT] + ("…" if len(text) > MAX_TOOL_TEXT else ""),
        "error": bool(message.get("isError")),
    }
