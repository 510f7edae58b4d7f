"""One rule for times on every page: the viewer's zone and locale, relative while recent and
kept fresh, the exact time on hover; search's days are the viewer's (issue 23, item 6)."""

import datetime as dt
from zoneinfo import ZoneInfo

from playwright.sync_api import expect

from houses.invites import make_invite
from tests.e2e.console import watch_console
from tests.e2e.live import WAIT, LiveThreadCase

DAY = dt.timedelta(days=1)
ZONE = "Pacific/Kiritimati"  # UTC+14: a day that is not UTC's for most of the day
EXACT = (
    "(iso) => new Intl.DateTimeFormat(undefined, {dateStyle: 'full', timeStyle: 'short'})"
    ".format(new Date(iso))"
)


class TimesTests(LiveThreadCase):
    def setUp(self):
        super().setUp()
        self.errors: list[str] = []

    def tearDown(self):
        super().tearDown()
        assert self.errors == [], self.errors

    def open(self, user, path=None, **context):
        page, _ = self.page_for(user, path, timezone_id=ZONE, locale="en-GB", **context)
        watch_console(page, self.errors)
        return page

    def check(self, time, text):
        """``time`` reads ``text`` and has the exact moment in the viewer's zone on hover."""
        expect(time).to_have_text(text, timeout=WAIT)
        iso = time.get_attribute("datetime")
        assert time.get_attribute("title") == time.page.evaluate(EXACT, iso)
        assert "UTC" not in time.get_attribute("title")

    def test_every_page_says_times_the_same_way_and_they_stay_fresh(self):
        page = self.open(self.member)
        page.clock.install()
        page.reload()
        self.say(page, "standup at ten")
        self.check(page.locator("#entries .entry.chat time").last, "just now")
        assert page.evaluate("document.cookie").count(f"tz={ZONE}") == 1

        page.goto("/search/?q=standup+after:yesterday")
        self.check(page.locator(".results time").first, "just now")
        page.clock.fast_forward("03:10")
        self.check(page.locator(".results time").first, "3 min ago")

        page.goto("/houses/h/")
        self.check(page.locator(f"#thread-{self.thread.id} time"), "3 min ago")

        make_invite(self.house, by=self.owner, days=7)
        owner = self.open(self.owner, "/houses/h/members/")
        self.check(owner.locator(".invite-list time").first, "in 7 days")
        self.check(owner.locator(".invite-list time").nth(1), "just now")
        # The tokens page follows the same rule (tests/integration/web/test_times.py); its
        # revoke form's inline handler is another change's (issue 23, item 3).

    def test_search_days_are_the_viewers(self):
        page = self.open(self.member)
        self.say(page, "retro notes")
        local_day = dt.datetime.now(ZoneInfo(ZONE)).date()
        for q in ("retro after:yesterday", "after:yesterday", f"retro after:{local_day - DAY}"):
            page.goto(f"/search/?q={q}")
            expect(page.locator(".results .result")).to_have_count(1, timeout=WAIT)
        # Before the viewer's today: nothing, though UTC's today may not have begun there.
        page.goto(f"/search/?q=retro before:{local_day}")
        expect(page.locator("p.empty")).to_contain_text("No messages match")
        response = page.goto("/search/?q=retro&tz=Mars/Olympus")
        assert response.status == 400
        expect(page.locator(".search-problem")).to_contain_text("is not a time zone")
        self.errors.clear()  # the 400 itself is the console's only complaint
