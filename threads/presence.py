"""Who is on a thread's page now, and who is typing: ephemeral, never in the log.

Each thread page's socket joins the channel-layer group ``here-<thread>`` (Redis when
scaled, so every Daphne process hears every other) and relays what its page says:
``{"here": true}`` (on open, then a heartbeat) and ``{"typing": true}`` while the person
types. Each is throttled per socket (the page throttles too); a closing socket says
"left" at once. Pages forget a presence that stops beating (``static/arbe/live.js``), so
a process that dies takes its viewers away within a minute even without a "left".
"""

from __future__ import annotations

import functools
import json
import time
from collections import Counter
from dataclasses import dataclass, field

from django.template.loader import render_to_string

TYPING_EVERY_S = 2.0  # at most one typing event per socket per this many seconds
HERE_EVERY_S = 5.0  # and one heartbeat
ANSWER_EVERY_S = 1.0  # and one "I'm here" answer to a page that just opened (a reload)
MAX_FRAME = 200  # a page's presence message is tiny; anything longer is dropped
STATES = ("joined", "here", "typing", "left")
# Every presence event reaches every viewer of the thread, so n viewers joining cost n² frames.
# Past CROWD viewers in this process, one event per (person, state) a second is relayed; past
# MAX_VIEWERS none is (a crowd shows no avatars, as large channels elsewhere show no typing).
CROWD = 20
MAX_VIEWERS = 200
_viewers: Counter[str] = Counter()  # thread -> its presence sockets in this process
_relayed: dict[tuple[str, str, str], float] = {}  # (thread, agent, state) -> when, in crowds


def group(thread_id: str) -> str:
    return f"here-{thread_id}"


@dataclass
class Throttle:
    """When this socket last relayed each kind of message."""

    last: dict[str, float] = field(default_factory=dict)

    def allow(self, kind: str, every_s: float) -> bool:
        now = time.monotonic()
        if now - self.last.get(kind, -every_s) < every_s:
            return False
        self.last[kind] = now
        return True


def joined(thread_id: str) -> None:
    _viewers[thread_id] += 1


def left(thread_id: str) -> None:
    _viewers[thread_id] -= 1
    if _viewers[thread_id] <= 0:
        del _viewers[thread_id]
        for key in [k for k in _relayed if k[0] == thread_id]:
            del _relayed[key]


def should_relay(thread_id: str, agent_id: str, state: str) -> bool:
    """Whether this process relays a presence event of ``agent_id`` on ``thread_id`` now."""
    viewers = _viewers[thread_id]
    if viewers > MAX_VIEWERS:
        return False
    if viewers <= CROWD or state == "left":
        return True
    now, key = time.monotonic(), (thread_id, agent_id, state)
    if now - _relayed.get(key, -1.0) < 1.0:
        return False
    _relayed[key] = now
    return True


def parse(text: str | None) -> str | None:
    """The state a page's message asks to relay ("here" or "typing"), or None."""
    if not text or len(text) > MAX_FRAME:
        return None
    try:
        message = json.loads(text)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    if message.get("typing") is True:
        return "typing"
    if message.get("here") is True:
        return "here"
    return None


def event(state: str, agent_id: str, name: str, avatar: dict) -> dict:
    return {
        "type": "here.event",
        "state": state,
        "agent": agent_id,
        "name": name,
        "initials": avatar["initials"],
        "hue": avatar["hue"],
    }


def fragment(event: dict) -> str:
    """The event as an out-of-band fragment the page script folds (like an edit): rendered
    once per process for all the viewers it reaches."""
    keys = ("state", "agent", "name", "initials", "hue")
    return _fragment(tuple(event[k] for k in keys))


@functools.lru_cache(maxsize=1024)
def _fragment(values: tuple) -> str:
    e = dict(zip(("state", "agent", "name", "initials", "hue"), values, strict=True))
    state = "here" if e["state"] == "joined" else e["state"]
    return render_to_string("threads/_here.html", {"e": e, "state": state})
