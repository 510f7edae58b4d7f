"""Seed the demo house: an owner, a member, an admin, a bot and a first thread. Idempotent.

Passwords are printed only when this command sets them (they are never stored in
clear, so a later run can't show them again): on first seeding, or with
``--reset-passwords``, which sets and prints new ones. The logins come last, in a
box, which ``make run`` (scripts/run_demo.py) holds back until the server listens.
"""

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from dispatch.conversation import ensure_agent_dir
from houses.membership import add_member, agent_for_user
from houses.models import Agent, House, Membership
from threads.lifecycle import create_thread

DEMO_PEOPLE = [
    ("owner", Membership.Role.OWNER, "ARBE_DEMO_OWNER_PASSWORD"),
    ("member", Membership.Role.MEMBER, "ARBE_DEMO_MEMBER_PASSWORD"),
]
# The admin story (/admin/): a superuser outside the demo house.
DEMO_ADMIN = ("admin", "ARBE_DEMO_ADMIN_PASSWORD")


class Command(BaseCommand):
    help = (
        "Create the demo house (owner, member, one bot, one thread) and an admin account "
        "if they are not there yet; print the logins it sets."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset-passwords",
            action="store_true",
            help="set new passwords for the demo accounts and print them",
        )
        parser.add_argument("--url", default="", help="the address to show in the logins box")

    def handle(self, *args, reset_passwords=False, url="", **options):
        self.reset = reset_passwords
        self.logins: list[tuple[str, str, str]] = []  # (username, password or "", what for)
        with transaction.atomic():
            house, created = House.objects.get_or_create(slug="demo", defaults={"name": "Demo"})
            users = {}
            for username, role, env_name in DEMO_PEOPLE:
                users[username] = self._person(username, env_name, f"{role} of Demo")
                add_member(house, users[username], role)
            self._admin()
            helper, _ = Agent.objects.get_or_create(
                house=house,
                kind=Agent.Kind.BOT,
                handle="helper",
                defaults={
                    "display_name": "Helper (demo model)",
                    "provider": "arbe-demo",
                    "model": "demo",
                    "instructions": "You are a helpful assistant in a shared thread.",
                },
            )
            self._check_key(helper)
        if not house.threads.exists():
            create_thread(house=house, title="Welcome to arbe", by=users["owner"].agent)
        self.stdout.write("Demo house ready." if created else "Demo house already seeded.")
        self.stdout.write(logins_box(self.logins, url))

    def _check_key(self, bot) -> None:
        """The key rule holds here too (the demo model's key is in models.json, so no variable
        is needed); a provider an operator's own agent dir lacks is theirs to add."""
        from dispatch.pi.providers import setting_problem

        problem = setting_problem(bot.provider, bot.api_key_env, ensure_agent_dir())
        if problem is not None and problem[0] == "api_key_env":
            raise CommandError(f"@{bot.handle}: {problem[1]}")

    def _person(self, username: str, env_name: str, what: str):
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User.objects.create_user(username=username)
            agent_for_user(user)
        self._password(user, env_name, what, new=user.has_usable_password() is False)
        return user

    def _admin(self) -> None:
        username, env_name = DEMO_ADMIN
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User.objects.create_superuser(username=username, email="", password=None)
        self._password(user, env_name, "site admin, /admin/", new=not user.has_usable_password())

    def _password(self, user, env_name: str, what: str, *, new: bool) -> None:
        """Set a password if the account has none (or on reset); remember it for the box."""
        if not (new or self.reset):
            self.logins.append((user.get_username(), "", what))
            return
        password = os.environ.get(env_name) or secrets.token_urlsafe(12)
        user.set_password(password)
        user.save(update_fields=["password"])
        self.logins.append((user.get_username(), password, what))


def logins_box(logins: list[tuple[str, str, str]], url: str = "") -> str:
    """The demo logins framed, so they stand out at the end of a long log."""
    lines = ["Demo logins" + (f" at {url}" if url else "")]
    lines.append("")
    width = max(len(name) for name, _, _ in logins)
    hidden = False
    for name, password, what in logins:
        shown = password or "(set earlier, not shown again)"
        hidden = hidden or not password
        lines.append(f"{name:<{width}}  {shown}   {what}")
    if hidden:
        lines += ["", "Forgot them? manage.py seed_demo --reset-passwords prints new ones."]
    else:
        lines += ["", "Shown once: passwords are stored only as hashes."]
    inner = max(len(line) for line in lines)
    rule = "─" * (inner + 2)
    body = [f"│ {line:<{inner}} │" for line in lines]
    return "\n".join([f"┌{rule}┐", *body, f"└{rule}┘"])
