"""Times as people read them: "5 min ago" on the page, the exact date on hover.

``static/arbe/when.js`` keeps the relative text fresh and shows the exact date in the
reader's own time zone; these filters are what the page says before it runs.
"""

from datetime import datetime

from django import template
from django.utils import timezone

register = template.Library()


@register.filter
def ago(moment: datetime | None, now: datetime | None = None) -> str:
    if moment is None:
        return ""
    now = now or timezone.now()
    seconds = max((now - moment).total_seconds(), 0)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    if seconds < 2 * 86400:
        return "yesterday"
    if seconds < 7 * 86400:
        return f"{int(seconds // 86400)} days ago"
    local = timezone.localtime(moment)
    return local.strftime("%-d %b" if local.year == now.year else "%-d %b %Y")


@register.filter
def exact(moment: datetime | None) -> str:
    if moment is None:
        return ""
    return timezone.localtime(moment).strftime("%A %-d %B %Y, %H:%M %Z")
