"""Your email address: asked for on /account/ (or at sign-up), confirmed by a signed link
that expires and works once, changed (the old address is told) and removed; mail through
Django's locmem backend."""

import html
import re
import time
from unittest import mock

import pytest
from django.core import mail, signing
from django.test import Client

from houses import email_address
from houses.models import PendingEmail

pytestmark = pytest.mark.django_db(transaction=True)
LINK = re.compile(r"http://testserver(/email/confirm/[^/\s]+)")


@pytest.fixture(autouse=True)
def locmem_mail(settings, fresh_limits):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def text(response) -> str:
    return html.unescape(response.content.decode())


def link_in(message) -> str:
    [path] = LINK.findall(message.body)
    return path


def ask(client, address):
    response = client.post("/account/email/", {"email": address})
    assert response.status_code == 302, text(response)[-2000:]
    return response


def test_an_address_is_saved_only_once_its_link_is_opened_and_the_link_works_once(world):
    client = world.client_for(world.member)
    ask(client, "  Mia@Example.TEST ")
    world.member.refresh_from_db()
    assert world.member.email == ""  # not yet
    page = text(client.get("/account/"))
    assert "We sent a link to <strong>Mia@example.test</strong>" in page
    assert "within 24 hours" in page and "Resend" in page

    [sent] = mail.outbox
    assert sent.to == ["Mia@example.test"]
    assert "within 24 hours" in sent.body and "works once" in sent.body
    path = link_in(sent)
    # Opening the link only asks (mail scanners open links); confirming is a POST.
    shown = Client().get(path)
    assert shown.status_code == 200 and "Use <strong>Mia@example.test</strong>" in text(shown)
    world.member.refresh_from_db()
    assert world.member.email == ""

    done = client.post(path)
    assert done.status_code == 302 and done["Location"] == "/account/#email"
    world.member.refresh_from_db()
    assert world.member.email == "Mia@example.test"
    assert not PendingEmail.objects.filter(user=world.member).exists()
    page = text(client.get("/account/"))
    assert "Confirmed" in page and "We sent a link" not in page

    for again in (Client().get(path), client.post(path)):
        assert again.status_code == 400
        assert "already used" in text(again)
    assert len(mail.outbox) == 1  # nothing told: there was no old address


def test_a_link_works_for_24_hours_and_not_after(world):
    ask(world.client_for(world.member), "mia@example.test")
    pending = PendingEmail.objects.get(user=world.member)
    now = time.time()

    def token_made(seconds_ago):
        with mock.patch.object(signing.time, "time", return_value=now - seconds_ago):
            return email_address.make_token(pending)

    late = Client().get(f"/email/confirm/{token_made(24 * 3600 + 60)}")
    assert late.status_code == 400 and "has expired" in text(late)
    assert "24 hours" in text(late)
    anonymous = Client().post(f"/email/confirm/{token_made(24 * 3600 + 60)}")
    assert anonymous.status_code == 400
    world.member.refresh_from_db()
    assert world.member.email == ""

    in_time = Client().post(f"/email/confirm/{token_made(23 * 3600)}")
    assert in_time.status_code == 200  # signed out: the page says it's done
    assert "is confirmed for the account" in text(in_time)
    world.member.refresh_from_db()
    assert world.member.email == "mia@example.test"


def test_a_forged_or_mangled_link_confirms_nothing(world):
    ask(world.client_for(world.member), "mia@example.test")
    pending = PendingEmail.objects.get(user=world.member)
    forged = signing.dumps({"u": world.member.pk, "n": pending.nonce}, salt="elsewhere")
    for token in (forged, email_address.make_token(pending)[:-3] + "abc", "x" * 5000):
        response = Client().post(f"/email/confirm/{token}")
        assert response.status_code == 400, token
        assert "isn't a confirmation link" in text(response)
    world.member.refresh_from_db()
    assert world.member.email == ""


def test_changing_the_address_reconfirms_and_tells_the_old_one(world):
    world.member.email = "mia@old.test"
    world.member.save()
    client = world.client_for(world.member)
    ask(client, "mia@new.test")
    world.member.refresh_from_db()
    assert world.member.email == "mia@old.test"  # the old one until the new is confirmed
    page = text(client.get("/account/"))
    assert "until then, email still goes to mia@old.test" in page

    [link] = mail.outbox
    assert link.to == ["mia@new.test"]
    client.post(link_in(link))
    world.member.refresh_from_db()
    assert world.member.email == "mia@new.test"
    [_, notice] = mail.outbox
    assert notice.to == ["mia@old.test"]
    assert notice.subject == "Your arbe email address was changed"
    assert "changed from mia@old.test to mia@new.test" in notice.body
    assert "change your password" in notice.body and "/login/forgot/" in notice.body
    assert not LINK.search(notice.body)  # nothing to click that changes anything


def test_asking_for_another_address_retires_the_first_link_and_resend_keeps_it(world):
    client = world.client_for(world.member)
    ask(client, "mia@first.test")
    first = link_in(mail.outbox[0])
    assert client.post("/account/email/resend").status_code == 302
    resent = link_in(mail.outbox[1])
    assert mail.outbox[1].to == ["mia@first.test"]

    ask(client, "mia@second.test")
    for old in (first, resent):
        response = client.post(old)
        assert response.status_code == 400 and "newer address" in text(response)
    client.post(link_in(mail.outbox[2]))
    world.member.refresh_from_db()
    assert world.member.email == "mia@second.test"


def test_an_address_another_account_has_confirmed_is_refused_at_the_link(world):
    world.owner.email = "shared@example.test"
    world.owner.save()
    client = world.client_for(world.member)
    ask(client, "SHARED@example.test")  # the page tells nobody whose address it is
    response = client.post(link_in(mail.outbox[0]))
    assert response.status_code == 409
    assert "already the address of another account" in text(response)
    world.member.refresh_from_db()
    assert world.member.email == ""
    assert PendingEmail.objects.filter(user=world.member).exists()  # still waiting


def test_cancel_remove_and_a_bad_address(world):
    client = world.client_for(world.member)
    bad = client.post("/account/email/", {"email": "not an address"})
    assert bad.status_code == 400 and "Enter a valid email address." in text(bad)
    assert "Display name" in text(bad)  # the whole page, with the error
    for hostile in ("a" * 10_000 + "@example.test", "mia@example.test\r\nBcc: x@evil.test"):
        assert client.post("/account/email/", {"email": hostile}).status_code == 400
    assert mail.outbox == []

    ask(client, "mia@example.test")
    client.post("/account/email/cancel")
    assert not PendingEmail.objects.filter(user=world.member).exists()
    assert client.post(link_in(mail.outbox[0])).status_code == 400

    world.member.email = "mia@example.test"
    world.member.save()
    client.post("/account/email/remove")
    world.member.refresh_from_db()
    assert world.member.email == ""
    notice = mail.outbox[-1]
    assert notice.to == ["mia@example.test"] and "was removed" in notice.body
    assert Client().post("/account/email/remove").status_code == 302  # to sign in
    assert client.get("/account/email/").status_code == 405


def test_confirmation_links_are_limited_per_person(world):
    client = world.client_for(world.member)
    for n in range(email_address.LINKS_PER_HOUR):
        ask(client, f"mia{n}@example.test")
    over = client.post("/account/email/", {"email": "mia-more@example.test"})
    assert over.status_code == 429 and "confirmation emails in the last hour" in text(over)
    resend = client.post("/account/email/resend", follow=True)
    assert "confirmation emails in the last hour" in text(resend)
    assert len(mail.outbox) == email_address.LINKS_PER_HOUR
    other = world.client_for(world.author)
    ask(other, "ari@example.test")  # others unaffected
    assert len(mail.outbox) == email_address.LINKS_PER_HOUR + 1


def test_a_mail_server_that_fails_is_said_and_the_address_still_waits(world, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens there
    client = world.client_for(world.member)
    page = client.post("/account/email/", {"email": "mia@example.test"}, follow=True)
    assert "couldn't send email to mia@example.test" in text(page)
    assert PendingEmail.objects.filter(user=world.member).exists()


def test_sign_up_from_an_invite_may_give_an_address_which_waits_for_its_link(world):
    from houses.invites import make_invite

    _, raw = make_invite(world.house, world.owner, 7)
    visitor = Client()
    form = {"username": "newcomer", "password1": "tangerine-Orbit-42"}
    form["password2"] = form["password1"]
    page = text(visitor.get(f"/join/{raw}"))
    assert "Email (optional)" in page
    bad = visitor.post(f"/join/{raw}", {**form, "email": "nope"})
    assert bad.status_code == 400 and "Enter a valid email address." in text(bad)

    joined = visitor.post(f"/join/{raw}", {**form, "email": "new@example.test"}, follow=True)
    assert "We sent a link to new@example.test" in text(joined)
    from django.contrib.auth import get_user_model

    newcomer = get_user_model().objects.get(username="newcomer")
    assert newcomer.email == ""
    [sent] = mail.outbox
    assert visitor.post(link_in(sent)).status_code == 302
    newcomer.refresh_from_db()
    assert newcomer.email == "new@example.test"

    _, raw = make_invite(world.house, world.owner, 7)
    other = {**form, "username": "quiet"}
    assert Client().post(f"/join/{raw}", other).status_code == 302
    assert len(mail.outbox) == 1  # no address, no mail
