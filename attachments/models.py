"""An uploaded file: a row per file, owned by its uploader and house.

Uploaded first (``entry_id`` empty), then linked to the chat entry that carries it. The
row is a cache of what the log says about the file plus where its bytes are kept; the
entry's ``attachments`` are the truth of what a message showed. See docs/attachments.md.
"""

from django.db import models

from arbe_lib.ids import random_id


def new_attachment_id() -> str:
    return random_id(16)


class Attachment(models.Model):
    id = models.CharField(primary_key=True, max_length=32, default=new_attachment_id)
    house = models.ForeignKey("houses.House", on_delete=models.CASCADE, related_name="+")
    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="+")
    uploader = models.ForeignKey("houses.Agent", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField()
    # Sniffed from the bytes, never taken from the name or the client's header.
    content_type = models.CharField(max_length=100)
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    # Keys in the attachments storage (STORAGES["attachments"]).
    key = models.CharField(max_length=200)
    thumb_key = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The chat entry that carries it; empty while only uploaded.
    entry_id = models.CharField(max_length=128, blank=True)
    # When an owner removed the bytes (``signal.files.purged``).
    purged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["thread", "entry_id"], name="attachment_entry"),
            models.Index(fields=["entry_id", "created_at"], name="attachment_unlinked"),
        ]

    def __str__(self):
        return f"{self.name} ({self.id})"

    @property
    def is_image(self) -> bool:
        return self.width is not None
