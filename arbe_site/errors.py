"""Error pages for people: the site's layout and a way back, never a bare status line.

Django renders ``403.html``, ``404.html`` and ``500.html`` itself. ``StreamOutagePage``
answers a page request with ``503.html`` when the stream server can't be reached;
``/api/`` callers keep their JSON errors (``arbe_lib.api``). ``DebugNotFoundPage`` keeps
the site's own 404 under ``DEBUG`` (``make run``), unless ``DEBUG_404`` asks for Django's.
"""

from django.conf import settings
from django.shortcuts import render
from django.utils.deprecation import MiddlewareMixin

from streams.errors import ServerError, TransportError


class StreamOutagePage(MiddlewareMixin):
    RETRY_AFTER_S = 5

    def process_exception(self, request, exception):
        if request.path.startswith("/api/") or not isinstance(
            exception, (TransportError, ServerError)
        ):
            return None
        response = render(request, "503.html", status=503)
        response["Retry-After"] = str(self.RETRY_AFTER_S)
        return response


# In Django's debug 404 page (django/views/templates/technical_404.html), never in ours.
TECHNICAL_404 = b'<meta name="robots" content="NONE,NOARCHIVE">'


class DebugNotFoundPage(MiddlewareMixin):
    """Under ``DEBUG``, Django answers a missing page with its debug page, which lists every
    URL pattern of the site: a dead end for a person trying the app. The site's own 404 page
    instead; ``DEBUG_404=1`` brings Django's back for whoever is debugging routes."""

    def process_response(self, request, response):
        if (
            response.status_code != 404
            or not settings.DEBUG
            or settings.DEBUG_404
            or getattr(response, "streaming", False)
            or TECHNICAL_404 not in response.content
        ):
            return response
        return render(request, "404.html", status=404)
