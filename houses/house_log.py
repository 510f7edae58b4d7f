"""A house's own log, ``arbe-house-{id}``: facts about the house rather than one thread.

Members and bots joining and leaving are house-level: writing them into every thread
would be noise in conversations about something else, and into none would leave the log
silent. So they go to the house's stream, through the same writer seam as every thread
entry (``threads.recency.stream_writer``), as ``signal.house.*`` entries
(docs/decisions.md, "Lifecycle facts").
"""

from __future__ import annotations

import logging

from django.db import transaction

from houses.models import Agent
from streams.errors import StreamNotFound
from threads.entries import Entry, HouseMemberAdded, HouseMemberRemoved, Payload
from threads.lifecycle import JSON, new_entry
from threads.log import log_reader
from threads.recency import stream_writer
from threads.unreadable import readable

logger = logging.getLogger(__name__)
HOUSE_STREAM_PREFIX = "arbe-house-"


def house_stream_name(house_id: int) -> str:
    return f"{HOUSE_STREAM_PREFIX}{house_id}"


def append_house_fact(house_id: int, payload: Payload, *, by: Agent | None = None) -> None:
    """Append ``payload`` to the house's log, created on its first fact.

    Called when the change has committed (``after_commit``): the embedded stream store
    shares the database, so an append can't wait inside the change's transaction, and a
    fact is never written for a change that was rolled back.
    """
    name = house_stream_name(house_id)
    writer = stream_writer()
    entry = new_entry(payload, author=by.id if by else None)
    try:
        writer.append(name, entry)
    except StreamNotFound:
        writer.create(name, content_type=JSON)  # idempotent, should another create race
        writer.append(name, entry)


def house_facts(house_id: int) -> list[Entry]:
    """The house's log, oldest first (empty before its first fact)."""
    try:
        result = log_reader().catch_up(house_stream_name(house_id))
    except StreamNotFound:
        return []
    return readable(result.messages or (), house_stream_name(house_id))


def after_commit(house_id: int, payload: Payload, by: Agent | None) -> None:
    """Append the fact once the change's transaction commits (at once outside one). A
    failed append is logged with the fact, never raised into a change that has happened."""

    def append() -> None:
        try:
            append_house_fact(house_id, payload, by=by)
        except Exception:
            logger.exception("could not append %s to the log of house %s", payload, house_id)

    transaction.on_commit(append)


def member_added(house_id: int, agent: Agent, *, by: Agent | None = None) -> None:
    after_commit(house_id, HouseMemberAdded(agentId=agent.id), by)


def member_removed(house_id: int, agent: Agent, *, by: Agent | None = None) -> None:
    after_commit(house_id, HouseMemberRemoved(agentId=agent.id), by)
