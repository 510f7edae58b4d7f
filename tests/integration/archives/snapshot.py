"""What a house looks like to each of its people, for comparing a house with its restored
copy: the pages, /now, search, the thread lists with unread counts, and the files."""

import json
import re

from attachments.models import Attachment
from tests.integration.archives.seeding import client_for
from threads.models import Thread

SEARCHES = ("budget", "roadmap", "secret", "plan", "tidied", "archived")
_CSRF = re.compile(r'(name="csrfmiddlewaretoken" value="|"X-CSRFToken": ")[^"]+')
_NONCE = re.compile(r'nonce="[^"]+"')
# A membership's row number (its remove form): rows are numbered by the server that made them.
_MEMBERSHIP = re.compile(r"(/members/)\d+/")
_CSRF_HEADER = re.compile(r'("x-csrftoken": ")[^"]+')
# Offsets are opaque and the store's own: equal logs may sit at other offsets.
_OFFSET = re.compile(
    r'((?:offset|upto|from)=|data-offset="|data-[a-z-]*offset="|"offset": ")[^"&\s]+', re.I
)


def _page(client, url: str) -> str:
    response = client.get(url)
    text = response.content.decode() if not hasattr(response, "streaming_content") else ""
    text = _NONCE.sub('nonce=""', _CSRF.sub(r"\1", _CSRF_HEADER.sub(r"\1", text)))
    text = _OFFSET.sub(r"\1", text)
    text = _MEMBERSHIP.sub(r"\1", text)
    return f"{response.status_code}\n{text}"


def _json(client, url: str):
    response = client.get(url)
    body = response.json() if response.status_code == 200 else None
    return response.status_code, _without_offsets(body)


def _without_offsets(value):
    # Offsets are opaque and the store's own: equal logs may be at other offsets.
    if isinstance(value, dict):
        return {
            k: _without_offsets(v)
            for k, v in value.items()
            if "offset" not in k.lower() and k != "nowMs"  # nowMs: when it was asked
        }
    if isinstance(value, list):
        return [_without_offsets(v) for v in value]
    return value


def snapshot(users, slug: str) -> dict:
    threads = list(Thread.objects.filter(house__slug=slug).order_by("pk"))
    files = list(Attachment.objects.filter(house__slug=slug).order_by("pk"))
    out: dict = {}
    for user in users:
        c = client_for(user)
        seen = out[user.get_username()] = {}
        seen["house"] = _page(c, f"/houses/{slug}/")
        seen["members"] = _page(c, f"/houses/{slug}/members/")
        seen["list"] = _json(c, f"/api/threads?house={slug}")
        for t in threads:
            seen[f"page {t.title}"] = _page(c, f"/threads/{t.id}/")
            seen[f"now {t.title}"] = _json(c, f"/api/threads/{t.id}/now")
        for q in SEARCHES:
            seen[f"search {q}"] = _json(c, f"/api/search?q={q}&house={slug}")
        for f in files:
            response = c.get(f"/attachments/{f.thread_id}/{f.id}/file")
            body = b"".join(response.streaming_content) if response.status_code == 200 else b""
            seen[f"file {f.id}"] = (response.status_code, len(body), hash(body))
    return out


def differences(before: dict, after: dict) -> list[str]:
    """The keys whose values differ, with the first differing lines of each."""
    import difflib

    out = []
    for user in sorted(set(before) | set(after)):
        a, b = before.get(user, {}), after.get(user, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                left = (
                    a.get(key)
                    if isinstance(a.get(key), str)
                    else json.dumps(a.get(key), indent=1, default=str)
                )
                right = (
                    b.get(key)
                    if isinstance(b.get(key), str)
                    else json.dumps(b.get(key), indent=1, default=str)
                )
                diff = list(
                    difflib.unified_diff(
                        str(left).splitlines(), str(right).splitlines(), lineterm="", n=1
                    )
                )
                out.append(f"{user} / {key}:\n" + "\n".join(diff[:30]))
    return out
