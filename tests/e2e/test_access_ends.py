"""The page says when the right to read ended, and stops: signed out in another tab, or
removed from the house by an owner (docs/security.md, "Live reads end …")."""

import httpx
from playwright.sync_api import expect

from houses.models import ApiToken
from tests.e2e.live import HarbourCase

WAIT = 15_000  # ms


class AccessEndsTests(HarbourCase):
    def live_page(self, context, path):
        page = context.new_page()
        assert page.goto(path).status == 200
        expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        return page

    def assert_ended(self, page, state, text):
        expect(page.locator(f"body[data-ended='{state}']")).to_have_count(1, timeout=WAIT)
        expect(page.locator("#ended")).to_contain_text(text)
        expect(page.locator("body[data-conn='stopped']")).to_have_count(1)
        # It stays stopped: no reconnect loop brings the socket back.
        page.wait_for_timeout(1500)
        expect(page.locator("#live[data-connected]")).to_have_count(0)

    def test_signing_out_in_another_tab_ends_the_thread_and_house_pages(self):
        context = self.signed_in(self.member)
        thread = self.live_page(context, f"/threads/{self.thread.id}/")
        house = self.live_page(context, "/houses/h/")
        expect(thread.locator("#ended")).to_be_hidden()

        other_tab = context.new_page()
        other_tab.goto("/houses/h/")
        other_tab.get_by_role("button", name="Sign out").click()
        other_tab.wait_for_url("**/login/**", timeout=WAIT)

        for page in (thread, house):
            self.assert_ended(page, "signed-out", "You were signed out")
            expect(page.locator("#ended")).to_be_visible()
            expect(page.locator(".conn-stopped")).to_be_hidden()

    def test_removal_by_an_owner_says_access_ended(self):
        page = self.live_page(self.signed_in(self.member), f"/threads/{self.thread.id}/")
        _, raw = ApiToken.issue(self.owner, "e2e")
        response = httpx.delete(
            f"{self.live_server_url}/api/houses/h/members/mia",
            headers={"Authorization": f"Bearer {raw}"},
            timeout=30,
        )
        assert response.status_code == 204, response.text
        self.assert_ended(page, "no-access", "You no longer have access to this house")
