"""Two people, one thread, a live Daphne: editing a message and reacting to one."""

import os
import re

from playwright.sync_api import expect

from tests.e2e.console import watch_console
from tests.e2e.live import WAIT, LiveThreadCase

SHOTS = os.environ.get("ARBE_SHOTS", "")  # a folder: the tests also save screenshots there


def shot(page, name):
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"))


class EverydayChatTests(LiveThreadCase):
    def test_the_author_edits_live_and_others_see_the_latest_text(self):
        member, _ = self.page_for(self.member)
        owner, _ = self.page_for(self.owner)
        errors: list[str] = []
        watch_console(member, errors)
        watch_console(owner, errors)
        self.say(member, "the meeting is at 3")
        self.say(owner, "thanks")
        mine = member.locator(".entry.chat", has_text="the meeting")
        # Only the author has "Edit": the owner's menu on it offers delete alone.
        theirs = owner.locator(".entry.chat", has_text="the meeting")
        theirs.hover()
        theirs.locator(".actions summary").click()
        expect(theirs.locator(".actions .edit")).to_be_hidden()
        expect(theirs.locator(".actions .delete")).to_be_visible()
        owner.keyboard.press("Escape")

        mine.hover()
        mine.locator(".actions summary").click()
        mine.locator(".actions .edit").click()
        editor = mine.locator(".editor textarea")
        expect(editor).to_have_value("the meeting is at 3", timeout=WAIT)
        editor.fill("the meeting is at **4**")
        editor.press("Enter")
        for page in (member, owner):
            body = page.locator(".entry.chat", has_text="the meeting").locator(".body")
            expect(body).to_contain_text("the meeting is at 4", timeout=WAIT)
            expect(body.locator("strong")).to_have_text("4")
            expect(body.locator(".edited-mark")).to_have_text("(edited)")
        expect(mine.locator(".editor")).to_have_count(0)
        shot(member, "edited-1280")

        # Up in the empty compose box edits the last message of one's own; Esc cancels.
        box = member.locator("#compose textarea")
        expect(member.locator(".entry.chat.pending")).to_have_count(0)
        box.focus()
        box.press("ArrowUp")
        expect(editor).to_have_value("the meeting is at **4**", timeout=WAIT)
        editor.fill("never saved")
        editor.press("Escape")
        expect(mine.locator(".editor")).to_have_count(0)
        expect(mine.locator(".body")).to_contain_text("the meeting is at 4")

        # A reload folds the edit from the log: the same latest text, still marked.
        owner.reload()
        body = owner.locator(".entry.chat", has_text="the meeting").locator(".body")
        expect(body).to_have_text(re.compile(r"the meeting is at 4\s*\(edited\)"))
        owner.set_viewport_size({"width": 390, "height": 844})
        shot(owner, "edited-390")
        mine.hover()
        mine.locator(".actions summary").click()
        mine.locator(".actions .edit").click()
        expect(editor).to_have_value("the meeting is at **4**", timeout=WAIT)
        shot(member, "editing-1280")
        editor.press("Escape")
        assert errors == []

    def test_a_message_deleted_while_its_author_edits_it_goes_with_its_editor(self):
        member, _ = self.page_for(self.member)
        owner, _ = self.page_for(self.owner)
        self.say(member, "soon gone")
        mine = member.locator(".entry.chat", has_text="soon gone")
        expect(mine).not_to_have_class(re.compile("pending"), timeout=WAIT)  # stored
        member.locator("#compose textarea").press("ArrowUp")
        expect(mine.locator(".editor textarea")).to_have_value("soon gone", timeout=WAIT)
        self.delete(owner, owner.locator(".entry.chat", has_text="soon gone"))
        expect(member.locator("#entries .entry.chat")).to_have_count(0, timeout=WAIT)
        expect(member.locator(".editor")).to_have_count(0)

    def test_reactions_live_with_counts_who_and_toggling(self):
        member, _ = self.page_for(self.member)
        owner, _ = self.page_for(self.owner)
        errors: list[str] = []
        watch_console(member, errors)
        watch_console(owner, errors)
        self.say(member, "shipped the release")
        theirs = owner.locator(".entry.chat", has_text="shipped the release")
        theirs.hover()
        theirs.locator(".react-add").click()
        owner.locator("#react-palette button.pick[data-emoji='🎉']").click()
        expect(owner.locator("#react-palette")).to_be_hidden()
        mine = member.locator(".entry.chat", has_text="shipped the release")
        chip = mine.locator(".reaction[data-emoji='🎉']")
        expect(chip.locator(".n")).to_have_text("1", timeout=WAIT)
        expect(chip).to_have_attribute("title", "olive reacted with 🎉")
        # The member adds the same one (a click on the chip), then any emoji typed.
        chip.click()
        expect(chip.locator(".n")).to_have_text("2", timeout=WAIT)
        expect(theirs.locator(".reaction[data-emoji='🎉'] .n")).to_have_text("2", timeout=WAIT)
        expect(chip).to_have_attribute("title", "olive, mia reacted with 🎉")
        mine.hover()
        mine.locator(".react-add").click()
        palette = member.locator("#react-palette")
        palette.locator("input").fill("🦀")
        palette.locator("input").press("Enter")
        expect(theirs.locator(".reaction[data-emoji='🦀'] .n")).to_have_text("1", timeout=WAIT)
        shot(owner, "reactions-1280")
        # Toggling off is another entry; the chip goes when nobody reacts with it.
        mine.locator(".reaction[data-emoji='🦀']").click()
        expect(theirs.locator(".reaction[data-emoji='🦀']")).to_have_count(0, timeout=WAIT)
        # Not an emoji: a sentence, nothing stored.
        mine.hover()
        mine.locator(".react-add").click()
        palette.locator("input").fill("ok")
        palette.locator("input").press("Enter")
        expect(member.locator("#compose-error")).to_have_text("emoji: one emoji, like 👍")
        # A reload folds the same from the log.
        owner.reload()
        chip = owner.locator(".entry.chat", has_text="shipped").locator(".reaction")
        expect(chip).to_have_count(1)
        expect(chip.locator(".n")).to_have_text("2")
        owner.set_viewport_size({"width": 390, "height": 844})
        shot(owner, "reactions-390")
        owner.set_viewport_size({"width": 1280, "height": 800})
        # A deleted message takes its reactions with it.
        self.delete(member, mine)
        expect(owner.locator(".reaction")).to_have_count(0, timeout=WAIT)
        assert [e for e in errors if "400" not in e] == []

    def test_who_is_here_and_who_is_typing(self):
        member, _ = self.page_for(self.member)
        owner, _ = self.page_for(self.owner)
        for page in (member, owner):
            expect(page.locator("#here .avatar")).to_have_count(2, timeout=WAIT)
        owner.locator("#compose textarea").press_sequentially("on my w", delay=30)
        expect(member.locator("#typing")).to_have_text("olive is typing…", timeout=WAIT)
        expect(owner.locator("#typing")).to_have_text("")  # never one's own
        shot(member, "typing-1280")
        owner.locator("#compose textarea").press_sequentially("ay")
        owner.locator("#compose textarea").press("Enter")
        # The message arriving ends the typing line at once.
        expect(member.locator("#entries")).to_contain_text("on my way", timeout=WAIT)
        expect(member.locator("#typing")).to_have_text("")
        owner.context.close()  # the tab goes: so does its avatar, within seconds
        expect(member.locator("#here .avatar")).to_have_count(1, timeout=WAIT)
        expect(member.locator("#here .avatar")).to_have_attribute("title", "mia (you) is here")

    def test_the_account_page_changes_the_name_others_see(self):
        page, _ = self.page_for(self.member, path="/account/")
        errors: list[str] = []
        watch_console(page, errors)
        expect(page.get_by_role("heading", name="Your account")).to_be_visible()
        shot(page, "account-1280")
        page.get_by_label("Display name").fill("Mia Ramos")
        page.get_by_label("Time zone").fill("Asia/Tokyo")
        page.get_by_role("button", name="Save").click()
        expect(page.locator(".flash")).to_contain_text("Saved.")
        expect(page.locator(".account-who strong")).to_have_text("Mia Ramos")
        page.get_by_label("Time zone").fill("Nowhere/Special")
        page.get_by_role("button", name="Save").click()
        expect(page.locator(".error")).to_contain_text("is not a time zone")
        page.get_by_role("link", name="API tokens").click()
        expect(page).to_have_url(re.compile("/account/tokens/$"))
        # The owner sees the new name beside the member's next message.
        thread, _ = self.page_for(self.member)
        self.say(thread, "renamed")
        owner, _ = self.page_for(self.owner)
        expect(owner.locator(".entry.chat", has_text="renamed").locator(".who")).to_have_text(
            "Mia Ramos"
        )
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto("/account/")
        shot(page, "account-390")
        assert [e for e in errors if "400 (Bad Request)" not in e] == []  # the refused form

    def test_anyone_creates_a_house_hands_it_over_and_leaves(self):
        page, _ = self.page_for(self.member, path="/")
        errors: list[str] = []
        watch_console(page, errors)
        shot(page, "home-1280")
        page.get_by_label("New house").fill("Design team")
        page.get_by_role("button", name="Create house").click()
        expect(page).to_have_url(re.compile("/houses/design-team/$"))
        expect(page.get_by_role("heading", name="Design team")).to_be_visible()
        expect(page.locator(".house-links a", has_text="Members")).to_be_visible()  # an owner
        shot(page, "new-house-1280")
        # The new owner adds the other person, hands the house over and leaves.
        page.locator(".house-links a", has_text="Members").click()
        page.get_by_label("Username").fill(self.owner.username)
        with page.expect_navigation():  # the add's answer, before the next page is asked for
            page.get_by_role("button", name="Add person").click()
        page.goto("/houses/design-team/settings/")
        page.get_by_label("Name", exact=True).fill("Design")
        page.get_by_role("button", name="Rename").click()
        expect(page.locator("h1")).to_contain_text("Design · settings")
        page.get_by_role("button", name="Leave Design").click()
        expect(page.locator(".flash")).to_contain_text("last owner")
        shot(page, "house-settings-1280")
        page.get_by_role("button", name="Hand over").click()
        page.locator("#confirm-action").get_by_role("button", name="Hand over").click()
        expect(page.locator(".flash")).to_contain_text("olive owns Design now.")
        page.get_by_role("button", name="Leave Design").click()
        page.locator("#confirm-action").get_by_role("button", name="Leave").click()
        expect(page).to_have_url(re.compile("/$"))
        expect(page.locator("#houses")).not_to_contain_text("Design")
        assert errors == []

    def test_keyboard_slash_searches_ctrl_k_jumps_esc_closes(self):
        from threads.lifecycle import create_thread

        create_thread(house=self.house, title="Release notes", by=self.owner.agent)
        page, _ = self.page_for(self.member)
        errors: list[str] = []
        watch_console(page, errors)
        page.locator("#entries").focus()
        page.keyboard.press("/")
        expect(page.locator(".topbar input[type=search]")).to_be_focused()
        page.keyboard.press("Escape")
        page.locator("#entries").focus()
        page.keyboard.press("Control+k")
        palette = page.locator("#jump-palette")
        expect(palette).to_be_visible()
        palette.locator("input").fill("release")
        expect(palette.locator("li a")).to_have_count(1, timeout=WAIT)
        shot(page, "jump-1280")
        page.keyboard.press("Escape")
        expect(palette).to_be_hidden()
        page.keyboard.press("Control+k")
        palette.locator("input").fill("release")
        expect(palette.locator("li a")).to_have_count(1, timeout=WAIT)
        palette.locator("input").press("Enter")
        expect(page.get_by_role("heading", name="Release notes")).to_be_visible(timeout=WAIT)
        assert errors == []

    def test_a_bot_that_answers_with_one_emoji_reacts_instead(self):
        from tests.peers.fake_llm import Text

        page, _ = self.page_for(self.member)
        self.fake.script(Text("👀"))
        self.say(page, "@helper just noting the deploy is done")
        chip = page.locator(".entry.chat", has_text="deploy is done").locator(".reaction")
        expect(chip).to_have_attribute("title", "Helper reacted with 👀", timeout=60_000)
        expect(page.locator("#now")).to_contain_text("Nobody is working", timeout=WAIT)
        expect(page.locator("#entries .entry.reply")).to_have_count(0)
        expect(page.locator(".entry.chat.from-bot")).to_have_count(0)
        page.reload()  # the page's fold agrees: a chip, no reply line, no message
        expect(chip).to_have_count(1)
        expect(page.locator("#entries .entry.reply")).to_have_count(0)
