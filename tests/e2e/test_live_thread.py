"""Two people, one thread, a live Daphne: live chat, deletion, bot progress, resume, XSS."""

import re

from playwright.sync_api import expect

from tests.e2e.live import WAIT, LiveThreadCase

OFFLINE_AS_THE_PAGE_SEES_IT = (
    "Object.defineProperty(navigator, 'onLine', {get: () => false, configurable: true})"
)


class LiveThreadTests(LiveThreadCase):
    def test_two_members_see_each_other_live_and_the_owner_deletes(self):
        owner, _ = self.page_for(self.owner)
        member, _ = self.page_for(self.member)
        self.say(member, "hello from mia")
        expect(owner.locator("#entries")).to_contain_text("hello from mia", timeout=WAIT)
        self.say(owner, "hi mia\nsecond line")
        expect(member.locator("#entries .body").last).to_have_text(
            re.compile("hi mia\\s*second line"), timeout=WAIT
        )
        # The member has a message menu only on their own message; the owner on every message.
        mine = member.locator(".entry.chat", has_text="hello from mia")
        mine.hover()
        expect(mine.locator(".actions summary")).to_be_visible()
        other = member.locator(".entry.chat", has_text="hi mia")
        other.hover()
        expect(other.locator(".actions")).to_be_hidden()
        self.delete(owner, owner.locator(".entry.chat", has_text="hello from mia"))
        for page in (owner, member):
            expect(page.locator("#entries")).not_to_contain_text("hello from mia", timeout=WAIT)
        expect(self.chats(member)).to_have_count(1)

    def test_a_bot_reply_shows_progress_then_the_answer(self):
        page, _ = self.page_for(self.member)
        gate = self.fake.hold()  # the model waits: the reply is visibly in progress
        self.say(page, "@helper USETOOL please")
        expect(page.locator("#now")).to_contain_text("@helper is", timeout=30_000)
        expect(page.locator("#now .badge")).to_have_text("working")
        expect(page.locator("#entries .reply-line")).to_have_count(1)  # one line, in place
        expect(page.locator("#entries .reply-line")).to_contain_text("@helper is")
        gate.release()
        answer = page.locator(".entry.chat.from-bot")
        expect(answer).to_contain_text("Tool said: pi-tool-ok", timeout=60_000)
        expect(page.locator(".transcript .tool").first).to_contain_text("bash")
        # The reply's line folded into the answer: its footer has the spend and the transcript.
        expect(page.locator("#entries .entry.reply")).to_have_count(0)
        expect(answer.locator(".reply-foot .transcript")).to_have_count(1)
        expect(answer.locator(".reply-foot .spend")).to_contain_text("tokens", timeout=WAIT)
        expect(page.locator("#now")).to_contain_text("Nobody is working", timeout=WAIT)

    def test_going_offline_and_online_catches_up_exactly(self):
        watcher, _ = self.page_for(self.member)
        writer, _ = self.page_for(self.owner)
        self.say(writer, "before")
        expect(self.chats(watcher)).to_have_count(1, timeout=WAIT)
        doomed = writer.locator(".entry.chat", has_text="before")

        # The page believes it is offline (so it waits for "online" instead of retrying) while
        # the network still carries the close: under emulated offline the browser may never
        # see the server's close frame, and the socket would hang in CLOSING.
        watcher.evaluate(OFFLINE_AS_THE_PAGE_SEES_IT)
        watcher.evaluate("window.arbeSocket.close(4000)")
        expect(watcher.locator("#live[data-connected]")).to_have_count(0, timeout=WAIT)
        watcher.context.set_offline(True)
        for text in ("while away 1", "while away 2"):
            self.say(writer, text)
        self.delete(writer, doomed)
        expect(writer.locator("#entries")).not_to_contain_text("before", timeout=WAIT)
        watcher.wait_for_timeout(500)
        expect(self.chats(watcher)).to_have_count(1)  # nothing arrived while offline

        watcher.context.set_offline(False)
        watcher.evaluate("delete navigator.onLine")
        expect(watcher.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        expect(self.chats(watcher)).to_have_count(2, timeout=WAIT)
        expect(watcher.locator("#entries")).not_to_contain_text("before")
        texts = self.chats(watcher).locator(".body").all_inner_texts()
        assert texts == ["while away 1", "while away 2"]
        # Another drop with nothing new: still no duplicates.
        watcher.evaluate("window.arbeSocket.close(4000)")
        watcher.wait_for_timeout(1000)
        expect(watcher.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        self.say(writer, "after")
        expect(self.chats(watcher)).to_have_count(3, timeout=WAIT)
        ids = self.chats(watcher).evaluate_all("els => els.map(e => e.id)")
        assert len(set(ids)) == 3

    def test_a_non_member_gets_404(self):
        _, response = self.page_for(self.stranger, f"/threads/{self.thread.id}/")
        assert response.status == 404

    def test_script_and_onerror_payloads_render_as_text(self):
        viewer, _ = self.page_for(self.member)
        writer, _ = self.page_for(self.owner)
        payloads = [
            "<script>window.pwned = 1</script>",
            '<img src=x onerror="window.pwned = 2">',
        ]
        for text in payloads:
            self.say(writer, text)
        for page in (viewer, writer):
            expect(self.chats(page)).to_have_count(2, timeout=WAIT)
            assert self.chats(page).locator(".body").all_inner_texts() == payloads
            assert page.locator("#entries img, #entries script").count() == 0
        viewer.reload()
        expect(self.chats(viewer)).to_have_count(2)
        for page in (viewer, writer):
            assert page.evaluate("window.pwned") is None
