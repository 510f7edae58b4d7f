"""The board service: one subscriber per T3 host, run by the backstage engine.

Each subscriber opens the host's ``/ws``, subscribes to ``orchestration.subscribeShell``
and ``orchestration.subscribeArchivedShell``, folds every chunk into its rows with
``boards.t3.apply``, stores the rows that changed,
acks the chunk, and tells the house's pages (``board.rows`` on ``house-<id>``). The
transport never reconnects; this loop does, with exponential backoff and jitter, and
resubscribes from scratch: the fresh authoritative snapshot makes the board converge
whatever happened while it was away.

The main shell reports archiving as ``thread.removed`` (archived or deleted alike), so
archived threads come from the archived shell, where T3 keeps them. Each stream folds into
a cache of its own, each replaced only by its own snapshots; the board is the active rows
plus the archived ones no active row hides. So whichever stream tells of an archive (or an
unarchive) first, the board converges on the thread reading ``"archived"`` (seed 001), and
a deleted thread leaves both. A host without the archived shell (an older T3) shows active
threads only, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random

from django.db import transaction

from arbe_lib.concurrency import in_thread
from arbe_lib.events import send_to_group
from boards.models import BoardRow, T3Host
from boards.t3 import FIELDS, META, apply
from boards.t3.rpc import Client, RpcError, StreamChunk, StreamDone, StreamError

logger = logging.getLogger(__name__)
SHELL = "orchestration.subscribeShell"
ARCHIVED_SHELL = "orchestration.subscribeArchivedShell"
RESCAN_S = 30.0


class Backoff:
    """Exponential delays with jitter: ``base · 2^n``, capped, each scaled by 0.5–1."""

    def __init__(self, base: float = 0.5, cap: float = 30.0) -> None:
        self.base, self.cap, self.attempt = base, cap, 0

    def next(self) -> float:
        delay = min(self.cap, self.base * 2**self.attempt) * random.uniform(0.5, 1.0)
        self.attempt = min(self.attempt + 1, 30)
        return delay

    def reset(self) -> None:
        self.attempt = 0


class HostSubscriber:
    """Follows one host until cancelled."""

    def __init__(self, host_id: int, *, backoff: Backoff | None = None, **connect) -> None:
        self.host_id = host_id
        self.backoff = backoff or Backoff()
        self.connect = connect  # e.g. ping_interval, dead_after (tests)
        self.rows: dict = {}  # what the board shows: the two caches merged
        self.active: dict = {}  # folded from the main shell
        self.archived: dict = {}  # folded from the archived shell
        self.folding = asyncio.Lock()
        self.connected = asyncio.Event()

    def __repr__(self) -> str:
        return f"<HostSubscriber host={self.host_id}>"

    async def run(self) -> None:
        while True:
            host = await in_thread(_enabled_host, self.host_id)
            if host is None:
                return  # removed or disabled: the supervisor starts us again if it comes back
            try:
                await self.follow(host)
            except RpcError as exc:
                logger.warning("board %s: %s", host.label, exc)
            except Exception:  # a bug here must not end the board: log, back off, retry
                logger.exception("board %s: subscriber failed", host.label)
            self.connected.clear()
            await asyncio.sleep(self.backoff.next())

    async def follow(self, host: T3Host) -> None:
        self.rows = await in_thread(_stored_rows, host)
        self.archived = {k: r for k, r in self.rows.items() if r.get(META, {}).get("archived")}
        self.active = {k: r for k, r in self.rows.items() if k not in self.archived}
        client = await Client.connect(host.url, token=host.token or None, **self.connect)
        archive = None
        try:
            subscription = await client.subscribe(SHELL, {})
            archived = await client.subscribe(ARCHIVED_SHELL, {})
            archive = asyncio.create_task(self.follow_archive(host, client, archived))
            self.connected.set()
            async for event in subscription:
                if isinstance(event, StreamChunk):
                    await self.fold(host, event.values)
                    await client.ack(subscription)  # after the chunk is folded and stored
                    self.backoff.reset()
                elif isinstance(event, StreamError):
                    raise event.error
                elif isinstance(event, StreamDone):
                    logger.info("board %s: the shell stream ended", host.label)
        finally:
            if archive is not None:
                archive.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await archive
            await client.close()

    async def follow_archive(self, host: T3Host, client: Client, subscription) -> None:
        """The archived shell, beside the main one; its failure ends only itself."""
        async for event in subscription:
            if isinstance(event, StreamChunk):
                await self.fold(host, as_archived(event.values), archived=True)
                await client.ack(subscription)
            elif isinstance(event, StreamError):
                logger.info("board %s: no archived shell (%s)", host.label, event.error)
                return

    async def fold(self, host: T3Host, values, *, archived: bool = False) -> None:
        async with self.folding:
            if archived:
                self.archived = apply(self.archived, values, host=host.label)
            else:
                self.active = apply(self.active, values, host=host.label)
            rows = {**self.archived, **self.active}
            changed = [row for key, row in rows.items() if self.rows.get(key) != row]
            removed = [key[1] for key in self.rows if key not in rows]
            if changed or removed:
                await in_thread(store, host, changed, removed)
            self.rows = rows


def as_archived(values) -> list:
    """Archived-shell items as ``apply`` reads archived ones: its updates are archived
    threads (sent without a location) and its snapshot lists archived threads."""
    items = []
    for item in values if isinstance(values, list | tuple) else []:
        if isinstance(item, dict) and item.get("kind") == "thread.updated":
            item = {**item, "location": "archive"}
        elif isinstance(item, dict) and item.get("kind") == "snapshot":
            snapshot = item.get("snapshot")
            if isinstance(snapshot, dict):
                listed = [
                    *(snapshot.get("threads") or []),
                    *(snapshot.get("archivedThreads") or []),
                ]
                item = {**item, "snapshot": {**snapshot, "threads": [], "archivedThreads": listed}}
        items.append(item)
    return items


def _enabled_host(host_id: int) -> T3Host | None:
    return T3Host.objects.filter(pk=host_id, enabled=True).first()


def _stored_rows(host: T3Host) -> dict:
    return {(host.label, row.thread_id): row.as_row(host.label) for row in host.rows.all()}


def store(host: T3Host, changed: list, removed: list[str]) -> None:
    """Write changed rows, delete removed ones, then tell the house's pages which."""
    with transaction.atomic():
        gone = list(host.rows.filter(thread_id__in=removed).values_list("pk", flat=True))
        host.rows.filter(pk__in=gone).delete()
        existing = set(
            host.rows.filter(thread_id__in=[row["thread_id"] for row in changed]).values_list(
                "thread_id", flat=True
            )
        )
        BoardRow.objects.bulk_create(
            [
                BoardRow(
                    host=host,
                    meta=row.get(META) or {},
                    **{field: row[field] for field in FIELDS if field not in ("host",)},
                )
                for row in changed
            ],
            update_conflicts=True,
            unique_fields=["host", "thread_id"],
            update_fields=[*(f for f in FIELDS if f not in ("host", "thread_id")), "meta"],
        )
        ids = dict(
            host.rows.filter(thread_id__in=[row["thread_id"] for row in changed]).values_list(
                "thread_id", "pk"
            )
        )
    created = [ids[row["thread_id"]] for row in changed if row["thread_id"] not in existing]
    updated = [ids[row["thread_id"]] for row in changed if row["thread_id"] in existing]
    announce(host.house_id, created=created, updated=updated, removed=gone)


def announce(house_id: int, *, created: list, updated: list, removed: list) -> None:
    """``board.rows`` to ``house-<id>``; the stored rows stay the truth if this is lost."""
    event = {"type": "board.rows", "created": created, "updated": updated, "removed": removed}
    send_to_group(f"house-{house_id}", event)


class BoardService:
    """Keeps one ``HostSubscriber`` per enabled host, rescanning the hosts now and then."""

    def __init__(self) -> None:
        self.subscribers: dict[tuple, asyncio.Task] = {}
        self.task: asyncio.Task | None = None

    def start(self, loop: asyncio.AbstractEventLoop, interval: float = RESCAN_S) -> None:
        """On ``loop``'s thread: start supervising, once."""
        if self.task is None or self.task.done():
            self.task = loop.create_task(self.supervise(interval), name="t3-boards")

    async def supervise(self, interval: float) -> None:
        for _ in iter(int, 1):  # until cancelled with the engine
            try:
                await self.rescan()
            except Exception:
                logger.exception("board service: rescan failed")
            await asyncio.sleep(interval)

    async def rescan(self) -> None:
        # A host whose url, token or label changed gets a fresh subscriber (a new key).
        hosts = await in_thread(
            lambda: list(
                T3Host.objects.filter(enabled=True).values_list("pk", "url", "token", "label")
            )
        )
        wanted = {(pk, hash(rest)) for pk, *rest in map(tuple, hosts)}
        for key, task in list(self.subscribers.items()):
            if key not in wanted or task.done():
                task.cancel()
                del self.subscribers[key]
        for key in wanted - set(self.subscribers):
            self.subscribers[key] = asyncio.get_running_loop().create_task(
                HostSubscriber(key[0]).run(), name=f"t3-board-{key[0]}"
            )


_service = BoardService()


def board_service() -> BoardService:
    return _service
