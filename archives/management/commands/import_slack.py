"""Move a Slack workspace export into a house (docs/data.md)."""

import os

from django.core.management.base import BaseCommand, CommandError

from arbe_lib.progress import progress_line
from archives.slack.importer import import_slack
from archives.zipsafe import ArchiveError


class Command(BaseCommand):
    help = (
        "Import a Slack workspace export (.zip): each channel, private channel and direct "
        "conversation becomes a thread; people become placeholders until they join."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the export (.zip) Slack's admin pages produce")
        parser.add_argument("--house", required=True, help="the house's name (made if new)")
        parser.add_argument(
            "--token-env",
            metavar="VAR",
            help="the environment variable holding a Slack token: files are downloaded "
            "into the house (without it, messages keep links to them)",
        )

        parser.add_argument(
            "--replies-as-threads",
            action="store_true",
            help="each Slack thread of replies becomes a thread of its own (a child of its "
            "channel's); by default replies stay in their channel's thread, in time order",
        )

    def handle(self, *args, file, house, token_env=None, replies_as_threads=False, **options):
        token = os.environ.get(token_env, "") if token_env else ""
        if token_env and not token:
            raise CommandError(f"{token_env} is not set.")
        try:
            done = import_slack(
                file,
                house_name=house,
                token=token,
                replies_as_threads=replies_as_threads,
                progress=self._progress,
            )
        except ArchiveError as exc:
            raise CommandError(f"{file}: {exc}") from None
        except FileNotFoundError:
            raise CommandError(f"{file}: no such file") from None
        if done.already:
            self.stdout.write(f"This export was imported already into {done.house.slug}.")
            return
        self.stdout.write(
            f"{done.house.slug}: {done.threads} threads, {done.messages} messages "
            f"({done.skipped} Slack notices skipped; files: {done.files_stored} stored, "
            f"{done.files_linked} kept as links)."
        )

    def _progress(self, stage: str, done: int, total: int) -> None:
        text, ending = progress_line(done, total, f" {stage}")
        self.stderr.write(text, ending=ending)
