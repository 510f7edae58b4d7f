"""The house page's unread counts, live across people and tabs; joining by invite; error pages."""

import re

from playwright.sync_api import expect

from tests.e2e.live import HarbourCase

WAIT = 15_000  # ms


class HouseAndJoiningTests(HarbourCase):
    def open(self, context, path):
        page = context.new_page()
        response = page.goto(path)
        if path.startswith("/houses/") and response.status == 200 and path.count("/") == 3:
            expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        return page, response

    def test_unread_is_set_live_and_cleared_in_every_tab_when_the_thread_is_opened(self):
        owner = self.signed_in(self.owner)
        house_tab, _ = self.open(owner, "/houses/h/")
        other_tab, _ = self.open(owner, "/houses/h/")
        member_page, _ = self.open(self.signed_in(self.member), "/houses/h/")
        row = f"#thread-{self.thread.id}"
        expect(house_tab.locator(f"{row} .last-chat")).to_have_text("No messages yet")

        self.post_chat(member_page, "Are we shipping today?")
        for tab in (house_tab, other_tab):
            expect(tab.locator(f"{row} .unread")).to_have_text(re.compile(r"^1\b"), timeout=WAIT)
            expect(tab.locator(f"{row} .last-chat")).to_have_text("mia: Are we shipping today?")
        expect(house_tab.locator(f"{row} time")).to_have_text("just now")
        # The author has read their own message.
        expect(member_page.locator(f"{row} .last-chat")).to_contain_text("shipping", timeout=WAIT)
        expect(member_page.locator(f"{row} .unread")).to_have_count(0)

        other_tab.locator(f"{row} a.title").click()
        expect(other_tab.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        expect(house_tab.locator(f"{row} .unread")).to_have_count(0, timeout=WAIT)
        house_tab.reload()
        expect(house_tab.locator(f"{row} .last-chat")).to_contain_text("shipping")
        expect(house_tab.locator(f"{row} .unread")).to_have_count(0)

        # With the thread open in one tab, new chat is read as it lands.
        self.post_chat(member_page, "Tagging the release now.")
        expect(house_tab.locator(f"{row} .last-chat")).to_contain_text("Tagging", timeout=WAIT)
        expect(house_tab.locator(f"{row} .unread")).to_have_count(0)

    def test_a_visitor_signs_up_through_an_invite_link_and_lands_in_the_house(self):
        owner, _ = self.open(self.signed_in(self.owner), "/houses/h/members/")
        owner.select_option("select[name=days]", "1")
        owner.get_by_role("button", name="Make invite link").click()
        link = owner.locator("#invite-link").input_value()
        assert link.startswith(f"{self.live_server_url}/join/")

        visitor, response = self.open(self.signed_in(), link)
        assert response.status == 200
        expect(visitor.locator("h1")).to_have_text("Join Harbour")
        visitor.get_by_label("Username").fill("newcomer")
        visitor.get_by_label("Password", exact=True).fill("short")
        visitor.get_by_label("Password confirmation").fill("short")
        visitor.get_by_role("button", name="Create account and join").click()
        expect(visitor.locator(".join")).to_contain_text("too short")
        visitor.get_by_label("Password", exact=True).fill("tangerine-Orbit-42")
        visitor.get_by_label("Password confirmation").fill("tangerine-Orbit-42")
        visitor.get_by_role("button", name="Create account and join").click()
        expect(visitor).to_have_url(f"{self.live_server_url}/houses/h/")
        expect(visitor.locator(".flash")).to_contain_text("Welcome to Harbour, newcomer.")
        expect(visitor.locator(f"#thread-{self.thread.id}")).to_contain_text("Plans")

        owner.goto("/houses/h/members/")
        expect(owner.locator(".members").first).to_contain_text("newcomer")
        expect(owner.locator(".invite-list")).to_contain_text("1 joined")

    def test_error_pages_keep_the_layout_and_offer_a_way_back(self):
        member = self.signed_in(self.member)
        page, response = self.open(member, "/houses/h/members/")
        assert response.status == 403
        expect(page.locator("h1")).to_have_text("Not allowed")
        expect(page.locator(".error-page")).to_contain_text("Only owners of the house")
        expect(page.locator("link[rel=icon]")).to_have_attribute("href", re.compile("favicon"))
        page.get_by_role("link", name="Back to your houses").click()
        expect(page).to_have_url(f"{self.live_server_url}/")
        expect(page.locator(".houses")).to_contain_text("Harbour")

        response = page.goto("/houses/somewhere-else/")
        assert response.status == 404
        expect(page.locator("h1")).to_have_text("Nothing here")
        expect(page.locator(".topbar")).to_contain_text("mia")
