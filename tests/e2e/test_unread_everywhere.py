"""Unread where people look for it: each house's total on /, live; the count in the tab
title; a "New messages" divider in the thread; a newcomer starts at the tail (item 7)."""

import re

from playwright.sync_api import expect

from houses.membership import join_house
from tests.e2e.console import watch_console
from tests.e2e.live import HarbourCase, wait_until
from tests.factories import make_user
from threads.models import ThreadRead

WAIT = 15_000  # ms


class UnreadEverywhereTests(HarbourCase):
    def tearDown(self):
        super().tearDown()
        assert self.errors == [], self.errors

    def open(self, user, path):
        page = self.signed_in(user).new_page()
        watch_console(page, self.errors)
        page.goto(path)
        expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        return page

    def test_houses_page_title_and_divider_follow_what_was_read(self):
        home = self.open(self.owner, "/")
        row = home.locator(f"#house-{self.house.pk}")
        expect(row.locator(".unread")).to_have_count(0)
        expect(home).to_have_title("Houses · arbe")
        house = self.open(self.owner, "/houses/h/")
        writer = self.open(self.member, "/houses/h/")

        self.post_chat(writer, "The first thing")
        self.post_chat(writer, "The second thing")
        expect(row.locator(".unread")).to_have_text(re.compile(r"^2\b"), timeout=WAIT)
        expect(row.locator(".unread")).to_have_attribute("title", "2 unread messages")
        expect(home).to_have_title("(2) Houses · arbe", timeout=WAIT)
        expect(house).to_have_title("(2) Harbour · arbe", timeout=WAIT)
        expect(writer).to_have_title("Harbour · arbe")  # the writer has read their own

        house.locator(f"#thread-{self.thread.id} a.title").click()
        divider = house.locator("#entries .unread-divider")
        expect(divider).to_have_text("New messages", timeout=WAIT)
        after = house.locator("#unread-divider + .entry.chat")
        expect(after).to_contain_text("The first thing")
        expect(row.locator(".unread")).to_have_count(0, timeout=WAIT)  # read, live on /
        expect(home).to_have_title("Houses · arbe", timeout=WAIT)

    def test_a_newcomer_starts_at_the_tail(self):
        writer = self.open(self.member, "/houses/h/")
        for n in range(3):
            self.post_chat(writer, f"history {n}")
        newcomer = make_user("nia")
        join_house(self.house, newcomer)
        home = self.open(newcomer, "/")
        expect(home.locator(f"#house-{self.house.pk} .unread")).to_have_count(0)
        expect(home).to_have_title("Houses · arbe")
        thread = self.open(newcomer, f"/threads/{self.thread.id}/")
        expect(thread.locator("#entries .entry.chat")).to_have_count(3)
        expect(thread.locator("#entries .unread-divider")).to_have_count(0)
        # A page still open when a message lands reads it: post once the server has counted
        # the page open and then closed, not merely once the browser closed it.
        watching = ThreadRead.objects.filter(user=newcomer, thread=self.thread, watchers__gt=0)
        wait_until(watching.exists, writer)
        thread.close()
        wait_until(lambda: not watching.exists(), writer)
        self.post_chat(writer, "news for everyone")  # from the join on, news counts
        expect(home.locator(f"#house-{self.house.pk} .unread")).to_have_text(
            re.compile(r"^1\b"), timeout=WAIT
        )
        expect(home).to_have_title("(1) Houses · arbe", timeout=WAIT)
