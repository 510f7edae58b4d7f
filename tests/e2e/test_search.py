"""Search in the browser: the top bar's box, results, opening one in its thread."""

import os
import re
from pathlib import Path

import pytest
from channels.testing import ChannelsLiveServerTestCase
from django.test import Client
from playwright.sync_api import expect

from tests.e2e.live import DaphneOnUvloop
from tests.factories import make_house, make_user
from threads.entries import Chat
from threads.lifecycle import create_thread, new_entry
from threads.recency import stream_writer

WAIT = 15_000  # ms
SHOTS = os.environ.get("ARBE_SHOTS")  # a directory: save screenshots of the search page there


class SearchTests(ChannelsLiveServerTestCase):
    ProtocolServerProcess = DaphneOnUvloop
    serve_static = False  # the app serves its own static files

    @pytest.fixture(autouse=True)
    def _browser(self, browser):
        self.browser = browser

    def setUp(self):
        self.owner, self.member, self.ari = make_user("olive"), make_user("mia"), make_user("ari")
        members = [self.member, self.ari]
        self.house = make_house("h", owner=self.owner, members=members, name="Platform")
        make_house("elsewhere", owner=make_user("eve"))
        # No bot: a house without one has no director work for the live server to start
        # (browser tests before these may leave Pi settings pointing at a removed home).
        self.thread = create_thread(house=self.house, title="Database upgrade", by=self.owner.agent)
        self.other = create_thread(house=self.house, title="Release train", by=self.owner.agent)
        self.say(self.thread, self.owner, "Can we move the upgrade to the weekend window?")
        self.target = self.say(
            self.thread, self.member, "The postgres upgrade needs a fresh backup before we start"
        )
        # Enough later chat that the target is off screen when the thread opens.
        for n in range(40):
            self.say(self.thread, self.ari if n % 3 else self.owner, f"Status line {n} of the run")
        self.say(self.other, self.ari, "Release notes mention the postgres upgrade <b>too</b>")
        self.contexts = []

    def tearDown(self):
        for context in self.contexts:
            context.close()

    def say(self, thread, user_or_agent, text) -> str:
        agent = getattr(user_or_agent, "agent", user_or_agent)
        entry = new_entry(Chat(text=text), author=agent.id)
        stream_writer().append(thread.stream_name, entry)
        return entry.id

    def page_for(self, user, width=1280, height=800):
        client = Client()
        client.force_login(user)
        context = self.browser.new_context(
            base_url=self.live_server_url, viewport={"width": width, "height": height}
        )
        self.contexts.append(context)
        context.add_cookies(
            [
                {
                    "name": "sessionid",
                    "value": client.cookies["sessionid"].value,
                    "url": self.live_server_url,
                }
            ]
        )
        return context.new_page()

    def test_search_open_a_result_and_the_message_is_in_view_and_highlighted(self):
        page = self.page_for(self.member)
        page.goto(f"/houses/{self.house.slug}/")
        box = page.locator(".topbar .search input[name=q]")
        box.fill("postgres upgrade")
        box.press("Enter")
        expect(page).to_have_url(re.compile(r"/search/\?q=postgres\+upgrade&house=h"))
        results = page.locator(".result")
        expect(results).to_have_count(2)
        expect(results.first.locator("mark").first).to_have_text(re.compile("postgres", re.I))
        # The bold tag in the newer message is text, not markup.
        expect(results.first).to_contain_text("<b>too</b>")
        hit = page.locator(".result", has_text="fresh backup")
        expect(hit).to_contain_text("Database upgrade")
        expect(hit).to_contain_text("Platform")
        hit.locator("a").click()
        expect(page).to_have_url(re.compile(f"/threads/{self.thread.id}/#entry-{self.target}$"))
        entry = page.locator(f"#entry-{self.target}")
        expect(entry).to_have_class(re.compile(r"\bhit\b"), timeout=WAIT)
        expect(entry).to_be_in_viewport()
        expect(page.locator(".hit")).to_have_count(1)

    def test_a_message_not_on_the_page_says_so(self):
        page = self.page_for(self.member)
        page.goto(f"/threads/{self.thread.id}/#entry-not-here")
        expect(page.locator("#hit-missing")).to_contain_text("isn't on this page", timeout=WAIT)

    def test_the_search_page_at_desktop_and_phone_sizes(self):
        for width, height in ((1280, 800), (390, 844)):
            page = self.page_for(self.member, width, height)
            page.goto("/search/?q=upgrade")
            expect(page.locator(".result")).to_have_count(3)
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            assert scroll_width <= width, f"the page scrolls sideways at {width}px"
            if SHOTS:
                Path(SHOTS).mkdir(parents=True, exist_ok=True)
                page.screenshot(path=f"{SHOTS}/search-{width}x{height}.png", full_page=True)
                page.goto("/search/")
                page.screenshot(path=f"{SHOTS}/search-empty-{width}x{height}.png")
                page.goto(f"/threads/{self.thread.id}/#entry-{self.target}")
                expect(page.locator(".entry.hit")).to_have_count(1, timeout=WAIT)
                page.screenshot(path=f"{SHOTS}/thread-hit-{width}x{height}.png")
                page.goto(f"/houses/{self.house.slug}/")
                page.screenshot(path=f"{SHOTS}/house-topbar-{width}x{height}.png")
