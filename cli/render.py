"""Entries and rows as terminal lines."""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterable

import msgspec

from threads import entries as E
from threads.attached import with_files
from threads.entries import EntryError, convert_entry, to_builtins
from threads.narration import Names, narration
from threads.projection import visible_entries
from threads.states import label


class Output:
    def __init__(self, stdout, stderr):
        self.stdout, self.stderr = stdout, stderr

    def line(self, text: str) -> None:
        print(text, file=self.stdout, flush=True)

    def note(self, text: str) -> None:
        print(text, file=self.stderr, flush=True)


def clock(ts_ms: int | None) -> str:
    return time.strftime("%H:%M", time.localtime(ts_ms / 1000)) if ts_ms else "--:--"


def entry_line(entry: E.Entry, names: Names, deleted: bool = False) -> str | None:
    """One entry as the thread page would say it, or None for what the page shows as nothing
    (tool calls and results live under a reply on the page; ``--json`` prints them).
    ``deleted`` labels a tombstoned message in a raw read."""
    p, when = entry.payload, clock(entry.ts)
    if isinstance(p, E.Chat):
        text = with_files(p.text, p.attachments).replace("\n", "\n      ")  # lines under it
        label = " (deleted)" if deleted else ""
        edited = " (edited)" if isinstance(p, E.EditedChat) else ""
        return f"{when} {names.of(entry.authorId).display}: {text}{edited}  [{entry.id}]{label}"
    if isinstance(p, E.EntryEdited):
        text = p.text.replace("\n", "\n      ")
        return f"{when} {names.of(entry.authorId).display} edited [{p.entryId}]: {text}"
    if isinstance(p, E.DispatchStarted):
        return f"{when} · @{names.of(p.agentId).handle} is replying"
    if isinstance(p, E.EntryDeleted):
        return f"{when} · message {p.entryId} was deleted"
    line = narration(p, names, entry.authorId)
    return f"{when} · {line}" if line else None


def house_line(house) -> str:
    counts = ", ".join(
        f"{n} {state}"
        for state, n in house.counts.items()
        if n and state in ("working", "blocked", "error")
    )
    speaker = house.speaker or {}
    said = (
        f"{speaker.get('title', '')}: {speaker.get('message', '')}".strip(": ") if speaker else ""
    )
    return "  ".join(
        x for x in (house.slug, label(house.status), said, f"({counts})" if counts else "") if x
    )


# A bot's id in a status stored before status messages named bots ("ag_… is thinking").
AGENT_ID = re.compile(r"\bag_[a-z0-9]{12}\b")


def named(message: str, names: Names | None) -> str:
    """``message`` with any agent id shown as its @handle: a person reads names, never ids."""
    if names is None:
        return message
    return AGENT_ID.sub(lambda m: "@" + names.of(m.group()).handle, message)


def thread_line(thread, names: Names | None = None) -> str:
    said = named(thread.statusMessage, names)
    message = f" — {said}" if said else ""
    state = label(thread.status)
    return f"{thread.id}  {clock(thread.lastEntryTs)}  {state:<8} {thread.title}{message}"


def now_lines(answer, names: Names) -> list[str]:
    """The current-view panel as lines: state, who is working on what, what waits, spend."""
    now, status = answer.now, answer.status
    state = label(status.state)
    lines = [f"{state}: {status.message}" if status.message else state]
    if reply := now.reply:
        lines.append(
            f"  replying: @{names.of(reply.agentId).handle} (round {reply.round}, {reply.phase})"
        )
    if now.toolCalls:
        lines.append("  tool calls: " + ", ".join(call.name for call in now.toolCalls))
    for run in now.runs:
        child = f" in {run.childThreadId}" if run.childThreadId else ""
        doing = f" · {run.phase} (round {run.round})" if run.phase else ""
        lines.append(f"  run @{names.of(run.agentId).handle}: {run.state}{doing}{child}")
    if now.waitingCount:
        lines.append(f"  {count(now.waitingCount, 'message')} waiting")
    if now.taken:
        lines.append(f"  {count(len(now.taken), 'message')} read mid-reply")
    if now.owed:
        lines.append("  still owed: " + ", ".join(f"@{names.of(a).handle}" for a in now.owed))
    if now.silence:
        lines.append(f"  nobody speaks: {now.silence}")
    # The page's figures under the page's labels (templates/threads/_now.html, thread.html).
    if now.spend.totalTokens:
        which = "this reply" if now.reply else "last reply"
        lines.append(f"  {which}: {spend_text(now.spend.totalTokens, now.spend.costUsd)}")
    if (total := answer.total).totalTokens:  # the page hides a total of nothing too
        lines.append(f"  thread total: {spend_text(total.totalTokens, total.costUsd)}")
    return lines


def count(n: int, noun: str) -> str:
    """``1 message``, ``3 messages``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def spend_text(tokens: int, cost: float) -> str:
    """``1,410 tokens · $0.0123``, as the thread page writes it."""
    return f"{count(tokens, 'token')}" + (f" · ${cost:.4f}" if cost else "")


def decoded(raw: Iterable[dict], out: Output) -> list:
    """Entries of the contract; one that isn't is reported and skipped, never fatal."""
    entries = []
    for item in raw:
        try:
            entries.append(convert_entry(item))
        except (EntryError, msgspec.ValidationError) as exc:
            out.note(f"arbe: skipped an entry the contract does not know: {exc}")
    return entries


def caught_up(entries: list[E.Entry]) -> list[E.Entry]:
    """History as a chat view shows it: a deleted message is not there, and neither is its
    tombstone; an edited one shows its latest text. A tombstone or an edit of a message
    printed before this read (earlier than ``--from``) stays, as "message … was deleted" or
    the new text: a terminal can't take a line back."""
    visible = {e.id: e for e in visible_entries(entries)}
    ids, shown, seen = {e.id for e in entries}, [], set()
    for e in entries:
        if e.id in seen:
            continue  # a reader that meets an id twice keeps the first
        seen.add(e.id)
        p = e.payload
        if e.id in visible and not (isinstance(p, E.EntryDeleted) and p.entryId in ids):
            shown.append(visible[e.id])
        elif isinstance(p, E.EntryEdited) and p.entryId not in ids:
            shown.append(e)
    return shown


def print_entries(entries, names: Names, as_json: bool, out: Output, gone=frozenset()) -> None:
    """``gone``: ids of tombstoned messages, labelled "(deleted)" (raw reads print them)."""
    for entry in entries:
        if as_json:
            out.line(json.dumps(to_builtins(entry), ensure_ascii=False))
        elif (line := entry_line(entry, names, entry.id in gone)) is not None:
            out.line(line)


MARK = re.compile(r"<mark>(.*?)</mark>", re.S)


def hit_line(hit, bold: bool = False) -> str:
    """A search result: when, where, who, the excerpt (matches bold on a terminal), its ids."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hit.ts / 1000))
    text = MARK.sub(r"\033[1m\1\033[0m" if bold else r"\1", hit.snippet)
    text = html.unescape(text.replace("<mark>", "").replace("</mark>", ""))
    text = " ".join(text.split())
    where = f"{hit.house.slug}/{hit.threadTitle}"
    return f"{when}  {where}  @{hit.author.handle}: {text}  [{hit.threadId} {hit.entryId}]"


def inbox_line(item, bold: bool = False) -> str:
    """An inbox item: when, where, who, what, its ids; unread ones marked (bold on a terminal)."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.ts / 1000))
    what = {"reply": "replied", "direct": "wrote to you"}.get(item.kind, "mentioned you")
    text = " ".join(item.text.split())
    line = f"{when}  {item.house.slug}/{item.threadTitle}  @{item.author.handle} {what}: {text}"
    line += f"  [{item.threadId} {item.entryId}]"
    if not item.unread:
        return "  " + line
    return f"\033[1m* {line}\033[0m" if bold else "* " + line
