"""What a new member sees in a message's menu and in the dialogs that guard for-good actions:
no owner-only action in a member's menu, a refused action answered in the page (never raw
JSON in place of it), every question in the site's own dialog (a native ``confirm()`` fails
the test), a delete dialog that says what happens to the files, and hand-over and leave asked
first."""

import os

from playwright.sync_api import expect

from houses.models import Membership
from tests.e2e.actions import StrictCase
from tests.e2e.live import WAIT

SHOTS = os.environ.get("ARBE_SHOTS_DIR", "")
DESKTOP, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


class MenusAndDialogsTests(StrictCase):
    def shot(self, page, name):
        if SHOTS:
            page.screenshot(path=os.path.join(SHOTS, name))

    def send_file(self, page, name, text):
        page.locator("#attach-input").set_input_files(
            {"name": name, "mimeType": "application/pdf", "buffer": PDF}
        )
        expect(page.locator("#attach-list .attach-chip:not(.busy)")).to_have_count(1, timeout=WAIT)
        page.locator("#compose textarea").fill(text)
        page.locator("#compose textarea").press("Enter")

    def open_menu(self, entry):
        entry.hover()
        entry.locator(".actions summary").click()

    def test_a_members_menu_offers_no_owner_action_and_a_refusal_stays_in_the_page(self):
        self.allowed_console = ("403",)  # the refused request's own console lines
        owner, _ = self.open(self.owner)
        self.send_file(owner, "owners.pdf", "the owner's file")
        member, _ = self.open(self.member)
        entry = member.locator(".entry.chat", has_text="owners.pdf")
        expect(entry).to_have_count(1, timeout=WAIT)
        # The member's menu isn't shown on someone else's message, and the purge button in
        # the shared fragment stays hidden even where a rule shows menu buttons.
        expect(entry.locator(".actions .purge")).to_be_hidden()
        entry.locator(".actions").evaluate("d => { d.style.display = 'block'; d.open = true; }")
        expect(entry.locator(".actions .delete")).to_be_visible()
        expect(entry.locator(".actions .purge")).to_be_hidden()

        # Forced anyway (a stale page, a crafted click): the site's dialog asks, the server
        # refuses, and the refusal is said in the page, which stays the thread page.
        entry.locator(".actions .purge").evaluate("b => b.click()")
        dialog = member.locator("#confirm-action")
        expect(dialog).to_be_visible()
        dialog.get_by_role("button", name="Remove files").click()
        expect(member.locator("#compose-error")).to_contain_text("owner", timeout=WAIT)
        expect(member.locator("#entries")).to_be_visible()
        expect(member.locator("body")).not_to_contain_text('{"error"')
        expect(member.locator(".entry.chat", has_text="owners.pdf")).to_have_count(1)

        # Their own message's files are theirs to remove: the menu offers it.
        self.send_file(member, "mine.pdf", "my own file")
        mine = member.locator(".entry.chat", has_text="my own file")
        expect(mine).to_have_count(1, timeout=WAIT)
        self.open_menu(mine)
        expect(mine.locator(".actions .purge")).to_be_visible()

    def test_an_owner_removes_files_in_the_sites_dialog_and_the_menu_stops_offering_it(self):
        member, _ = self.open(self.member)
        self.send_file(member, "secret.pdf", "the secret plan")
        owner, _ = self.open(self.owner)
        entry = owner.locator(".entry.chat", has_text="the secret plan")
        expect(entry).to_have_count(1, timeout=WAIT)
        self.open_menu(entry)
        entry.locator(".actions .purge").click()
        dialog = owner.locator("#confirm-action")
        expect(dialog).to_contain_text("Remove this message's files for good?")
        expect(dialog).to_contain_text("secret.pdf")
        self.shot(owner, "remove-files-dialog.png")
        dialog.get_by_role("button", name="Cancel").click()
        expect(owner.locator(".files .download")).to_have_count(1)

        self.open_menu(entry)
        entry.locator(".actions .purge").click()
        dialog.get_by_role("button", name="Remove files").click()
        for page in (owner, member):
            expect(page.locator("#entries")).to_contain_text("Files removed.", timeout=WAIT)
        # Gone from the menu, live and after a reload.
        self.open_menu(entry)
        expect(entry.locator(".actions .delete")).to_be_visible()
        expect(entry.locator(".actions .purge")).to_be_hidden()
        owner.reload()
        entry = owner.locator(".entry.chat", has_text="the secret plan")
        expect(entry.locator(".actions .purge")).to_have_count(0)

    def test_the_delete_dialog_says_what_happens_to_the_files(self):
        owner, _ = self.open(self.owner)
        self.say(owner, "no files here")
        self.send_file(owner, "budget.pdf", "the budget")
        for text, files_said in (("no files here", False), ("the budget", True)):
            entry = owner.locator(".entry.chat", has_text=text)
            expect(entry).to_have_count(1, timeout=WAIT)
            self.open_menu(entry)
            entry.locator(".actions .delete").click()
            dialog = owner.locator("#confirm-delete")
            expect(dialog).to_be_visible()
            files = dialog.locator(".files-fate")
            if files_said:
                expect(files).to_be_visible()
                expect(files).to_contain_text("Its file, budget.pdf")
                expect(files).to_contain_text("deleted with it")
                self.shot(owner, "delete-dialog-files.png")
            else:
                expect(files).to_be_hidden()
            dialog.get_by_role("button", name="Cancel").click()
        # The same dialogs on a phone.
        phone, _ = self.open(self.owner, viewport=PHONE)
        entry = phone.locator(".entry.chat", has_text="the budget")
        for button, dialog, name in (
            (".delete", "#confirm-delete", "delete-dialog-files-phone.png"),
            (".purge", "#confirm-action", "remove-files-dialog-phone.png"),
        ):
            entry.click()  # a tap shows the menu's button on a touch screen
            entry.locator(".actions summary").click()
            entry.locator(f".actions {button}").click()
            expect(phone.locator(dialog)).to_be_visible()
            expect(phone.locator(dialog)).to_contain_text("budget.pdf")
            self.shot(phone, name)
            phone.locator(dialog).get_by_role("button", name="Cancel").click()

    def test_handing_over_and_leaving_ask_first(self):
        Membership.objects.filter(house=self.house, user=self.member).update(role="member")
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page, _ = self.open(self.owner, "/houses/h/settings/", viewport=size)
            page.get_by_role("button", name="Hand over").click()
            dialog = page.locator("#confirm-action")
            expect(dialog).to_contain_text("Hand H over to mia?")
            expect(dialog).to_contain_text("you become a member")
            self.shot(page, f"hand-over-dialog{suffix}.png")
            dialog.get_by_role("button", name="Cancel").click()
            expect(dialog).to_be_hidden()
        assert Membership.objects.get(house=self.house, user=self.owner).role == "owner"

        page.get_by_role("button", name="Hand over").click()
        page.locator("#confirm-action").get_by_role("button", name="Hand over").click()
        expect(page.locator(".flash")).to_contain_text("mia owns H now", timeout=WAIT)
        assert Membership.objects.get(house=self.house, user=self.member).role == "owner"

        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page, _ = self.open(self.owner, "/houses/h/settings/", viewport=size)
            page.get_by_role("button", name="Leave H").click()
            dialog = page.locator("#confirm-action")
            expect(dialog).to_contain_text("Leave H?")
            expect(dialog).to_contain_text("new invite")
            self.shot(page, f"leave-dialog{suffix}.png")
            dialog.get_by_role("button", name="Cancel").click()
        assert Membership.objects.filter(house=self.house, user=self.owner).exists()
        page.get_by_role("button", name="Leave H").click()
        page.locator("#confirm-action").get_by_role("button", name="Leave").click()
        expect(page).to_have_url(f"{self.live_server_url}/", timeout=WAIT)
        assert not Membership.objects.filter(house=self.house, user=self.owner).exists()

    def test_the_add_bot_form_offers_providers_models_and_a_key_hint(self):
        """This server's provider (here the fake model's) and Pi's; the demo bot's button is
        for servers that run the demo model (tests/integration/test_bot_choices.py)."""
        from houses.founding import create_house

        house = create_house(self.owner, "Studio")
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page, _ = self.open(self.owner, f"/houses/{house.slug}/members/", viewport=size)
            page.locator("#bot-provider").select_option("openai")
            expect(page.locator("#bot-models option[value='gpt-4.1']")).to_have_count(1)
            key = page.locator("#bot-key")
            expect(key).to_have_attribute("placeholder", "e.g. ARBE_BOTKEY_OPENAI")
            page.locator("#bot-provider").select_option("fakellm")
            expect(page.locator("#bot-model")).to_have_value("fake-model")
            expect(key).to_have_attribute("placeholder", "not needed")
            page.locator("#bot-provider").select_option("anthropic")
            expect(page.locator("#bot-model")).to_have_value("")
            page.locator("form.add-bot").scroll_into_view_if_needed()
            self.shot(page, f"add-bot-form{suffix}.png")
        page.get_by_label("Handle").fill("scribe")
        page.locator("#bot-provider").select_option("fakellm")
        page.get_by_role("button", name="Add bot").click()
        expect(page.locator(".members li", has_text="@scribe")).to_contain_text(
            "fakellm/fake-model"
        )

    def test_question_mark_shows_the_keyboard_shortcuts(self):
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page, _ = self.open(self.owner, "/houses/h/", viewport=size)
            page.keyboard.press("?")
            help = page.locator("#shortcuts")
            expect(help).to_be_visible()
            expect(help).to_contain_text("Jump to a thread by name")
            expect(help).to_contain_text("Edit your last message")
            self.shot(page, f"shortcuts{suffix}.png")
            page.keyboard.press("Escape")
            expect(help).to_be_hidden()
        # Typed into a box, "?" is a question mark.
        thread, _ = self.open(self.owner)
        box = thread.locator("#compose textarea")
        box.focus()
        box.press("?")
        expect(box).to_have_value("?")
        expect(thread.locator("#shortcuts")).to_be_hidden()

    def test_a_mention_shows_its_own_badge_on_the_house_page_live(self):
        owner, _ = self.open(self.owner)
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page, _ = self.open(self.member, "/houses/h/", viewport=size)
            row = page.locator(f"#thread-{self.thread.id}")
            expect(row.locator(".mention-count")).to_have_count(0)
            self.say(owner, f"@mia have a look {suffix}")
            expect(row.locator(".mention-count")).to_have_text("@1 unread mention", timeout=WAIT)
            expect(row.locator(".unread")).to_be_visible()
            self.shot(page, f"house-mention-badge{suffix}.png")
            page.goto(f"/threads/{self.thread.id}/")
            expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
            page.goto("/houses/h/")
            expect(page.locator(f"#thread-{self.thread.id} .mention-count")).to_have_count(0)
