"""What a log line knows about the work it belongs to: request id, user, house, thread.

One mutable ``Fields`` per request (or per backstage wake) in a context variable. It is
mutable on purpose: Django runs a request's middleware and view in tasks and threads of
their own, whose changes to a context variable never reach the ASGI wrapper that writes
the access line; a change to the shared object does. Backstage work begins a fresh one
(``begin``), carrying only the request id, so a pass never writes into the request that
woke it.

The request id travels on: into a wake's message (``carried``), into Pi's environment as
``ARBE_REQUEST_ID`` (``pi_environment``), and so into the worker's log lines. A warm Pi
keeps the environment of its start, so each prompt also rewrites a small script its bash
tool sources (``pi_request_script``, through ``BASH_ENV``): a command run for a later
reply sees that reply's request id.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import shlex
import uuid
from dataclasses import dataclass

# Sane incoming ids only: a proxy's UUID, a trace id. Anything else is replaced, so a
# client can't put newlines, JSON or 10 kB into every log line of its request.
REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{7,127}")
PI_VARIABLE = "ARBE_REQUEST_ID"


@dataclass
class Fields:
    request_id: str = ""
    user_id: int | None = None
    house: str = ""
    thread: str = ""
    route: str = ""


_current: contextvars.ContextVar[Fields | None] = contextvars.ContextVar(
    "arbe_ops_fields", default=None
)


def current() -> Fields | None:
    return _current.get()


def new_request_id(incoming: str | None = None) -> str:
    if incoming and REQUEST_ID.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex


def begin(request_id: str = "", **known) -> Fields:
    """A fresh context for a request or a piece of backstage work, from here on."""
    fields = Fields(request_id=request_id, **known)
    _current.set(fields)
    return fields


def bind(**known) -> None:
    """Add what became known (a user, a house, a thread) to the current context."""
    fields = _current.get()
    if fields is not None:
        for name, value in known.items():
            if value:
                setattr(fields, name, value)


def request_id() -> str:
    fields = _current.get()
    return fields.request_id if fields else ""


def carried() -> dict[str, str]:
    """What a wake message carries to the worker: the request id, when there is one."""
    rid = request_id()
    return {"request_id": rid} if rid else {}


@contextlib.contextmanager
def from_wake(message: dict, thread: str = ""):
    """Around scheduling a wake received from the channel layer: the tasks it starts
    copy this context, so their log lines (and Pi's environment) carry the request id."""
    rid = message.get("request_id")
    token = _current.set(
        Fields(
            request_id=rid if isinstance(rid, str) and REQUEST_ID.fullmatch(rid) else "",
            thread=thread,
        )
    )
    try:
        yield
    finally:
        _current.reset(token)


def wake_context(thread: str = ""):
    """A copy of the current context for work handed to another loop in this process
    (``loop.call_soon_threadsafe(..., context=wake_context(thread))``)."""
    with from_wake(carried(), thread):
        return contextvars.copy_context()


def hand_on(held: Fields | None) -> None:
    """A wake that woke a lingering holder (``dispatch.holding``): the holder's next pass is
    this wake's work, so its lines and its reply carry this wake's request id from now."""
    rid = request_id()
    if held is not None and rid:
        held.request_id = rid


def pi_environment() -> dict[str, str]:
    """Pi's share of the context: the request id that caused the reply, if known."""
    rid = request_id()
    return {PI_VARIABLE: rid} if rid else {}


def pi_request_script() -> str:
    """What Pi's bash sources before each command (``BASH_ENV``): the current request id,
    or none, so a warm Pi's commands never name the request that started the process."""
    rid = request_id()
    if rid and REQUEST_ID.fullmatch(rid):
        return f"export {PI_VARIABLE}={shlex.quote(rid)}\n"
    return f"unset {PI_VARIABLE}\n"
