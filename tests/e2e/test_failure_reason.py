"""After a failed reply the page says why nobody speaks, on a desktop and a phone, and the
house list says it too (issue 32)."""

import os
import threading
from pathlib import Path

from playwright.sync_api import expect

from dispatch.director import director_pass
from tests.e2e.live import WAIT, LiveThreadCase
from threads import entries as E
from threads.lifecycle import new_entry
from threads.recency import stream_writer

REASON = "The last attempt failed: HTTP 529: overloaded"
SHOTS = os.environ.get("ARBE_SHOTS_DIR", "")  # where to keep screenshots, if anywhere


class FailureReasonTests(LiveThreadCase):
    def fail_a_reply(self):
        """A mention, a reply that failed for good and the director's closing pass, written
        through the server's writer off Playwright's loop."""
        bot = self.bot.id

        def write():
            writer = stream_writer()
            asked = new_entry(
                E.Chat(text="@helper can you check the build?"), author=self.member.agent.id
            )
            writer.append(self.thread.stream_name, asked)
            for payload in (
                E.DirectorDecided(picked=[bot], upTo=asked.id, entryIds=[asked.id]),
                E.DispatchStarted(dispatchId="d1", agentId=bot, entryIds=[asked.id]),
                E.DispatchFailed(dispatchId="d1", stage="model", error="HTTP 529: overloaded"),
            ):
                writer.append(self.thread.stream_name, new_entry(payload))
            director_pass(self.thread.id)

        worker = threading.Thread(target=write)
        worker.start()
        worker.join()

    def shot(self, page, name):
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=f"{SHOTS}/{name}.png")

    def test_the_page_and_the_house_list_say_the_failure(self):
        self.fail_a_reply()
        page, _ = self.page_for(self.member)
        now = page.locator("#now")
        expect(now.locator(".why")).to_have_text(REASON, timeout=WAIT)
        expect(now.locator(".failed")).to_have_text("@helper couldn't reply")
        self.shot(page, "thread-failed")
        house, _ = self.page_for(self.member, "/houses/h/")
        expect(house.locator(f"#thread-{self.thread.id} .who-working")).to_have_text(REASON)
        self.shot(house, "house-failed")

    def test_a_phone_says_the_failure_in_the_now_bar(self):
        self.fail_a_reply()
        page, _ = self.page_for(self.member, viewport={"width": 390, "height": 844})
        page.locator("#now-line").click()
        expect(page.locator("#now .why")).to_have_text(REASON, timeout=WAIT)
        self.shot(page, "thread-failed-phone")
        house, _ = self.page_for(self.member, "/houses/h/", viewport={"width": 390, "height": 844})
        expect(house.locator(f"#thread-{self.thread.id} .who-working")).to_have_text(REASON)
        self.shot(house, "house-failed-phone")

    def test_a_mention_waiting_for_the_director_reads_working(self):
        """Written past the API (no wake), so the director hasn't passed over it."""

        def write():
            chat = E.Chat(text="@helper are you there?")
            stream_writer().append(
                self.thread.stream_name, new_entry(chat, author=self.member.agent.id)
            )

        worker = threading.Thread(target=write)
        worker.start()
        worker.join()
        deciding = "Deciding who answers 1 waiting message."
        page, _ = self.page_for(self.member)
        expect(page.locator("#now .badge")).to_have_text("working", timeout=WAIT)
        expect(page.locator("#now p.working")).to_have_text(deciding)
        expect(page.locator("#now")).not_to_contain_text("Nobody is working")
        self.shot(page, "thread-deciding")
        house, _ = self.page_for(self.member, "/houses/h/")
        expect(house.locator(f"#thread-{self.thread.id} .who-working")).to_have_text(deciding)
        self.shot(house, "house-deciding")
