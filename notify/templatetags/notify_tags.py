from django import template

from notify.models import Level, ThreadMode

register = template.Library()


def bell_context(user, thread) -> dict:
    from notify.views import effective, thread_mode

    return {
        "thread": thread,
        "mode": thread_mode(user, thread.pk),
        "effective": effective(user, thread.pk),
        "modes": [
            ("", "Your setting", "Mentions and bots you asked, or what you chose"),
            (ThreadMode.ALL, "Every message", "Everything said in this thread"),
            (ThreadMode.MUTE, "Mute", "Nothing from this thread, not even mentions"),
        ],
        "Level": Level,
    }


@register.inclusion_tag("notify/_bell.html", takes_context=True)
def thread_bell(context, thread):
    """The thread page's notification control, for the viewer."""
    return bell_context(context["request"].user, thread)
