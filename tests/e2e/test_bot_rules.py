"""The compose box says which bot answers a message that mentions nobody: the bot of a
one-person conversation (kept live as people join), and bots that answer everything."""

from playwright.sync_api import expect

from houses.models import Agent
from tests.e2e.actions import StrictCase
from tests.e2e.live import WAIT
from tests.factories import make_bot
from tests.peers.fake_llm import MODEL, PROVIDER

ALONE = "@helper answers every message while you're the only person here"


class BotRulesTests(StrictCase):
    def test_the_one_person_conversation_is_announced_until_someone_joins(self):
        owner, _ = self.open(self.owner)
        rules = owner.locator("#bot-rules")
        expect(rules).to_be_hidden()  # no bot has spoken: nobody answers plain chat
        self.say(owner, "@helper hello")
        expect(owner.locator(".entry.chat.from-bot")).to_have_count(1, timeout=60_000)
        expect(rules.locator(".bot-rule:visible")).to_have_text([ALONE], timeout=WAIT)
        member, _ = self.open(self.member)
        expect(member.locator("#bot-rules")).to_be_hidden()  # not the member's conversation
        owner.reload()
        expect(owner.locator("#bot-rules .bot-rule:visible")).to_have_text([ALONE])
        self.say(member, "hi both")
        expect(owner.locator("#bot-rules")).to_be_hidden(timeout=WAIT)
        owner.reload()
        expect(owner.locator("#bot-rules")).to_be_hidden()

    def test_a_bot_that_answers_everything_says_so_and_the_members_page_too(self):
        make_bot(self.house, "scribe", provider=PROVIDER, model=MODEL, involvement="everything")
        page, _ = self.open(self.member)
        expect(page.locator("#bot-rules .bot-rule:visible")).to_have_text(
            ["@scribe answers every message in this house"]
        )
        members, _ = self.open(self.owner, "/houses/h/members/")
        scribe = members.locator(".members li", has_text="@scribe")
        expect(scribe.locator("select option:checked")).to_have_text("every message")
        helper = members.locator(".members li", has_text="@helper")
        expect(helper.locator("select option:checked")).to_have_text(
            "mentions and one-person threads"
        )
        helper.locator("select").select_option("everything")
        helper.get_by_role("button", name="Save").click()
        expect(members.locator(".members li", has_text="@helper")).to_be_visible(timeout=WAIT)
        assert Agent.objects.get(pk=self.bot.pk).involvement == "everything"
