"""What a bot's Pi session in a thread holds: its generation and the offset it was brought to.

A reply hands the bot's session every message up to the offset it read; the next reply reads
only the entries after that offset (``dispatch.conversation``), never the whole log. The mark
is a cache beside the session file, like the session itself: losing it costs one reseed from
a bounded tail, never a wrong answer. It is written only by the thread's lease holder, after
its first fenced append of the attempt (a fenced-off holder never gets that far).
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from dispatch.pi import layout


class SessionMark(msgspec.Struct):
    generation: int  # the session file ``g<generation>.jsonl``; a reseed takes the next
    offset: str  # the stream offset the session holds every message up to (opaque)


def mark_path(house_id, thread_id: str, bot_id: str) -> Path:
    return layout.session_file(house_id, thread_id, bot_id, "mark").with_suffix(".json")


def session_path(house_id, thread_id: str, bot_id: str, generation: int) -> Path:
    return layout.session_file(house_id, thread_id, bot_id, f"g{generation}")


def load(path: Path) -> SessionMark | None:
    """The mark, or None when there is none (or it can't be read: reseed)."""
    try:
        return msgspec.json.decode(path.read_bytes(), type=SessionMark)
    except (OSError, msgspec.DecodeError):
        return None


def save(path: Path, mark: SessionMark) -> None:
    """Atomically, private to the server's user."""
    layout.private_dirs(path.parent)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(msgspec.json.encode(mark))
    os.replace(tmp, path)


def fresh_generation(house_id, thread_id: str, bot_id: str, after: int = -1) -> int:
    """A generation after ``after`` whose session file does not exist yet (sessions of an
    older layout may be there)."""
    generation = after + 1
    while session_path(house_id, thread_id, bot_id, generation).exists():
        generation += 1
    return generation
