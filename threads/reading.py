"""Reading a thread's entries from its stream (raw reads keep everything)."""

from threads.entries import Entry, decode_entry, first_of_each_id
from threads.models import stream_name_for
from threads.recency import stream_writer


def read_entries(thread_id_or_stream: str, offset: str = "-1") -> tuple[list[Entry], str]:
    """Every entry from ``offset`` to the tail, and the tail offset reached."""
    name = (
        thread_id_or_stream
        if thread_id_or_stream.startswith("arbe-thread-")
        else stream_name_for(thread_id_or_stream)
    )
    result = stream_writer().catch_up(name, offset)
    return [decode_entry(raw) for raw in result.messages or ()], result.next_offset


def find_entry(stream_name: str, entry_id: str) -> tuple[Entry, str] | None:
    """The first entry with ``entry_id`` and the stream's tail offset, or None."""
    entries, tail = read_entries(stream_name)
    for entry in first_of_each_id(entries):
        if entry.id == entry_id:
            return entry, tail
    return None
