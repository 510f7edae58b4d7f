"""A push endpoint is a URL the server calls: it must name a push service's host the way the
sending client (requests/urllib3) reads it, and a push service's redirect is never followed."""

import json

import pytest

from notify.models import PushDevice
from notify.worker import Notifier
from tests.integration.notify.test_notify import post, subscribe

pytestmark = pytest.mark.django_db(transaction=True)

KEYS = {"p256dh": "BAAAAA", "auth": "BBBB"}
BYPASSES = [
    "https://169.254.169.254\\@fcm.googleapis.com/fcm/send/x",
    "https://127.0.0.2\\@localhost/push/x",
    "https://169.254.169.254%2f@fcm.googleapis.com/fcm/send/x",
    "https://169.254.169.254%5c@fcm.googleapis.com/fcm/send/x",
    "https://169.254.169.254\t@fcm.googleapis.com/fcm/send/x",
    "https://fcm.googleapis.com\t/fcm/send/x",
    "https://fcm.goo\ngleapis.com/fcm/send/x",
    " https://fcm.googleapis.com/fcm/send/x",
    "https://fcm.googleapis.com/fcm/send/x ",
    "https://user@fcm.googleapis.com/fcm/send/x",
    "https://user:pw@fcm.googleapis.com/fcm/send/x",
    "https://fcm.googleapis.com%2e/fcm/send/x",
    "https://fcm.googleapis.com:99999/fcm/send/x",
    "https://fcm.googleapis.com:/fcm/send/x",
    "https://fcm.googleapis.com./fcm/send/x",
    "https://[::1]/fcm/send/x",
    "https://fcm.googleapis.com\u3002/fcm/send/x",
    "https:/fcm.googleapis.com/fcm/send/x",
    "https:\\\\fcm.googleapis.com/fcm/send/x",
]
GOOD = [
    "https://fcm.googleapis.com/fcm/send/dXh2:APA91bE-x_y",
    "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABh",
    "https://wns2-par02p.notify.windows.com/w/?token=BQYAAA%2bXyz%3d",
    "https://web.push.apple.com/QGk1_abc",
    "https://localhost:8443/push/x",
]


def register(client, endpoint):
    body = {"endpoint": endpoint, "keys": KEYS}
    return client.post("/api/notify/devices", json.dumps(body), content_type="application/json")


@pytest.fixture
def hosts(settings):
    settings.PUSH_SERVICE_HOSTS = [
        "fcm.googleapis.com",
        ".push.services.mozilla.com",
        ".notify.windows.com",
        ".push.apple.com",
        "localhost",
    ]
    settings.PUSH_ALLOW_HTTP = False


@pytest.mark.parametrize("endpoint", BYPASSES)
def test_an_endpoint_the_sender_would_read_differently_is_refused(world, hosts, endpoint):
    response = register(world.client_for(world.member), endpoint)
    assert response.status_code == 400, (endpoint, response.content)
    assert "endpoint" in response.json()["error"]
    assert not PushDevice.objects.exists()


def test_real_push_service_endpoints_are_still_taken(world, hosts):
    client = world.client_for(world.member)
    for endpoint in GOOD:
        assert register(client, endpoint).status_code == 201, endpoint
    assert PushDevice.objects.count() == len(GOOD)


def test_a_stored_endpoint_that_would_reach_another_host_is_never_called(
    world, push_service, settings
):
    """A row saved before the check was tightened: the allow-list names ``localhost``, the
    URL's ``@`` part says localhost, but the client would connect to the loopback service."""
    settings.PUSH_SERVICE_HOSTS = ["localhost"]
    port = push_service.url.rsplit(":", 1)[1]
    sneaky = f"http://127.0.0.1:{port}\\@localhost/push/sneaky"
    PushDevice.objects.create(user=world.member, endpoint=sneaky, p256dh="BAAA", auth="BBBB")
    post(world.client_for(world.owner), world.thread, "@mia look")
    Notifier("engine-a").tick()
    assert push_service.received == []
    assert not PushDevice.objects.filter(endpoint=sneaky).exists()


def test_a_push_service_redirect_is_not_followed(world, push_service):
    moved = subscribe(world, world.member, push_service.subscriber("tablet", moved=True))
    post(world.client_for(world.owner), world.thread, "@mia ping")
    Notifier("engine-a").tick()
    assert [r.path for r in push_service.received] == ["/moved/tablet"]
    assert PushDevice.objects.filter(endpoint=moved.endpoint).exists()  # a failure, not gone
