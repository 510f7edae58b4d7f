"""Push subscriptions as browsers send them, checked before the server ever POSTs to one.

The endpoint is a URL the server will call, so it must be a push service's: https, on a host
in ``PUSH_SERVICE_HOSTS`` (a leading dot matches subdomains). Anything else is refused, or a
member could make the server call addresses of its own network.

Parsers disagree on odd URLs: ``urlsplit`` takes the host after an ``@`` where the sending
client (requests/urllib3) stops at a ``\\`` and connects to what came before. So the authority
may hold only a host name and a port (no userinfo, backslash, percent-escape, whitespace or
control character anywhere in the URL), and the host the sending client would connect to
must be the one checked.
"""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

import msgspec
from django.conf import settings

from arbe_site.api import BadInput
from notify.models import PushDevice


class Keys(msgspec.Struct):
    p256dh: Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_=-]+$")]
    auth: Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_=-]+$")]


class Subscription(msgspec.Struct):
    """``PushSubscription.toJSON()``; ``expirationTime`` and unknown fields are ignored."""

    endpoint: Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
    keys: Keys
    label: Annotated[str, msgspec.Meta(max_length=200)] = ""


class Forget(msgspec.Struct, forbid_unknown_fields=True):
    endpoint: Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]


# A host name (letters, digits, dots, hyphens) and an optional port: nothing else.
_AUTHORITY = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::[0-9]{1,5})?$")
# Visible ASCII only, and no backslash: whitespace, controls and non-ASCII are refused.
_URL_CHARS = re.compile(r"^[\x21-\x5b\x5d-\x7e]+$")


def check_endpoint(endpoint: str) -> None:
    if not _URL_CHARS.match(endpoint):
        raise BadInput("endpoint: a push service's https URL is expected")
    try:
        parts = urlsplit(endpoint)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise BadInput("endpoint: not a URL") from None
    schemes = {"https", "http"} if settings.PUSH_ALLOW_HTTP else {"https"}
    if parts.scheme not in schemes or not host or not _AUTHORITY.match(parts.netloc):
        raise BadInput("endpoint: a push service's https URL is expected")
    if _sender_host(endpoint) != host:  # the client that sends must connect where we checked
        raise BadInput("endpoint: a push service's https URL is expected")
    for allowed in settings.PUSH_SERVICE_HOSTS:
        if host == allowed or (allowed.startswith(".") and host.endswith(allowed)):
            return
    raise BadInput("endpoint: not a known push service")


def _sender_host(endpoint: str) -> str:
    from urllib3.util import parse_url  # what requests (pywebpush's client) parses with

    try:
        return (parse_url(endpoint).host or "").lower()
    except ValueError:
        return ""


def subscribe(user, sub: Subscription) -> PushDevice:
    """Save the browser's subscription as one of ``user``'s devices. The endpoint is the
    device: a browser signed in as someone else before now pushes to this person only."""
    check_endpoint(sub.endpoint)
    device, _ = PushDevice.objects.update_or_create(
        endpoint=sub.endpoint,
        defaults={
            "user": user,
            "p256dh": sub.keys.p256dh,
            "auth": sub.keys.auth,
            "label": sub.label.strip()[:200],
        },
    )
    return device


def forget(user, endpoint: str) -> int:
    return PushDevice.objects.filter(user=user, endpoint=endpoint).delete()[0]
