"""Threads: the row beside each thread's durable stream.

The stream ``arbe-thread-{id}`` is the truth. This row holds what lists need
without folding streams (title, recency, the cached status record) and the
director's bookkeeping. ``status`` is a cache of the fold, guarded by
``status_rev`` and repairable from the stream at any time.
"""

from django.conf import settings
from django.db import models

from arbe_lib.ids import random_id
from threads.states import LABELS, RANK, State


def new_thread_id() -> str:
    return random_id(10)


THREAD_STREAM_PREFIX = "arbe-thread-"


def stream_name_for(thread_id: str) -> str:
    return f"{THREAD_STREAM_PREFIX}{thread_id}"


def thread_id_of(stream_name: str) -> str | None:
    if stream_name.startswith(THREAD_STREAM_PREFIX):
        return stream_name[len(THREAD_STREAM_PREFIX) :]
    return None


class Status(models.TextChoices):
    """A thread's state; ``RANK`` orders them for rollups (highest wins)."""

    # Labelled as the pages say them (``threads.states.LABELS``): the admin says "replied"
    # where the house page does, never "Done".
    BLOCKED = "blocked", LABELS[State.BLOCKED]
    WORKING = "working", LABELS[State.WORKING]
    ERROR = "error", LABELS[State.ERROR]
    DONE = "done", LABELS[State.DONE]
    IDLE = "idle", LABELS[State.IDLE]


STATUS_RANK = {Status(state.value): rank for state, rank in RANK.items()}


class Visibility(models.TextChoices):
    """Who reads a thread: its whole house, or only its members (``ThreadMember``)."""

    HOUSE = "house", "Everyone in the house"
    PRIVATE = "private", "Private"
    DIRECT = "direct", "Direct conversation"


class Thread(models.Model):
    id = models.CharField(primary_key=True, max_length=16, default=new_thread_id, editable=False)
    house = models.ForeignKey("houses.House", on_delete=models.CASCADE, related_name="threads")
    title = models.CharField(max_length=200)
    created_by = models.ForeignKey(
        "houses.Agent", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children"
    )
    # Who reads it (``threads.readers``: a cache of the log's ``signal.thread.*`` entries).
    visibility = models.CharField(
        max_length=8, choices=Visibility.choices, default=Visibility.HOUSE
    )
    # A direct conversation's people, as a key (``threads.readers.direct_key``): one thread per set.
    direct_key = models.CharField(max_length=64, blank=True)

    # The status record: a cache of the fold, written only under the status_rev guard.
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.IDLE)
    status_message = models.CharField(max_length=300, blank=True)
    status_rev = models.PositiveBigIntegerField(default=0)

    # Unix ms of the newest entry; only ever moves forward.
    last_entry_ts = models.BigIntegerField(null=True, blank=True)
    # Opaque offset where a delegated coding run starts (stored by its claim).
    run_offset = models.CharField(max_length=256, blank=True)

    # The director: the offset its last pass decided up to, and a small cached tail
    # of entries that must outlive that offset (owed replies, the last reason).
    director_offset = models.CharField(max_length=256, blank=True)
    director_tail = models.JSONField(default=list, blank=True)
    # Who had spoken up to the decided offset (chat authors, at most two people and two
    # bots: the conversation rule needs no more), so a pass reads only the tail. None:
    # not kept yet (a pass reads the whole log once).
    director_speakers = models.JSONField(null=True, blank=True, default=None)

    # Chat, for lists and unread counts (``threads.unread``): a cache of the log, repairable.
    # ``chat_seq`` counts the stream's chat entries in log order (tombstoned ones included),
    # so the n-th chat is position n; the last chat still shown is cached for its snippet.
    chat_seq = models.PositiveBigIntegerField(default=0)
    last_chat_id = models.CharField(max_length=128, blank=True)
    last_chat_author_id = models.CharField(max_length=32, blank=True)
    last_chat_text = models.CharField(max_length=200, blank=True)
    last_chat_ts = models.BigIntegerField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["house", "-last_entry_ts"], name="thread_recency"),
            models.Index(fields=["status"], name="thread_status"),
            # Lists a page at a time (``threads.paging``): the order with its tie-break, and
            # the house rollup's counts read from the index alone.
            models.Index(fields=["house", "-last_entry_ts", "-id"], name="thread_page"),
            models.Index(fields=["-last_entry_ts", "-id"], name="thread_page_all"),
            models.Index(fields=["house", "archived_at", "status"], name="thread_house_states"),
            models.Index(fields=["house", "status", "-last_entry_ts"], name="thread_house_speaker"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["house", "direct_key"],
                name="one_direct_per_set",
                condition=~models.Q(direct_key=""),
            )
        ]

    def __str__(self):
        return self.title

    @property
    def stream_name(self) -> str:
        return stream_name_for(self.id)

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None

    @property
    def is_private(self) -> bool:
        """Read only by its members (a private thread or a direct conversation)."""
        return self.visibility != Visibility.HOUSE

    @property
    def is_direct(self) -> bool:
        return self.visibility == Visibility.DIRECT


class ThreadMember(models.Model):
    """One person or bot who may read a private thread: the access table, a cache of the
    thread's ``signal.thread.made_private|member_added|member_removed`` entries
    (``threads.readers`` folds them; ``manage.py rebuild_thread_readers`` from the logs)."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="members")
    agent = models.ForeignKey("houses.Agent", on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "agent"], name="one_member_row"),
        ]
        # What a person reads: their rows by agent (``houses.access.readable``).
        indexes = [models.Index(fields=["agent", "thread"], name="member_threads")]

    def __str__(self):
        return f"{self.agent_id} in {self.thread_id}"


class EntryLocation(models.Model):
    """Where a chat entry sits in its thread's stream: a cache of the log, rebuilt from it
    (``manage.py reindex_entries``).

    Lets a retried post answer as the first did and a deletion find its target's
    author, type and tombstone without reading the whole stream.
    """

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="+")
    entry_id = models.CharField(max_length=128)
    type = models.CharField(max_length=64)
    author_id = models.CharField(max_length=32, blank=True)
    ts = models.BigIntegerField()
    # The opaque offset just after the entry (what its append answered), if known.
    offset_after = models.CharField(max_length=256, blank=True)
    # The id of the first tombstone that names this entry, once there is one.
    deleted_by = models.CharField(max_length=128, blank=True)
    # The history window (``WindowMark.seq``) the entry is in; 0 when not known.
    window = models.PositiveIntegerField(default=0)
    # The latest edit of the chat by its author (``signal.entry.edited``): its id and text.
    edited_by = models.CharField(max_length=128, blank=True)
    edited_text = models.TextField(blank=True)
    # Who reacts with what now (``signal.entry.reaction`` folded): {emoji: [agent id, …]}.
    reactions = models.JSONField(default=dict, blank=True)
    # The chat's position (``Thread.chat_seq`` when it was counted); 0 when not known. Unread
    # counts leave out deleted chat past a read position by it (``threads.unread``).
    seq = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "entry_id"], name="one_location_per_entry")
        ]
        indexes = [
            # Deleted chat by position: what an unread count leaves out (few rows per thread).
            models.Index(
                fields=["thread", "seq"],
                name="deleted_chat_seq",
                condition=~models.Q(deleted_by=""),
            )
        ]

    def __str__(self):
        return f"{self.entry_id} in {self.thread_id}"


class WindowMark(models.Model):
    """Where a history window of a thread ends: a stored stream position, a cache of the log.

    Written at the append seam (``threads.windows.note_append``): every
    ``WINDOW_CHATS`` chat entries or ``WINDOW_ENTRIES`` entries of any kind, the
    append that crosses the line closes the thread's open window with the offset
    that append answered. Window ``seq`` holds the entries from mark ``seq - 1``'s
    offset (or the start) through ``entry_id``. The open window (``offset`` empty)
    counts the entries since the last mark. ``manage.py reindex_entries`` rebuilds
    them from the log. See docs/history.md.
    """

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveIntegerField()
    # The opaque offset just after the window's last entry; empty while the window is open.
    offset = models.CharField(max_length=256, blank=True)
    # The id of the window's last entry: a reader from the previous mark stops after it.
    entry_id = models.CharField(max_length=128, blank=True)
    chats = models.PositiveIntegerField(default=0)
    entries = models.PositiveIntegerField(default=0)
    # What the thread's replies spent (``signal.dispatch.finished``) up to the window's end,
    # so the page's thread total needs only the entries it reads.
    spent_tokens = models.PositiveBigIntegerField(default=0)
    spent_cost = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "seq"], name="one_mark_per_seq"),
        ]

    def __str__(self):
        return f"window {self.seq} of {self.thread_id}"

    @property
    def is_open(self) -> bool:
        return not self.offset


class ThreadRead(models.Model):
    """How far a person has read a thread: the ``chat_seq`` position they last saw.

    Unread is ``thread.chat_seq - read_seq``. Positions come from the log's own order
    (counted at the append seam), never from parsing an offset.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="thread_reads"
    )
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="reads")
    read_seq = models.PositiveBigIntegerField(default=0)
    read_at = models.DateTimeField(auto_now=True)
    # Open thread pages of this person (sockets): while one is open, new chat is read as it
    # lands. ``watching_until`` bounds a count left behind by a process that died.
    watchers = models.PositiveIntegerField(default=0)
    watching_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "thread"], name="one_read_per_person_thread")
        ]

    def __str__(self):
        return f"{self.user} read {self.thread_id} to {self.read_seq}"


class SeamRepair(models.Model):
    """An append whose after-append steps did not all run (``threads.seam``): the entries as
    the log holds them and the steps still owed. The backstage sweep and a retried post run
    those steps again and wake the director; the row goes once they all succeed."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="+")
    steps = models.JSONField(default=list)  # step names, in seam order
    entries = models.TextField()  # a JSON array of the appended entries
    next_offset = models.CharField(max_length=256, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True)  # the last failure, scrubbed
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.thread_id} owes {', '.join(self.steps)}"


class AdminRead(models.Model):
    """A site admin opened a private thread or direct conversation in the Django admin (its
    page or its raw entries): the operator may read anything, and every such read is kept
    here (``threads.admin_reads``), shown read-only in the admin. Not a foreign key to the
    thread: the record outlives it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    username = models.CharField(max_length=150)  # kept if the account goes
    thread_id = models.CharField(max_length=16, db_index=True)
    thread_title = models.CharField(max_length=200)
    page = models.CharField(max_length=16)  # "thread" (its admin page) or "entries"
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self):
        return f"{self.username} read {self.thread_id} ({self.page}) at {self.at:%Y-%m-%d %H:%M}"
