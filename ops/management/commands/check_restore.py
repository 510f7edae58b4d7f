"""Compare this instance with a restored copy: ``manage.py check_restore``.

    python manage.py check_restore --other-database postgres://…/arbe_restored \\
        --other-streams-url http://127.0.0.1:4437 [--other-attachments DIR]

This side is what the settings name (``DATABASE_URL``, the stream server, the attachments
store); the other side is the copy. Exits non-zero, listing each difference, when they
differ (docs/operations.md, "Verifying a backup")."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ops import restore_check


class Command(BaseCommand):
    help = "Compare counts (people, houses, threads, entries per stream, attachments) with a copy."

    def add_arguments(self, parser):
        parser.add_argument("--other-database", required=True, help="the copy's database URL")
        parser.add_argument("--other-streams-url", required=True, help="the copy's stream server")
        parser.add_argument(
            "--other-streams-secret", default="", help="default: this DURABLE_STREAMS_SECRET"
        )
        parser.add_argument("--other-attachments", default="", help="the copy's files (a dir)")

    def handle(self, *args, **options):
        from threads.log import log_reader, log_reader_at

        alias = restore_check.add_database(options["other_database"])
        secret = options["other_streams_secret"] or settings.DURABLE_STREAMS_SECRET
        other_reader = log_reader_at(options["other_streams_url"], secret)
        here_dir = _local_attachments()
        there_dir = Path(options["other_attachments"]) if options["other_attachments"] else None
        here = restore_check.count("default", log_reader(), here_dir if there_dir else None)
        there = restore_check.count(alias, other_reader, there_dir)
        found = restore_check.differences(here, there)
        if found:
            raise CommandError("the copy differs:\n  " + "\n  ".join(found))
        self.stdout.write(f"the copy matches: {here.summary()}")


def _local_attachments() -> Path | None:
    backend = settings.STORAGES["attachments"]
    if backend["BACKEND"].endswith("FileSystemStorage"):
        return Path(backend["OPTIONS"]["location"])
    return None  # S3: compare the bucket with the provider's tools (docs/operations.md)
