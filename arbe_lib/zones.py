"""The viewer's time zone, for what depends on their day ("today" in a search).

Pages learn it from the ``tz`` cookie that ``static/arbe/when.js`` sets from the
browser (``Intl``); any request may send ``tz`` as a parameter instead (the ``arbe``
command sends the machine's zone). Default UTC. A zone name that isn't an IANA zone
is refused as a parameter (``BadZone``, a 400) and ignored in a cookie.
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import UTC, tzinfo

COOKIE = "tz"
# IANA names: Area/Location[/Sub], letters, digits, "_", "-", "+"; never a path outside.
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}\Z")


class BadZone(ValueError):
    """Not a time zone arbe knows; the message says what to send."""


def zone_named(name: str) -> tzinfo:
    """The zone called ``name`` ("Europe/Paris", "UTC"), or ``BadZone``."""
    if len(name) > 64 or not NAME.match(name):
        raise BadZone(f"tz: {name[:64]!r} is not a time zone; send an IANA name like Europe/Paris.")
    if name.upper() == "UTC":
        return UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise BadZone(
            f"tz: {name!r} is not a time zone; send an IANA name like Europe/Paris."
        ) from None


def viewer_zone(request) -> tzinfo:
    """``tz`` from the query (a bad one raises ``BadZone``), else the cookie, else UTC."""
    if name := request.GET.get("tz"):
        return zone_named(name)
    try:
        return zone_named(request.COOKIES.get(COOKIE) or "UTC")
    except BadZone:
        return UTC
