"""Is a URL a push service's endpoint? Checked when a browser registers one, and again before
each push (``notify.push``), since the server will call it.

It must be https, on a host in ``PUSH_SERVICE_HOSTS`` (a leading dot matches subdomains),
or a member could make the server call addresses of its own network. Parsers disagree on odd
URLs: ``urlsplit`` takes the host after an ``@`` where the sending client (requests/urllib3)
stops at a backslash and connects to what came before. So the URL may hold only visible
ASCII without a backslash, its authority only a host name and a port (no userinfo, no
percent-escape), and the host the sending client would connect to must be the one checked.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from django.conf import settings
from urllib3.util import parse_url  # what requests (pywebpush's client) parses with


class BadEndpoint(ValueError):
    """Not a push service's URL; the text names the field."""


# A host name (letters, digits, dots, hyphens) and an optional port: nothing else.
_AUTHORITY = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::[0-9]{1,5})?$")
# Visible ASCII only, and no backslash: whitespace, controls and non-ASCII are refused.
_URL_CHARS = re.compile(r"^[\x21-\x5b\x5d-\x7e]+$")


def check_endpoint(endpoint: str) -> None:
    """Raise ``BadEndpoint`` unless ``endpoint`` is a push service's URL, as the sender reads it."""
    if not _URL_CHARS.match(endpoint):
        raise BadEndpoint("endpoint: a push service's https URL is expected")
    try:
        parts = urlsplit(endpoint)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise BadEndpoint("endpoint: not a URL") from None
    schemes = {"https", "http"} if settings.PUSH_ALLOW_HTTP else {"https"}
    if parts.scheme not in schemes or not host or not _AUTHORITY.match(parts.netloc):
        raise BadEndpoint("endpoint: a push service's https URL is expected")
    if _sender_host(endpoint) != host:  # the client that sends must connect where we checked
        raise BadEndpoint("endpoint: a push service's https URL is expected")
    for allowed in settings.PUSH_SERVICE_HOSTS:
        if host == allowed or (allowed.startswith(".") and host.endswith(allowed)):
            return
    raise BadEndpoint("endpoint: not a known push service")


def _sender_host(endpoint: str) -> str:
    try:
        return (parse_url(endpoint).host or "").lower()
    except ValueError:
        return ""
