"""Email for mentions (and direct messages) still unread after ``NOTIFY_EMAIL_DELAY_S``: one
message per person with everything that came due, claimed by one guarded UPDATE so two
workers never both send it.

A mail server that is down is tried again every ``RETRY_S``; a message that can never be
built (a header Django refuses: ``BadHeaderError``, an address it can't encode) is marked
``failed`` and never tried again. Titles and names go into the subject on one line and
without hidden characters (``houses.names.one_line``), whatever was stored before titles
were checked."""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from houses.access import read_by
from houses.names import one_line
from notify.links import entry_path
from notify.models import Channel, HouseNotify, Notice, NotifySettings, ThreadMode, ThreadNotify
from ops import metrics
from threads.models import EntryLocation, Thread, ThreadRead

logger = logging.getLogger(__name__)
RETRY_S = 60
PEOPLE_PER_TICK = 50


def send_due(holder: str) -> int:
    """Send every person's due email; how many messages went out."""
    now = timezone.now()
    due = Notice.objects.filter(
        channel=Channel.EMAIL,
        state=Notice.State.QUEUED,
        due_at__lte=now,
    )
    users = list(due.values_list("user_id", flat=True).distinct()[:PEOPLE_PER_TICK])
    sent = 0
    for user_id in users:
        claim = f"{holder}:{secrets.token_hex(4)}"
        taken = due.filter(user_id=user_id).update(state=Notice.State.SENDING, claimed_by=claim)
        if taken and _send_claimed(user_id, claim):
            sent += 1
    return sent


def _send_claimed(user_id: int, claim: str) -> bool:
    notices = list(
        Notice.objects.filter(claimed_by=claim, state=Notice.State.SENDING).order_by("created_at")
    )
    live = _still_news(user_id, notices)
    # ``User.email`` holds only a confirmed address; one waiting for its link is in
    # ``houses.PendingEmail`` and is never sent a notification (houses/email_address.py).
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    chosen = NotifySettings.objects.filter(user_id=user_id).first()
    if user is None or not user.email or (chosen is not None and not chosen.email):
        live = []
    gone = [n.pk for n in notices if n not in live]
    Notice.objects.filter(pk__in=gone, state=Notice.State.SENDING).update(state=Notice.State.GONE)
    if not live:
        return False
    subject, body = compose(live)
    try:
        send_mail(subject, body, None, [user.email])
    except ValueError as exc:  # BadHeaderError, a bad address: the same every time
        logger.warning(
            "notify: email to user %s can't be built (%s); not retried",
            user_id,
            type(exc).__name__,
        )
        Notice.objects.filter(pk__in=[n.pk for n in live]).update(state=Notice.State.FAILED)
        return False
    except Exception as exc:  # the mail server is down: try again later
        logger.warning("notify: email to user %s failed: %s", user_id, type(exc).__name__)
        metrics.notified("email", False)
        Notice.objects.filter(pk__in=[n.pk for n in live]).update(
            state=Notice.State.QUEUED, due_at=timezone.now() + timedelta(seconds=RETRY_S)
        )
        return False
    Notice.objects.filter(pk__in=[n.pk for n in live]).update(state=Notice.State.SENT)
    metrics.notified("email", True)
    return True


def _still_news(user_id: int, notices: list[Notice]) -> list[Notice]:
    """Drop what was read, deleted or muted since it was queued, or is in a house left."""
    threads = {n.thread_id for n in notices}
    read = dict(
        ThreadRead.objects.filter(user_id=user_id, thread_id__in=threads).values_list(
            "thread_id", "read_seq"
        )
    )
    modes = dict(
        ThreadNotify.objects.filter(user_id=user_id, thread_id__in=threads).values_list(
            "thread_id", "mode"
        )
    )
    in_muted_house = set(
        Thread.objects.filter(
            pk__in=threads,
            house_id__in=HouseNotify.objects.filter(user_id=user_id).values("house_id"),
        ).values_list("pk", flat=True)
    )
    muted = {t for t, mode in modes.items() if mode == ThreadMode.MUTE} | {
        t for t in in_muted_house if modes.get(t) != ThreadMode.ALL
    }
    readable = set(
        Thread.objects.filter(
            pk__in=threads, house__memberships__user_id=user_id, archived_at__isnull=True
        )
        .filter(read_by(user_id))  # out of a private thread since: not news to them
        .values_list("pk", flat=True)
    )
    deleted = set(
        EntryLocation.objects.filter(
            Q(thread_id__in=threads), ~Q(deleted_by=""), entry_id__in=[n.entry_id for n in notices]
        ).values_list("entry_id", flat=True)
    )
    live = []
    for n in notices:
        if n.seq and read.get(n.thread_id, 0) >= n.seq:
            Notice.objects.filter(pk=n.pk).update(state=Notice.State.READ)
        elif n.thread_id in readable and n.thread_id not in muted and n.entry_id not in deleted:
            live.append(n)
    return live


def compose(notices: list[Notice]) -> tuple[str, str]:
    titles = {
        pk: one_line(title)
        for pk, title in Thread.objects.filter(pk__in={n.thread_id for n in notices}).values_list(
            "pk", "title"
        )
    }
    direct = any(n.reason == "direct" for n in notices)  # notify.recipients.Reason.DIRECT
    if len(notices) == 1:
        n = notices[0]
        where = titles.get(n.thread_id, "")
        verb = "wrote to you in" if direct else "mentioned you in"
        subject = f"{one_line(n.author)} {verb} “{where}”"
    else:
        what = "messages to you" if direct else "mentions"
        subject = f"{len(notices)} {what} you haven't read"
    intro = "Written to you" if direct else "You were mentioned"
    lines = [f"{intro} and haven't read it yet:", ""]
    for n in notices:
        url = settings.SITE_URL + entry_path(n.thread_id, n.entry_id)
        lines += [
            f"{one_line(n.author)} in “{titles.get(n.thread_id, '')}”:",
            f"  {n.text}",
            f"  {url}",
            "",
        ]
    lines.append(f"Change what you get: {settings.SITE_URL}{reverse('notify-settings')}")
    return subject, "\n".join(lines)
