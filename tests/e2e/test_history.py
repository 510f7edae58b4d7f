"""History on the thread page: older windows above, a link into the middle of a long
thread, a deletion of a message loaded from an older window."""

import re
import threading

import pytest
from playwright.sync_api import expect

from tests.e2e.live import WAIT, LiveThreadCase
from threads.entries import Chat
from threads.lifecycle import new_entry
from threads.recency import stream_writer
from threads.windows import WINDOW_CHATS

TOTAL = 4 * WINDOW_CHATS + 10
SHOW_GAP = "() => { const g = document.getElementById('newer'); if (g) g.scrollIntoView(); }"
LINKED = re.compile(r"\blinked\b")


class HistoryTests(LiveThreadCase):
    def backlog(self, n=TOTAL, author=None):
        """Append through the server's writer (marks at the seam), off Playwright's loop."""
        writer, ids = stream_writer(), []
        agent = (author or self.owner).agent.id

        def write():
            for i in range(n):
                entry = new_entry(Chat(text=f"history {i:03d}"), author=agent)
                writer.append(self.thread.stream_name, entry)
                ids.append(entry.id)

        worker = threading.Thread(target=write)
        worker.start()
        worker.join()
        return ids

    def texts(self, page):
        return [t.strip() for t in page.locator("#entries .entry.chat .body").all_inner_texts()]

    def scroll_to_top(self, page):
        page.locator("#entries").evaluate("e => { e.scrollTop = 0; }")

    def load_everything(self, page, rounds=12):
        start = page.locator(".history-start")
        for _ in range(rounds):
            if start.count():
                break
            self.scroll_to_top(page)
            page.wait_for_timeout(250)
        expect(start).to_have_count(1, timeout=WAIT)

    def test_older_messages_load_above_and_what_was_in_view_stays_put(self):
        self.backlog()
        page, response = self.page_for(self.member, viewport={"width": 1280, "height": 800})
        served = response.text().count('class="entry chat')
        assert WINDOW_CHATS // 2 <= served <= WINDOW_CHATS * 3 // 2  # the newest part only
        page.wait_for_timeout(300)  # a window near the top may prefetch
        expect(page.locator("#older[aria-busy]")).to_have_count(0, timeout=WAIT)
        first = self.texts(page)
        assert first[-1] == f"history {TOTAL - 1:03d}"
        top = page.locator("#entries .entry.chat").first
        # Not the boundary message, which may join the group above once older ones load.
        anchor = page.locator(".entry.chat", has_text=first[3]).get_attribute("id")
        top.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        expect(page.locator("#older[aria-busy]")).to_have_count(0, timeout=WAIT)
        loaded = self.chats(page).count()
        # In one task: where the anchor will be once the list is at its top, and go there.
        before = page.evaluate(
            """id => { const s = document.getElementById('entries');
                       const e = document.getElementById(id);
                       const y = e.getBoundingClientRect().top + s.scrollTop;
                       s.scrollTop = 0; return y; }""",
            anchor,
        )
        expect(self.chats(page)).not_to_have_count(loaded, timeout=WAIT)
        expect(page.locator("#older[aria-busy]")).to_have_count(0, timeout=WAIT)
        page.wait_for_timeout(200)
        box = page.locator(f"#{anchor}").bounding_box()
        scrolled = page.locator("#entries").evaluate("e => e.scrollTop")
        assert scrolled > 0  # the view did not stay pinned at the very top of new content
        assert abs(box["y"] - before) < 4  # what was in view did not move
        self.load_everything(page)
        assert self.texts(page) == [f"history {i:03d}" for i in range(TOTAL)]
        assert page.locator("#entries [id]").evaluate_all(
            "els => new Set(els.map(e => e.id)).size === els.length"
        )

    def test_a_link_into_the_middle_opens_the_message_highlighted(self):
        ids = self.backlog()
        middle = WINDOW_CHATS + 3
        page, response = self.page_for(
            self.member,
            path=f"/threads/{self.thread.id}/#entry-{ids[middle]}",
            viewport={"width": 1280, "height": 800},
        )
        linked = page.locator(f"#entry-{ids[middle]}")
        expect(linked).to_be_visible(timeout=WAIT)
        expect(linked).to_have_class(LINKED, timeout=WAIT)
        expect(linked).to_be_in_viewport()
        assert "around=" in page.url
        # The gap below the linked window fills as it comes into view.
        newer = page.locator("#newer")
        for _ in range(20):
            if not newer.count():
                break
            page.evaluate(
                "() => { const g = document.getElementById('newer'); if (g) g.scrollIntoView(); }"
            )
            page.wait_for_timeout(250)
        expect(newer).to_have_count(0, timeout=WAIT)
        texts = self.texts(page)
        assert texts == sorted(texts) and texts[-1] == f"history {TOTAL - 1:03d}"
        assert len(texts) == len(set(texts))
        # A link to a message already on the page scrolls and highlights in place.
        other = page.locator(f"#entry-{ids[WINDOW_CHATS * 3]}")
        url = page.url
        page.evaluate(f"location.hash = '#entry-{ids[WINDOW_CHATS * 3]}'")
        expect(other).to_have_class(LINKED)
        expect(other).to_be_in_viewport()
        assert page.url.split("#")[0] == url.split("#")[0]  # no reload

    def test_a_message_from_an_older_window_vanishes_when_deleted(self):
        ids = self.backlog(author=self.member)
        doomed_text = "history 005"
        owner, _ = self.page_for(self.owner, viewport={"width": 1280, "height": 800})
        member, _ = self.page_for(self.member, viewport={"width": 1280, "height": 800})
        late, _ = self.page_for(self.owner, viewport={"width": 1280, "height": 800})
        for page in (owner, member):
            self.load_everything(page)
            expect(page.locator(".entry.chat", has_text=doomed_text)).to_have_count(1)
        self.delete(owner, owner.locator(".entry.chat", has_text=doomed_text))
        for page in (owner, member):
            expect(page.locator(".entry.chat", has_text=doomed_text)).to_have_count(0, timeout=WAIT)
        # A page that loads that window only now never shows it.
        self.load_everything(late)
        assert doomed_text not in self.texts(late) and "history 006" in self.texts(late)
        assert ids[5] not in late.content()

    @pytest.mark.timeout(300)
    def test_a_page_pinned_to_the_bottom_stays_light_and_loads_what_it_dropped(self):
        ids, writer, agent = [], stream_writer(), self.owner.agent.id

        def write(texts):
            entries = [new_entry(Chat(text=t), author=agent) for t in texts]
            writer.append_batch(self.thread.stream_name, entries)
            ids.extend(e.id for e in entries)

        def in_thread(texts):  # off Playwright's loop
            worker = threading.Thread(target=write, args=(texts,))
            worker.start()
            worker.join()

        for start in range(0, 950, 50):  # batches as big as a window: marks at the seam
            in_thread([f"history {i:03d}" for i in range(start, start + 50)])
        page, _ = self.page_for(self.member, viewport={"width": 1280, "height": 800})
        self.load_everything(page, rounds=60)  # every window, 950 messages in the scroller
        assert page.locator("#entries > *").count() > 900
        page.locator("#entries").evaluate("e => { e.scrollTop = e.scrollHeight; }")
        page.wait_for_timeout(300)
        in_thread(["history 950"])  # a live message while the reader sits at the bottom
        expect(page.locator(f"#entry-{ids[-1]}")).to_have_count(1, timeout=WAIT)
        edge = page.locator("#older[data-before]")
        expect(edge).to_have_count(1, timeout=WAIT)  # the oldest were dropped, a sentinel stands
        kept = page.locator("#entries > *").count()
        assert kept <= 900  # history.js MAX_NODES
        assert page.locator(f"#entry-{ids[0]}").count() == 0
        first_kept = ids.index(edge.get_attribute("data-before"))
        # Scrolling up brings the dropped messages back, in order, each once.
        back = page.locator(f"#entry-{ids[first_kept - 1]}")
        for _ in range(40):
            if back.count():
                break
            self.scroll_to_top(page)
            page.wait_for_timeout(250)
        expect(back).to_have_count(1, timeout=WAIT)
        texts = self.texts(page)
        assert texts == sorted(texts) and len(texts) == len(set(texts))
        assert texts[-1] == "history 950"
