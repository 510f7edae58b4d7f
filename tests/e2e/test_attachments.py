"""Attachments in the browser: the button, paste and drag-and-drop on the compose box, an
inline preview and a named file for everyone in the thread, a download, a non-member's
404, and a deleted message's files gone."""

import base64
import io
import os
from pathlib import Path

from PIL import Image
from playwright.sync_api import expect

from tests.e2e.console import watch_console
from tests.e2e.live import WAIT, LiveThreadCase, wait_in_page
from tests.integration.attachments.files import png_bomb
from tests.peers.fake_llm import Text, bash

SHOTS = os.environ.get("ARBE_SHOTS_DIR", "")
DESKTOP, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def png(w, h, color) -> bytes:
    out = io.BytesIO()
    image = Image.new("RGB", (w, h), color)
    for x in range(0, w, 40):  # a visible pattern, to see the thumbnail in screenshots
        for y in range(h):
            image.putpixel((x, y), (255, 255, 255))
    image.save(out, "PNG")
    return out.getvalue()


# Paste and drop build a real DataTransfer holding a File, as the browser does for a
# screenshot pasted from the clipboard or a file dragged from the desktop.
TRANSFER = """([name, type, b64]) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const dt = new DataTransfer();
  dt.items.add(new File([bytes], name, {type}));
  return dt;
}"""


class AttachmentTests(LiveThreadCase):
    def transfer(self, page, name, mime, data):
        return page.evaluate_handle(TRANSFER, [name, mime, base64.b64encode(data).decode()])

    def shot(self, page, name):
        if SHOTS:
            page.screenshot(path=os.path.join(SHOTS, name))

    def test_paste_drop_and_button_upload_then_everyone_sees_and_downloads(self):
        errors: list[str] = []
        member, _ = self.page_for(self.member)
        owner, _ = self.page_for(self.owner)
        watch_console(member, errors)
        watch_console(owner, errors)

        # Paste a screenshot into the box.
        dt = self.transfer(member, "", "image/png", png(800, 500, (47, 111, 222)))
        member.locator("#compose textarea").evaluate(
            "(box, dt) => box.dispatchEvent(new ClipboardEvent('paste', "
            "{clipboardData: dt, bubbles: true, cancelable: true}))",
            dt,
        )
        chips = member.locator("#attach-list .attach-chip")
        expect(chips).to_have_count(1)
        expect(chips.first.locator("img")).to_have_count(1, timeout=WAIT)  # its thumbnail

        # Drop a file on the compose box.
        dt = self.transfer(member, "quarterly plan.pdf", "application/pdf", PDF)
        member.dispatch_event("#compose", "dragenter", {"dataTransfer": dt})
        expect(member.locator("#compose")).to_have_class("compose dragging")
        member.dispatch_event("#compose", "drop", {"dataTransfer": dt})
        expect(member.locator("#compose")).to_have_class("compose")
        expect(chips).to_have_count(2)
        expect(chips.nth(1)).to_contain_text("quarterly plan.pdf")
        expect(chips.nth(1)).not_to_have_class("attach-chip busy", timeout=WAIT)

        # The button: a file named .txt that is really a PNG, shown as the image it is.
        member.locator("#attach-input").set_input_files(
            {"name": "notes.txt", "mimeType": "text/plain", "buffer": png(64, 64, (200, 60, 40))}
        )
        expect(chips).to_have_count(3)
        expect(chips.nth(2).locator("img")).to_have_count(1, timeout=WAIT)
        # Removing a chip drops that file from the message.
        chips.nth(2).locator(".attach-remove").click()
        expect(chips).to_have_count(2)
        self.shot(member, "compose-with-files-1280.png")

        box = member.locator("#compose textarea")
        box.fill("Here's the screenshot and the plan")
        box.press("Enter")
        expect(chips).to_have_count(0)

        for page in (owner, member):
            entry = page.locator(".entry.chat", has_text="Here's the screenshot")
            expect(entry.locator(".files .file")).to_have_count(2, timeout=WAIT)
            preview = entry.locator(".files .preview img")
            expect(preview).to_have_count(1)
            expect(preview).to_have_attribute("alt", "Pasted image.png")
            wait_in_page(
                page, "img => img.complete && img.naturalWidth > 0", preview.element_handle()
            )
            pdf = entry.locator(".files .download", has_text="quarterly plan.pdf")
            expect(pdf).to_contain_text("45 bytes")
        self.shot(owner, "message-with-files-1280.png")

        # Downloads keep their name.
        entry = owner.locator(".entry.chat", has_text="Here's the screenshot")
        with owner.expect_download() as download:
            entry.locator(".files .download", has_text="quarterly plan.pdf").click()
        assert download.value.suggested_filename == "quarterly plan.pdf"
        with open(download.value.path(), "rb") as fh:
            assert fh.read() == PDF
        href = entry.locator(".files .preview").get_attribute("href")

        # A phone.
        phone, _ = self.page_for(self.member, viewport={"width": 390, "height": 844})
        watch_console(phone, errors)
        expect(phone.locator(".files .preview img")).to_have_count(1, timeout=WAIT)
        phone.locator("#attach-input").set_input_files(
            {"name": "a rather long report name, final v2.pdf", "mimeType": "x/y", "buffer": PDF}
        )
        expect(phone.locator("#attach-list .attach-chip:not(.busy)")).to_have_count(1, timeout=WAIT)
        self.shot(phone, "message-with-files-390.png")

        # Someone outside the house gets a plain 404 for the file.
        stranger, _ = self.page_for(self.stranger, path="/")
        assert stranger.goto(href).status == 404

        # Deleted: gone from the page, and the file answers 404 to members too.
        self.delete(owner, entry)
        expect(member.locator(".entry.chat", has_text="Here's the screenshot")).to_have_count(
            0, timeout=WAIT
        )
        assert member.request.get(href).status == 404
        assert errors == [], errors

    def test_a_refused_file_says_which_limit(self):
        errors: list[str] = []
        page, _ = self.page_for(self.member)
        watch_console(page, errors)
        page.locator("#attach-input").set_input_files(
            {"name": "huge.png", "mimeType": "image/png", "buffer": png_bomb()}
        )
        expect(page.locator("#compose-error")).to_contain_text("pixels", timeout=WAIT)
        expect(page.locator("#attach-list .attach-chip")).to_have_count(0)
        # The failed upload's 413 is the only console line.
        assert all("413" in e for e in errors), errors

    def test_an_owner_purges_a_messages_files_and_every_page_says_so(self):
        errors: list[str] = []
        member, _ = self.page_for(self.member)
        owner, _ = self.page_for(self.owner)
        watch_console(owner, errors)
        member.locator("#attach-input").set_input_files(
            {"name": "secret.pdf", "mimeType": "application/pdf", "buffer": PDF}
        )
        expect(member.locator("#attach-list .attach-chip:not(.busy)")).to_have_count(
            1, timeout=WAIT
        )
        member.locator("#compose textarea").press("Enter")  # files alone are a message
        entry = owner.locator(".entry.chat", has_text="secret.pdf")
        expect(entry).to_have_count(1, timeout=WAIT)
        entry.hover()
        entry.locator(".actions summary").click()
        entry.locator(".actions .purge").click()
        owner.locator("#confirm-action").get_by_role("button", name="Remove files").click()
        for page in (owner, member):
            expect(page.locator("#entries")).to_contain_text("Files removed.", timeout=WAIT)
            expect(page.locator("#entries")).to_contain_text("removed 1 file of a message")
            expect(page.locator(".files .download")).to_have_count(0)
        owner.reload()
        expect(owner.locator("#entries")).to_contain_text("Files removed.", timeout=WAIT)
        expect(owner.locator(".files .download")).to_have_count(0)
        assert errors == [], errors

    def test_a_runs_report_shows_the_files_it_wrote(self):
        """The files a delegated run wrote come back on its report: a preview, a named file,
        a download, and a non-member's 404, as for a person's upload."""
        errors: list[str] = []
        chart = base64.b64encode(png(320, 180, (60, 110, 200))).decode()
        self.fake.script(
            bash(
                f"mkdir -p out && echo {chart} | base64 -d > out/chart.png"
                " && printf 'week,sales\\n1,40\\n2,90\\n' > out/sales.csv"
            ),
            Text("Charted the **weekly sales**: see the files."),
        )
        owner, _ = self.page_for(self.owner)
        token = next(c["value"] for c in owner.context.cookies() if c["name"] == "csrftoken")
        answer = owner.request.post(
            f"/api/threads/{self.thread.id}/runs",
            data={"agent": "helper", "task": "chart the weekly sales"},
            headers={"X-CSRFToken": token},
        )
        assert answer.status == 201, answer.text()
        child = answer.json()["run"]["childThreadId"]
        for size, name in ((DESKTOP, "run-files.png"), (PHONE, "run-files-phone.png")):
            member, _ = self.page_for(self.member, f"/threads/{child}/", viewport=size)
            watch_console(member, errors)
            report = member.locator(".entry.chat", has_text="weekly sales")
            expect(report).to_have_count(1, timeout=60_000)
            image = report.locator(".files .preview img")
            expect(image).to_have_attribute("alt", "chart.png")
            image.scroll_into_view_if_needed()
            wait_in_page(
                member, "img => img.complete && img.naturalWidth > 0", image.element_handle()
            )
            expect(report.locator(".files .download .file-name")).to_have_text(
                ["chart.png", "sales.csv"]
            )
            self.shot(member, name)
        with member.expect_download() as download:
            report.locator(".files .download", has_text="sales.csv").click()
        assert Path(download.value.path()).read_bytes() == b"week,sales\n1,40\n2,90\n"
        href = report.locator(".files .download", has_text="sales.csv").get_attribute("href")
        stranger, response = self.page_for(self.stranger, href)
        assert response.status == 404
        assert errors == [], errors
