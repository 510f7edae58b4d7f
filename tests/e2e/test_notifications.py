"""Notifications in the browser: the permission button (never asked on load), the thread
bell, and what lands while the tab is hidden (title count, a desktop notification)."""

from playwright.sync_api import expect

from tests.e2e.console import watch_console
from tests.e2e.live import HarbourCase, wait_in_page

WAIT = 15_000  # ms
INCOGNITO_PUSH = "Chrome currently does not support the Push API in incognito mode"

# Records each desktop notification the page makes, and lets the test hide the tab
# (headless Chromium keeps every tab visible).
RECORD = """
(() => {
  window.__notices = [];
  const Real = window.Notification;
  class Recording extends Real {
    constructor(title, options) {
      super(title, options);
      window.__notices.push({ title, body: (options || {}).body });
    }
  }
  window.Notification = Recording;
  let hidden = false;
  Object.defineProperty(Document.prototype, "hidden", { get: () => hidden, configurable: true });
  Object.defineProperty(Document.prototype, "visibilityState",
    { get: () => (hidden ? "hidden" : "visible"), configurable: true });
  window.__setHidden = (h) => {
    hidden = h;
    document.dispatchEvent(new Event("visibilitychange"));
  };
})();
"""


class NotificationTests(HarbourCase):
    def tearDown(self):
        super().tearDown()
        # Chromium's own line when a test profile (incognito-like) subscribes to push; the
        # page catches the refusal and says push is unavailable.
        errors = [e for e in self.errors if not e.startswith(INCOGNITO_PUSH)]
        assert errors == [], errors

    def context_for(self, user, *, granted: bool):
        context = self.signed_in(user)
        if granted:
            context.grant_permissions(["notifications"], origin=self.live_server_url)
        return context

    def open_thread(self, user, *, granted=True, record=False):
        context = self.context_for(user, granted=granted)
        page = context.new_page()
        if record:
            page.add_init_script(RECORD)
        watch_console(page, self.errors)
        page.goto(f"/threads/{self.thread.id}/")
        expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        return page

    def test_permission_is_asked_for_by_a_button_not_on_load(self):
        context = self.context_for(self.member, granted=False)
        page = context.new_page()
        watch_console(page, self.errors)
        page.goto("/account/notifications/")
        info = page.locator("#notify-browser")
        expect(info).to_have_attribute("data-state", "default")
        button = page.get_by_role("button", name="Turn on desktop notifications")
        expect(button).to_be_visible()
        expect(info.locator(".when-default")).to_be_visible()
        # The person clicks and allows (the context answers the prompt).
        context.grant_permissions(["notifications"], origin=self.live_server_url)
        button.click()
        expect(info).to_have_attribute("data-state", "granted")
        expect(button).to_be_hidden()
        expect(info.locator(".when-granted")).to_be_visible()
        # This test browser has no push service, and the page says so; the service worker
        # was registered for the whole site first (/sw.js, scope /).
        expect(info).to_have_attribute("data-pushing", "no")
        expect(info.locator(".when-nopush")).to_be_visible()
        scope = page.evaluate("navigator.serviceWorker.getRegistration().then((r) => r && r.scope)")
        assert scope == f"{self.live_server_url}/"
        # The top bar's bell opens the inbox on every page; the inbox links here.
        page.goto(f"/threads/{self.thread.id}/")
        page.get_by_role("link", name="Inbox, 0 unread").click()
        expect(page).to_have_url(f"{self.live_server_url}/inbox/")
        page.get_by_role("link", name="Notification settings").click()
        expect(page).to_have_url(f"{self.live_server_url}/account/notifications/")

    def test_a_hidden_tab_counts_in_its_title_and_shows_a_mention(self):
        olive = self.open_thread(self.owner)
        mia = self.open_thread(self.member, record=True)
        expect(mia).to_have_title("Plans · arbe")
        mia.evaluate("window.__setHidden(true)")
        self.post_chat(olive, "@mia can you check the dates?")
        expect(mia).to_have_title("(1) Plans · arbe", timeout=WAIT)
        self.post_chat(olive, "no mention in this one")
        expect(mia).to_have_title("(2) Plans · arbe", timeout=WAIT)
        notices = mia.evaluate("window.__notices")
        assert notices == [
            {"title": "olive mentioned you in “Plans”", "body": "@mia can you check the dates?"}
        ]
        mia.evaluate("window.__setHidden(false)")
        expect(mia).to_have_title("Plans · arbe")
        assert olive.evaluate("document.title") == "Plans · arbe"  # your own posts don't count

    def test_the_bell_follows_every_message_or_mutes_the_thread(self):
        olive = self.open_thread(self.owner)
        mia = self.open_thread(self.member, record=True)
        bell = mia.locator("#thread-notify")
        expect(bell.locator(".bell-state")).to_have_text("Mentions")
        bell.locator("summary").click()
        # By the radio itself: after the click the summary's label changes ("…: Muted"), and
        # a label match would then find two elements when check() looks again.
        bell.locator('input[name="mode"][value="all"]').check()
        expect(mia.locator("#thread-notify")).to_have_attribute("data-mode", "all")
        expect(mia.locator("#thread-notify .bell-state")).to_have_text("All messages")
        mia.evaluate("window.__setHidden(true)")
        self.post_chat(olive, "anyone around?")
        expect(mia).to_have_title("(1) Plans · arbe", timeout=WAIT)
        wait_in_page(mia, "window.__notices.length === 1")
        assert mia.evaluate("window.__notices[0].title") == "olive in “Plans”"
        mia.evaluate("window.__setHidden(false)")
        mia.locator("#thread-notify summary").click()
        mia.locator('#thread-notify input[name="mode"][value="mute"]').check()
        expect(mia.locator("#thread-notify")).to_have_attribute("data-mode", "mute")
        mia.evaluate("window.__setHidden(true)")
        self.post_chat(olive, "@mia even a mention stays quiet")
        expect(mia).to_have_title("(1) Plans · arbe", timeout=WAIT)
        assert mia.evaluate("window.__notices.length") == 1
