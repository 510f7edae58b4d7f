"""Write a house to a self-describing archive (docs/data.md)."""

from django.core.management.base import BaseCommand, CommandError

from arbe_lib.progress import progress_line
from archives.export import export_house
from houses.models import House


class Command(BaseCommand):
    help = "Export a house (its logs as stored, people, bots, files) to a zip archive."

    def add_arguments(self, parser):
        parser.add_argument("house", help="the house's slug")
        parser.add_argument("file", help="the .zip to write")
        parser.add_argument(
            "--drop-deleted-text",
            action="store_true",
            help="deleted messages say '(deleted)' and carry no files (for leaving the org)",
        )

    def handle(self, *args, house, file, drop_deleted_text=False, **options):
        found = House.objects.filter(slug=house).first()
        if found is None:
            raise CommandError(f"No house {house!r}.")

        def progress(done: int, total: int) -> None:
            text, ending = progress_line(done, total, " threads and files")
            self.stderr.write(text, ending=ending)

        manifest = export_house(found, file, drop_deleted_text=drop_deleted_text, progress=progress)
        c = manifest.counts
        self.stdout.write(
            f"{found.slug}: {c.threads} threads, {c.entries} entries, {c.people} people, "
            f"{c.bots} bots, {c.attachments} files -> {file} (archive {manifest.archiveId})"
        )
