"""Issue an API token for a person and print it once (for operators and scripts)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from houses.tokens import BadTokenName, issue_token


class Command(BaseCommand):
    help = "Issue an API token for USERNAME and print its raw value (only its digest is kept)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="cli", help="what the token is for (default: cli)")

    def handle(self, username, name, **options):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"No active user named {username!r}.")
        try:
            _, raw = issue_token(user, name)
        except BadTokenName as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(raw)
