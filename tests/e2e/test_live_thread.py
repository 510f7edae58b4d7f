"""Two people, one thread, a live Daphne: live chat, deletion, bot progress, resume, XSS."""

import os
import re
import shutil

import pytest
from channels.testing import ChannelsLiveServerTestCase
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

from tests.factories import make_bot, make_house, make_user
from tests.peers.fake_llm import MODEL, PROVIDER, fake_llm_server
from tests.peers.pi_home import write_pi_home
from threads.lifecycle import create_thread

WAIT = 15_000  # ms


class LiveThreadTests(ChannelsLiveServerTestCase):
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

    def page_for(self, user, path=None):
        client = Client()
        client.force_login(user)
        context = self.browser.new_context(base_url=self.live_server_url)
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
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        response = page.goto(path or f"/threads/{self.thread.id}/")
        if response.status == 200 and path is None:
            expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        return page, response

    def say(self, page, text):
        box = page.locator("#compose textarea")
        box.fill(text)
        box.press("Enter")
        expect(box).to_have_value("", timeout=WAIT)

    def chats(self, page):
        return page.locator("#entries .entry.chat")

    def test_two_members_see_each_other_live_and_the_owner_deletes(self):
        owner, _ = self.page_for(self.owner)
        member, _ = self.page_for(self.member)
        self.say(member, "hello from mia")
        expect(owner.locator("#entries")).to_contain_text("hello from mia", timeout=WAIT)
        self.say(owner, "hi mia\nsecond line")
        expect(member.locator("#entries .body").last).to_have_text(
            re.compile("hi mia\\s*second line"), timeout=WAIT
        )
        # The member sees Delete only on their own message; the owner on every message.
        mine = member.locator(".entry.chat", has_text="hello from mia")
        expect(mine.locator(".delete")).to_be_visible()
        expect(member.locator(".entry.chat", has_text="hi mia").locator(".delete")).to_be_hidden()
        theirs = owner.locator(".entry.chat", has_text="hello from mia")
        theirs.locator(".delete").click()
        for page in (owner, member):
            expect(page.locator("#entries")).not_to_contain_text("hello from mia", timeout=WAIT)
        expect(self.chats(member)).to_have_count(1)

    def test_a_bot_reply_shows_progress_then_the_answer(self):
        page, _ = self.page_for(self.member)
        gate = self.fake.hold()  # the model waits: the reply is visibly in progress
        self.say(page, "@helper USETOOL please")
        expect(page.locator("#now")).to_contain_text("@helper is", timeout=30_000)
        expect(page.locator("#now .badge")).to_have_text("working")
        gate.release()
        answer = page.locator(".entry.chat.from-bot")
        expect(answer).to_contain_text("Tool said: pi-tool-ok", timeout=60_000)
        expect(page.locator(".transcript .tool").first).to_contain_text("bash")
        expect(page.locator("#now")).to_contain_text("Nobody is working", timeout=WAIT)

    def test_going_offline_and_online_catches_up_exactly(self):
        watcher, _ = self.page_for(self.member)
        writer, _ = self.page_for(self.owner)
        self.say(writer, "before")
        expect(self.chats(watcher)).to_have_count(1, timeout=WAIT)
        doomed = writer.locator(".entry.chat", has_text="before")

        watcher.context.set_offline(True)
        watcher.evaluate("window.arbeSocket.close(4000)")
        expect(watcher.locator("#live[data-connected]")).to_have_count(0, timeout=WAIT)
        for text in ("while away 1", "while away 2"):
            self.say(writer, text)
        doomed.locator(".delete").click()
        expect(writer.locator("#entries")).not_to_contain_text("before", timeout=WAIT)
        watcher.wait_for_timeout(500)
        expect(self.chats(watcher)).to_have_count(1)  # nothing arrived while offline

        watcher.context.set_offline(False)
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
