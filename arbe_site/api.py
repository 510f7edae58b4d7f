"""Small helpers shared by the JSON API views: one error shape, auth at the edge.

Errors are ``{"error": "<text>"}`` with the status that says what went wrong:
400 invalid input (the text names the field), 401 bad credentials, 403
refused, 404 not found or not yours, 409 conflict.
"""

import functools

import msgspec
from asgiref.sync import iscoroutinefunction
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from houses.access import NotChat
from houses.auth import BadCredentials, aprincipal_from_request, principal_from_request
from streams.errors import StreamNotFound
from threads.entries import EntryError
from threads.permissions import WriteRefused
from threads.reading import ThreadLogMissing

_encoder = msgspec.json.Encoder()


def json_response(data, status: int = 200, headers: dict | None = None) -> HttpResponse:
    return HttpResponse(
        _encoder.encode(data), status=status, content_type="application/json", headers=headers
    )


def error(status: int, text: str) -> HttpResponse:
    return json_response({"error": text}, status=status)


class BadInput(ValueError):
    """Invalid request input; the message names the field."""


class NotAuthenticated(Exception):
    """No credentials were sent where they are needed (401)."""


ERRORS = [
    (BadCredentials, 401),
    (NotAuthenticated, 401),
    (Http404, 404),
    (PermissionDenied, 403),
    (WriteRefused, 403),
    (EntryError, 400),
    (BadInput, 400),
    (NotChat, 400),
    (ThreadLogMissing, 503),
]
# Failures of the stream server are ours, not the caller's; their texts name internal URLs.
UPSTREAM = {StreamNotFound: "The thread's log is missing from the stream server."}


def _answer(exc: Exception) -> HttpResponse:
    for kind, text in UPSTREAM.items():
        if isinstance(exc, kind):
            return error(503, text)
    for kind, status in ERRORS:
        if isinstance(exc, kind):
            text = str(exc) or {404: "Not found.", 403: "Forbidden."}.get(status, "")
            return error(status, text)
    raise exc


def _csrf_failure(request) -> HttpResponse | None:
    # Session callers are browsers: hold them to CSRF. Bearer callers carry no cookie.
    check = CsrfViewMiddleware(lambda r: None)
    check.process_request(request)
    response = check.process_view(request, None, (), {})
    return error(403, "CSRF check failed.") if response is not None else None


def api_view(view):
    """Resolve the principal (``request.principal``), check CSRF for sessions, map errors."""
    if iscoroutinefunction(view):

        @functools.wraps(view)
        async def wrapper(request, *args, **kwargs):
            try:
                request.principal = await aprincipal_from_request(request)
                if _needs_csrf(request) and (failure := _csrf_failure(request)):
                    return failure
                return await view(request, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - mapped or re-raised by _answer
                return _answer(exc)

    else:

        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            try:
                request.principal = principal_from_request(request)
                if _needs_csrf(request) and (failure := _csrf_failure(request)):
                    return failure
                return view(request, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - mapped or re-raised by _answer
                return _answer(exc)

    return csrf_exempt(wrapper)


def _needs_csrf(request) -> bool:
    principal = request.principal
    unsafe = request.method not in ("GET", "HEAD", "OPTIONS", "TRACE")
    return unsafe and principal is not None and not principal.bearer


def people_only(principal):
    """List routes answer people; anonymous callers get 401, sandbox tokens 403."""
    if principal is None:
        raise NotAuthenticated("Sign in or send an API token.")
    if not principal.is_person:
        raise PermissionDenied("Lists are for people.")
    return principal


def parse_json(request, struct):
    """The request body decoded into ``struct``; 400 naming the field otherwise."""
    try:
        return msgspec.json.decode(request.body, type=struct)
    except msgspec.ValidationError as exc:
        raise BadInput(str(exc)) from None
    except msgspec.DecodeError as exc:
        raise BadInput(f"Malformed JSON body: {exc}") from None
