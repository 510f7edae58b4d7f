"""Seed the demo house: an owner, a member, a bot and a first thread. Idempotent."""

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from houses.membership import add_member
from houses.models import Agent, House, Membership
from threads.lifecycle import create_thread

DEMO_PEOPLE = [
    ("owner", Membership.Role.OWNER, "ARBE_DEMO_OWNER_PASSWORD"),
    ("member", Membership.Role.MEMBER, "ARBE_DEMO_MEMBER_PASSWORD"),
]


class Command(BaseCommand):
    help = "Create the demo house (owner, member, one bot, one thread) if it is not there yet."

    def handle(self, *args, **options):
        with transaction.atomic():
            house, created = House.objects.get_or_create(slug="demo", defaults={"name": "Demo"})
            users = {}
            for username, role, env_name in DEMO_PEOPLE:
                users[username] = self._person(username, env_name)
                add_member(house, users[username], role)
            Agent.objects.get_or_create(
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
        if not house.threads.exists():
            create_thread(house=house, title="Welcome to arbe", by=users["owner"].agent)
        self.stdout.write("Demo house ready." if created else "Demo house already seeded.")

    def _person(self, username: str, env_name: str):
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is not None:
            return user
        password = os.environ.get(env_name)
        user = User.objects.create_user(username=username, password=password or None)
        if not password:
            password = secrets.token_urlsafe(12)
            user.set_password(password)
            user.save(update_fields=["password"])
            # Shown once, when the account is made; never stored in clear.
            self.stdout.write(f"Demo login: {username} / {password}")
        return user
