"""A person's email address: asked for, confirmed by a signed link, changed, removed.

``User.email`` is the confirmed address and the only one anything is sent to (mentions,
password resets); an address waits in ``PendingEmail`` until its link is opened. The link
carries ``signing.dumps({"u": user id, "n": nonce})``: it expires after
``EMAIL_CONFIRM_MAX_AGE_S`` (24 h), works once (confirming deletes the row whose nonce it
names), and stops working when another address is asked for (a new nonce). A changed
address is told to the old one. Decisions: docs/notifications.md, "Email addresses".
"""

from __future__ import annotations

import logging
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import BaseUserManager
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from archives.claiming import claim
from houses.mail_limits import take
from houses.models import PendingEmail

logger = logging.getLogger(__name__)
SALT = "houses.email_address.confirm"
LINKS_PER_HOUR = 5  # confirmation links one person may have sent in an hour


class TooManyLinks(Exception):
    """More confirmation links asked for than ``LINKS_PER_HOUR``."""


class BadLink(Exception):
    """A confirmation link that doesn't confirm anything; ``str()`` says why, for the page."""


class AddressTaken(Exception):
    """Another account already has this address confirmed."""


def normalize(address: str) -> str:
    return BaseUserManager.normalize_email(address.strip())


def hours(seconds: int) -> str:
    n = max(1, round(seconds / 3600))
    return f"{n} hour{'s' if n != 1 else ''}"


def max_age_words() -> str:
    return hours(settings.EMAIL_CONFIRM_MAX_AGE_S)


def make_token(pending: PendingEmail) -> str:
    return signing.dumps({"u": pending.user_id, "n": pending.nonce}, salt=SALT, compress=True)


def pending_for(token: str) -> PendingEmail:
    """The waiting address ``token`` confirms; ``BadLink`` when it is bad, old or used."""
    try:
        claims = signing.loads(token, salt=SALT, max_age=settings.EMAIL_CONFIRM_MAX_AGE_S)
    except signing.SignatureExpired:
        raise BadLink(
            f"This link has expired: links work for {max_age_words()}. "
            "Sign in and send a new one from your account page."
        ) from None
    except signing.BadSignature:
        raise BadLink("This link isn't a confirmation link from this site.") from None
    if not isinstance(claims, dict):
        raise BadLink("This link isn't a confirmation link from this site.")
    pending = (
        PendingEmail.objects.select_related("user")
        .filter(user_id=claims.get("u"), nonce=str(claims.get("n", "")), user__is_active=True)
        .first()
    )
    if pending is None:
        raise BadLink(
            "This link was already used, or a newer address was asked for since it was sent."
        )
    return pending


def ask(user, address: str, site: str) -> tuple[PendingEmail | None, bool]:
    """Make ``address`` ``user``'s waiting address and send its link (``site``: the scheme and
    host links point to). Returns the row (None when it is already their confirmed address)
    and whether the mail went out (if not, the address still waits: "Resend")."""
    address = normalize(address)
    if user.email and user.email.lower() == address.lower():
        PendingEmail.objects.filter(user=user).delete()
        return None, False
    _count_link(user)
    with transaction.atomic():
        pending = PendingEmail.objects.select_for_update().filter(user=user).first()
        if pending is None or pending.address.lower() != address.lower():
            now = timezone.now()
            pending, _ = PendingEmail.objects.update_or_create(
                user=user,
                defaults={
                    "address": address,
                    "nonce": secrets.token_urlsafe(16),
                    "requested_at": now,
                    "sent_at": now,
                },
            )
    return pending, _send_link(pending, site)


def resend(user, site: str) -> tuple[PendingEmail | None, bool]:
    """Send the waiting address's link again (same nonce, a fresh 24 h)."""
    pending = PendingEmail.objects.filter(user=user).first()
    if pending is None:
        return None, False
    _count_link(user)
    PendingEmail.objects.filter(pk=pending.pk).update(sent_at=timezone.now())
    return pending, _send_link(pending, site)


def cancel(user) -> None:
    PendingEmail.objects.filter(user=user).delete()


def confirm(pending: PendingEmail, site: str) -> str:
    """Make the waiting address the confirmed one; tell the old address. Returns the new one."""
    User = get_user_model()
    with transaction.atomic():
        user = User.objects.select_for_update().get(pk=pending.user_id)
        # Deleting first is the single use: of two requests with one link, one deletes.
        if not PendingEmail.objects.filter(pk=pending.pk, nonce=pending.nonce).delete()[0]:
            raise BadLink("This link was already used.")
        others = User.objects.filter(email__iexact=pending.address).exclude(pk=user.pk)
        # A placeholder an import made with this address is claimed, not a clash.
        taken = others.filter(placeholder__isnull=True).exists()
        if taken:
            raise AddressTaken(
                f"{pending.address} is already the address of another account here; "
                "one address belongs to one account (it is where password resets go)."
            )
        old = user.email
        user.email = pending.address
        user.save(update_fields=["email"])
        claim(user, pending.address)  # history an import kept for this address
        if old and old.lower() != pending.address.lower():
            transaction.on_commit(lambda: _tell_old(user, old, pending.address, site))
    return pending.address


def remove(user, site: str) -> None:
    """No address any more: nothing is emailed; the old one is told."""
    old = user.email
    with transaction.atomic():
        PendingEmail.objects.filter(user=user).delete()
        if old:
            user.email = ""
            user.save(update_fields=["email"])
            transaction.on_commit(lambda: _tell_old(user, old, "", site))


def _count_link(user) -> None:
    if not take("confirm-link", str(user.pk), LINKS_PER_HOUR):
        raise TooManyLinks(
            f"That's {LINKS_PER_HOUR} confirmation emails in the last hour; "
            "wait a while, and check your spam folder for the ones already sent."
        )


def _send_link(pending: PendingEmail, site: str) -> bool:
    link = site + reverse("email-confirm", args=[make_token(pending)])
    body = render_to_string(
        "houses/email/confirm.txt",
        {"user": pending.user, "address": pending.address, "link": link, "hours": max_age_words()},
    )
    return _send("Confirm your email address for arbe", body, pending.address)


def _tell_old(user, old: str, new: str, site: str) -> None:
    context = {
        "user": user,
        "old": old,
        "new": new,
        "reset": site + reverse("password_reset"),
        "account": site + reverse("account"),
    }
    body = render_to_string("houses/email/changed.txt", context)
    subject = "Your arbe email address was changed" if new else "Your arbe email was removed"
    _send(subject, body, old)


def _send(subject: str, body: str, to: str) -> bool:
    try:
        send_mail(subject, body, None, [to])
    except Exception as exc:  # the mail server is down: the page says so, "Resend" retries
        logger.warning("account email to a person failed: %s", type(exc).__name__)
        return False
    return True
