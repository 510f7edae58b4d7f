"""Logging policy: every line printed once, one line per request, 4xx without tracebacks.

Daphne writes an access line per request (method, path, status). Django logs every 4xx again
on ``django.request`` (403, 400 and multipart errors with a full traceback), and every
``SuspiciousOperation`` at ERROR with one on ``django.security.<Name>``. A client's mistake is
not the server's: the access line is enough for the first, one line without a traceback for
the second (a forged host or a bad CSRF token is worth seeing). 5xx keep their tracebacks.
"""

import logging

CLIENT_ERRORS = range(400, 500)


class ClientErrorFilter(logging.Filter):
    """On a handler (logger filters miss records propagated from child loggers): drops
    ``django.request`` records of 4xx answers, strips the traceback from ``django.security``
    ones."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) not in CLIENT_ERRORS:
            return True
        if record.name == "django.request":
            return False
        if record.name.startswith("django.security"):
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
        return True
