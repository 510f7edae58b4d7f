"""T3 Code installations a house follows, and the board rows stored from their shells.

Rows are stored so the board page renders without a live connection; the backstage's
board service keeps them current (``boards.service``).
"""

from django.db import models

from boards.t3 import META, Row
from houses.models import House


class T3Host(models.Model):
    """One T3 Code server. ``label`` is the stable host name rows carry; the token is secret."""

    house = models.ForeignKey(House, on_delete=models.CASCADE, related_name="t3_hosts")
    label = models.SlugField(max_length=64, help_text="Stable name for this T3 installation.")
    url = models.URLField(help_text="The server's origin, e.g. http://127.0.0.1:3773")
    token = models.CharField(
        max_length=2000, blank=True, help_text="Environment token (bearer); never displayed."
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "T3 host"
        constraints = [
            models.UniqueConstraint(fields=["house", "label"], name="t3_host_label_per_house"),
        ]

    def __str__(self):
        return self.label

    def __repr__(self):  # the token stays out of logs and tracebacks
        return f"<T3Host {self.pk} {self.label} {self.url}>"


class BoardRow(models.Model):
    host = models.ForeignKey(T3Host, on_delete=models.CASCADE, related_name="rows")
    thread_id = models.CharField(max_length=200)
    title = models.TextField(null=True)
    state = models.CharField(max_length=64, null=True)
    last_turn_at = models.CharField(max_length=64, null=True, help_text="ISO 8601, as sent")
    last_message_snippet = models.TextField(null=True)
    meta = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "thread_id"], name="board_row_per_thread"),
        ]

    def __str__(self):
        return f"{self.host.label}/{self.thread_id}"

    @property
    def dom_id(self) -> str:
        return f"board-row-{self.pk}"

    def as_row(self, label: str) -> Row:
        row = Row(
            thread_id=self.thread_id,
            title=self.title,
            state=self.state,
            last_turn_at=self.last_turn_at,
            last_message_snippet=self.last_message_snippet,
            host=label,
        )
        row[META] = dict(self.meta or {})
        return row
