"""Refuse requests whose path or query holds a NUL character.

PostgreSQL text can't hold NUL, so a lookup by such a value fails inside the
database (``DataError``) instead of finding nothing. No id, slug, offset or
search arbe knows contains one, so the request is a 400 before any view runs.
"""

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpResponseBadRequest, JsonResponse

TEXT = "The address holds a NUL character."


def _refused(request):
    if "\x00" not in request.path and "%00" not in request.META.get("QUERY_STRING", ""):
        return None
    if request.path.startswith("/api/"):
        return JsonResponse({"error": TEXT}, status=400)
    return HttpResponseBadRequest(TEXT)


def refuse_nul(get_response):
    """Sync and async capable, like every middleware here (no thread hop under Daphne)."""
    if iscoroutinefunction(get_response):

        async def middleware(request):
            return _refused(request) or await get_response(request)

        markcoroutinefunction(middleware)
    else:

        def middleware(request):
            return _refused(request) or get_response(request)

    return middleware


refuse_nul.sync_capable = True
refuse_nul.async_capable = True
