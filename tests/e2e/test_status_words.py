"""Status says what it means: a plain message never reads "working", a bot's answer reads
"replied", never "done"; names, never ids; real plurals (issue 23, item 5)."""

import re

from playwright.sync_api import expect

from tests.e2e.console import watch_console
from tests.e2e.live import WAIT, LiveThreadCase

# Every badge and status line the house page shows, as it changes (a flash counts too).
RECORD_BADGES = """() => {
  window.seen = [];
  const note = () => document.querySelectorAll("#threads .badge, #threads .who-working")
    .forEach((el) => window.seen.push(el.className + ": " + el.textContent));
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true});
}"""


class StatusWordsTests(LiveThreadCase):
    def setUp(self):
        super().setUp()
        self.errors: list[str] = []

    def tearDown(self):
        super().tearDown()
        assert self.errors == [], self.errors

    def open(self, user, path=None):
        page, response = self.page_for(user, path)
        watch_console(page, self.errors)
        if path and path.startswith("/houses/"):
            expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        return page

    def test_a_plain_message_never_reads_working_and_an_answer_reads_replied(self):
        house = self.open(self.owner, "/houses/h/")
        house.evaluate(RECORD_BADGES)
        thread = self.open(self.member)
        row = house.locator(f"#thread-{self.thread.id}")

        self.say(thread, "Plain words, no bot asked")
        expect(row.locator(".last-chat")).to_contain_text("Plain words", timeout=WAIT)
        # The director passes over it and picks nobody: still nothing but the message.
        expect(thread.locator("#now")).to_contain_text("Nobody is working", timeout=WAIT)
        before_the_mention = house.evaluate("window.seen.slice()")
        assert not [s for s in before_the_mention if "working" in s], before_the_mention

        self.say(thread, "@helper hello")
        expect(row.locator(".badge")).to_have_text("replied", timeout=60_000)
        expect(thread.locator("#now .badge").first).to_have_text("replied", timeout=WAIT)
        seen = " | ".join(house.evaluate("window.seen"))
        assert "Helper is" in seen or "owes a reply" in seen, seen  # it did work, by name
        assert self.bot.id not in seen and "(s)" not in seen and ">done<" not in seen
        assert not re.search(r"\bdone\b", row.inner_text())
