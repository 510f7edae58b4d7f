"""The thread page's bell: what reaches a person from a thread, and the choices offered."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef, Subquery

from notify.models import HouseNotify, Level, NotifySettings, ThreadMode, ThreadNotify

HOUSE_MUTED = "house"  # the level shown when the thread follows a muted house


def modes_of(user, thread_id: str) -> tuple[str, str, str]:
    """(the thread's mode for ``user``, their level — ``house`` when the thread's house is
    muted —, what reaches them from the thread: all/mentions/nothing), in one query (the
    thread page's budget). A thread's own mode wins over its house's mute (as a Zulip topic
    followed in a muted stream)."""
    from threads.models import Thread

    house = Thread.objects.filter(pk=thread_id).values("house_id")[:1]
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
            house_muted=Exists(
                HouseNotify.objects.filter(user=OuterRef("pk"), house_id=Subquery(house))
            ),
        )
        .values_list("mode", "level", "house_muted")
        .first()
    )
    mode, level, house_muted = row or (None, None, False)
    mode, level = mode or "", level or Level.MENTIONS
    if mode == ThreadMode.MUTE:
        return mode, level, Level.NOTHING
    if mode == ThreadMode.ALL:
        return mode, level, Level.ALL
    if house_muted:
        return mode, HOUSE_MUTED, Level.NOTHING
    return mode, level, level


def bell_context(user, thread) -> dict:
    mode, level, effective = modes_of(user, thread.pk)
    yours = {
        "all": "Now: every message in your houses",
        "nothing": "Now: nothing",
        HOUSE_MUTED: "Now: nothing, as you muted this house",
    }.get(level, "Now: mentions and replies from bots you asked")
    if mode == ThreadMode.MUTE or level == HOUSE_MUTED:
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
