"""A thread's states and their rank, without Django: the ``arbe`` command derives status too.

``threads.models.Status`` (the stored field's choices) and ``STATUS_RANK`` are built from
these, so the two never disagree.
"""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    BLOCKED = "blocked"
    WORKING = "working"
    ERROR = "error"
    DONE = "done"
    IDLE = "idle"


# Highest wins in a rollup.
RANK = {State.BLOCKED: 5, State.WORKING: 4, State.ERROR: 3, State.DONE: 2, State.IDLE: 1}

# What people read for each state: the stored value stays ``done``, the page says what
# happened ("replied": a bot answered), never "resolved".
LABELS = {
    State.BLOCKED: "blocked",
    State.WORKING: "working",
    State.ERROR: "error",
    State.DONE: "replied",
    State.IDLE: "idle",
}


def label(state: str) -> str:
    return LABELS.get(state, state)
