"""Error pages for people: the site's layout and a way back, never a bare status line.

Django renders ``403.html``, ``404.html`` and ``500.html`` itself. ``StreamOutagePage``
answers a page request with ``503.html`` when the stream server can't be reached;
``/api/`` callers keep their JSON errors (``arbe_site.api``).
"""

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
