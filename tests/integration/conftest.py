"""A house with an owner, a member who authored a chat, a stranger, a bot, and a thread."""

from dataclasses import dataclass

import pytest
from django.conf import settings
from django.test import Client

from houses.models import Agent, ApiToken, House
from tests.factories import make_bot, make_house, make_user
from threads import sandbox_tokens
from threads.lifecycle import create_thread
from threads.models import Thread
from threads.permissions import BOT_KINDS


@dataclass
class World:
    house: House
    thread: Thread
    other_thread: Thread
    owner: object
    member: object
    author: object
    stranger: object
    bot: Agent

    def client_for(self, user) -> Client:
        client = Client()
        if user is not None:
            client.force_login(user)
        return client

    def token_client(self, user) -> Client:
        _, raw = ApiToken.issue(user, "tests")
        return Client(headers={"Authorization": f"Bearer {raw}"})

    def jwt(self, stream: str | None = None, ttl_s: int = 600, **claims) -> str:
        return sandbox_tokens.mint(
            agent_id=self.bot.id,
            stream=stream or self.thread.stream_name,
            kinds=tuple(sorted(BOT_KINDS)),
            ttl_s=ttl_s,
            **claims,
        )

    def jwt_client(self, token: str) -> Client:
        return Client(headers={"Authorization": f"Bearer {token}"})


@pytest.fixture
def world(transactional_db) -> World:
    owner, member, author, stranger = (make_user(n) for n in ("olive", "mia", "ari", "eve"))
    house = make_house("h", owner=owner, members=[member, author])
    make_house("elsewhere", owner=stranger)
    bot = make_bot(house, "helper")
    thread = create_thread(house=house, title="Plans", by=owner.agent)
    other = create_thread(house=house, title="Other", by=owner.agent)
    return World(house, thread, other, owner, member, author, stranger, bot)


@pytest.fixture
def fresh_limits(settings):
    """The shared "limits" cache (invite misses) under a key prefix of this test's own: its
    rows or keys outlive a test (a database cache's table isn't flushed, Redis is shared),
    and clearing a Redis cache would flush the channel layer's database too."""
    from arbe_lib.ids import random_id

    limits = dict(settings.CACHES["limits"], KEY_PREFIX=random_id(8, prefix="t"))
    settings.CACHES = {**settings.CACHES, "limits": limits}


@pytest.fixture
def service_secret() -> str:
    return settings.DURABLE_STREAMS_SECRET
