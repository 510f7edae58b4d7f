"""No dead ends: a new thread opens, the T3 board link shows only where there is a board, a
missing page is the site's own 404 under DEBUG, links in messages open in a new tab, an
offline message says one thing, and Check shows the bot's whole answer."""

import re

from django.conf import settings
from playwright.sync_api import expect

from boards.models import T3Host
from tests.e2e.actions import StrictCase
from tests.e2e.live import WAIT


class DeadEndsTests(StrictCase):
    @classmethod
    def setUpClass(cls):
        # make run's configuration: the forked server keeps the DEBUG it starts with.
        cls._debug, settings.DEBUG = settings.DEBUG, True
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        settings.DEBUG = cls._debug

    def test_a_new_thread_from_the_house_page_opens_it(self):
        page, _ = self.open(self.member, "/houses/h/")
        page.get_by_placeholder("New thread title").fill("Launch checklist")
        page.get_by_role("button", name="Start thread").click()
        expect(page).to_have_url(re.compile(r"/threads/\w+/$"), timeout=WAIT)
        expect(page.locator("h1")).to_have_text("Launch checklist")
        expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)

    def test_the_board_link_shows_only_when_there_is_a_board(self):
        member, _ = self.open(self.member, "/houses/h/")
        expect(member.locator(".house-links")).not_to_contain_text("T3")
        owner, _ = self.open(self.owner, "/houses/h/")
        expect(owner.locator(".board-hint")).to_contain_text("a site admin adds T3 hosts")
        T3Host.objects.create(
            house=self.house, label="box", url="http://127.0.0.1:9", enabled=False
        )
        for page in (member, owner):
            page.reload()
            expect(page.get_by_role("link", name="T3 board")).to_be_visible()
        expect(owner.locator(".board-hint")).to_have_count(0)

    def test_a_missing_page_is_the_sites_own_404_under_debug(self):
        self.allowed_console = ("404",)  # the browser reports the page's own status
        page, response = self.open(self.member, "/no/such/page/")
        assert response.status == 404
        expect(page.locator("h1")).to_have_text("Nothing here")
        expect(page.get_by_role("link", name="Back to your houses")).to_be_visible()
        expect(page.locator("body")).not_to_contain_text("URLconf")

    def test_links_in_messages_open_in_a_new_tab(self):
        page, _ = self.open(self.member)
        target = f"{self.live_server_url}/houses/h/"
        self.say(page, f"the list is at {target}")
        link = page.locator(".entry.chat .body a", has_text="/houses/h/")
        expect(link).to_have_attribute("target", "_blank", timeout=WAIT)
        expect(link).to_have_attribute("rel", "noopener noreferrer")
        with page.context.expect_page() as opened:
            link.click()
        opened.value.wait_for_load_state()
        assert opened.value.url == target and page.url.endswith(f"/threads/{self.thread.id}/")

    def test_an_offline_message_says_it_will_send_as_the_banner_does(self):
        page, _ = self.open(self.member)
        self.allowed_console = ("ERR_INTERNET_DISCONNECTED", "WebSocket")
        page.context.set_offline(True)
        page.evaluate("window.arbeSocket.close(4000)")
        self.say(page, "written in the tunnel", stored=False)
        queued = page.locator(".entry.chat.failed", has_text="written in the tunnel")
        expect(queued.locator(".send-state")).to_have_text(
            re.compile(r"^Will send when you're back online\."), timeout=WAIT
        )
        expect(queued.get_by_role("button", name="Retry")).to_have_count(0)
        expect(queued.get_by_role("button", name="Discard")).to_be_visible()
        expect(page.locator("#conn .conn-offline")).to_be_visible(timeout=WAIT)
        expect(page.locator("#conn .conn-offline")).to_contain_text("will send when you're back")
        page.context.set_offline(False)
        expect(page.locator(".entry.chat.failed, .entry.chat.pending")).to_have_count(
            0, timeout=WAIT
        )
        expect(page.locator(".entry.chat", has_text="written in the tunnel")).to_have_count(1)

    def test_check_shows_the_bots_whole_answer(self):
        page, _ = self.open(self.owner, "/houses/h/members/")
        page.locator(".members li", has_text="@helper").get_by_role("button", name="Check").click()
        expect(page.locator(".flash")).to_contain_text(
            "@helper answered “Hello from fake LLM!”", timeout=60_000
        )
