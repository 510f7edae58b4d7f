"""Screenshots of the seeded demo for the README: ``make screenshots``.

    python scripts/screenshots.py [--out docs/screenshots] [--keep]

Seeds the demo into a fresh ``ARBE_VAR_DIR``, starts Daphne on a free loopback port,
adds a little conversation (a second thread, a member's message, one reply from the
demo bot, an invite link), then writes PNGs with Playwright on Debian's Chromium:

- ``thread.png``: the owner's thread with the bot's reply (1280×800)
- ``house.png``: the house page with last messages and an unread count (1280×800)
- ``members.png``: the members page with an invite link (1280×800)
- ``thread-phone.png``: the member's thread on a phone (390×844)
- ``admin-thread.png``: the thread in the admin (1280×800)
- ``edited-reactions.png``: an edited message and reactions, seen by the member (1280×800)
- ``account.png``: the account page (1280×800)
- ``notifications.png``, ``house-settings.png``: notification settings and the house's
  settings (1280×800)
- ``house-phone.png``, ``notifications-phone.png``: the house and notification settings on a
  phone (390×844)

The server is stopped by its PID; the var dir is removed unless ``--keep``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.peers.ports import free_port, stop, wait_for_port  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
REPLY_WAIT_MS = 60_000


def demo_env(var_dir: Path, port: int) -> dict[str, str]:
    return os.environ | {
        "ARBE_VAR_DIR": str(var_dir),
        "DATABASE_URL": "",
        "DURABLE_STREAMS_URL": "",
        "REDIS_URL": "",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "ARBE_INTERNAL_URL": f"http://127.0.0.1:{port}",
        "BACKSTAGE_SWEEP_S": "0",
        "ARBE_DEMO_OWNER_PASSWORD": "owner-" + secrets.token_urlsafe(9),
        "ARBE_DEMO_MEMBER_PASSWORD": "member-" + secrets.token_urlsafe(9),
        "ARBE_DEMO_ADMIN_PASSWORD": "admin-" + secrets.token_urlsafe(9),
    }


def manage(env: dict, *args: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True
    )


def start_server(env: dict, port: int) -> subprocess.Popen:
    web = [sys.executable, "-m", "arbe_site.web"]  # Daphne on uvloop, as deployed
    log = open(Path(env["ARBE_VAR_DIR"]) / "daphne.log", "wb")  # noqa: SIM115 (kept open)
    proc = subprocess.Popen(
        [*web, "-b", "127.0.0.1", "-p", str(port), "arbe_site.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group, stopped by PID with its children
    )
    wait_for_port(port, timeout=60, proc=proc)
    return proc


class Demo:
    """The browser side: one context per person, signed in through the login form."""

    def __init__(self, browser, base_url: str, env: dict):
        self.browser, self.base_url, self.env = browser, base_url, env

    def context(self, username: str, viewport=DESKTOP, **options):
        context = self.browser.new_context(base_url=self.base_url, viewport=viewport, **options)
        page = context.new_page()
        page.goto("/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", self.env[f"ARBE_DEMO_{username.upper()}_PASSWORD"])
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")
        return context, page

    @staticmethod
    def csrf(context) -> str:
        return next(c["value"] for c in context.cookies() if c["name"] == "csrftoken")

    def api(self, context, method: str, path: str, **options):
        headers = {"X-CSRFToken": self.csrf(context), "Referer": self.base_url + "/"}
        response = context.request.fetch(path, method=method, headers=headers, **options)
        if not response.ok:
            raise RuntimeError(f"{method} {path}: {response.status} {response.text()[:300]}")
        return response

    def say(self, context, thread_id: str, text: str, entry_id: str | None = None) -> None:
        body = {"payload": {"type": "chat", "text": text}}
        if entry_id:
            body["id"] = entry_id
        self.api(context, "POST", f"/api/threads/{thread_id}/entries", data=body)


def shoot(page, out: Path, name: str) -> None:
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)  # let live frames and fonts settle before the picture
    page.screenshot(path=str(out / name))
    print(f"wrote {out / name}")


def take(base_url: str, env: dict, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        demo = Demo(browser, base_url, env)
        owner, owner_page = demo.context("owner")
        member, _ = demo.context("member")

        threads = demo.api(owner, "GET", "/api/threads?house=demo").json()["threads"]
        welcome = threads[0]["id"]
        release = demo.api(
            owner, "POST", "/api/houses/demo/threads", data={"title": "Release checklist"}
        ).json()["thread"]["id"]
        demo.say(owner, release, "Cutting 0.4 on Friday. Anything still open?", "cut-04")
        demo.say(member, release, "The login redirect fix is in review. Can someone look today?")
        entry = f"/api/threads/{release}/entries/cut-04"
        edit = {"text": "Cutting 0.4 on **Thursday**. Anything open?"}
        demo.api(owner, "PATCH", entry, data=edit)
        for who, emoji in ((member, "👍"), (owner, "🎉"), (member, "🎉")):
            demo.api(who, "POST", f"{entry}/reactions", data={"emoji": emoji})
        demo.say(member, welcome, "Hi all! Trying the demo bot.")

        owner_page.goto(f"/threads/{welcome}/")
        owner_page.wait_for_load_state("networkidle")
        demo.say(owner, welcome, "@helper what can you do in this house?")
        # A locator, not a JS predicate: the pages' CSP refuses eval.
        owner_page.get_by_text("I can echo").first.wait_for(timeout=REPLY_WAIT_MS)
        shoot(owner_page, out, "thread.png")

        phone, phone_page = demo.context("member", viewport=PHONE, is_mobile=True, has_touch=True)
        phone_page.goto(f"/threads/{welcome}/")
        phone_page.get_by_text("I can echo").first.wait_for(timeout=REPLY_WAIT_MS)
        shoot(phone_page, out, "thread-phone.png")

        # A direct conversation and a private thread, so the house page shows both marks.
        people = demo.api(owner, "GET", "/api/houses/demo/members").json()
        agent = {m["username"]: m["agentId"] for m in people["members"]}
        helper = next(b["agentId"] for b in people["bots"] if b["handle"] == "helper")
        direct = demo.api(
            member, "POST", "/api/houses/demo/direct", data={"members": [agent["owner"]]}
        ).json()["thread"]["id"]
        demo.say(member, direct, "Got a minute after standup? About the hiring plan.")
        demo.say(owner, direct, "Sure, 10:30 works.")
        plans = demo.api(
            owner,
            "POST",
            "/api/houses/demo/threads",
            data={"title": "Hiring plan 2027", "members": [agent["member"], helper]},
        ).json()["thread"]["id"]
        demo.say(owner, plans, "Draft headcount is in the doc; comments here, not in #general.")
        owner_page.goto(f"/threads/{direct}/")
        owner_page.get_by_text("10:30 works").first.wait_for(timeout=REPLY_WAIT_MS)
        shoot(owner_page, out, "direct.png")
        owner_page.goto(f"/threads/{plans}/")
        shoot(owner_page, out, "private-thread.png")

        owner_page.goto("/houses/demo/")
        shoot(owner_page, out, "house.png")

        demo.api(owner, "POST", "/houses/demo/invites/new", form={"days": "7"})
        owner_page.goto("/houses/demo/members/")
        shoot(owner_page, out, "members.png")

        member_page = member.new_page()
        member_page.goto(f"/threads/{release}/")
        member_page.get_by_text("(edited)").first.wait_for(timeout=REPLY_WAIT_MS)
        shoot(member_page, out, "edited-reactions.png")

        owner_page.goto("/account/")
        shoot(owner_page, out, "account.png")

        owner_page.goto("/account/notifications/")
        shoot(owner_page, out, "notifications.png")
        demo.say(member, release, "@owner can you look at the redirect fix before Thursday?")
        owner_page.goto("/inbox/")
        shoot(owner_page, out, "inbox.png")
        owner_page.goto("/houses/demo/settings/")
        shoot(owner_page, out, "house-settings.png")
        for path, name in (
            ("/houses/demo/", "house-phone.png"),
            ("/account/notifications/", "notifications-phone.png"),
            ("/inbox/", "inbox-phone.png"),
        ):
            phone_page.goto(path)
            shoot(phone_page, out, name)

        admin, admin_page = demo.context("admin")
        admin_page.goto(f"/admin/threads/thread/{welcome}/change/")
        shoot(admin_page, out, "admin-thread.png")

        for context in (owner, member, phone, admin):
            context.close()
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--keep", action="store_true", help="keep the var dir (path printed)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    var_dir = Path(tempfile.mkdtemp(prefix="arbe-screenshots-"))
    port = free_port()
    env = demo_env(var_dir, port)
    server = None
    try:
        manage(env, "migrate", "--noinput")
        manage(env, "seed_demo")
        server = start_server(env, port)
        take(f"http://127.0.0.1:{port}", env, out)
    finally:
        if server is not None:
            stop(server)
        if args.keep:
            print(f"var dir kept: {var_dir}")
        else:
            shutil.rmtree(var_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"screenshots done in {time.monotonic() - started:.0f} s")
    sys.exit(code)
