"""Restore a house from its archive; a second run resumes or does nothing (docs/data.md)."""

from django.core.management.base import BaseCommand, CommandError

from arbe_lib.progress import progress_line
from archives.restore import abandon_archive, restore_archive
from archives.zipsafe import ArchiveError


class Command(BaseCommand):
    help = (
        "Import a house archive: the same entries, every cache rebuilt from the logs. "
        "Running it again resumes an interrupted import; --abandon rolls one back."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the archive (.zip) written by export_house")
        parser.add_argument("--slug", help="the house's slug here (default: the archive's)")
        parser.add_argument(
            "--abandon", action="store_true", help="roll back an unfinished import of this archive"
        )

    def handle(self, *args, file, slug=None, abandon=False, **options):
        try:
            if abandon:
                house = abandon_archive(file)
                self.stdout.write(
                    f"Rolled back the unfinished import of {house.slug}."
                    if house
                    else "No unfinished import of this archive; nothing to roll back."
                )
                return
            restored = restore_archive(file, slug=slug, progress=self._progress)
        except ArchiveError as exc:
            raise CommandError(f"{file}: {exc}") from None
        except FileNotFoundError:
            raise CommandError(f"{file}: no such file") from None
        if restored.already:
            self.stdout.write(f"This archive was imported already as {restored.house.slug}.")
            return
        house, threads, entries = restored.house.slug, restored.threads, restored.entries
        self.stdout.write(f"{house}: {threads} threads, {entries} entries restored.")

    def _progress(self, stage: str, done: int, total: int) -> None:
        text, ending = progress_line(done, total, f" {stage}")
        self.stderr.write(text, ending=ending)
