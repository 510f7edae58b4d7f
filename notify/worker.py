"""The notifier: backstage's part that decides and sends (push now, email when due).

It runs on each backstage engine's loop (``dispatch.backstage``: in the web process in the
embedded configuration, in every ``manage.py backstage`` worker in the scaled one). The
append seam wakes it in-process; otherwise it looks every ``NOTIFY_POLL_S``. Two engines may
take up the same outbox item: the ``Notice`` row per (person, entry, channel) is inserted
before anything is sent, and only the engine whose insert succeeded sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from arbe_lib.concurrency import in_thread
from houses.models import Agent
from houses.names import one_line
from notify import mail, push
from notify.links import entry_path
from notify.models import Channel, Notice, Outbox, PushDevice
from notify.recipients import Reason, Recipient, recipients
from notify.wakeup import listening
from threads.models import EntryLocation, Thread, ThreadRead

logger = logging.getLogger(__name__)
BATCH = 100
PRUNE_EVERY_S = 3600
DONE = (Notice.State.SENT, Notice.State.READ, Notice.State.GONE, Notice.State.FAILED)


class Notifier:
    def __init__(self, holder: str) -> None:
        self.holder = holder
        self.pruned_at: float | None = None

    def tick(self) -> int:
        """Look at the outbox and the due email once; how many outbox items were handled."""
        items = list(Outbox.objects.order_by("created_at")[:BATCH])
        for item in items:
            try:
                self.handle(item)
            except Exception:
                logger.exception("notify: could not handle entry %s", item.entry_id)
            Outbox.objects.filter(pk=item.pk).delete()
        mail.send_due(self.holder)
        if self.pruned_at is None or time.monotonic() - self.pruned_at > PRUNE_EVERY_S:
            self.pruned_at = time.monotonic()
            prune()
        return len(items)

    def handle(self, item: Outbox) -> None:
        if not Outbox.objects.filter(pk=item.pk).exists():
            return  # another engine took it, or its tombstone came first
        if (
            EntryLocation.objects.filter(thread_id=item.thread_id, entry_id=item.entry_id)
            .exclude(deleted_by="")
            .exists()
        ):
            return
        thread = Thread.objects.select_related("house").filter(pk=item.thread_id).first()
        if thread is None or thread.archived_at is not None:
            return
        author = Agent.objects.filter(pk=item.author_id).first() if item.author_id else None
        people = recipients(item, thread, author)
        if not people:
            return
        watching = set(
            ThreadRead.objects.filter(
                thread=thread,
                user_id__in=[p.user_id for p in people],
                watchers__gt=0,
                watching_until__gt=timezone.now(),
            ).values_list("user_id", flat=True)
        )
        with_devices = set(
            PushDevice.objects.filter(user_id__in=[p.user_id for p in people]).values_list(
                "user_id", flat=True
            )
        )
        name = author.display_name if author else "Someone"
        for person in people:
            # An open page notifies itself (notify.js); push is for everywhere else.
            pushed = person.user_id in with_devices and person.user_id not in watching
            if pushed and self.claim(person, item, thread, Channel.PUSH, Notice.State.SENT, name):
                push.send_to_user(person.user_id, message(item, thread, author, person))
            addressed = person.reason in (Reason.MENTION, Reason.DIRECT)
            if addressed and person.email_on and person.email:
                due = timezone.now() + timedelta(seconds=settings.NOTIFY_EMAIL_DELAY_S)
                self.claim(person, item, thread, Channel.EMAIL, Notice.State.QUEUED, name, due)

    def claim(self, person: Recipient, item, thread, channel, state, name, due=None) -> bool:
        try:
            with transaction.atomic():
                Notice.objects.create(
                    user_id=person.user_id,
                    entry_id=item.entry_id,
                    thread=thread,
                    channel=channel,
                    state=state,
                    reason=person.reason,
                    seq=item.seq,
                    text=item.text,
                    author=name[:100],
                    due_at=due,
                    claimed_by=self.holder,
                )
        except IntegrityError:
            return False  # sent (or queued) already, by this engine or another
        return True

    async def run_forever(self, poll_s: float | None = None) -> None:
        poll_s = poll_s or settings.NOTIFY_POLL_S or 2.0
        with listening() as event:
            while True:
                event.clear()
                try:
                    while await in_thread(self.tick) >= BATCH:
                        pass
                except Exception:
                    logger.exception("notify: tick failed")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), poll_s)


def prune() -> int:
    """Forget settled claims older than ``NOTIFY_KEEP_DAYS``: an entry that old is never
    appended again (a retried append is a duplicate and never reaches the seam)."""
    before = timezone.now() - timedelta(days=settings.NOTIFY_KEEP_DAYS)
    return Notice.objects.filter(created_at__lt=before, state__in=DONE).delete()[0]


def message(item: Outbox, thread: Thread, author: Agent | None, person: Recipient) -> dict:
    """What a push shows: who, where, the text, and where a click goes."""
    who = author.display_name if author else "Someone"
    where = one_line(thread.title)  # a title stored before titles were one line
    if item.kind == Outbox.Kind.RUN:
        title = f"{who} finished a run in “{where}”"
    elif person.reason == Reason.MENTION:
        title = f"{who} mentioned you in “{where}”"
    elif person.reason == Reason.DIRECT:
        title = f"{who} wrote to you"
    elif person.reason == Reason.BOT:
        title = f"{who} replied in “{where}”"
    else:
        title = f"{who} in “{where}”"
    # The tag is the one the open pages give their notification of the same message
    # (static/arbe/yours.js, notify.js): a browser that gets both shows one.
    url = entry_path(thread.pk, item.entry_id)
    return {"title": title, "body": item.text, "url": url, "tag": f"entry-{item.entry_id}"}


def start_notifier(holder: str, loop: asyncio.AbstractEventLoop):
    """Thread-safe: run a notifier on ``loop`` (a backstage engine's)."""
    if settings.NOTIFY_POLL_S <= 0:
        return None
    return asyncio.run_coroutine_threadsafe(Notifier(holder).run_forever(), loop)
