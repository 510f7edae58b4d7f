""" "Forgot password?": Django's reset views on our pages. The link goes only to a confirmed
address, the answer is the same whether an account has the address or not, requests are
throttled, the link expires and works once, and the new password ends the other sessions
and their live reads. Mail through Django's locmem backend."""

import html
import re
from datetime import datetime, timedelta
from unittest import mock

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.tokens import PasswordResetTokenGenerator, default_token_generator
from django.core import mail
from django.test import Client
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from houses.models import PendingEmail
from houses.revocation import SIGNED_OUT
from tests.integration.web.conftest import closed_with, frame
from tests.integration.web.test_live_reads_end import socket_of

pytestmark = pytest.mark.django_db(transaction=True)
LINK = re.compile(r"http://testserver(/login/reset/[^\s]+/)")
NEW = "a-Fresh-passphrase-77"


@pytest.fixture(autouse=True)
def locmem_mail(settings, fresh_limits):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def text(response) -> str:
    return html.unescape(response.content.decode())


def ask(address, ip="10.0.0.1"):
    return Client().post("/login/forgot/", {"email": address}, REMOTE_ADDR=ip)


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def set_password(path, password=NEW) -> tuple[Client, object]:
    """Follow the link as a browser does: it redirects to a page without the token."""
    browser = Client()
    form = browser.get(path, follow=True)
    assert form.status_code == 200 and "Choose a new password" in text(form)
    done = browser.post(
        form.redirect_chain[-1][0], {"new_password1": password, "new_password2": password}
    )
    return browser, done


def test_sign_in_offers_forgot_password_and_the_answer_never_says_who_exists(world):
    page = text(Client().get("/login/"))
    assert 'href="/login/forgot/"' in page and "Forgot password?" in page
    world.member.email = "mia@example.test"
    world.member.save()
    PendingEmail.objects.create(user=world.author, address="ari@example.test", nonce="n")

    answers = []
    for address in ("MIA@example.test", "nobody@example.test", "ari@example.test"):
        response = ask(address)
        assert response.status_code == 302 and response["Location"] == "/login/forgot/sent"
        page = text(Client().get(response["Location"]))
        answers.append(page[page.index("<main") : page.index("</main>")])  # no CSP nonce
    assert answers[0] == answers[1] == answers[2]
    for hostile in ("a" * 10_000 + "@example.test", "mia@example.test\r\nBcc: x@evil.test"):
        refused = Client().post("/login/forgot/", {"email": hostile})
        assert refused.status_code == 200 and "Enter a valid email address" in text(refused)
    assert "If an account here has that confirmed address" in answers[0]
    # Only the confirmed address got mail: not the unknown one, not the waiting one.
    [sent] = mail.outbox
    assert sent.to == ["mia@example.test"] and sent.subject == "Reset your arbe password"
    assert "within 1 hour" in sent.body and "works once" in sent.body


def test_a_reset_sets_the_password_once_and_ends_the_other_sessions(world):
    world.member.email = "mia@example.test"
    world.member.set_password("the-old-password-1")
    world.member.save()
    elsewhere = signed_in(world.member)
    assert elsewhere.get("/account/").status_code == 200

    ask("mia@example.test")
    [path] = LINK.findall(mail.outbox[0].body)
    browser, done = set_password(path)
    assert done.status_code == 302 and done["Location"] == "/login/"
    assert "Your password was reset" in text(browser.get("/login/"))
    world.member.refresh_from_db()
    assert world.member.check_password(NEW)
    assert elsewhere.get("/account/").status_code == 302  # signed out
    signin = browser.post("/login/", {"username": "mia", "password": NEW})
    assert signin.status_code == 302 and signin["Location"] == "/"

    again = Client().get(path, follow=True)
    assert "doesn't work any more" in text(again)
    assert "new_password1" not in text(again)


def test_a_reset_lifts_a_sign_in_lockout_of_that_username(world, settings):
    world.member.email = "mia@example.test"
    world.member.save()
    browser = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        browser.post("/login/", {"username": "mia", "password": "wrong"})
    locked = browser.post("/login/", {"username": "mia", "password": "wrong"})
    assert locked.status_code == 429 and "forgot/" in text(locked)
    ask("mia@example.test", ip="127.0.0.1")
    [path] = LINK.findall(mail.outbox[0].body)
    set_password(path)
    signin = browser.post("/login/", {"username": "mia", "password": NEW})
    assert signin.status_code == 302 and signin["Location"] == "/"


def test_a_reset_link_expires_after_an_hour(world):
    world.member.email = "mia@example.test"
    world.member.save()
    uid = urlsafe_base64_encode(force_bytes(world.member.pk))

    def token_made(ago):
        then = datetime.now() - ago
        with mock.patch.object(PasswordResetTokenGenerator, "_now", return_value=then):
            return default_token_generator.make_token(world.member)

    late = Client().get(f"/login/reset/{uid}/{token_made(timedelta(minutes=61))}/", follow=True)
    assert "doesn't work any more" in text(late)
    _, done = set_password(f"/login/reset/{uid}/{token_made(timedelta(minutes=59))}/")
    assert done.status_code == 302


def test_reset_requests_are_throttled_per_address_and_per_client(world, settings):
    world.member.email = "mia@example.test"
    world.member.save()
    for n in range(settings.PASSWORD_RESETS_PER_ADDRESS):
        assert ask("mia@example.test", ip=f"10.0.1.{n}").status_code == 302
    over = ask("mia@example.test", ip="10.0.2.1")
    assert over.status_code == 429 and "Too many requests" in text(over)
    assert len(mail.outbox) == settings.PASSWORD_RESETS_PER_ADDRESS
    # Unknown addresses count the same: the limit tells nothing either.
    for n in range(settings.PASSWORD_RESETS_PER_ADDRESS):
        ask("ghost@example.test", ip=f"10.0.3.{n}")
    assert ask("ghost@example.test", ip="10.0.3.9").status_code == 429

    for n in range(settings.PASSWORD_RESETS_PER_CLIENT):
        assert ask(f"someone{n}@example.test", ip="10.0.4.1").status_code == 302
    assert ask("another@example.test", ip="10.0.4.1").status_code == 429
    assert ask("another@example.test", ip="10.0.4.2").status_code == 302


async def test_a_reset_ends_the_persons_live_reads(world):
    def prepare():
        world.member.email = "mia@example.test"
        world.member.save()
        return signed_in(world.member)

    browser = await sync_to_async(prepare)()
    socket = await socket_of(browser, f"/ws/threads/{world.thread.id}/")
    await frame(socket)

    def reset():
        ask("mia@example.test")
        [path] = LINK.findall(mail.outbox[0].body)
        return set_password(path)[1].status_code

    assert await sync_to_async(reset)() == 302
    assert await closed_with(socket, 5) == SIGNED_OUT
    await socket.disconnect()
