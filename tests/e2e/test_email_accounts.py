"""Email you can turn on yourself, in Chromium: a member adds an address on /account/ (or a
newcomer at sign-up), reads the confirmation mail from Django's file backend, follows the
link and confirms; a visitor who forgot their password asks for a link, follows it, sets a
new one and signs in.

With ``ARBE_SHOTS_DIR`` set, the pages are also saved there at 1280×800 and 390×844.
"""

import email
import os
import re
import shutil
import tempfile
from email import policy
from pathlib import Path

from django.conf import settings
from playwright.sync_api import expect

from tests.e2e.live import HarbourCase

WAIT = 15_000  # ms
VIEWPORTS = {"desktop": (1280, 800), "phone": (390, 844)}


class EmailAccountTests(HarbourCase):
    @classmethod
    def setUpClass(cls):
        # The server is forked from this process: it takes these settings with it.
        cls._mail_dir = Path(tempfile.mkdtemp(prefix="arbe-e2e-mail-"))
        cls._saved = settings.EMAIL_BACKEND, settings.EMAIL_FILE_PATH
        settings.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
        settings.EMAIL_FILE_PATH = str(cls._mail_dir)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        settings.EMAIL_BACKEND, settings.EMAIL_FILE_PATH = cls._saved
        shutil.rmtree(cls._mail_dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        for old in self._mail_dir.iterdir():
            old.unlink()

    def mails(self) -> list[email.message.EmailMessage]:
        """Every message the server wrote, oldest first (one file per connection)."""
        found = []
        for path in sorted(self._mail_dir.iterdir()):
            for raw in path.read_bytes().split(b"\n" + b"-" * 79 + b"\n"):
                if raw.strip():
                    found.append(email.message_from_bytes(raw.strip(), policy=policy.default))
        return found

    def mail_to(self, page, address: str, count: int = 1) -> email.message.EmailMessage:
        def arrived():
            return len([m for m in self.mails() if m["To"] == address]) >= count

        for _ in range(WAIT // 100):
            if arrived():
                break
            page.wait_for_timeout(100)
        return [m for m in self.mails() if m["To"] == address][count - 1]

    def link_in(self, message, path: str) -> str:
        body = message.get_body(("plain",)).get_content()
        [link] = re.findall(rf"{re.escape(self.live_server_url)}{path}\S+", body)
        return link

    def shot(self, page, name: str) -> None:
        out = os.environ.get("ARBE_SHOTS_DIR")
        if not out:
            return
        Path(out).mkdir(parents=True, exist_ok=True)
        size = page.viewport_size
        for label, (width, height) in VIEWPORTS.items():
            page.set_viewport_size({"width": width, "height": height})
            page.screenshot(path=f"{out}/{name}-{label}.png", full_page=True)
        page.set_viewport_size(size)

    def test_an_address_is_confirmed_by_following_the_mailed_link(self):
        page = self.signed_in(self.member).new_page()
        page.goto("/account/")
        section = page.locator("#email")
        expect(section).to_contain_text("No address yet")
        section.get_by_label("Email address").fill("mia@example.test")
        section.get_by_role("button", name="Send confirmation link").click()
        expect(page.locator(".flash")).to_have_text("Link sent to mia@example.test.")
        expect(section.locator(".email-pending")).to_contain_text(
            "We sent a link to mia@example.test. Open it within 24 hours"
        )
        self.member.refresh_from_db()
        assert self.member.email == ""
        self.shot(page, "account-pending")
        page.goto("/account/notifications/")
        expect(page.locator("main")).to_contain_text(
            "Nothing is sent until you confirm mia@example.test"
        )
        self.shot(page, "notifications-pending")

        message = self.mail_to(page, "mia@example.test")
        assert message["Subject"] == "Confirm your email address for arbe"
        page.goto(self.link_in(message, "/email/confirm/"))
        expect(page.locator("h1")).to_have_text("Confirm your email")
        self.shot(page, "email-confirm")
        page.get_by_role("button", name="Confirm address").click()
        expect(page).to_have_url(f"{self.live_server_url}/account/#email")
        expect(page.locator(".flash")).to_contain_text("mia@example.test is confirmed")
        expect(section.locator(".email-now")).to_contain_text("mia@example.test Confirmed")
        expect(section.locator(".email-pending")).to_have_count(0)
        self.member.refresh_from_db()
        assert self.member.email == "mia@example.test"
        self.shot(page, "account-confirmed")

        # The same link again: used.
        page.goto(self.link_in(message, "/email/confirm/"))
        expect(page.locator(".error")).to_contain_text("already used")

    def test_an_address_given_at_sign_up_is_confirmed_from_the_mailed_link(self):
        from houses.invites import make_invite

        _, raw = make_invite(self.house, self.owner, 7)
        page = self.signed_in().new_page()
        page.goto(f"/join/{raw}")
        page.get_by_label("Username").fill("newcomer")
        page.get_by_label("Email (optional)").fill("new@example.test")
        self.shot(page, "join")
        page.get_by_label("Password", exact=True).fill("tangerine-Orbit-42")
        page.get_by_label("Password confirmation").fill("tangerine-Orbit-42")
        page.get_by_role("button", name="Create account and join").click()
        expect(page).to_have_url(f"{self.live_server_url}/houses/h/")
        expect(page.locator(".flash")).to_contain_text("We sent a link to new@example.test")

        page.goto(self.link_in(self.mail_to(page, "new@example.test"), "/email/confirm/"))
        page.get_by_role("button", name="Confirm address").click()
        expect(page.locator("#email .email-now")).to_contain_text("new@example.test Confirmed")

    def test_a_forgotten_password_is_reset_from_the_mailed_link(self):
        self.member.email = "mia@example.test"
        self.member.save()
        elsewhere = self.signed_in(self.member).new_page()
        elsewhere.goto("/account/")
        page = self.signed_in().new_page()
        page.goto("/login/")
        self.shot(page, "sign-in")
        page.get_by_role("link", name="Forgot password?").click()
        expect(page.locator("h1")).to_have_text("Reset your password")
        self.shot(page, "reset-ask")
        page.get_by_label("Email address").fill("mia@example.test")
        page.get_by_role("button", name="Send reset link").click()
        expect(page.locator("h1")).to_have_text("Check your email")
        self.shot(page, "reset-sent")

        message = self.mail_to(page, "mia@example.test")
        assert message["Subject"] == "Reset your arbe password"
        link = self.link_in(message, "/login/reset/")
        page.goto(link)
        expect(page.locator("h1")).to_have_text("Choose a new password")
        self.shot(page, "reset-choose")
        page.get_by_label("New password", exact=True).fill("a-Fresh-passphrase-77")
        page.get_by_label("New password again").fill("a-Fresh-passphrase-77")
        page.get_by_role("button", name="Set password").click()
        expect(page).to_have_url(f"{self.live_server_url}/login/")
        expect(page.locator(".flash")).to_contain_text("Your password was reset")
        self.shot(page, "reset-done")
        page.get_by_label("Username").fill("mia")
        page.get_by_label("Password").fill("a-Fresh-passphrase-77")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{self.live_server_url}/")

        # The other browser was signed out; the link works once.
        elsewhere.goto("/account/")
        expect(elsewhere).to_have_url(re.compile(r"/login/\?next=/account/$"))
        page.goto(link)
        expect(page.locator("h1")).to_have_text("This link doesn't work any more")
        self.shot(page, "reset-used")
