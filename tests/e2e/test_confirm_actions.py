"""Actions that can't be undone ask first, in the app's own dialog (never ``confirm()``, which
the CSP blocks in an inline handler): removing a person or a bot, revoking a token. A removed
person's messages keep their name and avatar."""

from playwright.sync_api import expect

from houses.models import ApiToken, Membership
from tests.e2e.actions import StrictCase
from tests.e2e.live import WAIT


class ConfirmActionsTests(StrictCase):
    def confirm(self, page, button_name):
        dialog = page.locator("#confirm-action")
        expect(dialog).to_be_visible()
        dialog.get_by_role("button", name=button_name).click()
        expect(dialog).to_be_hidden()

    def test_removing_a_person_asks_then_their_messages_keep_their_name(self):
        member, _ = self.open(self.member)
        self.say(member, "my last words here")
        expect(self.chats(member)).to_have_count(1, timeout=WAIT)
        page, _ = self.open(self.owner, "/houses/h/members/")
        row = page.locator(".members li", has_text="mia")
        row.get_by_role("button", name="Remove").click()
        dialog = page.locator("#confirm-action")
        expect(dialog).to_contain_text("Remove mia from")
        expect(dialog).to_contain_text("Their messages stay, under their name")
        self.confirm(page, "Cancel")
        assert Membership.objects.filter(user=self.member, house=self.house).exists()
        row.get_by_role("button", name="Remove").click()
        self.confirm(page, "Remove")
        expect(page.locator(".members li", has_text="mia")).to_have_count(0, timeout=WAIT)
        assert not Membership.objects.filter(user=self.member, house=self.house).exists()

        thread, _ = self.open(self.owner)
        said = thread.locator(".entry.chat", has_text="my last words")
        expect(said.locator(".who")).to_have_text("mia")
        expect(said.locator(".avatar")).to_have_text("M")  # not "S" for "someone"
        house, _ = self.open(self.owner, "/houses/h/")
        expect(house.locator(".thread-row", has_text="Plans")).to_contain_text("mia")
        expect(house.locator(".thread-row", has_text="Plans")).not_to_contain_text("someone")

    def test_removing_a_bot_asks_first(self):
        page, _ = self.open(self.owner, "/houses/h/members/")
        page.locator(".members li", has_text="@helper").get_by_role("button", name="Remove").click()
        expect(page.locator("#confirm-action")).to_contain_text("Remove @helper from")
        self.confirm(page, "Cancel")
        self.bot.refresh_from_db()
        assert self.bot.active
        page.locator(".members li", has_text="@helper").get_by_role("button", name="Remove").click()
        self.confirm(page, "Remove bot")
        expect(page.locator(".members li", has_text="@helper")).to_have_count(0, timeout=WAIT)

    def test_revoking_a_token_asks_first(self):
        ApiToken.issue(self.member, "laptop CLI")
        page, _ = self.open(self.member, "/tokens/")
        page.get_by_role("button", name="Revoke").click()
        expect(page.locator("#confirm-action")).to_contain_text("Revoke “laptop CLI”?")
        expect(page.locator("#confirm-action")).to_contain_text("stops working at once")
        self.confirm(page, "Cancel")
        assert not ApiToken.objects.get(name="laptop CLI").revoked_at
        page.get_by_role("button", name="Revoke").click()
        self.confirm(page, "Revoke token")
        expect(page.locator(".tokens .badge")).to_have_text("revoked", timeout=WAIT)
