"""Waking the thread director after a chat append.

Posting appends first and then calls ``wake_director``; whatever happens
here, the message is already in the log. A failure raises ``WakeFailed`` and
the caller records it as ``signal.dispatch.failed {stage: "wake"}``.
"""

from dispatch import backstage
from threads.failures import scrub


class WakeFailed(Exception):
    """The director could not be woken."""


def wake_director(thread_id: str) -> None:
    try:
        backstage.wake(thread_id)
    except Exception as exc:
        raise WakeFailed(scrub(f"{type(exc).__name__}: {exc}")) from exc
