"""Rebuild the search index from the logs: every thread, or one house's."""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from arbe_lib.progress import progress_line
from houses.models import House
from search.backends import backend
from search.index import high_water, rebuild_thread
from threads.models import Thread
from threads.reading import ThreadLogMissing, read_entries


class Command(BaseCommand):
    help = "Rebuild the search index (every visible chat message) from the threads' logs."

    def add_arguments(self, parser):
        parser.add_argument("--house", metavar="SLUG", help="only this house's threads")

    def handle(self, *args, house=None, **options):
        threads = Thread.objects.order_by("pk")
        if house:
            found = House.objects.filter(slug=house).first()
            if found is None:
                raise CommandError(f"No house {house!r}.")
            threads = threads.filter(house=found)
        else:
            # Threads deleted since the last rebuild leave nothing behind either.
            with transaction.atomic():
                backend().clear_all()
        total, docs, missing = threads.count(), 0, 0
        for done, row in enumerate(threads.iterator(), 1):
            upto = high_water()
            try:
                entries, _ = read_entries(row.id)
            except ThreadLogMissing:
                missing += 1  # nothing to index; the thread page says the log is missing
            else:
                docs += rebuild_thread(row, entries, upto)
            self._progress(done, total, docs)
        note = f", {missing} with no log" if missing else ""
        self.stdout.write(f"{total} threads reindexed, {docs} messages searchable{note}.")

    def _progress(self, done: int, total: int, docs: int) -> None:
        text, ending = progress_line(done, total, f" threads, {docs} messages")
        self.stderr.write(text, ending=ending)
