"""Recount every live thread's chat and re-cache its last message, from its stream."""

from django.core.management.base import BaseCommand

from threads.models import Thread
from threads.unread import rebuild_chat_cache


class Command(BaseCommand):
    help = (
        "Rebuild Thread.chat_seq and the cached last message from each stream; "
        "read positions move with the count, so unread counts stay what they were."
    )

    def add_arguments(self, parser):
        parser.add_argument("--house", metavar="SLUG", help="only this house's threads")

    def handle(self, *args, house=None, **options):
        threads = Thread.objects.filter(archived_at__isnull=True)
        if house:
            threads = threads.filter(house__slug=house)
        ids = list(threads.order_by("pk").values_list("pk", flat=True))
        chats = sum(rebuild_chat_cache(thread_id) for thread_id in ids)
        self.stdout.write(f"{len(ids)} threads rebuilt, {chats} chat entries counted.")
