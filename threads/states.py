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
