"""Ctrl/Cmd+K: jump to a thread by name across your houses (``static/arbe/keys.js``).

Threads come from ``houses.access.threads_of``: only your houses' threads, newest
activity first; archived ones last. The answer is JSON the page script renders as text.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import F
from django.http import JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from houses.access import threads_of

LIMIT = 12


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
    results = [
        {"title": t.title, "house": t.house.name, "url": reverse("thread", args=[t.id])}
        for t in rows[:LIMIT]
    ]
    return JsonResponse({"threads": results})
