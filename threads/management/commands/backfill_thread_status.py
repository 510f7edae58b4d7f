"""Recompute the stored status of every live thread (or one house's) from its stream."""

from django.core.management.base import BaseCommand

from arbe_lib.progress import progress_line
from threads.models import Thread
from threads.status_sync import sync_status


class Command(BaseCommand):
    help = "Recompute Thread.status for every live thread, with the status_rev guard."

    def add_arguments(self, parser):
        parser.add_argument("--house", metavar="SLUG", help="only this house's threads")

    def handle(self, *args, house=None, **options):
        threads = Thread.objects.filter(archived_at__isnull=True)
        if house:
            threads = threads.filter(house__slug=house)
        ids = list(threads.order_by("pk").values_list("pk", flat=True))
        changed = 0
        for done, thread_id in enumerate(ids, 1):
            before = Thread.objects.values_list("status_rev", flat=True).get(pk=thread_id)
            sync_status(thread_id)
            after = Thread.objects.values_list("status_rev", flat=True).get(pk=thread_id)
            changed += after != before
            self._progress(done, len(ids))
        self.stdout.write(f"{len(ids)} threads recomputed, {changed} records changed.")

    def _progress(self, done: int, total: int) -> None:
        text, ending = progress_line(done, total)
        self.stderr.write(text, ending=ending)
