"""Reads, run in a small thread pool so no event loop touches the database.

Each call is short (one stream row, a page of messages); long-polls and SSE
wait between calls without holding a connection.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.db import connections

from streams.server import store

READ_THREADS = 4
executor = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="streams-read")


@dataclass(slots=True)
class Snapshot:
    row: store.StreamRow | None
    messages: list[tuple[int, bytes]] = field(default_factory=list)
    up_to_date: bool = True


def _snapshot(
    alias: str, name: str, after: int | None, with_messages: bool, budget: int
) -> Snapshot:
    connection = connections[alias]
    try:
        with store.cursor_for(connection) as cursor:
            row = store.live_stream(cursor, name)
            if row is None or row.soft_deleted or not with_messages:
                return Snapshot(row)
            start = row.tail if after is None else after
            messages, up_to_date = store.read_messages(cursor, row, start, budget)
            return Snapshot(row, messages, up_to_date)
    except store.DB_ERRORS:
        connection.close()
        raise


async def snapshot(
    name: str,
    after: int | None = None,
    *,
    with_messages: bool = True,
    alias: str = "default",
    budget: int = store.READ_BUDGET,
) -> Snapshot:
    """The stream and its messages past ``after`` (``None``: from the tail), at most about
    ``budget`` bytes of them."""
    future = executor.submit(_snapshot, alias, name, after, with_messages, budget)
    return await asyncio.wrap_future(future)


async def run(fn, *args):
    return await asyncio.wrap_future(executor.submit(fn, *args))
