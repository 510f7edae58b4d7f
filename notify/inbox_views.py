"""The inbox: ``/inbox/`` (the top bar's bell), ``GET /api/inbox`` and marking read.

One list for the page, the API and ``arbe inbox``: ``notify.yours.page``, newest first,
across every house of the person; each item links to its message in its thread.
"""

from __future__ import annotations

import re

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from arbe_lib.api import BadInput, api_view, json_response, people_only
from houses.models import Agent
from notify import yours
from notify.links import entry_path
from threads.narration import Name, Names

CURSOR = re.compile(r"^(\d{1,16})\.(\d{1,19})$")


def parse_cursor(value: str) -> tuple[int, int] | None:
    if not value:
        return None
    match = CURSOR.match(value)
    if match is None:
        raise BadInput("cursor: not one this server handed out")
    return int(match.group(1)), int(match.group(2))


def link(item: yours.Item) -> str:
    """The message in its thread (the page opens around it and marks it)."""
    return entry_path(item.thread_id, item.entry_id)


def rows(user, before=None, limit: int | None = None) -> tuple[list[dict], str]:
    limit = limit or yours.PAGE
    items = yours.page(user, before, limit + 1)
    more = len(items) > limit
    items = items[:limit]
    names = author_names({i.author_id for i in items})
    out = [{"item": i, "author": names.of(i.author_id), "url": link(i)} for i in items]
    nxt = f"{items[-1].ts}.{items[-1].id}" if more and items else ""
    return out, nxt


def author_names(ids) -> Names:
    """Who wrote the items (one query; a member who left keeps their name)."""
    agents = Agent.objects.filter(pk__in=[i for i in ids if i])
    return Names(
        (a.id, Name(a.display_name, a.handle, a.kind == Agent.Kind.BOT, a.active)) for a in agents
    )


def inbox_context(user, cursor: str = "") -> dict:
    try:
        before = parse_cursor(cursor)
    except BadInput:
        raise Http404 from None
    items, nxt = rows(user, before)
    return {"items": items, "next": nxt, "inbox_count": yours.unread_total(user)}


@login_required
@require_GET
def inbox_page(request):
    context = inbox_context(request.user, request.GET.get("after", ""))
    if request.htmx and request.GET.get("after"):
        return render(request, "notify/_inbox_page.html", context)
    return render(request, "notify/inbox.html", context)


@login_required
@require_POST
def mark_all_read_form(request):
    yours.mark_all_read(request.user)
    return redirect("inbox")


def item_row(row: dict) -> dict:
    i, author = row["item"], row["author"]
    return {
        "id": i.id,
        "entryId": i.entry_id,
        "kind": i.kind,
        "threadId": i.thread_id,
        "threadTitle": i.thread_title,
        "house": {"slug": i.house_slug, "name": i.house_name},
        "author": {
            "id": i.author_id,
            "handle": author.handle,
            "displayName": author.display,
            "bot": author.is_bot,
        },
        "text": i.text,
        "ts": i.ts,
        "unread": i.unread,
        "url": row["url"],
    }


@api_view
@require_http_methods(["GET"])
def inbox_api(request):
    """``GET /api/inbox?cursor=…&limit=…``: the same list as the page, and the unread count."""
    user = people_only(request.principal).user
    try:
        limit = max(1, min(int(request.GET.get("limit") or yours.PAGE), 200))
    except ValueError:
        raise BadInput("limit: a number") from None
    items, nxt = rows(user, parse_cursor(request.GET.get("cursor", "")), limit)
    return json_response(
        {
            "items": [item_row(r) for r in items],
            "unread": yours.unread_total(user),
            "next": nxt or None,
        }
    )


@api_view
@require_http_methods(["POST"])
def inbox_read_api(request):
    """``POST /api/inbox/read``: everything in the inbox is read."""
    user = people_only(request.principal).user
    return json_response({"marked": yours.mark_all_read(user)})
