"""Rebuild the inbox index (mentions, bots' replies) from the logs: every thread, or one house's."""

from django.core.management.base import BaseCommand, CommandError

from arbe_lib.progress import progress_line
from houses.models import House
from notify.inbox import rebuild_thread
from threads.models import Thread
from threads.reading import ThreadLogMissing, read_entries


class Command(BaseCommand):
    help = "Rebuild everyone's inbox (mentions and bots' replies) from the threads' logs."

    def add_arguments(self, parser):
        parser.add_argument("--house", metavar="SLUG", help="only this house's threads")

    def handle(self, *args, house=None, **options):
        threads = Thread.objects.order_by("pk")
        if house:
            found = House.objects.filter(slug=house).first()
            if found is None:
                raise CommandError(f"No house {house!r}.")
            threads = threads.filter(house=found)
        total, items, missing = threads.count(), 0, 0
        for done, row in enumerate(threads.iterator(), 1):
            try:
                entries, _ = read_entries(row.id)
            except ThreadLogMissing:
                missing += 1  # its items stay as they are; the thread page says the log is missing
            else:
                items += rebuild_thread(row, entries)
            text, ending = progress_line(done, total, f" threads, {items} items")
            self.stderr.write(text, ending=ending)
        note = f", {missing} with no log" if missing else ""
        self.stdout.write(f"{total} threads read, {items} inbox items{note}.")
