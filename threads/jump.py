"""Ctrl/Cmd+K: jump to a thread by name across your houses (``static/arbe/keys.js``),
or message a person or bot of them (the direct conversation, started or reopened).

Threads come from ``houses.access.threads_of``: only your houses' threads (private ones
only if you are in them), newest activity first; archived ones last; a direct
conversation by the other people's names. People, when the query names some: your houses'
members and active bots. The answer is JSON the page script renders as text.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.http import JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from houses.access import houses_of, threads_of
from houses.models import Agent
from threads.people import direct_titles

LIMIT = 12
PEOPLE = 5  # people offered to message, at most


@login_required
@require_GET
def jump(request):
    query = " ".join(request.GET.get("q", "").split())[:200]
    rows = threads_of(request.user).select_related("house")
    for word in query.split()[:8]:
        rows = rows.filter(title__icontains=word)
    rows = rows.order_by(
        F("archived_at").asc(nulls_first=True), F("last_entry_ts").desc(nulls_last=True)
    )
    rows = list(rows[:LIMIT])
    titles = direct_titles(rows, user=request.user)
    results = [
        {
            "title": titles.get(t.id, t.title),
            "house": t.house.name,
            "url": reverse("thread", args=[t.id]),
        }
        for t in rows
    ]
    return JsonResponse({"threads": results, "people": people(request.user, query)})


def people(user, query: str) -> list[dict]:
    """People and bots of your houses whose name or handle has every word of ``query``,
    each with the form that opens your direct conversation with them (none for no query)."""
    words = query.split()[:8]
    if not words:
        return []
    found = Agent.objects.filter(
        Q(user__memberships__house__in=houses_of(user), user__is_active=True)
        | Q(kind=Agent.Kind.BOT, active=True, house__in=houses_of(user))
    ).exclude(user=user)
    for word in words:
        found = found.filter(Q(display_name__icontains=word) | Q(handle__icontains=word))
    rows = found.annotate(
        slug=Coalesce("house__slug", "user__memberships__house__slug"),
        house_name=Coalesce("house__name", "user__memberships__house__name"),
    ).values_list("id", "display_name", "handle", "kind", "slug", "house_name")
    mine = set(houses_of(user).values_list("slug", flat=True))
    return [
        {
            "title": f"Message {name}" + (f" (@{handle})" if kind == Agent.Kind.BOT else ""),
            "house": house_name,
            "url": reverse("open-direct", args=[slug]),
            "agent": agent_id,
        }
        for agent_id, name, handle, kind, slug, house_name in rows.order_by("display_name")[
            : PEOPLE * 4
        ]
        if slug in mine
    ][:PEOPLE]
