"""The thread page's bell: what reaches a person from a thread, and the choices offered."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import OuterRef, Subquery

from notify.models import Level, NotifySettings, ThreadMode, ThreadNotify


def modes_of(user, thread_id: str) -> tuple[str, str, str]:
    """(the thread's mode for ``user``, their level, what reaches them from the thread:
    all/mentions/nothing), in one query (the thread page's budget)."""
    row = (
        get_user_model()
        .objects.filter(pk=user.pk)
        .annotate(
            mode=Subquery(
                ThreadNotify.objects.filter(user=OuterRef("pk"), thread_id=thread_id).values(
                    "mode"
                )[:1]
            ),
            level=Subquery(NotifySettings.objects.filter(user=OuterRef("pk")).values("level")[:1]),
        )
        .values_list("mode", "level")
        .first()
    )
    mode, level = row or (None, None)
    mode, level = mode or "", level or Level.MENTIONS
    if mode == ThreadMode.MUTE:
        return mode, level, Level.NOTHING
    if mode == ThreadMode.ALL:
        return mode, level, Level.ALL
    return mode, level, level


def bell_context(user, thread) -> dict:
    mode, level, effective = modes_of(user, thread.pk)
    yours = {
        "all": "Now: every message in your houses",
        "nothing": "Now: nothing",
    }.get(level, "Now: mentions and replies from bots you asked")
    if mode == ThreadMode.MUTE:
        state = "Muted"
    else:
        state = {"all": "All messages", "nothing": "Off"}.get(effective, "Mentions")
    return {
        "state": state,
        "thread": thread,
        "mode": mode,
        "effective": effective,
        "modes": [
            ("", "Your setting", yours),
            (ThreadMode.ALL, "Every message", "Everything said in this thread"),
            (ThreadMode.MUTE, "Mute", "Nothing from this thread, not even mentions"),
        ],
    }
