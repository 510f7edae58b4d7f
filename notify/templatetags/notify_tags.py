from django import template
from django.db import DatabaseError

from notify.bell import bell_context

register = template.Library()


@register.inclusion_tag("notify/_bell.html", takes_context=True)
def thread_bell(context, thread):
    """The thread page's notification control, for the viewer."""
    return bell_context(context["request"].user, thread)


@register.inclusion_tag("notify/_inbox_bell.html", takes_context=True)
def inbox_bell(context):
    """The top bar's inbox bell and its count; a page with a sidebar counted it already."""
    from notify.yours import unread_total

    count = context.get("inbox_count")
    if count is None:
        try:
            count = unread_total(context["request"].user)
        except DatabaseError:  # an error page while the database is away: no count
            count = 0
    return {"inbox_count": count}
