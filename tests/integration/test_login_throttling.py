"""Sign-in throttling (django-axes): five wrong passwords for one username from one address
lock that pair out for 15 minutes; nobody else is affected."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import AsyncClient, Client
from django.urls import reverse

from tests.factories import make_user

pytestmark = pytest.mark.django_db

RIGHT = "the-right-password"
LIMIT = 5


def sign_in(client, username, password, ip="10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip
    )


def signed_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == reverse("home")


@pytest.fixture
def mia():
    return make_user("mia", password=RIGHT)


def test_five_wrong_passwords_then_the_right_one_is_refused_with_a_429_page(mia):
    client = Client()
    for _ in range(LIMIT - 1):
        response = sign_in(client, "mia", "wrong")
        assert response.status_code == 200  # the form again, with its error
        assert b"didn't match" in response.content
    assert sign_in(client, "mia", "wrong").status_code == 429
    refused = sign_in(client, "mia", RIGHT)
    assert refused.status_code == 429
    assert "_auth_user_id" not in client.session
    page = refused.content.decode()
    assert "Too many attempts" in page and "15 minutes" in page
    assert 'class="topbar"' in page  # the site's own layout
    assert RIGHT not in page


def test_a_lockout_leaves_other_users_and_other_addresses_alone(mia):
    make_user("olive", password=RIGHT)
    for _ in range(LIMIT):
        sign_in(Client(), "mia", "wrong")
    assert sign_in(Client(), "mia", RIGHT).status_code == 429
    assert signed_in(sign_in(Client(), "olive", RIGHT))  # another user, same address
    assert signed_in(sign_in(Client(), "mia", RIGHT, ip="10.0.0.2"))  # same user, elsewhere


def test_a_successful_sign_in_resets_the_count(mia):
    for _ in range(LIMIT - 1):
        sign_in(Client(), "mia", "wrong")
    assert signed_in(sign_in(Client(), "mia", RIGHT))
    for _ in range(LIMIT - 1):
        sign_in(Client(), "mia", "wrong")
    assert signed_in(sign_in(Client(), "mia", RIGHT))


def test_the_lockout_ends_after_the_cooloff(mia):
    for _ in range(LIMIT):
        sign_in(Client(), "mia", "wrong")
    assert sign_in(Client(), "mia", RIGHT).status_code == 429
    [attempt] = AccessAttempt.objects.all()
    AccessAttempt.objects.update(attempt_time=attempt.attempt_time - timedelta(minutes=16))
    assert signed_in(sign_in(Client(), "mia", RIGHT))


def test_the_admin_sign_in_is_throttled_too(mia):
    mia.is_staff = True
    mia.save()
    client = Client()
    url = reverse("admin:login")
    for _ in range(LIMIT):
        client.post(url, {"username": "mia", "password": "wrong"}, REMOTE_ADDR="10.0.0.9")
    response = client.post(url, {"username": "mia", "password": RIGHT}, REMOTE_ADDR="10.0.0.9")
    assert response.status_code == 429


@pytest.mark.django_db(transaction=True)
async def test_the_lockout_holds_on_the_asgi_path(django_user_model):
    await django_user_model.objects.acreate_user(username="ari", password=RIGHT)
    client = AsyncClient()
    for _ in range(LIMIT):
        await client.post(reverse("login"), {"username": "ari", "password": "wrong"})
    refused = await client.post(reverse("login"), {"username": "ari", "password": RIGHT})
    assert refused.status_code == 429
    assert b"Too many attempts" in refused.content
