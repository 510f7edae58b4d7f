"""Times as people read them: "5 min ago" on the page, the exact date on hover.

``static/arbe/when.js`` keeps the relative text fresh and shows the exact date in the
reader's own time zone; these filters are what the page says before it runs.
"""

from datetime import UTC, datetime

from django import template
from django.utils import timezone

register = template.Library()


@register.filter
def ago(moment: datetime | None, now: datetime | None = None) -> str:
    if moment is None:
        return ""
    now = now or timezone.now()
    seconds = (now - moment).total_seconds()
    if seconds < -60:
        return _ahead(-seconds, moment, now)
    seconds = max(seconds, 0)
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


def _ahead(seconds: float, moment: datetime, now: datetime) -> str:
    if seconds < 3600:
        return f"in {int(seconds // 60)} min"
    if seconds < 86400:
        return f"in {round(seconds / 3600)} h"
    if seconds < 7 * 86400:
        return f"in {round(seconds / 86400)} days"
    local = timezone.localtime(moment)
    return local.strftime("%-d %b" if local.year == now.year else "%-d %b %Y")


@register.filter
def iso_moment(value) -> datetime | None:
    """An ISO 8601 string as sent by a peer (a board's times), or None if it isn't one."""
    if not value or isinstance(value, datetime):
        return value or None
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@register.filter
def exact(moment: datetime | None) -> str:
    if moment is None:
        return ""
    return timezone.localtime(moment).strftime("%A %-d %B %Y, %H:%M %Z")
