"""Browser tests: Playwright on Debian's Chromium against a live Daphne.

Run them in their own pytest process (``make test-e2e``): a pytest-asyncio test
earlier in the same process breaks the forked Daphne's WebSockets, and
Playwright's session-long loop breaks later async tests. Never ``playwright
install``: the system browser is used.
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


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": FLAGS}
