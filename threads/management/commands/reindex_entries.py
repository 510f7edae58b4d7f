"""Rebuild the chat index (``EntryLocation``) and the history windows (``WindowMark``) of
every thread, or one, from its log."""

from django.core.management.base import BaseCommand, CommandError

from arbe_lib.progress import progress_line
from threads import chat_index, windows
from threads.models import Thread
from threads.reading import ThreadLogMissing


class Command(BaseCommand):
    help = (
        "Rebuild the chat index (where each chat is, its author, its tombstone) and the "
        "history windows from the logs."
    )

    def add_arguments(self, parser):
        parser.add_argument("--thread", metavar="ID", help="only this thread")

    def handle(self, *args, thread=None, **options):
        threads = Thread.objects.order_by("pk")
        if thread:
            threads = threads.filter(pk=thread)
            if not threads.exists():
                raise CommandError(f"No thread {thread!r}.")
        total, chats, marks, missing = threads.count(), 0, 0, 0
        for done, row in enumerate(threads.iterator(), 1):
            try:
                log = windows.read_for_rebuild(row)
            except ThreadLogMissing:
                missing += 1  # nothing to index; the page says the log is missing
            else:
                chats += chat_index.rebuild(row, log.entries, log.windows)
                windows.store_marks(row, log.marks)
                marks += len(log.marks) - 1
            self._progress(done, total)
        note = f", {missing} with no log" if missing else ""
        self.stdout.write(
            f"{total} threads reindexed, {chats} chat entries, {marks} window marks{note}."
        )

    def _progress(self, done: int, total: int) -> None:
        text, ending = progress_line(done, total)
        self.stderr.write(text, ending=ending)
