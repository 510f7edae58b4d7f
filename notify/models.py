"""What notifications need stored: each person's choices, their devices, the outbox of chat
the backstage worker still has to look at, and one row per (person, entry, channel) claimed
before anything is sent, so a retry or a second worker never sends twice."""

from django.conf import settings
from django.db import models


class Level(models.TextChoices):
    ALL = "all", "Every message"
    MENTIONS = "mentions", "Mentions and replies from bots I asked"
    NOTHING = "nothing", "Nothing"


class NotifySettings(models.Model):
    """A person's choices; no row means the defaults (mentions, email on)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notify_settings"
    )
    level = models.CharField(max_length=8, choices=Level.choices, default=Level.MENTIONS)
    email = models.BooleanField(default=True)

    def __str__(self):
        return f"{self.user_id}: {self.level}"


class ThreadMode(models.TextChoices):
    ALL = "all", "Every message"
    MUTE = "mute", "Muted"


class ThreadNotify(models.Model):
    """One thread's exception to a person's level: every message (opt-in) or nothing."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="+")
    mode = models.CharField(max_length=4, choices=ThreadMode.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "thread"], name="one_notify_mode_per_thread")
        ]

    def __str__(self):
        return f"{self.user_id} in {self.thread_id}: {self.mode}"


class HouseNotify(models.Model):
    """A house a person muted: nothing from its threads notifies them (a thread's own mode,
    set after, still wins: docs/notifications.md, Muted houses). No row: not muted."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    house = models.ForeignKey("houses.House", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "house"], name="one_mute_per_house")]

    def __str__(self):
        return f"{self.user_id} muted house {self.house_id}"


class PushDevice(models.Model):
    """A browser's push subscription. The push service's endpoint is the device's identity;
    it is removed when the service answers 404 or 410 (the subscription is gone)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_devices"
    )
    endpoint = models.URLField(max_length=1000, unique=True)
    p256dh = models.CharField(max_length=200)
    auth = models.CharField(max_length=100)
    label = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_sent_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"device {self.pk} of {self.user_id}"


class Outbox(models.Model):
    """A chat entry the worker has not looked at yet (written at the append seam)."""

    class Kind(models.TextChoices):
        CHAT = "chat"
        RUN = "run"  # a coding run's report on its parent (signal.thread.child_finished)

    entry_id = models.CharField(max_length=128, primary_key=True)
    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=4, choices=Kind.choices, default=Kind.CHAT)
    author_id = models.CharField(max_length=32, blank=True)
    text = models.CharField(max_length=300)
    seq = models.PositiveBigIntegerField(default=0)  # the chat's position (threads.unread)
    ts = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self):
        return f"{self.kind} {self.entry_id} in {self.thread_id}"


class Asked(models.Model):
    """Who asked a bot for its current reply (from ``signal.dispatch.started``): the people
    told when the bot's answer lands."""

    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="+")
    bot_id = models.CharField(max_length=32)
    user_ids = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "bot_id"], name="one_asked_per_bot")
        ]

    def __str__(self):
        return f"asked {self.bot_id} in {self.thread_id}"


class Channel(models.TextChoices):
    PUSH = "push"
    EMAIL = "email"


class Notice(models.Model):
    """The claim: one row per (person, entry, channel), inserted before sending.

    Push is sent by whoever inserted the row. Email waits (``due_at``) and is claimed again
    by moving ``state`` from queued to sending in one guarded UPDATE.
    """

    class State(models.TextChoices):
        SENT = "sent"
        QUEUED = "queued"
        SENDING = "sending"
        READ = "read"  # read before it was due: nothing sent
        GONE = "gone"  # deleted, muted or left before it was due: nothing sent
        FAILED = "failed"  # an email that can never be built (a bad header): not retried

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    entry_id = models.CharField(max_length=128)
    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="+")
    channel = models.CharField(max_length=5, choices=Channel.choices)
    state = models.CharField(max_length=8, choices=State.choices)
    reason = models.CharField(max_length=8, blank=True)  # mention | direct | bot | all
    seq = models.PositiveBigIntegerField(default=0)
    text = models.CharField(max_length=300, blank=True)
    author = models.CharField(max_length=100, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.CharField(max_length=128, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "entry_id", "channel"], name="one_notice_per_entry_channel"
            )
        ]
        indexes = [models.Index(fields=["channel", "state", "due_at"])]

    def __str__(self):
        return f"{self.channel} {self.entry_id} to {self.user_id}: {self.state}"


class InboxItem(models.Model):
    """Something addressed to one person (``notify.inbox``): a mention of them, a bot's reply
    to their message, or a message in a direct conversation of theirs. An index of the
    log kept at the append seam, like unread and search: written when the entry is
    appended, removed by its tombstone, rebuilt from the logs by ``manage.py
    rebuild_inbox``. Unread while ``read_at`` is empty and the person's read position in
    the thread (``ThreadRead.read_seq``) is before ``seq``."""

    class Kind(models.TextChoices):
        MENTION = "mention"
        REPLY = "reply"  # a bot answering a message of theirs
        DIRECT = "direct"  # a message to them in a direct conversation

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="+")
    # The house, kept beside the thread so membership filters without a join.
    house = models.ForeignKey("houses.House", on_delete=models.CASCADE, related_name="+")
    entry_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    author_id = models.CharField(max_length=32, blank=True)
    text = models.CharField(max_length=300)
    seq = models.PositiveBigIntegerField()  # the chat's position (threads.unread)
    ts = models.BigIntegerField()
    read_at = models.DateTimeField(null=True, blank=True)  # read from the inbox itself

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "entry_id"], name="one_inbox_item_per_entry")
        ]
        indexes = [
            models.Index(fields=["user", "-ts", "-id"], name="inbox_newest"),
            models.Index(fields=["user", "thread", "seq"], name="inbox_by_thread"),
            models.Index(fields=["thread", "entry_id"], name="inbox_by_entry"),
        ]

    def __str__(self):
        return f"{self.kind} {self.entry_id} for {self.user_id}"
