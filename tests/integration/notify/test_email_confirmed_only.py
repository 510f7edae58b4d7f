"""Mentions are emailed only to a confirmed address: one still waiting for its link never
gets a notification, whether the person has no address yet or is changing theirs."""

import html
import json
import re

import pytest
from django.core import mail

from notify.models import Notice
from notify.worker import Notifier

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def mail_now(settings, fresh_limits):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NOTIFY_EMAIL_DELAY_S = 0


def mention(world, text):
    response = world.client_for(world.owner).post(
        f"/api/threads/{world.thread.id}/entries",
        json.dumps({"payload": {"type": "chat", "text": text}}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    Notifier("engine-a").tick()


def notifications():
    return [m for m in mail.outbox if "mentioned you" in m.subject]


def confirm_link(message) -> str:
    return re.search(r"http://testserver(/email/confirm/\S+)", message.body).group(1)


def test_an_address_waiting_for_its_link_never_gets_a_notification(world):
    mia = world.client_for(world.member)
    assert mia.post("/account/email/", {"email": "mia@example.test"}).status_code == 302
    [link] = mail.outbox

    page = html.unescape(mia.get("/account/notifications/").content.decode())
    assert "Nothing is sent until you confirm mia@example.test" in page
    mention(world, "@mia before you confirmed")
    assert notifications() == []
    assert not Notice.objects.filter(channel="email").exists()  # none even queued

    mia.post(confirm_link(link))
    mention(world, "@mia after you confirmed")
    [sent] = notifications()
    assert sent.to == ["mia@example.test"] and "after you confirmed" in sent.body


def test_while_an_address_changes_notifications_go_to_the_confirmed_one(world):
    world.member.email = "mia@old.test"
    world.member.save()
    mia = world.client_for(world.member)
    mia.post("/account/email/", {"email": "mia@new.test"})
    mention(world, "@mia during the change")
    [sent] = notifications()
    assert sent.to == ["mia@old.test"]
    assert all("mia@new.test" not in m.to or "Confirm" in m.subject for m in mail.outbox)
