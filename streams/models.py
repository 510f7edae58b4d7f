"""Tables of the embedded Durable Streams server.

The server reads and writes them with raw SQL on its hot paths (see
``streams/server/store.py``); the models exist for migrations and the admin.
Times are unix seconds (floats) so the server compares them without parsing.
"""

from django.db import models


class Stream(models.Model):
    """One stream: its configuration, its tail and its fork links."""

    name = models.CharField(max_length=1024, unique=True)
    content_type = models.CharField(max_length=255)
    ttl_seconds = models.BigIntegerField(null=True, blank=True)
    # The header as sent (HEAD echoes it) and as a unix time (expiry checks).
    expires_at = models.CharField(max_length=64, null=True, blank=True)
    expires_at_ts = models.FloatField(null=True, blank=True)
    created_at = models.FloatField()
    accessed_at = models.FloatField()
    # Position just past the last message: the tail offset.
    tail = models.BigIntegerField(default=0)
    closed = models.BooleanField(default=False)
    closed_by_id = models.CharField(max_length=255, null=True, blank=True)
    closed_by_epoch = models.BigIntegerField(null=True, blank=True)
    closed_by_seq = models.BigIntegerField(null=True, blank=True)
    last_seq = models.CharField(max_length=255, null=True, blank=True)
    # A fork reads its source up to fork_offset, then its own messages.
    forked_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False
    )
    fork_offset = models.BigIntegerField(null=True, blank=True)
    fork_sub_offset = models.BigIntegerField(default=0)
    # Live forks: a stream with forks is soft-deleted (410) instead of removed.
    ref_count = models.IntegerField(default=0)
    soft_deleted = models.BooleanField(default=False)

    def __str__(self):
        return self.name


class Message(models.Model):
    """One append: its bytes as stored (JSON rows are comma-joined messages)."""

    stream = models.ForeignKey(
        Stream, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False
    )
    # The position just past this message; its offset is format_offset(position).
    position = models.BigIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["stream", "position"], name="streams_message_position")
        ]

    def __str__(self):
        return f"{self.stream_id}@{self.position}"


class Producer(models.Model):
    """Idempotent producer state per (stream, producer id)."""

    stream = models.ForeignKey(
        Stream, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False
    )
    producer_id = models.CharField(max_length=255)
    epoch = models.BigIntegerField()
    last_seq = models.BigIntegerField()
    updated_at = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["stream", "producer_id"], name="streams_producer_id")
        ]

    def __str__(self):
        return f"{self.producer_id} on {self.stream_id}"
