"""Push devices, the service worker, the VAPID key, and who may set a thread's mode."""

import json
import stat

import pytest

from notify.keys import _load_or_make
from notify.models import PushDevice, ThreadNotify

pytestmark = pytest.mark.django_db(transaction=True)


def send(client, body):
    return client.post("/api/notify/devices", json.dumps(body), content_type="application/json")


def test_only_a_known_push_services_https_endpoint_is_saved(world, push_service):
    client = world.client_for(world.member)
    sub = push_service.subscriber("laptop").subscription()
    assert send(client, sub).status_code == 201
    assert send(client, sub).status_code == 201  # the same browser again: still one device
    assert PushDevice.objects.filter(user=world.member).count() == 1
    for endpoint in (
        "http://10.0.0.5/internal",  # a host that is no push service
        "file:///etc/passwd",
        "not a url",
    ):
        response = send(client, sub | {"endpoint": endpoint})
        assert response.status_code == 400, endpoint
        assert "endpoint" in response.json()["error"]
    assert send(client, {"endpoint": sub["endpoint"]}).status_code == 400  # no keys
    assert PushDevice.objects.count() == 1


def test_http_endpoints_are_refused_outside_tests(world, settings):
    settings.PUSH_SERVICE_HOSTS = ["127.0.0.1"]
    settings.PUSH_ALLOW_HTTP = False
    body = {"endpoint": "http://127.0.0.1:9/push/x", "keys": {"p256dh": "AAAA", "auth": "BBBB"}}
    assert send(world.client_for(world.member), body).status_code == 400


def test_devices_need_a_person(world, push_service):
    sub = push_service.subscriber("laptop").subscription()
    from django.test import Client

    assert send(Client(), sub).status_code in (401, 403)
    assert not PushDevice.objects.exists()


def test_forgetting_and_removing_touch_only_your_own_devices(world, push_service):
    mine = push_service.subscriber("mine").subscription()
    theirs = push_service.subscriber("theirs").subscription()
    send(world.client_for(world.member), mine)
    send(world.client_for(world.owner), theirs)
    other = PushDevice.objects.get(user=world.owner)
    member = world.client_for(world.member)
    member.post(f"/account/notifications/devices/{other.pk}/remove")
    response = member.post(
        "/api/notify/devices/forget",
        json.dumps({"endpoint": theirs["endpoint"]}),
        content_type="application/json",
    )
    assert response.json() == {"removed": 0}
    assert PushDevice.objects.filter(user=world.owner).exists()
    response = member.post(
        "/api/notify/devices/forget",
        json.dumps({"endpoint": mine["endpoint"]}),
        content_type="application/json",
    )
    assert response.json() == {"removed": 1}


def test_the_service_worker_is_served_from_the_root(client):
    response = client.get("/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/javascript"
    assert response["Service-Worker-Allowed"] == "/"
    assert "no-cache" in response["Cache-Control"]
    assert b'addEventListener("push"' in response.content


def test_the_vapid_key_is_made_once_and_kept_private(tmp_path):
    path = tmp_path / "var" / "vapid_private.pem"
    first = _load_or_make(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)
    again = _load_or_make(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert again.private_pem() == first.private_pem()


def test_a_thread_mode_is_set_only_by_a_member(world):
    url = f"/threads/{world.thread.id}/notify"
    assert world.client_for(world.stranger).post(url, {"mode": "mute"}).status_code == 404
    assert world.client_for(world.member).post(url, {"mode": "loud"}).status_code == 400
    assert not ThreadNotify.objects.exists()
    response = world.client_for(world.member).post(url, {"mode": "mute"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert b'data-mode="mute"' in response.content
    assert ThreadNotify.objects.get().mode == "mute"
    world.client_for(world.member).post(url, {"mode": ""})
    assert not ThreadNotify.objects.exists()


def test_the_settings_page_saves_a_level(world):
    client = world.client_for(world.member)
    page = client.get("/account/notifications/")
    assert page.status_code == 200
    assert b"Turn on desktop notifications" in page.content
    assert client.post("/account/notifications/", {"level": "all"}).status_code == 302
    assert client.post("/account/notifications/", {"level": "x"}).status_code == 400
    from notify.models import NotifySettings

    chosen = NotifySettings.objects.get(user=world.member)
    assert (chosen.level, chosen.email) == ("all", True)  # no address: the box was disabled
    world.member.email = "mia@example.test"
    world.member.save()
    client.post("/account/notifications/", {"level": "mentions"})
    chosen.refresh_from_db()
    assert (chosen.level, chosen.email) == ("mentions", False)
