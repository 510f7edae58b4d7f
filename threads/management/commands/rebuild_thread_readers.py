"""Rebuild who reads each thread (visibility and members: ``threads.readers``) from the
logs' ``signal.thread.made_private|member_added|member_removed`` entries."""

from django.core.management.base import BaseCommand, CommandError

from arbe_lib.progress import progress_line
from threads.models import Thread
from threads.readers import rebuild_readers
from threads.reading import ThreadLogMissing, read_entries


class Command(BaseCommand):
    help = "Rebuild the access table (private threads and their members) from the logs."

    def add_arguments(self, parser):
        parser.add_argument("--thread", metavar="ID", help="only this thread")

    def handle(self, *args, thread=None, **options):
        threads = Thread.objects.order_by("pk")
        if thread:
            threads = threads.filter(pk=thread)
            if not threads.exists():
                raise CommandError(f"No thread {thread!r}.")
        total, private, missing = threads.count(), 0, 0
        for done, row in enumerate(threads.iterator(), 1):
            try:
                entries, _ = read_entries(row.pk)
            except ThreadLogMissing:
                missing += 1  # the page says the log is missing; the row is left as it is
            else:
                private += rebuild_readers(row, entries).visibility != "house"
            text, ending = progress_line(done, total)
            self.stderr.write(text, ending=ending)
        note = f", {missing} with no log" if missing else ""
        self.stdout.write(f"{total} threads read again, {private} private{note}.")
