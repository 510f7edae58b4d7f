"""Folding T3 Code shell and thread stream items into board rows (seed 001).

``apply(rows, values, host=…)`` folds the items of one chunk, in stream order, into a
new cache keyed by ``(host, thread_id)``; ``normalize(values, host=…)`` returns the
same information as individual ``("upsert", row)`` / ``("delete", thread_id)``
operations, each computed from an empty row, so a partial upsert holds ``None`` for
what its item did not say, and an authoritative shell snapshot is just its upserts.

``values`` is a chunk's ``values`` array, a single item, or a thread projection as
returned by ``orchestration.getThreadProjection``. Items this module cannot read
(unknown kinds, unknown event types, malformed records) are skipped, never raised.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator

from boards.t3.rows import (
    META,
    Row,
    int_or_none,
    later_or_same,
    latest,
    snippet,
    text_or_none,
)

logger = logging.getLogger(__name__)

Op = tuple[str, object]  # ("upsert", Row) | ("delete", thread_id) | ("replace", [Row, …])
Base = Callable[[str], "Row | None"]

RUN_EVENTS = {"run.created", "run.updated"}
SHELL_TIMES = {
    "requested_at": "latestRunRequestedAt",
    "started_at": "latestRunStartedAt",
    "completed_at": "latestRunCompletedAt",
}
RUN_TIMES = {
    "requested_at": "requestedAt",
    "started_at": "startedAt",
    "completed_at": "completedAt",
}


def normalize(values, *, host: str, snippet_length: int = 160) -> list[Op]:
    """Individual upsert/delete operations for ``values``, each from an empty row."""
    ops: list[Op] = []
    for op in _fold(_items(values), lambda thread_id: None, host, snippet_length):
        if op[0] == "replace":
            ops.extend(("upsert", row) for row in op[1])
        else:
            ops.append(op)
    return ops


def apply(rows: dict, values, *, host: str, snippet_length: int = 160) -> dict:
    """A new cache: ``rows`` with ``values`` folded in, in stream order."""
    result = dict(rows)

    def base(thread_id: str) -> Row | None:
        return result.get((host, thread_id))

    for kind, value in _fold(_items(values), base, host, snippet_length):
        if kind == "upsert":
            result[(host, value["thread_id"])] = value
        elif kind == "delete":
            result.pop((host, value), None)
        else:  # an authoritative shell snapshot replaces this host's rows, and only them
            for key in [key for key in result if key[0] == host]:
                del result[key]
            result.update(((host, row["thread_id"]), row) for row in value)
    return result


def _items(values) -> list:
    if isinstance(values, dict):
        if "kind" in values:
            return [values]
        if isinstance(values.get("thread"), dict):  # a projection from getThreadProjection
            return [{"kind": "snapshot", "projection": values}]
        return []
    return list(values) if isinstance(values, list | tuple) else []


def _fold(items: Iterable, base: Base, host: str, length: int) -> Iterator[Op]:
    for item in items:
        try:
            ops = list(_item(item, base, host, length)) if isinstance(item, dict) else []
        except (TypeError, ValueError, AttributeError, KeyError):
            logger.warning("skipped a T3 stream item that could not be read", exc_info=True)
            continue
        yield from ops  # lazily: each op lands before the next item reads its base


def _item(item: dict, base: Base, host: str, length: int) -> Iterator[Op]:
    kind = item.get("kind")
    if kind == "snapshot":
        if isinstance(item.get("projection"), dict):
            yield from _projection(
                item["projection"], item.get("snapshotSequence"), base, host, length
            )
        elif "resolvedRepositoryIdentityRoots" not in item and _readable_shell(
            item.get("snapshot")
        ):
            yield ("replace", list(_shell_snapshot(item["snapshot"], host, length)))
        # an enrichment snapshot only patches projects: never an empty board
    elif kind == "thread.updated" and isinstance(item.get("thread"), dict):
        archived = item.get("location") == "archive"
        yield from _shell_thread(item["thread"], item.get("sequence"), base, host, length, archived)
    elif kind == "thread.removed" and isinstance(item.get("threadId"), str):
        yield ("delete", item["threadId"])
    elif kind == "event" and isinstance(item.get("event"), dict):
        yield from _event(item["event"], item.get("sequence"), base, host, length)
    # "synchronized", project.* and unknown kinds carry nothing for a board


# -- the shell stream ----------------------------------------------------------------------


def _readable_shell(snapshot) -> bool:
    """Only a snapshot with a thread list may replace a host's rows: never a garbled one."""
    return (
        isinstance(snapshot, dict)
        and isinstance(snapshot.get("threads"), list)
        and isinstance(snapshot.get("archivedThreads", []), list)
    )


def _shell_snapshot(snapshot: dict, host: str, length: int) -> Iterator[Row]:
    sequence = snapshot.get("snapshotSequence")
    for key, archived in (("threads", False), ("archivedThreads", True)):
        for thread in snapshot.get(key) or []:
            if isinstance(thread, dict):
                for op in _shell_thread(thread, sequence, lambda _: None, host, length, archived):
                    if op[0] == "upsert":
                        yield op[1]


def _shell_thread(
    thread: dict, sequence, base: Base, host: str, length: int, archived: bool
) -> Iterator[Op]:
    thread_id = text_or_none(thread.get("id"))
    if thread_id is None:
        return
    if thread.get("deletedAt") is not None:
        yield ("delete", thread_id)
        return
    row = _start(thread_id, base, host, sequence)
    if row is None:
        return
    meta = row[META]
    if "title" in thread:
        row["title"] = text_or_none(thread["title"])
    if "status" in thread:
        meta["run_state"] = text_or_none(thread["status"])
    if archived or "archivedAt" in thread:
        meta["archived"] = archived or thread.get("archivedAt") is not None
    # The shell names the latest run by id and time only; keep what a projection added.
    run = meta.get("run")
    if "latestRunId" in thread:
        run_id = text_or_none(thread["latestRunId"])
        if run_id is None:
            run = None
        elif run is None or run.get("id") != run_id:
            run = {"id": run_id}
    if any(wire in thread for wire in SHELL_TIMES.values()):
        run = dict(run or {})
        for name, wire in SHELL_TIMES.items():
            if wire in thread:
                run[name] = text_or_none(thread[wire])
    meta["run"] = run
    if "latestVisibleMessage" in thread:
        message = thread["latestVisibleMessage"]
        if not isinstance(message, dict):
            meta["message"] = None
            row["last_message_snippet"] = None
        else:
            known = meta.get("message") or {}
            same = known.get("id") == message.get("id")
            meta["message"] = {
                "id": message.get("id"),
                "created_at": known.get("created_at") if same else None,
                "updated_at": text_or_none(message.get("updatedAt")),
            }
            row["last_message_snippet"] = snippet(message.get("text"), length)
    yield ("upsert", _finish(row))


# -- the thread stream ---------------------------------------------------------------------


def _projection(projection: dict, sequence, base: Base, host: str, length: int) -> Iterator[Op]:
    thread = projection.get("thread")
    thread_id = text_or_none(thread.get("id")) if isinstance(thread, dict) else None
    if thread_id is None:
        return
    if thread.get("deletedAt") is not None:
        yield ("delete", thread_id)
        return
    row = _start(thread_id, base, host, sequence, guard=False)
    meta = row[META]
    if "title" in thread:
        row["title"] = text_or_none(thread["title"])
    if "archivedAt" in thread:
        meta["archived"] = thread["archivedAt"] is not None
    if isinstance(projection.get("runs"), list):
        runs = [run for run in projection["runs"] if isinstance(run, dict)]
        newest = max(runs, key=lambda run: int_or_none(run.get("ordinal")) or 0, default=None)
        if newest is None:
            meta["run"], meta["run_state"] = None, "idle"
        else:
            meta["run"] = _run_meta(newest, {})
            meta["run"]["attempts"] = [
                attempt.get("id")
                for attempt in projection.get("attempts") or []
                if isinstance(attempt, dict) and attempt.get("runId") == newest.get("id")
            ]
            meta["run_state"] = text_or_none(newest.get("status"))
            for turn in projection.get("providerTurns") or []:
                if isinstance(turn, dict):
                    _turn_into(meta["run"], turn, None)
    if isinstance(projection.get("messages"), list):
        messages = [message for message in projection["messages"] if isinstance(message, dict)]
        newest = None
        for message in messages:  # by creation time; among equals, the later in the list
            if newest is None or later_or_same(_created(message), _created(newest)) is not False:
                newest = message
        meta["message"] = _message_meta(newest, {}) if newest else None
        row["last_message_snippet"] = snippet(newest.get("text"), length) if newest else None
    yield ("upsert", _finish(row))


def _event(event: dict, sequence, base: Base, host: str, length: int) -> Iterator[Op]:
    kind = event.get("type")
    payload = event.get("payload")
    if not isinstance(kind, str) or not isinstance(payload, dict):
        return
    thread_id = text_or_none(event.get("threadId"))
    if kind.startswith("thread."):
        thread_id = thread_id or text_or_none(payload.get("id"))
        if thread_id is None:
            return
        if kind == "thread.deleted" or payload.get("deletedAt") is not None:
            yield ("delete", thread_id)
            return
        row = _start(thread_id, base, host, sequence)
        if row is None:
            return
        if "title" in payload:
            row["title"] = text_or_none(payload["title"])
        if "archivedAt" in payload:
            row[META]["archived"] = payload["archivedAt"] is not None
        if kind == "thread.created" and row[META].get("run_state") is None:
            row[META]["run_state"] = "idle"
        yield ("upsert", _finish(row))  # the run state stays as it was
        return
    thread_id = thread_id or text_or_none(payload.get("threadId"))
    if thread_id is None or kind not in RUN_EVENTS | {"provider-turn.updated", "message.updated"}:
        return
    row = _start(thread_id, base, host, sequence)
    if row is None:
        return
    meta = row[META]
    if kind in RUN_EVENTS:
        known = meta.get("run")
        if not _newer_run(payload, known):
            return  # a late update of an older run never replaces the summary
        same = known is not None and known.get("id") == payload.get("id")
        meta["run"] = _run_meta(payload, known if same else {})
        if "status" in payload:
            meta["run_state"] = text_or_none(payload["status"])
    elif kind == "provider-turn.updated":
        run = meta.get("run")
        run_id = text_or_none(event.get("runId"))
        if run is None and run_id is not None:
            run = meta["run"] = {"id": run_id}
        if run is None or not _turn_into(run, payload, run_id):
            return
    else:
        known = meta.get("message")
        if not _newer_message(payload, known):
            return  # an edit of an older message never replaces the snippet
        same = known is not None and known.get("id") == payload.get("id")
        meta["message"] = _message_meta(payload, known if same else {})
        if "text" in payload:
            row["last_message_snippet"] = snippet(payload["text"], length)
    yield ("upsert", _finish(row))


# -- rows and meta -------------------------------------------------------------------------


def _start(thread_id: str, base: Base, host: str, sequence, *, guard: bool = True) -> Row | None:
    """A working copy of the thread's row, or None when ``sequence`` is already behind it."""
    known = base(thread_id)
    row = known.copy() if isinstance(known, Row) else Row.blank(thread_id, host)
    if isinstance(known, dict) and not isinstance(known, Row):  # e.g. a row rebuilt from storage
        row = Row(known)
        row[META] = dict(known.get(META) or {})
    sequence = int_or_none(sequence)
    if sequence is not None:
        seen = int_or_none(row[META].get("sequence"))
        if guard and seen is not None and sequence < seen:
            return None  # replayed or reordered: the row already holds newer state
        row[META]["sequence"] = sequence if not guard or seen is None else max(seen, sequence)
    row["host"] = host
    return row


def _finish(row: Row) -> Row:
    meta = row[META]
    if meta.get("archived"):
        row["state"] = "archived"
    elif "run_state" in meta:
        row["state"] = meta["run_state"]
    run = meta.get("run")
    if "run" in meta:
        times = (run or {}).get
        row["last_turn_at"] = latest(
            times("requested_at"),
            times("work_started_at"),
            times("started_at"),
            times("completed_at"),
        )
    return row


def _run_meta(run: dict, known: dict) -> dict:
    meta = dict(known)
    meta["id"] = run.get("id", known.get("id"))
    if "ordinal" in run:
        meta["ordinal"] = int_or_none(run["ordinal"])
    if "status" in run:
        meta["status"] = text_or_none(run["status"])
    for name, wire in RUN_TIMES.items():
        if wire in run:
            meta[name] = text_or_none(run[wire])
    return meta


def _newer_run(run: dict, known: dict | None) -> bool:
    if known is None or known.get("id") == run.get("id"):
        return True
    ordinal, known_ordinal = int_or_none(run.get("ordinal")), int_or_none(known.get("ordinal"))
    if ordinal is not None and known_ordinal is not None:
        return ordinal > known_ordinal
    # The shell knows the latest run by id and request time only.
    later = later_or_same(run.get("requestedAt"), known.get("requested_at"))
    return later is not False  # unknown: stream order decides


def _turn_into(run: dict, turn: dict, run_id: str | None) -> bool:
    """Fold a provider turn's start into its run's work-started time, if it is this run's."""
    ours = (run_id is not None and run_id == run.get("id")) or (
        turn.get("runAttemptId") is not None
        and turn.get("runAttemptId") in (run.get("attempts") or [])
    )
    if not ours:
        return False
    run["work_started_at"] = latest(run.get("work_started_at"), turn.get("startedAt"))
    return True


def _created(message: dict):
    return message.get("createdAt") or message.get("updatedAt")


def _message_meta(message: dict, known: dict) -> dict:
    return {
        "id": message.get("id", known.get("id")),
        "created_at": text_or_none(message.get("createdAt")) or known.get("created_at"),
        "updated_at": text_or_none(message.get("updatedAt")) or known.get("updated_at"),
    }


def _newer_message(message: dict, known: dict | None) -> bool:
    if known is None or known.get("id") == message.get("id"):
        return True
    # By creation time; the shell only told us the newest message's update time.
    mine = _created(message)
    theirs = known.get("created_at") or known.get("updated_at")
    return later_or_same(mine, theirs) is not False
