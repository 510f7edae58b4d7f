"""The live thread case, strict: a console error, an uncaught exception or a native dialog
(``confirm()``, which the CSP would block in an inline handler anyway) fails the test."""

from playwright.sync_api import expect

from tests.e2e.live import WAIT, LiveThreadCase, signed_in_context


class StrictCase(LiveThreadCase):
    allowed_console = ()  # substrings of console errors a test expects (a 404's resource)

    def setUp(self):
        super().setUp()
        self.problems = []

    def tearDown(self):
        super().tearDown()
        assert self.problems == [], self.problems

    def open(self, user, path=None, **context_args):
        """A page as ``user`` at ``path`` (default: the thread), watched for problems."""
        context = signed_in_context(self.browser, self.live_server_url, user, **context_args)
        self.contexts.append(context)
        page = context.new_page()
        page.on("console", lambda m: self._console(m))
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        page.on(
            "dialog", lambda d: (self.problems.append(f"native dialog: {d.message}"), d.dismiss())
        )
        response = page.goto(path or f"/threads/{self.thread.id}/")
        if path is None:
            expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
        return page, response

    def _console(self, message):
        if message.type == "error" and not any(a in message.text for a in self.allowed_console):
            self.problems.append(f"console: {message.text}")

    def page_for(self, user, path=None, **context_args):
        return self.open(user, path, **context_args)
