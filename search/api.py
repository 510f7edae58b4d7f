"""``GET /api/search?q=…&house=…&sort=newest|relevance&cursor=…&limit=…`` for people."""

from django.views.decorators.http import require_http_methods

from arbe_lib.api import BadInput, api_view, json_response, people_only
from arbe_lib.zones import BadZone, viewer_zone
from houses.access import access_house
from search.query import BadQuery
from search.service import Hit, run_search


def hit_row(hit: Hit) -> dict:
    return {
        "entryId": hit.entry_id,
        "threadId": hit.thread_id,
        "threadTitle": hit.thread_title,
        "house": {"slug": hit.house_slug, "name": hit.house_name},
        "author": {
            "id": hit.author.id,
            "handle": hit.author.handle,
            "displayName": hit.author.display,
            "bot": hit.author.is_bot,
        },
        "ts": hit.ts,
        "snippet": hit.snippet,
        "url": hit.url,
    }


@api_view
@require_http_methods(["GET"])
def search(request):
    principal = people_only(request.principal)
    slug = request.GET.get("house") or None
    house = access_house(principal, slug).house if slug else None
    try:
        zone = viewer_zone(request)
        limit = int(request.GET.get("limit") or 20)
        results = run_search(
            principal.user,
            principal.agent_id,
            request.GET.get("q", ""),
            house=house,
            sort=request.GET.get("sort") or "newest",
            cursor=request.GET.get("cursor") or None,
            limit=limit,
            zone=zone,
        )
    except ValueError as exc:  # BadQuery, BadZone, or a limit that isn't a number
        known = isinstance(exc, BadQuery | BadZone)
        raise BadInput(str(exc) if known else "limit: a number") from None
    return json_response(
        {"results": [hit_row(h) for h in results.hits], "next": results.next_cursor}
    )
