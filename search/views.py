"""The search page: the same search as the API, in the site's layout; "More" by cursor."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from arbe_lib.zones import BadZone, viewer_zone
from houses.access import access_house, houses_of
from houses.membership import agent_for_user
from search.query import BadQuery
from search.service import run_search


@login_required
def search_page(request):
    q, slug = request.GET.get("q", "").strip(), request.GET.get("house") or ""
    sort = request.GET.get("sort") if request.GET.get("sort") == "relevance" else "newest"
    house = access_house(request.user, slug).house if slug else None
    context = {"q": q, "house": house, "sort": sort, "houses": houses_of(request.user)}
    status = 200
    if q:
        try:
            context["results"] = run_search(
                request.user,
                agent_for_user(request.user).id,
                q,
                house=house,
                sort=sort,
                cursor=request.GET.get("cursor") or None,
                zone=viewer_zone(request),
            )
        except BadQuery as exc:
            context["problem"] = str(exc).removeprefix("q: ").removeprefix("cursor: ")
        except BadZone as exc:
            context["problem"], status = str(exc).removeprefix("tz: "), 400
    if request.htmx and request.GET.get("cursor"):
        return render(request, "search/_results.html", context, status=status)
    return render(request, "search/search.html", context, status=status)
