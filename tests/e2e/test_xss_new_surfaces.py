"""Script in this round's new surfaces renders as text, stored and live: a thread title
with line breaks (made one line), a file name, the line that says a deleted message's files
were removed. No payload runs on the thread, house or houses page (issue 33)."""

from playwright.sync_api import expect

from tests.e2e.live import WAIT, LiveThreadCase

TITLE = '<script>window.pwned = 1</script>\r\n<img src=x onerror="window.pwned = 2">'
ONE_LINE = '<script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2">'
FILE = "<img src=x onerror=window.pwned=3>.txt"
SVG_FILE = "<svg onload=window.pwned=4>.svg"


class NewSurfacesXSSTests(LiveThreadCase):
    def api(self, page, method, path, **kwargs):
        token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
        return page.request.fetch(path, method=method, headers={"X-CSRFToken": token}, **kwargs)

    def assert_inert(self, page):
        assert page.evaluate("window.pwned") is None
        assert page.locator("img[src='x'], script:not([src]):not([type])").count() == 0

    def test_titles_file_names_and_removal_lines_render_as_text(self):
        viewer, _ = self.page_for(self.member)
        owner, _ = self.page_for(self.owner)

        renamed = self.api(owner, "PATCH", f"/api/threads/{self.thread.id}", data={"title": TITLE})
        assert renamed.status == 200, renamed.text()
        assert renamed.json()["thread"]["title"] == ONE_LINE

        ids = []
        for name, data in ((FILE, b"notes"), (SVG_FILE, b"<svg onload=alert(1)></svg>")):
            up = self.api(
                owner,
                "POST",
                f"/api/threads/{self.thread.id}/attachments",
                multipart={"file": {"name": name, "mimeType": "text/plain", "buffer": data}},
            )
            assert up.status == 201, up.text()
            ids.append(up.json()["attachment"]["id"])
        posted = self.api(
            owner,
            "POST",
            f"/api/threads/{self.thread.id}/entries",
            data={"payload": {"type": "chat", "text": "files", "attachments": ids}},
        )
        assert posted.status == 201, posted.text()
        entry = self.chats(viewer).first
        expect(entry.locator(".files")).to_contain_text(FILE.replace("/", "_"), timeout=WAIT)
        self.assert_inert(viewer)

        # The files go with the message; the log's line about it is text too.
        self.delete(owner, self.chats(owner).first)
        expect(self.chats(viewer)).to_have_count(0, timeout=WAIT)

        for page in (viewer, owner):
            page.reload()
            expect(page.locator(".thread-title h1")).to_have_text(ONE_LINE)
            self.assert_inert(page)
        for path in (f"/houses/{self.house.slug}/", "/"):
            viewer.goto(path)
            expect(viewer.locator("body")).to_contain_text("pwned" if path != "/" else "h")
            self.assert_inert(viewer)
