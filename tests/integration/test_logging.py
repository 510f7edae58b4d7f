"""The site's logging: each line printed once, nothing for a client's mistake beyond the access
line (Daphne's), a ``django.security`` event as one line without a traceback, 5xx in full.

The site's ``LOGGING`` is applied the way ``django.setup()`` does, with ``DEBUG`` on (where
Django's own console handler used to print every ``django.*`` line a second time), and what
reaches stderr is counted.
"""

import logging
import threading

import pytest
from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousFileOperation
from django.http import Http404, HttpResponse
from django.test import Client
from django.urls import include, path
from django.utils.log import configure_logging


def forbidden(request):
    raise PermissionDenied("members only")


def bad_request(request):
    raise BadRequest("no such field")


def not_found(request):
    raise Http404("no such thread")


def suspicious(request):
    raise SuspiciousFileOperation("path escapes the workspace")


def broken(request):
    raise RuntimeError("a bug")


def fine(request):
    return HttpResponse("ok")


urlpatterns = [
    path("forbidden", forbidden),
    path("bad", bad_request),
    path("missing", not_found),
    path("suspicious", suspicious),
    path("broken", broken),
    path("fine", fine),
    # The site's own routes too: its error pages link back to them.
    path("", include("arbe_site.urls")),
]

pytestmark = pytest.mark.urls(__name__)


class Console:
    """The site's logging applied in the test's own phase (stderr is captured per phase), and
    what it prints to stderr."""

    def __init__(self, settings, capsys):
        self.capsys = capsys
        settings.DEBUG = True
        configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)
        # Only this test's thread: servers other tests left running log from their own.
        here = threading.get_ident()
        for handler in logging.getLogger().handlers:
            handler.addFilter(lambda record: record.thread == here)
        capsys.readouterr()

    def __call__(self) -> str:
        return self.capsys.readouterr().err


@pytest.fixture
def console(settings, capsys):
    yield lambda: Console(settings, capsys)
    configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_a_django_log_line_is_printed_once(console):
    printed = console()
    logging.getLogger("django.template").warning("printed exactly once")
    assert printed().count("printed exactly once") == 1


@pytest.mark.parametrize("url", ["/forbidden", "/bad", "/missing", "/no-such-route"])
def test_a_4xx_prints_no_line_and_no_traceback(console, url):
    printed = console()
    response = Client().get(url)
    assert 400 <= response.status_code < 500
    assert lines(printed()) == []


def test_a_security_event_is_one_line_without_a_traceback(console):
    printed = console()
    assert Client().get("/suspicious").status_code == 400
    [line] = lines(printed())
    assert "path escapes the workspace" in line


def test_a_forged_host_is_one_line_without_a_traceback(console):
    printed = console()
    assert Client().get("/fine", HTTP_HOST="attacker.example").status_code == 400
    [line] = lines(printed())
    assert "attacker.example" in line and "Traceback" not in line


def test_a_5xx_is_logged_once_with_its_traceback(console):
    printed = console()
    assert Client(raise_request_exception=False).get("/broken").status_code == 500
    text = printed()
    assert text.count("Internal Server Error: /broken") == 1
    assert text.count("Traceback (most recent call last)") == 1
    assert "RuntimeError: a bug" in text


def test_a_successful_request_prints_nothing_from_the_app(console):
    printed = console()
    assert Client().get("/fine").status_code == 200
    assert lines(printed()) == []
