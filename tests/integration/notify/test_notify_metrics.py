"""Notifications sent and failed are counted by channel (ops/metrics.py): pushes to a
loopback push service, one of them refusing; email through locmem, then a failing backend."""

import pytest

from ops.metrics import REGISTRY
from tests.integration.notify.test_notify import post, subscribe, tick

pytestmark = pytest.mark.django_db(transaction=True)


def counted(channel: str, outcome: str) -> float:
    labels = {"channel": channel, "outcome": outcome}
    return REGISTRY.get_sample_value("arbe_notifications_total", labels) or 0.0


class RefusingBackend:
    """A mail server that is down."""

    def __init__(self, *args, **kwargs):
        pass

    def send_messages(self, messages):
        raise ConnectionRefusedError("mail server down")


def test_pushes_sent_and_refused_are_counted(world, push_service):
    subscribe(world, world.member, push_service.subscriber("mia-phone"))
    subscribe(world, world.member, push_service.subscriber("old-tablet", gone=True))
    sent, failed = counted("push", "sent"), counted("push", "failed")
    post(world.client_for(world.owner), world.thread, "@mia ping")
    tick()
    assert (counted("push", "sent"), counted("push", "failed")) == (sent + 1, failed + 1)


def test_email_sent_and_failed_are_counted(world, settings):
    settings.NOTIFY_EMAIL_DELAY_S = 0
    world.member.email = "mia@example.test"
    world.member.save()
    settings.EMAIL_BACKEND = f"{__name__}.RefusingBackend"
    sent, failed = counted("email", "sent"), counted("email", "failed")
    post(world.client_for(world.owner), world.thread, "@mia first")
    tick()
    assert (counted("email", "sent"), counted("email", "failed")) == (sent, failed + 1)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    from notify.models import Notice

    Notice.objects.update(due_at=Notice.objects.first().created_at)  # the retry is due now
    tick()
    assert (counted("email", "sent"), counted("email", "failed")) == (sent + 1, failed + 1)
