"""Every way a multipart body can be malformed, answered in one place: 400 (413 when too
large), never a 500 with a traceback that quotes the caller's boundary.

Django parses a multipart body lazily, wherever ``request.POST`` or ``request.FILES`` is
first read (the CSRF check, a view), and its parser errors (``MultiPartParserError``,
``TooManyFieldsSent``…) are not all mapped to 4xx by Django. This middleware reads a
multipart body first, off the event loop, and turns any of them into a plain answer. The
log gets the error's kind only: its text may carry the hostile boundary.
"""

import logging

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousMultipartForm,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import HttpResponse, JsonResponse, UnreadablePostError
from django.http.multipartparser import MultiPartParserError

logger = logging.getLogger(__name__)

MALFORMED = (
    MultiPartParserError,
    SuspiciousMultipartForm,
    TooManyFieldsSent,
    TooManyFilesSent,
    UnreadablePostError,
    UnicodeDecodeError,
    ValueError,
)
TEXTS = {
    RequestDataTooBig: (413, "The request body is too large."),
    TooManyFieldsSent: (400, "The form has too many fields."),
    TooManyFilesSent: (400, "The form has too many files."),
}
MALFORMED_TEXT = "The multipart body is malformed (its boundary, part headers or file name)."


def _is_multipart(request) -> bool:
    return request.method in ("POST", "PUT", "PATCH") and request.content_type.startswith(
        "multipart/"
    )


def _parse(request) -> HttpResponse | None:
    try:
        request.POST  # noqa: B018 - parses the body now, POST and FILES both
        request.FILES  # noqa: B018
    except (RequestDataTooBig, *MALFORMED) as exc:
        status, text = next(
            (answer for kind, answer in TEXTS.items() if isinstance(exc, kind)),
            (400, MALFORMED_TEXT),
        )
        logger.info("refused a multipart body (%s): %s", status, type(exc).__name__)
        if request.path.startswith("/api/"):
            return JsonResponse({"error": text}, status=status)
        return HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")
    return None


def refuse_bad_multipart(get_response):
    """Sync and async capable; the parse runs in a thread (it reads a spooled file)."""
    if iscoroutinefunction(get_response):

        async def middleware(request):
            if _is_multipart(request):
                refused = await sync_to_async(_parse)(request)
                if refused is not None:
                    return refused
            return await get_response(request)

        markcoroutinefunction(middleware)
    else:

        def middleware(request):
            if _is_multipart(request) and (refused := _parse(request)) is not None:
                return refused
            return get_response(request)

    return middleware


refuse_bad_multipart.sync_capable = True
refuse_bad_multipart.async_capable = True
