from django import template

from notify.bell import bell_context

register = template.Library()


@register.inclusion_tag("notify/_bell.html", takes_context=True)
def thread_bell(context, thread):
    """The thread page's notification control, for the viewer."""
    return bell_context(context["request"].user, thread)
