"""Appending a whole imported log to a new stream, resumably.

Entries go in batches through the writer seam's ``restore_batch`` (checked whole, no seam
steps: the import rebuilds every cache from the log after, ``archives.rebuild``). Each
batch is sent as the idempotent producer ``producer_id`` with its batch number as the
sequence, so an import that stopped half-way and runs again re-sends the same batches and
the store answers the ones it has as duplicates: the log ends up holding each entry once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from threads.lifecycle import JSON
from threads.recency import stream_writer

BATCH_ENTRIES = 500
BATCH_BYTES = 2 * 1024 * 1024


def batches(lines: Iterable[bytes]) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    size = 0
    for line in lines:
        if batch and (len(batch) >= BATCH_ENTRIES or size + len(line) > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(line)
        size += len(line) + 1
    if batch:
        yield batch


def append_log(stream_name: str, lines: Iterable[bytes], producer_id: str) -> int:
    """Create ``stream_name`` (idempotent) and append ``lines``; returns how many."""
    writer = stream_writer()
    writer.create(stream_name, content_type=JSON)
    count = 0
    for seq, batch in enumerate(batches(lines)):
        writer.restore_batch(stream_name, batch, producer=(producer_id, 0, seq))
        count += len(batch)
    return count
