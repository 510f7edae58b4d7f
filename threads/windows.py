"""History windows: where the thread page starts reading, and the older windows above it.

A thread's log is cut into windows by ``WindowMark`` rows (docs/history.md). The
marks are stored positions: the offset an append answered, written at the append
seam when a window fills, or the offset the server told while ``reindex_entries``
read the log. Nothing here parses, compares or invents an offset: a window is read
forward from the previous mark's offset and the reader stops after the entry the
window's own mark names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.db import transaction

from streams.wire import START
from threads import reading
from threads.entries import Chat, DispatchFinished, Entry
from threads.log import log_reader
from threads.models import EntryLocation, Thread, WindowMark, stream_name_for
from threads.reading import ThreadLogMissing
from threads.unreadable import readable

WINDOW_CHATS = 30  # a window closes after this many chat entries…
WINDOW_ENTRIES = 300  # …or this many entries of any kind (transcripts), whichever first
LOOKAHEAD = 400  # entries past a window's end read to close the replies it opened
# A window and its lookahead are a few hundred entries: ask for pages about that size, not the
# server's whole 4 MiB catch-up page (docs/history.md, "What an older window costs").
WINDOW_PAGE_BYTES = 256 * 1024


@dataclass
class Tally:
    """What the open window holds so far; full once it should close."""

    chats: int = 0
    entries: int = 0
    spent_tokens: int = 0
    spent_cost: float = 0.0

    def add(self, entries: Iterable[Entry]) -> None:
        for e in entries:
            self.entries += 1
            p = e.payload
            if isinstance(p, Chat):
                self.chats += 1
            elif isinstance(p, DispatchFinished):
                self.spent_tokens += p.spend.totalTokens
                self.spent_cost += p.spend.costUsd

    @property
    def full(self) -> bool:
        return self.chats >= WINDOW_CHATS or self.entries >= WINDOW_ENTRIES


# -- the append seam -------------------------------------------------------------------


def note_append(thread_id: str, entries: Sequence[Entry], next_offset: str | None) -> int:
    """Count an append into the thread's open window, closing it at ``next_offset`` when it
    is full; returns the window the entries are in (0 if the thread has no row).

    The open row is locked, so concurrent writers count one after the other. Only an
    append that answered an offset can close a window: its offset is a real position
    just after its last entry.
    """
    with transaction.atomic():
        row = (
            WindowMark.objects.select_for_update()
            .filter(thread_id=thread_id, offset="")
            .order_by("-seq")
            .first()
        )
        if row is None:
            if not Thread.objects.filter(pk=thread_id).exists():
                return 0
            last = WindowMark.objects.filter(thread_id=thread_id).order_by("-seq").first()
            row = WindowMark(
                thread_id=thread_id,
                seq=last.seq + 1 if last else 1,
                spent_tokens=last.spent_tokens if last else 0,
                spent_cost=last.spent_cost if last else 0.0,
            )
        tally = Tally(row.chats, row.entries, row.spent_tokens, row.spent_cost)
        tally.add(entries)
        row.chats, row.entries = tally.chats, tally.entries
        row.spent_tokens, row.spent_cost = tally.spent_tokens, tally.spent_cost
        seq = row.seq
        if tally.full and next_offset:
            row.offset, row.entry_id = next_offset, entries[-1].id
            row.save()
            WindowMark.objects.create(
                thread_id=thread_id,
                seq=seq + 1,
                spent_tokens=row.spent_tokens,
                spent_cost=row.spent_cost,
            )
        else:
            row.save()
    return seq


# -- repair: the marks rebuilt from the log --------------------------------------------


@dataclass
class Rebuilt:
    """A log read through once: its entries, each chat's window, the marks to store."""

    entries: list[Entry] = field(default_factory=list)
    windows: dict[str, int] = field(default_factory=dict)
    marks: list[WindowMark] = field(default_factory=list)


def read_for_rebuild(thread: Thread) -> Rebuilt:
    """Read ``thread``'s log forward, closing a window at the first offset the server
    reports once the window is full (SSE tells an offset after each batch it sends)."""
    name = thread.stream_name
    out, tally, seq = Rebuilt(), Tally(), 1
    reader = log_reader()
    try:
        results = reader.sse(name, START)
        for result in results:
            batch = readable(result.messages or (), name)
            out.entries.extend(batch)
            tally.add(batch)
            for e in batch:
                if isinstance(e.payload, Chat):
                    out.windows.setdefault(e.id, seq)
            if tally.full and batch and result.next_offset:
                out.marks.append(_mark(thread, seq, tally, result.next_offset, batch[-1].id))
                tally = Tally(spent_tokens=tally.spent_tokens, spent_cost=tally.spent_cost)
                seq += 1
            if result.up_to_date or result.closed:
                break
        close = getattr(results, "close", None)
        if close:
            close()
    except Exception as exc:
        from streams.errors import StreamNotFound

        if isinstance(exc, StreamNotFound):
            raise ThreadLogMissing(name) from None
        raise
    out.marks.append(_mark(thread, seq, tally, "", ""))
    return out


def _mark(thread, seq, tally: Tally, offset: str, entry_id: str) -> WindowMark:
    return WindowMark(
        thread=thread,
        seq=seq,
        offset=offset,
        entry_id=entry_id,
        chats=tally.chats,
        entries=tally.entries,
        spent_tokens=tally.spent_tokens,
        spent_cost=tally.spent_cost,
    )


def store_marks(thread: Thread, marks: list[WindowMark]) -> None:
    with transaction.atomic():
        WindowMark.objects.filter(thread=thread).delete()
        WindowMark.objects.bulk_create(marks, batch_size=1000)


# -- reading windows -------------------------------------------------------------------


@dataclass
class Slice:
    """Entries the page renders at once, with what it needs around them.

    ``older`` keys the sentinel above them (``upto`` a mark's entry), or is empty at the
    start of the log; ``lookahead`` are entries past the end, read only to close the
    replies the slice opened; ``offset`` is the tail offset when the slice reaches it.
    """

    entries: list[Entry]
    older: str = ""
    lookahead: list[Entry] = field(default_factory=list)
    offset: str = ""
    partial: bool = False  # starts after the log's start: replies may have begun earlier
    newer: str = ""  # a gap below the slice: the mark it starts after
    until: str = ""  # …and the mark the page's newest part starts after
    spent_tokens: int = 0  # spend before the slice's start (for the thread total)
    spent_cost: float = 0.0


def read_span(
    thread_id: str, start: str, *, through: str = "", before: str = ""
) -> tuple[list[Entry], list[Entry]]:
    """Entries from ``start`` (an offset) up to and including ``through``, or up to but not
    including ``before``; and up to ``LOOKAHEAD`` entries after, from the same reads."""
    name = stream_name_for(thread_id)
    offset, got, after, stopped = start, [], [], False
    reader = log_reader()
    from streams.errors import StreamNotFound

    while True:
        try:
            page = reader.read(name, offset, page_bytes=WINDOW_PAGE_BYTES)
        except StreamNotFound:
            raise ThreadLogMissing(name) from None
        for raw in page.messages or ():
            for e in readable((raw,), name):
                if stopped:
                    after.append(e)
                elif before and e.id == before:
                    stopped = True
                    after.append(e)
                else:
                    got.append(e)
                    stopped = bool(through) and e.id == through
            if len(after) >= LOOKAHEAD:
                return got, after
        if stopped or page.up_to_date or not page.messages or not page.next_offset:
            return got, after
        offset = page.next_offset


def newest_start(thread_id: str) -> WindowMark | None:
    """Where the page's newest part starts: after the last mark when the open window holds
    half a window or more, else one mark earlier (15 to 45 chat messages, with what goes
    between them); None for the log's start."""
    marks = list(WindowMark.objects.filter(thread_id=thread_id).order_by("-seq")[:3])
    open_ = marks[0] if marks and marks[0].is_open else None
    closed = [m for m in marks if not m.is_open]
    if open_ is not None and open_.chats >= WINDOW_CHATS // 2 and closed:
        return closed[0]
    return closed[1] if len(closed) >= 2 else None


def thread_spend(thread_id: str) -> tuple[int, float]:
    """What every finished reply of the thread cost, tokens and dollars: the newest mark
    carries the running total through the tail (one query; the page adds the same
    figures from the entries it reads)."""
    last = WindowMark.objects.filter(thread_id=thread_id).order_by("-seq").first()
    return (last.spent_tokens, last.spent_cost) if last else (0, 0.0)


def newest(thread_id: str) -> Slice:
    """The page's slice: from ``newest_start`` to the tail."""
    return _to_tail(thread_id, newest_start(thread_id))


def _to_tail(thread_id: str, start: WindowMark | None) -> Slice:
    entries, offset = reading.read_entries(thread_id, start.offset if start else START)
    return Slice(
        entries,
        older=start.entry_id if start else "",
        offset=offset,
        partial=start is not None,
        spent_tokens=start.spent_tokens if start else 0,
        spent_cost=start.spent_cost if start else 0.0,
    )


def read_tail(thread_id: str, chats: int, most: int = 0) -> tuple[list[Entry], str, bool]:
    """The newest whole windows holding ``chats`` chat messages (or the newest ``most``
    windows, if fewer hold them), the tail offset, and whether they start after the log's
    start. A thread without marks (written outside arbe, not yet reindexed) is read from
    its start."""
    most = most or chats // WINDOW_CHATS + 4
    marks = list(WindowMark.objects.filter(thread_id=thread_id).order_by("-seq")[: most + 1])
    start, held = None, 0
    for n, mark in enumerate(marks):
        if mark.offset and (held >= chats or n == most):
            start = mark
            break
        held += mark.chats
    entries, offset = reading.read_entries(thread_id, start.offset if start else START)
    return entries, offset, start is not None


def read_window(thread_id: str, seq: int) -> tuple[list[Entry], list[Entry]]:
    """Window ``seq`` (from the mark before it) and what follows it, as ``read_span``."""
    marks = _marks_by_seq(thread_id, [seq - 1, seq])
    start, end = marks.get(seq - 1), marks.get(seq)
    return read_span(
        thread_id, start.offset if start else START, through=end.entry_id if end else ""
    )


def _marks_by_seq(thread_id: str, seqs: Iterable[int]) -> dict[int, WindowMark]:
    wanted = [s for s in seqs if s > 0]
    rows = WindowMark.objects.filter(thread_id=thread_id, seq__in=wanted).exclude(offset="")
    return {m.seq: m for m in rows}


def older(thread_id: str, *, upto: str = "", before: str = "") -> Slice | None:
    """The window ending with the mark whose entry is ``upto``, or the entries of a chat's
    window before that chat (``before``, where the page dropped what was above); None when
    the key names no stored position."""
    if upto:
        mark = (
            WindowMark.objects.filter(thread_id=thread_id, entry_id=upto)
            .exclude(offset="")
            .order_by("seq")
            .first()
        )
        if mark is None:
            return None
        seq, through, stop_before = mark.seq, upto, ""
    else:
        location = EntryLocation.objects.filter(thread_id=thread_id, entry_id=before).first()
        if location is None:
            return None
        seq, through, stop_before = location.window, "", before
    start = _marks_by_seq(thread_id, [seq - 1]).get(seq - 1) if seq else None
    entries, after = read_span(
        thread_id, start.offset if start else START, through=through, before=stop_before
    )
    return Slice(
        entries, older=start.entry_id if start else "", lookahead=after, partial=bool(start)
    )


def around(thread_id: str, entry_id: str) -> Slice | None:
    """The two windows ending with the one that holds the chat ``entry_id``, and a gap
    below them down to the page's newest part; None when the chat is on the newest part
    (or its window is not known): the ordinary page shows it."""
    location = EntryLocation.objects.filter(thread_id=thread_id, entry_id=entry_id).first()
    if location is None or not location.window:
        return None
    seq = location.window
    tail = newest_start(thread_id)
    if tail is None or seq > tail.seq:
        return None  # on the newest part
    marks = _marks_by_seq(thread_id, [seq - 2, seq])
    end = marks.get(seq)
    if end is None:
        return None
    start = marks.get(seq - 2)
    entries, after = read_span(thread_id, start.offset if start else START, through=end.entry_id)
    return Slice(
        entries,
        older=start.entry_id if start else "",
        lookahead=after,
        partial=bool(start),
        newer=end.entry_id if end.seq < tail.seq else "",
        until=tail.entry_id,
        spent_tokens=start.spent_tokens if start else 0,
        spent_cost=start.spent_cost if start else 0.0,
    )


def newer(thread_id: str, *, after: str, until: str) -> Slice | None:
    """The window after the mark whose entry is ``after``, for a gap above the page's newest
    part that ends at the mark whose entry is ``until``."""
    marks = WindowMark.objects.filter(thread_id=thread_id, entry_id__in=[after, until]).exclude(
        offset=""
    )
    by_entry = {m.entry_id: m for m in marks}
    start, stop = by_entry.get(after), by_entry.get(until)
    if start is None or stop is None:
        return None
    end = _marks_by_seq(thread_id, [start.seq + 1]).get(start.seq + 1)
    if end is None:
        return None
    entries, ahead = read_span(thread_id, start.offset, through=end.entry_id)
    more = end.seq < stop.seq
    return Slice(
        entries,
        lookahead=ahead,
        partial=True,
        newer=end.entry_id if more else "",
        until=until if more else "",
    )
