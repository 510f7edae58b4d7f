"""The thread page as people use it: scrolling, times, Markdown, mentions, sending, deleting."""

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from django.test import Client
from playwright.sync_api import expect

from tests.e2e.live import WAIT, LiveThreadCase

AT_BOTTOM = "(e => e.scrollHeight - e.scrollTop - e.clientHeight)"


class ThreadPageTests(LiveThreadCase):
    def post(self, user, text, n=1):
        """Post through the API, as another client would (no browser involved)."""
        client = Client()
        client.force_login(user)
        for i in range(n):
            body = {"text": text.format(i=i)}
            response = client.post(f"/api/threads/{self.thread.id}/entries", body)
            assert response.status_code == 201, response.content

    def gap_below(self, page) -> float:
        return page.locator("#entries").evaluate(AT_BOTTOM)

    def test_opens_at_the_newest_and_stays_pinned(self):
        self.post(self.owner, "backlog message {i}\n\nwith a second paragraph", n=30)
        page, _ = self.page_for(self.member, viewport={"width": 1280, "height": 800})
        assert self.gap_below(page) <= 2
        expect(self.chats(page).last).to_be_in_viewport()
        assert page.evaluate("window.scrollY") == 0  # the list scrolls, not the page
        self.post(self.owner, "a new one arrives")
        newest = self.chats(page).last
        expect(newest).to_contain_text("a new one arrives", timeout=WAIT)
        expect(newest).to_be_in_viewport()
        assert self.gap_below(page) <= 2
        expect(page.locator("#jump")).to_be_hidden()

    def test_scrolled_up_new_messages_wait_behind_a_pill(self):
        self.post(self.owner, "backlog message {i}\n\nwith a second paragraph", n=30)
        page, _ = self.page_for(self.member, viewport={"width": 1280, "height": 800})
        page.locator("#entries").evaluate("e => { e.scrollTop = 0; }")
        page.wait_for_timeout(100)
        self.post(self.owner, "fresh {i}", n=2)
        expect(self.chats(page).last).to_contain_text("fresh 1", timeout=WAIT)
        jump = page.locator("#jump")
        expect(jump).to_have_text(re.compile("2 new messages"))
        assert page.locator("#entries").evaluate("e => e.scrollTop") == 0  # nobody moved me
        jump.click()
        expect(self.chats(page).last).to_be_in_viewport()
        expect(jump).to_be_hidden()
        # Your own message always brings you down.
        page.locator("#entries").evaluate("e => { e.scrollTop = 0; }")
        self.say(page, "my own words")
        expect(self.chats(page).last).to_be_in_viewport(timeout=WAIT)

    def test_times_are_local_with_the_full_date_on_hover_and_messages_group(self):
        self.post(self.owner, "first")
        self.post(self.owner, "second, a moment later")
        self.post(self.member, "a reply")
        page, _ = self.page_for(self.member, timezone_id="Asia/Kolkata", locale="en-GB")
        times = page.locator("#entries .entry.chat time")
        expect(times).to_have_count(3)
        stamp = times.first.get_attribute("datetime")
        local = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(
            ZoneInfo("Asia/Kolkata")
        )
        # Relative for the first hour (when.js, the rule of every page); the clock in the
        # narrow gutter of a grouped message.
        expect(times.first).to_have_text("just now")
        second = datetime.fromisoformat(
            times.nth(1).get_attribute("datetime").replace("Z", "+00:00")
        ).astimezone(ZoneInfo("Asia/Kolkata"))
        expect(times.nth(1)).to_have_text(second.strftime("%H:%M"))
        assert str(local.year) in times.first.get_attribute("title")
        chats = self.chats(page)
        assert chats.evaluate_all("es => es.map(e => e.classList.contains('grouped'))") == [
            False,
            True,
            False,
        ]
        expect(chats.nth(1).locator(".avatar")).to_be_hidden()
        expect(chats.first.locator(".avatar")).to_have_text("O")
        # Live messages are localised and grouped too.
        self.post(self.member, "and another")
        expect(chats).to_have_count(4, timeout=WAIT)
        expect(chats.last).to_have_class(re.compile(r"\bgrouped\b"))
        expect(chats.last.locator("time")).not_to_contain_text("UTC")

    def test_peoples_messages_get_safe_markdown(self):
        page, _ = self.page_for(self.member)
        self.say(
            page,
            "**bold** and `code` at https://example.com/x\n- one\n- two\n"
            "<b>raw</b> ![pic](https://attacker.example/p.png?d=1) [bad](javascript:alert(1))",
        )
        body = self.chats(page).last.locator(".body")
        expect(body.locator("strong")).to_have_text("bold", timeout=WAIT)
        expect(body.locator("code")).to_have_text("code")
        expect(body.locator("li")).to_have_count(2)
        link = body.locator('a[href="https://example.com/x"]')
        expect(link).to_have_attribute("rel", "noopener noreferrer")
        expect(body).to_contain_text("<b>raw</b>")
        assert page.locator("#entries img").count() == 0
        expect(body.locator('a[href^="https://attacker.example/"]')).to_have_text("pic")
        expect(body.locator("a", has_text="bad")).not_to_have_attribute("href", re.compile("."))

    def test_mention_autocomplete(self):
        page, _ = self.page_for(self.owner)
        box = page.locator("#compose textarea")
        listbox = page.locator("#mention-list")
        box.press_sequentially("hello @he")
        expect(listbox).to_be_visible()
        expect(listbox.get_by_role("option").first).to_contain_text("@helper")
        expect(box).to_have_attribute("aria-activedescendant", "mention-option-0")
        box.press("Enter")  # completes, does not send
        expect(box).to_have_value("hello @helper ")
        expect(listbox).to_be_hidden()
        box.press_sequentially("and @m")
        expect(listbox.get_by_role("option")).to_have_count(1)
        box.press("Escape")
        expect(listbox).to_be_hidden()
        expect(box).to_have_value("hello @helper and @m")
        box.press_sequentially("i")
        expect(listbox).to_be_visible()
        box.press("Tab")
        expect(box).to_have_value("hello @helper and @mia ")
        box.press("Enter")  # no list open: Enter sends
        expect(box).to_have_value("")
        mentions = self.chats(page).last.locator(".mention")
        expect(mentions).to_have_count(2, timeout=WAIT)
        expect(mentions.first).to_have_attribute("data-agent", self.bot.id)
        # Mia sees her own mention highlighted.
        mia, _ = self.page_for(self.member)
        mine = mia.locator(f'.mention[data-agent="{self.member.agent.id}"]')
        color = mine.evaluate("e => getComputedStyle(e).backgroundColor")
        other = mia.locator(f'.mention[data-agent="{self.bot.id}"]')
        assert color != other.evaluate("e => getComputedStyle(e).backgroundColor")

    def test_offline_shows_the_state_and_an_unsent_message_retries_once(self):
        page, _ = self.page_for(self.member)
        watcher, _ = self.page_for(self.owner)
        conn = page.locator("#conn")
        expect(conn.locator(".conn-offline")).to_be_hidden()
        expect(conn.locator(".conn-reconnecting")).to_be_hidden()
        page.context.set_offline(True)
        page.evaluate("window.arbeSocket.close(4000)")
        self.say(page, "written on the train", stored=False)
        failed = page.locator(".entry.chat.failed", has_text="written on the train")
        expect(failed).to_be_visible(timeout=WAIT)
        # Queued, as the banner says: it goes by itself (no Retry while offline).
        expect(failed.locator(".send-state")).to_contain_text("Will send when you're back online")
        expect(conn.locator(".conn-offline")).to_be_visible(timeout=WAIT)
        page.context.set_offline(False)
        # Back online: the socket reconnects and the failed message goes by itself.
        expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        expect(conn.locator(".conn-offline")).to_be_hidden()
        expect(page.locator(".entry.chat.failed, .entry.chat.pending")).to_have_count(
            0, timeout=WAIT
        )
        for p in (page, watcher):
            expect(p.locator(".entry.chat", has_text="written on the train")).to_have_count(
                1, timeout=WAIT
            )

    def test_a_failed_send_retries_and_a_lost_answer_posts_once(self):
        page, _ = self.page_for(self.member)
        calls = []

        def flaky(route):
            calls.append(route.request.post_data)
            if len(calls) == 1:
                route.abort()  # never reached the server
            elif len(calls) == 3:
                route.fetch()  # stored, but the answer is lost on the way back
                route.abort()
            else:
                route.continue_()

        page.route(re.compile(r"/api/threads/.*/entries$"), flaky)
        self.say(page, "first try fails", stored=False)
        failed = page.locator(".entry.chat.failed")
        expect(failed).to_be_visible(timeout=WAIT)
        failed.get_by_role("button", name="Retry").click()
        expect(page.locator(".entry.chat.failed, .entry.chat.pending")).to_have_count(
            0, timeout=WAIT
        )
        assert calls[0] == calls[1]  # the retry sends the same text and the same id
        # The server stored the next one although its answer was lost: the socket brings it,
        # and the page shows it once.
        self.say(page, "answer lost", stored=False)
        expect(page.locator(".entry.chat:not(.pending)", has_text="answer lost")).to_have_count(
            1, timeout=WAIT
        )
        page.reload()
        for text in ("first try fails", "answer lost"):
            expect(self.chats(page).filter(has_text=text)).to_have_count(1)

    def test_delete_asks_first(self):
        self.post(self.member, "a message to keep")
        self.post(self.member, "a message to delete")
        owner, _ = self.page_for(self.owner)
        member, _ = self.page_for(self.member)
        doomed = owner.locator(".entry.chat", has_text="a message to delete")
        doomed.hover()
        doomed.locator(".actions summary").click()
        doomed.locator(".actions .delete").click()
        dialog = owner.locator("#confirm-delete")
        expect(dialog).to_be_visible()
        expect(dialog.locator(".quote")).to_have_text("a message to delete")
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_be_hidden()
        owner.wait_for_timeout(300)
        expect(doomed).to_be_visible()
        self.delete(owner, doomed)
        for page in (owner, member):
            expect(page.locator("#entries")).not_to_contain_text("to delete", timeout=WAIT)
            expect(self.chats(page)).to_have_count(1)

    def test_on_a_phone_the_newest_message_and_the_compose_box_are_in_view(self):
        self.post(self.owner, "backlog message {i}", n=25)
        page, _ = self.page_for(
            self.member,
            viewport={"width": 390, "height": 844},
            is_mobile=True,
            has_touch=True,
        )
        expect(self.chats(page).last).to_be_in_viewport()
        expect(page.locator("#compose textarea")).to_be_in_viewport()
        assert page.evaluate("document.scrollingElement.scrollHeight <= window.innerHeight")
        bar = page.locator("#side > summary")
        expect(bar).to_be_visible()
        expect(bar).to_contain_text("Nobody is working")
        assert bar.bounding_box()["height"] < 48  # one line
        expect(page.locator("#now")).to_be_hidden()
        box = page.locator("#compose textarea").bounding_box()
        assert bar.bounding_box()["y"] < box["y"]  # just above the compose box
        bar.click()
        expect(page.locator("#now")).to_be_visible()

    def test_no_page_breaks_the_content_security_policy(self):
        from django.contrib.auth import get_user_model

        violations = []
        admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
        page, _ = self.page_for(self.member)
        page.on(
            "console", lambda m: violations.append(m.text) if "Content Security" in m.text else 0
        )
        page.reload()
        expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        self.say(page, "**checking** the policy")
        # The body's bold, not the author's name (shown when the message starts a group).
        rendered = self.chats(page).last.locator(".body strong")
        expect(rendered).to_have_text("checking", timeout=WAIT)
        admin_page, _ = self.page_for(admin, "/admin/")
        admin_page.on(
            "console", lambda m: violations.append(m.text) if "Content Security" in m.text else 0
        )
        for path in (
            "/admin/",
            "/admin/threads/thread/",
            f"/admin/threads/thread/{self.thread.id}/change/",
        ):
            response = admin_page.goto(path)
            assert response.status == 200
            assert "script-src 'self'" in response.headers["content-security-policy"]
        admin_page.goto("/admin/threads/thread/")
        expect(admin_page.locator("#result_list")).to_contain_text("Plans")
        assert violations == []
