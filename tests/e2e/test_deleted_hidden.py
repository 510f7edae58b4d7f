"""A deleted message is hidden in every chat view, as its dialog says: the page (live, after
a reload, after a catch-up), search and the house page's last message."""

from playwright.sync_api import expect

from tests.e2e.actions import StrictCase
from tests.e2e.live import WAIT
from tests.e2e.test_live_thread import OFFLINE_AS_THE_PAGE_SEES_IT


class DeletedHiddenTests(StrictCase):
    def test_a_deleted_message_is_gone_from_every_view_and_the_dialog_says_so(self):
        owner, _ = self.open(self.owner)
        member, _ = self.open(self.member)
        self.say(member, "zebra crossing plans")
        self.say(member, "second thought")
        doomed = owner.locator(".entry.chat", has_text="zebra crossing")
        expect(doomed).to_have_count(1, timeout=WAIT)

        # The member's page is away while the owner deletes: its catch-up brings the deletion.
        member.evaluate(OFFLINE_AS_THE_PAGE_SEES_IT)
        member.evaluate("window.arbeSocket.close(4000)")
        expect(member.locator("#live[data-connected]")).to_have_count(0, timeout=WAIT)
        member.context.set_offline(True)

        doomed.hover()
        doomed.locator(".actions summary").click()
        doomed.locator(".actions .delete").click()
        dialog = owner.locator("#confirm-delete")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text("hidden for everyone")
        expect(dialog).to_contain_text("for admins and raw API reads")
        dialog.get_by_role("button", name="Delete").click()
        expect(owner.locator("#entries")).not_to_contain_text("zebra", timeout=WAIT)

        member.context.set_offline(False)
        member.evaluate("delete navigator.onLine")
        expect(member.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        expect(member.locator("#entries")).not_to_contain_text("zebra", timeout=WAIT)
        expect(member.locator("#entries")).to_contain_text("second thought")

        member.reload()
        expect(member.locator("#entries")).to_contain_text("second thought")
        expect(member.locator("#entries")).not_to_contain_text("zebra")

        search, _ = self.open(self.member, "/search/?q=zebra")
        expect(search.locator("main")).to_contain_text("No messages match")
        house, _ = self.open(self.member, "/houses/h/")
        row = house.locator(".thread-row", has_text="Plans")
        expect(row).to_contain_text("second thought")
        expect(row).not_to_contain_text("zebra")

    def test_a_lone_deleted_last_message_leaves_no_preview(self):
        owner, _ = self.open(self.owner)
        self.say(owner, "quokka")
        self.delete(owner, owner.locator(".entry.chat", has_text="quokka"))
        expect(owner.locator("#entries")).not_to_contain_text("quokka", timeout=WAIT)
        house, _ = self.open(self.owner, "/houses/h/")
        expect(house.locator(".thread-row", has_text="Plans")).not_to_contain_text("quokka")
