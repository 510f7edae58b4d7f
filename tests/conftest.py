"""Shared test set-up. Peers (stream servers, Postgres, Redis) are started by the plugin
modules in ``tests/peers/`` on free loopback ports and stopped by their PIDs."""

import os
from pathlib import Path

import pytest


def pytest_configure(config):
    """No sweep in test processes: importing the ASGI module starts the embedded backstage
    (``start_with_web``) only when it has a sweep to run, and a timed sweep would act on
    whichever test runs then. No traces either, whatever the environment says: only the
    ``posthog`` fixture turns the mirror on, pointed at its loopback capture server."""
    from django.conf import settings

    settings.BACKSTAGE_SWEEP_S = 0
    settings.NOTIFY_POLL_S = 0  # no notifier on the test engine: notify tests run their own
    settings.POSTHOG_API_KEY = ""
    _redis_database_per_worker(settings)


@pytest.hookimpl(optionalhook=True)  # the browser tests run without pytest-asyncio
def pytest_asyncio_loop_factories(config, item):
    """Async tests run on uvloop, as Daphne (``arbe_site.web``) and the backstage worker do."""
    import uvloop

    return {"uvloop": uvloop.new_event_loop}


def _redis_database_per_worker(settings):
    """Under pytest-xdist, each worker's channel layer on a Redis database of its own: the
    workers' test databases reuse primary keys, so their groups (``user-1``…) would meet.
    The environment changes too, for the worker processes a test starts."""
    import re

    worker, url = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("REDIS_URL", "")
    if not worker.startswith("gw") or not url:
        return
    url = re.sub(r"(/\d*)?$", f"/{int(worker[2:]) + 1}", url, count=1)
    os.environ["REDIS_URL"] = settings.REDIS_URL = url
    for host in settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]:
        host["address"] = url
    limits = settings.CACHES["limits"]
    if limits["BACKEND"].endswith("RedisCache"):  # the invite limiter's shared counts too
        limits["LOCATION"] = url


pytest_plugins = [
    "tests.peers.embedded",
    "tests.peers.reference",
    "tests.peers.fake_llm",
    "tests.peers.posthog_capture",
    "tests.peers.t3_fake",
]


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """One SQLite test file per pytest process, so concurrent runs never share a file.

    Django removes the file at the end but not its WAL companions, which threads
    still holding connections keep alive; they go too, once the database is gone.
    """
    from django.conf import settings

    db = settings.DATABASES["default"]
    name = None
    if db["ENGINE"].endswith("sqlite3"):
        name = db["TEST"]["NAME"] = str(settings.VAR_DIR / f"test-{os.getpid()}.sqlite3")
    yield
    if name is not None:
        for suffix in ("-wal", "-shm"):
            Path(name + suffix).unlink(missing_ok=True)


@pytest.fixture(autouse=True, scope="session")
def fast_password_hashing():
    """Real hashing is deliberately slow; tests only need passwords to round-trip."""
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def quiet_recency_throttle():
    """No trailing recency write may outlive the test that caused it."""
    yield
    from threads.recency import throttle

    throttle.reset()


@pytest.fixture(autouse=True)
def backstage_for_tests(request, monkeypatch):
    """Director wakes run the real backstage only in tests marked ``backstage``.

    Elsewhere a wake is recorded and nothing runs, so a test of posting or reading sees
    exactly the entries it wrote. Live tests wait for the backstage to go idle before
    their database goes away.
    """
    from django.conf import settings

    from dispatch import backstage as module

    # The engine outlives each test: a timed sweep would act on whichever test runs then.
    settings.BACKSTAGE_SWEEP_S = 0
    if request.node.get_closest_marker("backstage") is None:
        woken: list[str] = []
        monkeypatch.setattr(module, "wake", woken.append)
        monkeypatch.setattr(module, "start_run", lambda claim: woken.append(claim.run_id))
        yield woken
        return
    yield None
    module.backstage().wait_idle(timeout=120)
    module.backstage().cool_down()  # no warm Pi outlives its test


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Drop the PostgreSQL test database even if worker threads still hold connections.

    The embedded streams server's wake listener and the in-process engine's lease tending
    and board subscribers are stopped first (they would otherwise query a database that is
    gone). Threads of
    ``sync_to_async``'s executors and of in-process engines keep their own Django
    connections, which PostgreSQL counts as users of the database it is asked to drop.
    They are idle by now; end them so the teardown can drop it.
    """
    yield
    from django.db import connection

    from dispatch import backstage as module
    from streams.server.wake import hub

    hub.stop_watching()
    module.backstage().stop_background()
    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
