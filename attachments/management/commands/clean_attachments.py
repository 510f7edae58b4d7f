"""Remove uploads that no message carries, once they are old enough, and the files of
deleted messages still kept (docs/attachments.md)."""

from datetime import timedelta

from django.core.management.base import BaseCommand

from attachments.service import UNLINKED_FOR, clean_deleted, clean_unlinked


class Command(BaseCommand):
    help = (
        "Delete uploaded files no message took (their rows and bytes), after --hours, and "
        "the files of deleted messages (their bytes; the log records it)."
    )

    def add_arguments(self, parser):
        default = int(UNLINKED_FOR.total_seconds() // 3600)
        parser.add_argument("--hours", type=int, default=default, help=f"default {default}")

    def handle(self, *args, hours, **options):
        gone = clean_unlinked(timedelta(hours=hours))
        self.stdout.write(f"Removed {gone} upload{'s' * (gone != 1)} no message carries.")
        deleted = clean_deleted()
        self.stdout.write(f"Removed the files of {deleted} deleted message{'s' * (deleted != 1)}.")
