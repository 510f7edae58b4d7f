"""Web push: one encrypted POST per device to its push service, signed with our VAPID key
(``pywebpush``). A device whose service answers 404 or 410 is gone and is removed.

Pushes go out with redirects off: an allowed push service answering 3xx must not make the
server POST somewhere else. Each endpoint is checked again before it is called, so a row
saved before the check was tightened is never trusted."""

from __future__ import annotations

import json
import logging

import requests
from django.conf import settings
from django.utils import timezone
from pywebpush import WebPushException, webpush

from notify.endpoints import BadEndpoint, check_endpoint
from notify.keys import vapid
from notify.models import PushDevice
from ops import metrics

logger = logging.getLogger(__name__)
GONE = {404, 410}
TTL_S = 24 * 3600  # a push the device can't take within a day is no longer news
TIMEOUT_S = 10


class _NoRedirects(requests.Session):
    """The session pywebpush posts through: a redirect is an answer, never followed."""

    def request(self, *args, **kwargs):
        kwargs["allow_redirects"] = False
        return super().request(*args, **kwargs)

    def get_redirect_target(self, resp):  # belt and braces: nothing to resolve
        return None


def send_to_user(user_id: int, message: dict) -> int:
    """Push ``message`` (title, body, url, tag) to each of the person's devices.

    Returns how many took it."""
    data = json.dumps(message)
    sent = 0
    for device in PushDevice.objects.filter(user_id=user_id):
        took = send(device, data)
        metrics.notified("push", took)
        sent += took
    return sent


def send(device: PushDevice, data: str) -> bool:
    try:
        check_endpoint(device.endpoint)
    except BadEndpoint:
        PushDevice.objects.filter(pk=device.pk).delete()
        logger.warning(
            "notify: push device %s has an endpoint no push service has; removed", device.pk
        )
        return False
    info = {"endpoint": device.endpoint, "keys": {"p256dh": device.p256dh, "auth": device.auth}}
    try:
        webpush(
            info,
            data=data,
            vapid_private_key=vapid(),
            vapid_claims={"sub": settings.VAPID_SUBJECT},  # a fresh dict: webpush fills it in
            ttl=TTL_S,
            timeout=TIMEOUT_S,
            requests_session=_session(),
        )
    except WebPushException as exc:  # any answer over 202, a redirect included
        status = exc.response.status_code if exc.response is not None else None
        if status in GONE:
            PushDevice.objects.filter(pk=device.pk).delete()
            logger.info("notify: push device %s is gone (%s); removed", device.pk, status)
        else:
            logger.warning("notify: push to device %s failed: %s", device.pk, status or exc)
        return False
    except Exception as exc:  # a push service that is down or unreachable
        logger.warning("notify: push to device %s failed: %s", device.pk, type(exc).__name__)
        return False
    PushDevice.objects.filter(pk=device.pk).update(last_sent_at=timezone.now())
    return True


def _session() -> requests.Session:
    session = _NoRedirects()
    session.max_redirects = 0
    return session
