"""What the archives app keeps beside the houses it exports and restores.

- ``ImportRecord``: one archive (or Slack export) being imported or imported; its
  ``archive_id`` makes a second import of the same archive a no-op and an interrupted one
  resumable, and ``id_map`` keeps which archive ids were given new ones here.
- ``Placeholder``: a person known only from an archive (a name, a handle, maybe an email),
  waiting to be claimed by whoever confirms that email here (``archives.claiming``).
- ``ExportJob``: an owner's export prepared in the background, its progress, and the
  expiring download (``archives.jobs``).
"""

from django.conf import settings
from django.db import models


class ImportRecord(models.Model):
    class State(models.TextChoices):
        RUNNING = "running"
        DONE = "done"

    archive_id = models.CharField(max_length=128, unique=True)
    kind = models.CharField(max_length=16, default="house")  # house | slack
    house = models.ForeignKey(
        "houses.House", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    state = models.CharField(max_length=8, choices=State.choices, default=State.RUNNING)
    # Archive id -> id here, for agents, threads and files that could not keep theirs.
    id_map = models.JSONField(default=dict, blank=True)
    threads_done = models.JSONField(default=list, blank=True)  # archive thread ids appended
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"import {self.archive_id} ({self.state})"


class Placeholder(models.Model):
    """A person restored from an archive who has not signed in here: the account has no
    usable password until it is claimed (or an operator sets one)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="placeholder"
    )
    source = models.CharField(max_length=16, default="archive")  # archive | slack
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"placeholder {self.user}"


class ExportJob(models.Model):
    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        READY = "ready"
        FAILED = "failed"

    house = models.ForeignKey("houses.House", on_delete=models.CASCADE, related_name="+")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    state = models.CharField(max_length=8, choices=State.choices, default=State.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    drop_deleted_text = models.BooleanField(default=False)
    key = models.CharField(max_length=200, blank=True)  # in the attachments storage
    size = models.PositiveBigIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"export of {self.house_id} ({self.state})"
