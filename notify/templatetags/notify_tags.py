from django import template

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
        count = unread_total(context["request"].user)
    return {"inbox_count": count}
