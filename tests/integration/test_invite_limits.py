"""Invite guessing: counted per address and per token prefix, in a cache every process
shares; a real invitee behind the guesser's address still gets in."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from houses import invite_limits
from houses.invite_limits import MISSES_PER_ADDRESS, MISSES_PER_PREFIX, over_limits
from houses.invites import make_invite
from houses.models import HouseInvite, Membership

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_limits")]
ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "tangerine-Orbit-42"
PROXY = "10.0.0.1"  # everyone behind one proxy has its address


def guess(n: int, prefix: str = "") -> str:
    """A wrong token; without ``prefix``, each ``n`` starts differently, as random guesses do."""
    return prefix + f"{n:04d}Zz".ljust(22 - len(prefix), "z")


def client(address: str = PROXY) -> Client:
    return Client(REMOTE_ADDR=address)


def test_a_real_invitee_gets_in_while_guesses_from_the_same_address_are_refused(world):
    _, token = make_invite(world.house, world.owner)
    guesser = client()
    for n in range(MISSES_PER_ADDRESS):
        assert guesser.get(f"/join/{guess(n)}").status_code == 404
    assert over_limits(PROXY, guess(99)) == (True, False)
    # The address is over its limit: a guess is refused without its token being looked up.
    with CaptureQueriesContext(connection) as queries:
        assert guesser.get(f"/join/{guess(99)}").status_code == 404
    assert not any("token_hash" in q["sql"] for q in queries.captured_queries)
    # The invitee, behind the same proxy, with the real link.
    invitee = client()
    assert invitee.get(f"/join/{token}").status_code == 200
    response = invitee.post(
        f"/join/{token}", {"username": "newcomer", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 302 and response["Location"] == "/houses/h/"
    assert Membership.objects.filter(house=world.house, user__username="newcomer").exists()
    assert guesser.get(f"/join/{guess(100)}").status_code == 404


def test_guesses_at_one_prefix_from_many_addresses_lock_that_prefix_only(world):
    _, token = make_invite(world.house, world.owner)
    _, other = make_invite(world.house, world.owner)
    prefix = invite_limits.prefix_of(token)
    assert prefix != invite_limits.prefix_of(other)
    for n in range(MISSES_PER_PREFIX):
        assert client(f"192.0.2.{n}").get(f"/join/{guess(n, prefix)}").status_code == 404
    # Someone is working through the rest of this link: it answers 404 to everyone.
    assert client("198.51.100.7").get(f"/join/{token}").status_code == 404
    assert client("198.51.100.7").get(f"/join/{other}").status_code == 200


def test_an_invite_from_before_prefixes_still_works_for_an_address_over_its_limit(world):
    _, token = make_invite(world.house, world.owner)
    HouseInvite.objects.update(token_prefix="")
    guesser = client()
    for n in range(MISSES_PER_ADDRESS):
        guesser.get(f"/join/{guess(n)}")
    assert client().get(f"/join/{token}").status_code == 200


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


COUNT_IN_ANOTHER_PROCESS = """
import json, os, django
from django.conf import settings
django.setup()
settings.CACHES["limits"]["KEY_PREFIX"] = os.environ["LIMITS_PREFIX"]
from houses.invite_limits import count_miss, over_limits
address, token = json.loads(os.environ["MISS"])
print(json.dumps(over_limits(address, token)))
for _ in range(int(os.environ["TIMES"])):
    count_miss(address, token)
print(json.dumps(over_limits(address, token)))
"""


def count_elsewhere(address: str, token: str, times: int) -> list[list[bool]]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "arbe_site.settings",
        "DATABASE_URL": database_url(),
        "LIMITS_PREFIX": django_settings.CACHES["limits"]["KEY_PREFIX"],
        "MISS": json.dumps([address, token]),
        "TIMES": str(times),
    }
    result = subprocess.run(
        [sys.executable, "-c", COUNT_IN_ANOTHER_PROCESS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_counts_are_shared_between_processes(world):
    _, token = make_invite(world.house, world.owner)
    address = "203.0.113.9"
    # Half the misses here, half in another process: together they reach the limit.
    half = MISSES_PER_ADDRESS // 2
    for _ in range(half):
        assert client(address).get(f"/join/{guess(0)}").status_code == 404
    before, after = count_elsewhere(address, guess(0), MISSES_PER_ADDRESS - half)
    assert before == [False, False] and after == [True, True]
    assert over_limits(address, guess(0)) == (True, True)
    with CaptureQueriesContext(connection) as queries:
        assert client(address).get(f"/join/{guess(1000)}").status_code == 404
    assert not any("token_hash" in q["sql"] for q in queries.captured_queries)
    assert client(address).get(f"/join/{token}").status_code == 200


def test_the_limits_cache_is_shared_in_both_configurations():
    backend = django_settings.CACHES["limits"]["BACKEND"]
    if os.environ.get("REDIS_URL"):
        assert backend == "django.core.cache.backends.redis.RedisCache"
    else:
        assert backend == "django.core.cache.backends.db.DatabaseCache"


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(token=st.text(min_size=1, max_size=60), address=st.sampled_from([PROXY, "::1", "x y"]))
def test_odd_tokens_and_addresses_are_a_plain_404(world, token, address):
    from urllib.parse import quote

    response = Client(REMOTE_ADDR=address).get(f"/join/{quote(token, safe='')}")
    assert response.status_code in (404, 400), response.content
