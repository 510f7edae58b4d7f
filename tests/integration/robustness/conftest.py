"""Helpers for the robustness suite: raw log access as another writer would have it."""

import pytest
from django.conf import settings

from streams.client import service_client
from tests.integration.web.conftest import fresh_channel_layer  # noqa: F401 - autouse fixture
from threads.models import Thread


@pytest.fixture
def raw_log():
    """A service client that appends bytes unchecked: what an old version, an external
    stream server's other clients or a buggy program could have left in a log."""
    client = service_client()
    yield client
    client.close()


def log_bytes(thread: Thread) -> list[bytes]:
    """Every message in the thread's log, as stored."""
    client = service_client()
    try:
        return list(client.catch_up(thread.stream_name, "-1").messages or ())
    finally:
        client.close()


@pytest.fixture
def no_throttle():
    settings.AXES_ENABLED = False
