"""Reading a thread's entries from its stream (raw reads keep everything)."""

from streams.errors import StreamNotFound
from threads.entries import Entry, first_of_each_id
from threads.log import log_reader
from threads.models import stream_name_for
from threads.unreadable import readable


class ThreadLogMissing(Exception):
    """The thread's row exists but its stream doesn't: the stream server lost it, or
    ``DURABLE_STREAMS_URL`` now names a server that never had it. Nothing is invented."""

    def __str__(self) -> str:
        return f"The log of this thread ({self.args[0]}) is missing from the stream server."


def read_entries(thread_id_or_stream: str, offset: str = "-1") -> tuple[list[Entry], str]:
    """Every readable entry from ``offset`` to the tail, and the tail offset reached."""
    name = (
        thread_id_or_stream
        if thread_id_or_stream.startswith("arbe-thread-")
        else stream_name_for(thread_id_or_stream)
    )
    try:
        result = log_reader().catch_up(name, offset)
    except StreamNotFound:
        raise ThreadLogMissing(name) from None
    return readable(result.messages or (), name), result.next_offset


def find_entry(stream_name: str, entry_id: str) -> tuple[Entry, str] | None:
    """The first entry with ``entry_id`` and the stream's tail offset, or None."""
    entries, tail = read_entries(stream_name)
    for entry in first_of_each_id(entries):
        if entry.id == entry_id:
            return entry, tail
    return None
