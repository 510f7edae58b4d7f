"""Private threads and direct conversations in the browser (issue 35): a member messages
the owner from the house page and the owner sees it live with its count, while a third
member's house page, sidebar, search and inbox show nothing of it; a direct conversation
with the bot is answered without a mention; a private thread gains a member who reads its
history, and loses one whose open page stops within 5 s. Screenshots for the review."""

import os
from pathlib import Path

from playwright.sync_api import expect

from houses.membership import add_member
from houses.models import Membership
from tests.e2e.actions import StrictCase
from tests.e2e.live import WAIT
from tests.factories import make_user
from threads.models import Thread

SHOTS = Path(os.environ.get("ARBE_SHOTS", "/tmp/shots/private-ui"))
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


class PrivateTests(StrictCase):
    def setUp(self):
        super().setUp()
        self.third = make_user("ari")
        add_member(self.house, self.third, Membership.Role.MEMBER)

    def house_page(self, user, **context_args):
        page, response = self.open(user, "/houses/h/", **context_args)
        assert response.status == 200
        expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        return page

    def shoot(self, page, name):
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"))

    def test_a_direct_conversation_reaches_its_people_and_nobody_else(self):
        olive = self.house_page(self.owner)
        ari = self.house_page(self.third)
        mia = self.house_page(self.member)
        mia.locator(".people-chips").get_by_role("button", name="olive", exact=True).click()
        mia.wait_for_url("**/threads/*/", timeout=WAIT)
        dm = Thread.objects.get(visibility="direct")
        expect(mia.locator(".thread-head h1")).to_have_text("Direct conversation with olive")
        expect(mia.locator("#people .people-list li")).to_have_count(2)
        expect(mia.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        self.say(mia, "a word in private, olive")
        # The owner's house page and sidebar get it live, titled by the other person, counted.
        row = olive.locator(f"#thread-{dm.pk}")
        expect(row.locator(".title")).to_have_text("Direct conversation with mia", timeout=WAIT)
        expect(row.locator(".kind-mark.direct")).to_have_count(1)
        expect(row.locator(".unread")).to_contain_text("1", timeout=WAIT)
        side = olive.locator(f"#side-{dm.pk}")
        expect(side.locator(".side-count")).to_contain_text("1", timeout=WAIT)
        # The third member: nothing on the open house page, nor after a reload, nor in
        # search or the inbox.
        olive.wait_for_timeout(500)
        expect(ari.locator(f"#thread-{dm.pk}")).to_have_count(0)
        expect(ari.locator(f"#side-{dm.pk}")).to_have_count(0)
        ari.reload()
        expect(ari.locator(".threads")).to_contain_text("Plans")
        expect(ari.locator(f"#thread-{dm.pk}")).to_have_count(0)
        expect(ari.locator(f"#side-{dm.pk}")).to_have_count(0)
        found = ari.goto("/search/?q=private")
        assert found.status == 200
        expect(ari.locator("main")).not_to_contain_text("a word in private")
        ari.goto("/inbox/")
        expect(ari.locator("main")).not_to_contain_text("a word in private")
        self.allowed_console = ("404",)  # the page's own 404, next
        assert ari.goto(f"/threads/{dm.pk}/").status == 404
        # Asking again reopens the same conversation, from either side.
        olive.locator(".people-chips").get_by_role("button", name="mia", exact=True).click()
        olive.wait_for_url(f"**/threads/{dm.pk}/", timeout=WAIT)
        expect(olive.locator("#entries")).to_contain_text("a word in private, olive")

    def test_a_message_authors_name_and_ctrl_k_open_the_conversation(self):
        olive, _ = self.open(self.owner)
        self.say(olive, "who wants the minutes?")
        mia, _ = self.open(self.member)
        mia.locator("#entries .entry.chat .who", has_text="olive").click()
        mia.locator("#who-menu").get_by_role("menuitem", name="Message olive").click()
        mia.wait_for_url("**/threads/*/", timeout=WAIT)
        dm = Thread.objects.get(visibility="direct")
        assert mia.url.endswith(f"/threads/{dm.pk}/")
        # Ctrl+K from anywhere: the person, and the same conversation again.
        mia.goto("/houses/h/")
        mia.keyboard.press("Control+k")
        mia.locator("#jump-palette input").fill("oli")
        expect(mia.locator("#jump-list a.person")).to_have_text("Message oliveH", timeout=WAIT)
        mia.locator("#jump-list a.person").click()
        mia.wait_for_url(f"**/threads/{dm.pk}/", timeout=WAIT)

    def test_a_direct_conversation_with_the_bot_is_answered_without_a_mention(self):
        mia = self.house_page(self.member)
        mia.locator(".people-chips").get_by_role("button", name="@helper").click()
        mia.wait_for_url("**/threads/*/", timeout=WAIT)
        expect(mia.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        expect(mia.locator("#bot-rules .bot-rule:visible")).to_have_text(
            ["@helper answers every message in this conversation"]
        )
        self.say(mia, "what should we plan first?")
        expect(mia.locator(".entry.chat.from-bot")).to_have_count(1, timeout=60_000)

    def test_a_private_thread_gains_a_reader_of_its_history_and_loses_one(self):
        olive = self.house_page(self.owner)
        form = olive.locator("form.new-thread")
        form.locator("input[name=title]").fill("Surprise for Eve")
        form.get_by_label("Private").check()
        form.locator(".private-members").get_by_label("mia").check()
        form.get_by_role("button", name="Start thread").click()
        olive.wait_for_url("**/threads/*/", timeout=WAIT)
        secret = Thread.objects.get(title="Surprise for Eve")
        expect(olive.locator("#people .people-list li")).to_have_count(2)
        expect(olive.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        self.say(olive, "cake at four, keep it quiet")
        expect(olive.locator("#entries")).to_contain_text("olive made this thread private")
        mia, _ = self.open(self.member, f"/threads/{secret.pk}/")
        expect(mia.locator("#readers-line")).to_contain_text("2 members")
        self.allowed_console = ("404",)  # the thread Ari can't read yet: the page's own 404
        ari, response = self.open(self.third, f"/threads/{secret.pk}/")
        assert response.status == 404
        # Olive adds Ari: Mia's open page shows it live; Ari reads the whole history.
        olive.locator("#people .member-add select").select_option(label="ari")
        olive.locator("#people .member-add").get_by_role("button", name="Add").click()
        expect(olive.locator("#people .people-list li")).to_have_count(3, timeout=WAIT)
        expect(mia.locator("#entries")).to_contain_text("olive added ari.", timeout=WAIT)
        expect(mia.locator("#people .people-list li")).to_have_count(3, timeout=WAIT)
        expect(mia.locator("#readers-line")).to_contain_text("3 members")
        ari.goto(f"/threads/{secret.pk}/")
        expect(ari.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        expect(ari.locator("#entries")).to_contain_text("cake at four, keep it quiet")
        # Ari sees Leave on their own row only, and no Remove on others'.
        mine = ari.locator(f"#people li[data-agent='{self.third.agent.pk}']")
        expect(mine.locator(".as-leave")).to_be_visible()
        theirs = ari.locator(f"#people li[data-agent='{self.member.agent.pk}']")
        expect(theirs.locator(".member-remove")).to_be_hidden()
        # Olive removes Mia, whose open page stops within 5 s and shows nothing new.
        row = olive.locator(f"#people li[data-agent='{self.member.agent.pk}']")
        row.get_by_role("button", name="Remove").click()
        expect(mia.locator("body[data-ended='no-access']")).to_have_count(1, timeout=5_000)
        expect(olive.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        self.say(olive, "mia is out of it now")
        expect(ari.locator("#entries")).to_contain_text("mia is out of it now", timeout=WAIT)
        expect(ari.locator("#entries")).to_contain_text("olive removed mia.")
        expect(mia.locator("#entries")).not_to_contain_text("mia is out of it now")
        # Ari leaves; Olive's panel follows live, and its Add form (sent live) still works.
        mine.get_by_role("button", name="Leave").click()
        ari.wait_for_url("**/houses/h/", timeout=WAIT)
        expect(ari.locator(".flash")).to_contain_text("You left")
        expect(ari.locator(f"#thread-{secret.pk}")).to_have_count(0)
        expect(olive.locator("#people .people-list li")).to_have_count(1, timeout=WAIT)
        olive.locator("#people .member-add select").select_option(label="mia")
        olive.locator("#people .member-add").get_by_role("button", name="Add").click()
        expect(olive.locator("#entries")).to_contain_text("olive added mia.", timeout=WAIT)
        expect(olive.locator("#people .people-list li")).to_have_count(2)

    def test_screenshots(self):
        self.bot.display_name = "Helper"
        self.bot.save()
        from threads import privacy

        dm, _ = privacy.open_direct(self.house, self.owner.agent, [self.member.agent.pk])
        secret = privacy.start_private(
            self.house, "Salaries 2027", self.owner.agent, [self.member.agent.pk, self.bot.pk]
        )
        for size, viewport in SIZES.items():
            olive = self.house_page(self.owner, viewport=viewport)
            olive.goto(f"/threads/{dm.pk}/")
            expect(olive.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
            if size == "desktop":
                self.say(olive, "Lunch on Friday? Just us.")
            olive.goto("/houses/h/")
            expect(olive.locator(f"#thread-{secret.pk} .kind-mark.lock")).to_have_count(1)
            self.shoot(olive, f"house-{size}")
            olive.locator("form.new-thread").get_by_label("Private").check()
            self.shoot(olive, f"house-new-private-{size}")
            olive.goto(f"/threads/{dm.pk}/")
            expect(olive.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
            self.shoot(olive, f"direct-{size}")
            olive.goto(f"/threads/{secret.pk}/")
            expect(olive.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
            if size == "phone":
                olive.locator("#side > summary").click()
            self.shoot(olive, f"private-{size}")
