from django import template

from notify.models import ThreadMode

register = template.Library()


def bell_context(user, thread) -> dict:
    from notify.views import modes_of

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


@register.inclusion_tag("notify/_bell.html", takes_context=True)
def thread_bell(context, thread):
    """The thread page's notification control, for the viewer."""
    return bell_context(context["request"].user, thread)
