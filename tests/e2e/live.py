"""A live Daphne with a house, two people, a bot on the fake model, and browser helpers."""

import os
import shutil

import pytest
from channels.testing import ChannelsLiveServerTestCase
from daphne.testing import DaphneProcess
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

from arbe_lib.runtime import use_uvloop
from tests.factories import make_bot, make_house, make_user
from tests.peers.fake_llm import MODEL, PROVIDER, fake_llm_server
from tests.peers.pi_home import write_pi_home
from threads.lifecycle import create_thread

WAIT = 15_000  # ms


class DaphneOnUvloop(DaphneProcess):
    """The live server on uvloop, as ``arbe_site.web`` runs Daphne. Set in the forked child,
    before Daphne makes its loop there; Playwright's loop in this process stays asyncio's."""

    def run(self):
        use_uvloop()
        super().run()


def signed_in_context(browser, base_url: str, user=None, **context_args):
    """A browser context on ``base_url``, signed in as ``user`` (none: a visitor)."""
    context = browser.new_context(base_url=base_url, **context_args)
    if user is not None:
        client = Client()
        client.force_login(user)
        session = client.cookies["sessionid"].value
        context.add_cookies([{"name": "sessionid", "value": session, "url": base_url}])
    return context


def wait_until(predicate, page, timeout_ms: int = WAIT) -> None:
    """Poll ``predicate`` (say, a database read) until true; ``page`` keeps Playwright's
    events flowing while it waits."""
    for _ in range(timeout_ms // 100):
        if predicate():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"still not true after {timeout_ms} ms: {predicate}")


def wait_in_page(page, expression: str, arg=None, timeout_ms: int = WAIT) -> None:
    """Poll a JS ``expression`` (a function when ``arg`` is given) until truthy. Not
    ``page.wait_for_function``: its polling runs the text through ``eval`` in the page, which
    the pages' CSP refuses, so it passes only when the first check is already true;
    ``page.evaluate`` goes through the DevTools protocol, which the CSP doesn't govern."""
    wait_until(lambda: page.evaluate(expression, arg), page, timeout_ms)


class HarbourCase(ChannelsLiveServerTestCase):
    """A live server (uvloop, as deployed) with the house "Harbour": olive owns it, mia is a
    member, a thread "Plans"; browser contexts signed in as either, closed after each test.
    ``errors`` collects console errors for the modules that watch them."""

    ProtocolServerProcess = DaphneOnUvloop
    serve_static = False  # the app serves its own static files

    @pytest.fixture(autouse=True)
    def _browser(self, browser):
        self.browser = browser

    def setUp(self):
        self.owner, self.member = make_user("olive"), make_user("mia")
        self.house = make_house("h", owner=self.owner, members=[self.member], name="Harbour")
        self.thread = create_thread(house=self.house, title="Plans", by=self.owner.agent)
        self.contexts, self.errors = [], []

    def tearDown(self):
        for context in self.contexts:
            context.close()

    def signed_in(self, user=None, **context_args):
        """A browser context, signed in as ``user`` (none: a visitor)."""
        context = signed_in_context(self.browser, self.live_server_url, user, **context_args)
        self.contexts.append(context)
        return context

    def post_chat(self, page, text):
        """Post as the page's person, through the API the compose box uses."""
        token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
        response = page.request.post(
            f"/api/threads/{self.thread.id}/entries",
            form={"text": text},
            headers={"X-CSRFToken": token},
        )
        assert response.status == 201, response.text()


class LiveThreadCase(ChannelsLiveServerTestCase):
    ProtocolServerProcess = DaphneOnUvloop
    serve_static = False  # the app serves its own static files
    fake = None

    @classmethod
    def setUpClass(cls):
        # The server is a child process: it must see the fake model before it starts.
        cls._fake_cm = fake_llm_server()
        cls.fake = cls._fake_cm.__enter__()
        home = cls._pi_dir = settings.VAR_DIR / f"e2e-pi-{os.getpid()}"
        agent_dir = str(write_pi_home(home / "agent", cls.fake.base_url))
        for name, value in {
            "PI_HOME": str(home / "pi"),
            "PI_AGENT_DIR": agent_dir,
            "DISPATCH_EVENT_IDLE_S": "20",
            "BACKSTAGE_SWEEP_S": "0",
        }.items():
            os.environ[name] = value
            setattr(settings, name, home / "pi" if name == "PI_HOME" else value)
        settings.DISPATCH_EVENT_IDLE_S, settings.BACKSTAGE_SWEEP_S = 20, 0
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls._fake_cm.__exit__(None, None, None)
        shutil.rmtree(cls._pi_dir, ignore_errors=True)

    @pytest.fixture(autouse=True)
    def _browser(self, browser):
        self.browser = browser

    def setUp(self):
        self.owner, self.member, self.stranger = (make_user(n) for n in ("olive", "mia", "eve"))
        self.house = make_house("h", owner=self.owner, members=[self.member])
        make_house("elsewhere", owner=self.stranger)
        self.bot = make_bot(self.house, "helper", provider=PROVIDER, model=MODEL)
        self.thread = create_thread(house=self.house, title="Plans", by=self.owner.agent)
        self.contexts = []

    def tearDown(self):
        for context in self.contexts:
            context.close()

    def page_for(self, user, path=None, **context_args):
        context = signed_in_context(self.browser, self.live_server_url, user, **context_args)
        self.contexts.append(context)
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        response = page.goto(path or f"/threads/{self.thread.id}/")
        if response.status == 200 and path is None:
            expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        return page, response

    def say(self, page, text, stored=True):
        """Send from the compose box; by default return once the server has answered the POST,
        so a navigation that follows can't abort the send (the box clears before it lands)."""
        box = page.locator("#compose textarea")
        box.fill(text)
        if not stored:
            box.press("Enter")
        else:
            action = page.locator("#compose").get_attribute("action")
            with page.expect_response(
                lambda r: r.request.method == "POST" and r.url.endswith(action), timeout=WAIT
            ) as answer:
                box.press("Enter")
            assert answer.value.ok, answer.value.status
        expect(box).to_have_value("", timeout=WAIT)

    def chats(self, page):
        return page.locator("#entries .entry.chat")

    def delete(self, page, entry):
        """Delete from the message's menu and confirm in the dialog."""
        entry.hover()
        entry.locator(".actions summary").click()
        entry.locator(".actions .delete").click()
        dialog = page.locator("#confirm-delete")
        expect(dialog).to_be_visible()
        # Answered once the tombstone is in the log and the message's files are gone; other
        # pages may drop the message (live, from the log) a moment before the files go.
        with page.expect_response(lambda r: r.request.method == "DELETE", timeout=WAIT):
            dialog.get_by_role("button", name="Delete").click()
