"""Reading entries that anyone may have written: skip what can't be read, say so once.

Writers are checked whole before they append, but a log can still hold entries
arbe can't read: written by an older version, straight to an external stream
server, or by another program. Every reader (the page, the live tail, ``/now``,
the director, status tracking, replies, the CLI) goes through ``readable`` so
that such an entry is skipped rather than breaking the thread; raw views use
``read_raw`` to show it as unreadable with the reason. Each unreadable entry is
logged once per process, not on every read.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from threads.entries import Entry, EntryError, convert_entry, decode_entry

logger = logging.getLogger(__name__)
_LOGGED_MAX = 4096


@dataclass(frozen=True)
class Unreadable:
    """An entry in a log that arbe can't read: its bytes (as text) and why."""

    raw: str
    reason: str


class _Once:
    """Remembers which unreadable entries were logged (bounded, least recent forgotten)."""

    def __init__(self):
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._lock = threading.Lock()

    def first(self, raw: bytes) -> bool:
        key = hashlib.blake2b(raw, digest_size=16).digest()
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return False
            self._seen[key] = None
            if len(self._seen) > _LOGGED_MAX:
                self._seen.popitem(last=False)
            return True


_once = _Once()


def _report(raw: bytes, reason: str, where: str) -> None:
    if _once.first(raw):
        logger.warning("skipped an unreadable entry in %s: %s", where or "a thread", reason[:300])


def _as_bytes(raw: bytes | str) -> bytes:
    return raw.encode(errors="replace") if isinstance(raw, str) else bytes(raw)


def read_raw(raw: bytes | str) -> Entry | Unreadable:
    """The entry, or what can be shown of an entry that can't be read."""
    try:
        return decode_entry(raw)
    except EntryError as exc:
        return Unreadable(_as_bytes(raw).decode(errors="replace"), str(exc))


def readable(raws: Iterable[bytes | str], where: str = "") -> list[Entry]:
    """The entries that can be read, in order; the others are skipped (and logged once)."""
    entries = []
    for raw in raws:
        try:
            entries.append(decode_entry(raw))
        except EntryError as exc:
            _report(_as_bytes(raw), str(exc), where)
    return entries


def readable_docs(docs: Iterable[Any], where: str = "") -> list[Entry]:
    """The same for already-parsed entries (the director's cached tail, API answers)."""
    entries = []
    for doc in docs:
        try:
            entries.append(convert_entry(doc))
        except EntryError as exc:
            _report(repr(doc).encode(errors="replace"), str(exc), where)
    return entries


def report_unshowable(entry: Entry, exc: Exception) -> None:
    """An entry that decoded but could not be shown: skipped by the caller, logged once."""
    if _once.first(f"show:{entry.id}:{type(exc).__name__}".encode()):
        logger.warning("skipped entry %s that could not be shown", entry.id, exc_info=exc)
