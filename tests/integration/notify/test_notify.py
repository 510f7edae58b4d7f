"""Notifications end to end: posts through the API, the append seam's outbox, the backstage
notifier, encrypted pushes to a loopback push service, email through Django's locmem backend."""

import json
import threading

import pytest
from django.core import mail

from notify.models import Asked, Level, Notice, NotifySettings, Outbox, PushDevice, ThreadNotify
from notify.worker import Notifier
from threads.entries import Chat, DispatchStarted, ThreadChildFinished
from threads.lifecycle import new_entry
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def post(client, thread, text):
    response = client.post(
        f"/api/threads/{thread.id}/entries",
        json.dumps({"payload": {"type": "chat", "text": text}}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()["entry"]["id"]


def subscribe(world, user, subscriber):
    client = world.client_for(user)
    response = client.post(
        "/api/notify/devices",
        json.dumps(subscriber.subscription() | {"label": "Chrome on Linux"}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return subscriber


@pytest.fixture
def devices(world, push_service):
    """Mia has a laptop and a phone; Olive (who posts) has a laptop."""
    return {
        "mia-laptop": subscribe(world, world.member, push_service.subscriber("mia-laptop")),
        "mia-phone": subscribe(world, world.member, push_service.subscriber("mia-phone")),
        "olive": subscribe(world, world.owner, push_service.subscriber("olive")),
    }


def tick(holder="engine-a"):
    return Notifier(holder).tick()


def test_a_mention_pushes_once_to_each_of_the_persons_devices(world, push_service, devices):
    entry = post(world.client_for(world.owner), world.thread, "@mia can you look at this?")
    assert tick() == 1
    for name in ("mia-laptop", "mia-phone"):
        [got] = push_service.to(devices[name])
        assert got.headers["content-encoding"] == "aes128gcm"
        assert got.headers["authorization"].startswith("vapid t=")
        message = devices[name].decrypt(got.body)
        assert message["title"] == "olive mentioned you in “Plans”"
        assert message["body"] == "@mia can you look at this?"
        assert message["url"] == f"/threads/{world.thread.id}/?around={entry}#entry-{entry}"
        assert message["tag"] == f"entry-{entry}"  # as the open pages tag it: shown once
    assert push_service.to(devices["olive"]) == []  # never your own message
    tick()  # nothing left: a second look sends nothing
    assert len(push_service.received) == 2
    assert not Outbox.objects.exists()


def test_your_own_mention_of_yourself_never_notifies(world, push_service, devices):
    post(world.client_for(world.owner), world.thread, "note to self @olive")
    tick()
    assert push_service.received == []


def test_a_message_deleted_before_the_worker_looked_never_notifies(world, push_service, devices):
    owner = world.client_for(world.owner)
    entry = post(owner, world.thread, "@mia wrong thread, sorry")
    assert owner.delete(f"/api/threads/{world.thread.id}/entries/{entry}").status_code in (
        200,
        201,
        204,
    )
    tick()
    assert push_service.received == []
    assert not Notice.objects.exists()


def test_two_engines_taking_the_same_work_send_once(world, push_service, devices):
    post(world.client_for(world.owner), world.thread, "@mia both workers see this")
    [item] = Outbox.objects.all()
    start = threading.Barrier(2)
    errors = []

    def engine(holder):
        try:
            start.wait()
            Notifier(holder).handle(item)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            from django.db import connection

            connection.close()

    runners = [threading.Thread(target=engine, args=(h,)) for h in ("engine-a", "engine-b")]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join(30)
    assert errors == []
    assert len(push_service.to(devices["mia-laptop"])) == 1
    assert len(push_service.to(devices["mia-phone"])) == 1
    assert Notice.objects.filter(channel="push").count() == 1


def test_a_device_the_push_service_says_is_gone_is_removed(world, push_service, devices):
    gone = subscribe(world, world.member, push_service.subscriber("old-tablet", gone=True))
    post(world.client_for(world.owner), world.thread, "@mia ping")
    tick()
    assert len(push_service.to(gone)) == 1  # asked once, answered 410
    assert not PushDevice.objects.filter(endpoint=gone.endpoint).exists()
    assert PushDevice.objects.filter(user=world.member).count() == 2
    post(world.client_for(world.owner), world.thread, "@mia again")
    tick()
    assert len(push_service.to(gone)) == 1
    assert len(push_service.to(devices["mia-phone"])) == 2


def test_levels_and_thread_modes(world, push_service, devices):
    owner = world.client_for(world.owner)
    post(owner, world.thread, "no mention here")
    tick()
    assert push_service.received == []  # mentions is the default level
    ThreadNotify.objects.create(user=world.member, thread=world.thread, mode="all")
    post(owner, world.thread, "still no mention")
    tick()
    assert len(push_service.to(devices["mia-phone"])) == 1
    ThreadNotify.objects.filter(user=world.member).update(mode="mute")
    post(owner, world.thread, "@mia muted threads stay quiet")
    tick()
    assert len(push_service.to(devices["mia-phone"])) == 1
    ThreadNotify.objects.all().delete()
    NotifySettings.objects.create(user=world.member, level=Level.NOTHING)
    post(owner, world.thread, "@mia nothing means nothing")
    tick()
    assert len(push_service.to(devices["mia-phone"])) == 1
    NotifySettings.objects.filter(user=world.member).update(level=Level.ALL)
    post(owner, world.other_thread, "everything, anywhere")
    tick()
    assert len(push_service.to(devices["mia-phone"])) == 2


def test_a_bots_reply_tells_the_person_who_asked(world, push_service, devices):
    asked = post(world.client_for(world.member), world.thread, "@helper summarise please")
    writer = stream_writer()
    started = DispatchStarted(dispatchId="d1", agentId=world.bot.id, entryIds=[asked])
    writer.append(world.thread.stream_name, new_entry(started, author=world.bot.id))
    assert Asked.objects.get(bot_id=world.bot.id).user_ids == [world.member.pk]
    writer.append(
        world.thread.stream_name, new_entry(Chat(text="Done: three points."), author=world.bot.id)
    )
    tick()
    [got] = push_service.to(devices["mia-laptop"])
    assert devices["mia-laptop"].decrypt(got.body)["title"] == "Helper replied in “Plans”"
    assert push_service.to(devices["olive"]) == []  # Olive didn't ask


def test_unread_mentions_are_emailed_once_in_one_message_per_person(world, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NOTIFY_EMAIL_DELAY_S = 0
    world.member.email = "mia@example.test"
    world.member.save()
    owner = world.client_for(world.owner)
    post(owner, world.thread, "@mia first question")
    post(owner, world.other_thread, "@mia second question")
    post(owner, world.thread, "@olive talking to myself")
    a, b = Notifier("engine-a"), Notifier("engine-b")
    a.tick()
    b.tick()
    a.tick()
    [sent] = mail.outbox
    assert sent.to == ["mia@example.test"]
    assert sent.subject == "2 mentions you haven't read"
    assert "first question" in sent.body and "second question" in sent.body
    assert f"/threads/{world.thread.id}/?around=" in sent.body


def test_a_mention_read_or_deleted_before_it_is_due_is_not_emailed(world, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NOTIFY_EMAIL_DELAY_S = 3600
    world.member.email = "mia@example.test"
    world.member.save()
    owner = world.client_for(world.owner)
    post(owner, world.thread, "@mia read this one")
    deleted = post(owner, world.other_thread, "@mia never mind")
    tick()
    assert Notice.objects.filter(channel="email", state="queued").count() == 2
    world.client_for(world.member).get(f"/threads/{world.thread.id}/")  # reads it
    owner.delete(f"/api/threads/{world.other_thread.id}/entries/{deleted}")
    Notice.objects.update(due_at=Notice.objects.first().created_at)
    tick()
    assert mail.outbox == []
    assert set(Notice.objects.values_list("state", flat=True)) == {"read", "gone"}


def test_the_backstage_engine_sends_on_its_own_when_the_append_wakes_it(
    world, push_service, devices, settings
):
    """The notifier on a backstage engine's loop: the append seam wakes it, it sends."""
    import time

    from dispatch.backstage import Backstage
    from notify.worker import start_notifier

    settings.NOTIFY_POLL_S = 3600  # only a wake can make it look in time
    engine = Backstage(holder="engine-test")
    engine._start_loop()
    running = start_notifier(engine.holder, engine.loop)
    try:
        time.sleep(0.3)  # its first look (an empty outbox) is over
        post(world.client_for(world.owner), world.thread, "@mia woken, not polled")
        deadline = time.monotonic() + 20
        while len(push_service.received) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(push_service.to(devices["mia-phone"])) == 1
        assert len(push_service.to(devices["mia-laptop"])) == 1
    finally:
        running.cancel()
        engine.stop_background()
        engine.loop.call_soon_threadsafe(engine.loop.stop)


def test_a_finished_run_tells_the_person_who_asked_its_bot(world, push_service, devices):
    asked = post(world.client_for(world.member), world.thread, "@helper run the migration")
    writer = stream_writer()
    started = DispatchStarted(dispatchId="d2", agentId=world.bot.id, entryIds=[asked])
    writer.append(world.thread.stream_name, new_entry(started, author=world.bot.id))
    report = ThreadChildFinished(childThreadId="child1", report="Migrated 42 rows.", ok=True)
    writer.append(world.thread.stream_name, new_entry(report, author=world.bot.id))
    tick()
    [got] = push_service.to(devices["mia-phone"])
    message = devices["mia-phone"].decrypt(got.body)
    assert message["title"] == "Helper finished a run in “Plans”"
    assert message["body"] == "Migrated 42 rows."
    assert push_service.to(devices["olive"]) == []


def test_settled_notices_are_pruned_after_the_keep_days(world, settings):
    from datetime import timedelta

    from django.utils import timezone

    from notify.worker import prune

    settings.NOTIFY_KEEP_DAYS = 30
    old = timezone.now() - timedelta(days=31)
    for i, state in enumerate(("sent", "gone", "queued")):
        Notice.objects.create(
            user=world.member, entry_id=f"e{i}", thread=world.thread, channel="push", state=state
        )
    Notice.objects.update(created_at=old)
    Notice.objects.create(
        user=world.member, entry_id="new", thread=world.thread, channel="push", state="sent"
    )
    assert prune() == 2
    assert sorted(Notice.objects.values_list("entry_id", flat=True)) == ["e2", "new"]
