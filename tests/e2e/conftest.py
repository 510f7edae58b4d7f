"""Browser tests: Playwright on Debian's Chromium against a live Daphne.

Run them in their own pytest process (``make test-e2e``): a pytest-asyncio test
earlier in the same process breaks the forked Daphne's WebSockets, and
Playwright's session-long loop breaks later async tests. Never ``playwright
install``: the system browser is used.

One live-server class per process, too: the second class's Daphne is forked once
Playwright runs and never answers. ``make test-e2e`` runs each module on its own,
and a run that would start two servers stops before it begins.
"""

import os

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# between page actions are still plain sync calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def pytest_collection_modifyitems(config, items):
    from channels.testing import ChannelsLiveServerTestCase

    servers = {
        item.cls
        for item in items
        if item.cls is not None and issubclass(item.cls, ChannelsLiveServerTestCase)
    }
    if len(servers) > 1:
        names = ", ".join(sorted(c.__name__ for c in servers))
        raise pytest.UsageError(
            f"One live-server test class per pytest process ({names}): run one module "
            "at a time, as `make test-e2e` does."
        )


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": FLAGS}
