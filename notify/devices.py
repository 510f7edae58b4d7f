"""Push subscriptions as browsers send them, checked before the server ever POSTs to one.

The endpoint is a URL the server will call, so it must be a push service's: https, on a host
in ``PUSH_SERVICE_HOSTS`` (a leading dot matches subdomains). Anything else is refused, or a
member could make the server call addresses of its own network.
The rules live in ``notify.endpoints``.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from arbe_lib.api import BadInput
from notify import endpoints
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


def check_endpoint(endpoint: str) -> None:
    try:
        endpoints.check_endpoint(endpoint)
    except endpoints.BadEndpoint as exc:
        raise BadInput(str(exc)) from None


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
