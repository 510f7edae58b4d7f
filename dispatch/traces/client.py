"""The one PostHog client of a process, or none: off unless ``POSTHOG_API_KEY`` is set.

The SDK queues events and a background thread posts them, so ``capture`` never waits on
the network; the queue is bounded (a full one drops events, never a reply) and ``shutdown``
flushes it at interpreter exit (the SDK's own exit hook only tries briefly). ``before_send``
is the allowlist's backstop.
"""

from __future__ import annotations

import atexit
import logging
import threading
from datetime import datetime

from django.conf import settings

from dispatch.traces.allowlist import backstop

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_client = None
_key: tuple[str, str] | None = None


def client():
    """The client for the configured key and host (rebuilt when they change), or None."""
    global _client, _key
    key = getattr(settings, "POSTHOG_API_KEY", "")
    if not key:
        return None
    host = getattr(settings, "POSTHOG_HOST", "") or None
    with _lock:
        if _key != (key, host or ""):
            if _client is not None:
                _client.shutdown()
            from posthog import Posthog

            _client = Posthog(
                key,
                host=host,
                max_queue_size=settings.POSTHOG_QUEUE_SIZE,
                flush_at=50,
                flush_interval=2.0,
                gzip=True,
                max_retries=2,
                timeout=5,
                before_send=backstop,
                on_error=_log_error,
            )
            if _key is None:
                atexit.register(shutdown)  # runs before the SDK's hook (last in, first out)
            _key = (key, host or "")
        return _client


def send(event: str, distinct_id: str, properties: dict, at: datetime) -> None:
    """Queue one event; never raises."""
    ph = client()
    if ph is None:
        return
    try:
        ph.capture(event, distinct_id=distinct_id, properties=properties, timestamp=at)
    except Exception:  # the mirror must never fail a reply
        logger.warning("trace event not queued", exc_info=True)


def flush() -> None:
    with _lock:
        if _client is not None:
            _client.flush()


def shutdown() -> None:
    """Send what is queued (bounded by the SDK's timeout and retries), then stop."""
    with _lock:
        if _client is not None:
            _client.shutdown()


def _log_error(error, items) -> None:
    logger.warning("PostHog did not take %d trace events: %s", len(items or ()), error)
