"""The one place server code tells live pages something: a group send on the channel layer.

Stored rows and streams stay the truth; an event only says "look again", so a lost one is
logged and repaired by the next page load. Sync callers may run where an event loop already
runs in the same thread (a test driving a browser, a sync helper called from async code):
there ``async_to_sync`` refuses, so the send goes from a short-lived thread of its own.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)
SEND_WAIT_S = 5.0


def send_to_group(group: str, event: dict) -> bool:
    """Send ``event`` to ``group``; False (and logged) when it could not be sent."""
    layer = get_channel_layer()
    if layer is None:
        return False

    def send() -> bool:
        try:
            async_to_sync(layer.group_send)(group, event)
            return True
        except Exception:
            logger.exception("could not send %s to %s", event.get("type"), group)
            return False

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return send()
    outcome: list[bool] = []
    sender = threading.Thread(target=lambda: outcome.append(send()), daemon=True)
    sender.start()
    sender.join(SEND_WAIT_S)
    return bool(outcome and outcome[0])
