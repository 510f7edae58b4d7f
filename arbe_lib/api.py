"""Small helpers shared by the JSON API views: one error shape, auth at the edge.

Errors are ``{"error": "<text>"}`` with the status that says what went wrong:
400 invalid input (the text names the field), 401 no or bad credentials, 403
refused, 404 not found or not yours, 409 conflict, 413 a body too large.
Anything unexpected is logged and answered 500 with a plain sentence: no
traceback, path or secret ever reaches the caller.
"""

import functools
import logging

import msgspec
from asgiref.sync import iscoroutinefunction
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from attachments.service import Conflict as AttachmentTaken
from attachments.sniff import Refused
from houses.auth import BadCredentials, aprincipal_from_request, principal_from_request
from streams.errors import StreamError, StreamNotFound
from threads.entries import EntryError
from threads.paging import BadCursor
from threads.permissions import WriteRefused
from threads.posting import BadEntryId, IdTaken, NotChat
from threads.reading import ThreadLogMissing

logger = logging.getLogger(__name__)
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


class Conflict(Exception):
    """The request clashes with what is already there (409); the message says how."""


class TooLarge(Exception):
    """The request body is over the size limit (413)."""


ERRORS = [
    (BadCredentials, 401),
    (NotAuthenticated, 401),
    (Http404, 404),
    (PermissionDenied, 403),
    (WriteRefused, 403),
    (EntryError, 400),
    (BadInput, 400),
    (BadCursor, 400),
    (NotChat, 400),
    (BadEntryId, 400),
    (Conflict, 409),
    (IdTaken, 409),
    (AttachmentTaken, 409),
    (TooLarge, 413),
    (ThreadLogMissing, 503),
]
# Failures of the stream server are ours, not the caller's; their texts name internal URLs.
UPSTREAM = {StreamNotFound: "The thread's log is missing from the stream server."}
UNREACHABLE = (
    "The stream server could not be reached, so this may or may not have been stored. "
    "Retrying with the same id is safe: a stored post is answered as a duplicate."
)


def _answer(exc: Exception) -> HttpResponse:
    if isinstance(exc, RequestDataTooBig):
        exc = TooLarge("The request body is too large.")
    if isinstance(exc, Refused):  # an attachment limit: the status says which kind
        return error(exc.status, str(exc))
    for kind, text in UPSTREAM.items():
        if isinstance(exc, kind):
            return error(503, text)
    if isinstance(exc, StreamError) and exc.transient:
        # The append may have landed before the connection broke: only a retry can tell.
        logger.warning("the stream server failed an API request: %s", type(exc).__name__)
        response = error(503, UNREACHABLE)
        response["Retry-After"] = "1"
        return response
    for kind, status in ERRORS:
        if isinstance(exc, kind):
            text = str(exc) or {404: "Not found.", 403: "Forbidden."}.get(status, "")
            response = error(status, text)
            if status == 401:  # RFC 9110: a 401 names the scheme to use
                response["WWW-Authenticate"] = 'Bearer realm="arbe"'
            return response
    logger.error("unexpected error answering an API request", exc_info=exc)
    return error(500, "Something went wrong on the server.")


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
                request.principal = _signed_in(await aprincipal_from_request(request))
                if _needs_csrf(request) and (failure := _csrf_failure(request)):
                    return failure
                return await view(request, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - mapped or re-raised by _answer
                return _answer(exc)

    else:

        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            try:
                request.principal = _signed_in(principal_from_request(request))
                if _needs_csrf(request) and (failure := _csrf_failure(request)):
                    return failure
                return view(request, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - mapped or re-raised by _answer
                return _answer(exc)

    return csrf_exempt(wrapper)


def _signed_in(principal):
    """Every API route needs a caller: anonymous is 401 on all of them, answered before
    anything is looked up, so it says nothing about whether a thread or house exists (a
    signed-in non-member gets 404 for that), and tells a client its credentials are missing."""
    if principal is None:
        raise NotAuthenticated("Sign in or send an API token.")
    return principal


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
    """The request body decoded into ``struct``; 400 naming the field otherwise (413 when
    the body is over ``DATA_UPLOAD_MAX_MEMORY_SIZE``)."""
    return decode_body(request_body(request), struct, BadInput)


def request_body(request) -> bytes:
    try:
        return request.body
    except RequestDataTooBig:
        raise TooLarge("The request body is too large.") from None


def decode_body(body: bytes, struct, error: type[Exception]):
    """``body`` decoded into ``struct``; every way JSON can be bad becomes ``error``."""
    try:
        return msgspec.json.decode(body, type=struct)
    except msgspec.ValidationError as exc:
        raise error(str(exc)) from None
    except msgspec.DecodeError as exc:
        raise error(f"Malformed JSON body: {exc}") from None
    except UnicodeDecodeError:
        raise error("The body is not valid UTF-8.") from None
    except RecursionError:
        raise error("JSON nested too deeply - at `$`") from None
