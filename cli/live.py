"""``arbe thread now --follow`` and ``arbe thread entries read``: the thread as it moves.

Both start from ``/now``: its view, its fold state and the offset it reached. From there
they tail the stream and apply each entry to ``threads.now.NowFold`` (the server's own
reducer, resumed), so what the terminal shows is folded by the same code as the page.
"""

from __future__ import annotations

import shutil
import threading
import time

from cli.client import Api, NowAnswer, StatusRow, Total
from cli.render import decoded, now_lines, print_entries
from streams import wire
from threads import entries as E
from threads.now import LIVE_RUN_STATES, NowFold, with_delegated_spend
from threads.projection import visible_entries
from threads.states import State
from threads.status import REPLY_TURN_CAP_MS, derive_thread_status


class Watch:
    """The current view of one thread, kept up to date one entry at a time."""

    def __init__(self, api: Api, thread_id: str):
        self.api, self.thread_id = api, thread_id
        thread = api.thread(thread_id)
        self.house = thread.house
        self.names = api.names(thread.house)
        answer = api.now(thread_id)
        self.offset = answer.offset
        bots = [agent for agent, name in self.names.items() if name.is_bot]
        run = thread.parentId is not None  # a coding run's own thread
        self.fold = NowFold.resume(answer.now, answer.fold, bots=bots, run=run)
        self.total = answer.total

    def _count(self, entry) -> None:
        # The thread total grows by each finished reply, as the page's does.
        if isinstance(entry.payload, E.DispatchFinished) and entry.id not in self.fold.ids:
            spend = entry.payload.spend
            self.total = Total(
                self.total.totalTokens + spend.totalTokens, self.total.costUsd + spend.costUsd
            )

    def apply(self, entry) -> None:
        if entry.authorId and entry.authorId not in self.names:
            self.names = self.api.names(self.house)  # someone new joined
        self._count(entry)
        self.fold.apply(entry)

    def answer(self) -> NowAnswer:
        now_ms = time.time_ns() // 1_000_000
        view = self.fold.view(now_ms)
        # A delegated run ended on the parent is the child's business (as /now leaves it).
        view.runs = [r for r in view.runs if not r.childThreadId or r.state in LIVE_RUN_STATES]
        with_delegated_spend(view)
        status = derive_thread_status(
            view, thread_id=self.thread_id, name_of=lambda agent: self.names.of(agent).display
        )
        row = StatusRow(status.state, status.message)
        return NowAnswer(view, self.offset, row, total=self.total)

    def busy(self) -> bool:
        """Someone is working, or a message waits for a bot (and the thread is live)."""
        answer = self.answer()
        if answer.status.state == State.WORKING:
            return True
        # A message the director hasn't passed over reads idle, yet a reply may follow.
        live = answer.now.nowMs - answer.now.lastTs <= REPLY_TURN_CAP_MS
        return bool(answer.now.waiting) and live

    def lines(self) -> list[str]:
        return now_lines(self.answer(), self.names)


class Screen:
    """The view, redrawn in place on a terminal; on a pipe, each new view as plain lines."""

    def __init__(self, stream):
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.shown: list[str] | None = None

    def show(self, lines: list[str]) -> None:
        if lines == self.shown:
            return
        if self.tty:
            width = shutil.get_terminal_size().columns
            lines = [line[: width - 1] for line in lines]  # one row each, so we can go back
            if self.shown is not None:
                self.stream.write(f"\x1b[{len(self.shown)}F\x1b[J")
        elif self.shown is not None:
            self.stream.write("\n")
        self.stream.write("\n".join(lines) + "\n")
        self.stream.flush()
        self.shown = lines


def follow_now(api: Api, thread_id: str, out, cancel: threading.Event) -> str:
    """Show the current view until ``cancel``; returns the offset reached."""
    watch = Watch(api, thread_id)
    screen = Screen(out.stdout)
    screen.show(watch.lines())
    with api.scoped(thread_id) as scoped:
        for raw in scoped.tail(watch.offset, cancel=cancel):
            for entry in decoded([raw], out):
                watch.apply(entry)
            screen.show(watch.lines())
        return scoped.offset or watch.offset


def read_until_quiet(api: Api, args, out, cancel: threading.Event) -> str:
    """Print the thread from ``args.offset`` (or its start), then what comes, until nothing
    is working or waiting (or ``cancel``); returns the offset to resume from.

    What came before ``/now``'s offset is printed from ``--from``; after it, every entry is
    both printed (once: by id) and folded, so the fold decides when to stop.
    """
    watch = Watch(api, args.thread)
    printed: set[str] = set()
    with api.scoped(args.thread) as scoped:
        earlier, _ = _catch_up(scoped, args.offset or wire.START, out)
        _print(earlier, watch, args, out, printed)
        later, offset = _catch_up(scoped, watch.offset, out)
        for entry in later:
            watch.apply(entry)
        _print(later, watch, args, out, printed)
        while watch.busy() and not cancel.is_set():
            page = scoped.poll(offset, cancel)
            if page is None:
                break
            entries = decoded(page.entries, out)
            for entry in entries:
                watch.apply(entry)
            _print(entries, watch, args, out, printed)
            offset = page.next_offset
            if page.closed:
                break
    return offset


def _catch_up(scoped, offset: str, out):
    """Entries from ``offset`` to the tail, without waiting, and the offset after them."""
    raw = []
    while True:
        page = scoped.read(offset)
        raw += page.entries
        offset = page.next_offset
        if page.up_to_date or page.closed or not page.entries:
            return decoded(raw, out), offset


def _print(entries, watch: Watch, args, out, printed: set[str]) -> None:
    fresh = [e for e in entries if e.id not in printed]
    printed.update(e.id for e in fresh)
    shown = fresh if (args.raw or args.json) else _with_late_edits(fresh)
    print_entries(shown, watch.names, args.json, out)


def _with_late_edits(fresh):
    """What the page shows of ``fresh``, plus the edits of messages printed before it
    (a terminal can't rewrite a line it printed, so it says the new text)."""
    visible = {e.id: e for e in visible_entries(fresh)}
    batch = {e.id for e in fresh}
    return [
        visible.get(e.id, e)
        for e in fresh
        if e.id in visible
        or (isinstance(e.payload, E.EntryEdited) and e.payload.entryId not in batch)
    ]
