"""Presence and typing over the channel layer: relayed between sockets, throttled, never
logged; across processes on Redis (two layers on one Redis are two Daphnes)."""

import asyncio
import json
import os

import pytest

from tests.integration.robustness.conftest import log_bytes
from tests.integration.web.conftest import open_socket
from threads import presence

pytestmark = pytest.mark.django_db(transaction=True)


async def here_events(communicator, quiet=0.5):
    """The presence fragments the socket sends until it is quiet (other frames skipped)."""
    found = []
    while not await communicator.receive_nothing(quiet):
        text = await communicator.receive_from(5)
        for part in text.split('<div class="here-of"')[1:]:
            head = part.split(">")[0]
            attrs = dict(a.split("=", 1) for a in head.split() if "=" in a)
            found.append((attrs["data-agent"].strip('"'), attrs["data-state"].strip('"')))
    return found


@pytest.fixture(params=["memory", "redis"])
def layer(request, settings):
    """Both channel layers: in-memory (one process), and Redis (what N Daphnes share)."""
    from channels.layers import channel_layers

    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        settings.CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "arbe_site.channel_layer.WaitingRedisChannelLayer",
                "CONFIG": {"hosts": [{"address": url}]},
            }
        }
    channel_layers.backends.clear()
    yield request.param
    channel_layers.backends.clear()


async def test_joining_typing_and_leaving_reach_the_other_page_and_not_the_log(world, layer):
    before = log_bytes(world.thread)
    path = f"/ws/threads/{world.thread.id}/"
    member = await open_socket(path, world.member)
    assert (world.member.agent.id, "here") in await here_events(member)
    owner = await open_socket(path, world.owner)
    # The member's page hears the owner arrive; the owner's page hears the member is here.
    assert (world.owner.agent.id, "here") in await here_events(member)
    assert (world.member.agent.id, "here") in await here_events(owner)
    await owner.send_to(text_data=json.dumps({"typing": True}))
    await owner.send_to(text_data=json.dumps({"typing": True}))  # within the throttle
    await owner.send_to(text_data="not json")
    await owner.send_to(text_data=json.dumps({"typing": "yes", "x": 1}))
    events = await here_events(member)
    assert events.count((world.owner.agent.id, "typing")) == 1
    await owner.disconnect()
    assert (world.owner.agent.id, "left") in await here_events(member)
    await member.disconnect()
    assert log_bytes(world.thread) == before  # ephemeral: nothing in the log


def test_the_throttle_allows_one_per_interval():
    throttle = presence.Throttle()
    assert throttle.allow("typing", 60) and not throttle.allow("typing", 60)
    assert throttle.allow("here", 60)


@pytest.fixture
def redis_url():
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    from tests.peers.redis import redis_server

    with redis_server() as url:
        yield url


async def test_two_processes_on_redis_hear_each_other(world, redis_url):
    """Two layers on one Redis are what two Daphne processes have: a group spans both."""
    from channels_redis.core import RedisChannelLayer

    url = redis_url
    a, b = RedisChannelLayer(hosts=[url]), RedisChannelLayer(hosts=[url])
    group = presence.group(world.thread.id)
    ca, cb = await a.new_channel(), await b.new_channel()
    await a.group_add(group, ca)
    await b.group_add(group, cb)
    event = presence.event("typing", world.owner.agent.id, "olive", {"initials": "O", "hue": 1})
    await a.group_send(group, event)
    got = await asyncio.wait_for(b.receive(cb), 5)
    assert got["state"] == "typing" and got["agent"] == world.owner.agent.id
    assert 'data-state="typing"' in presence.fragment(got)
    await a.group_discard(group, ca)
    await b.group_discard(group, cb)
    await a.flush()
