"""Web push: one encrypted POST per device to its push service, signed with our VAPID key
(``pywebpush``). A device whose service answers 404 or 410 is gone and is removed."""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.utils import timezone
from pywebpush import WebPushException, webpush

from notify.keys import vapid
from notify.models import PushDevice
from ops import metrics

logger = logging.getLogger(__name__)
GONE = {404, 410}
TTL_S = 24 * 3600  # a push the device can't take within a day is no longer news
TIMEOUT_S = 10


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
    info = {"endpoint": device.endpoint, "keys": {"p256dh": device.p256dh, "auth": device.auth}}
    try:
        webpush(
            info,
            data=data,
            vapid_private_key=vapid(),
            vapid_claims={"sub": settings.VAPID_SUBJECT},  # a fresh dict: webpush fills it in
            ttl=TTL_S,
            timeout=TIMEOUT_S,
        )
    except WebPushException as exc:
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
