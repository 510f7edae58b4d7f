"""Run the embedded Durable Streams server alone: ``manage.py serve_streams``.

It serves open (no auth) unless ``DURABLE_STREAMS_SECRET`` is set in the
environment, and then refuses to listen beyond loopback without it. It never
migrates: run ``manage.py migrate`` first.
"""

import ipaddress
import os
import signal

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

TABLES = {"streams_stream", "streams_message", "streams_producer"}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def report_waiters(signum, frame) -> None:
    """SIGUSR1: print how many long-polls/SSE streams wait (a debug aid for operators and tests).

    ``os.write``, not ``print``: a signal handler must not re-enter buffered stdout.
    """
    from streams.server.wake import hub

    os.write(1, f"streams waiters: {hub.count}\n".encode())


class Command(BaseCommand):
    help = "Serve the Durable Streams protocol at /v1/stream/ from this project's database."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=4437)
        parser.add_argument(
            "--long-poll-ms", type=int, default=None, help="default DURABLE_STREAMS_LONG_POLL_MS"
        )
        parser.add_argument(
            "--base-url",
            default=None,
            help="where clients reach this server, for Location (default http://HOST:PORT)",
        )

    def handle(self, *args, host, port, long_poll_ms, base_url, **options):
        secret = os.environ.get("DURABLE_STREAMS_SECRET") or None
        if secret is None and not is_loopback(host):
            raise CommandError(
                f"refusing to serve without auth on {host}: set DURABLE_STREAMS_SECRET "
                "or bind a loopback address"
            )
        missing = TABLES - set(connection.introspection.table_names())
        connection.close()
        if missing:
            raise CommandError(
                f"stream tables missing ({', '.join(sorted(missing))}): "
                "run `manage.py migrate` first"
            )
        from streams.server import create_app

        netloc = f"[{host}]" if ":" in host and not host.startswith("[") else host
        base_url = base_url or f"http://{netloc}:{port}"
        app = create_app(secret=secret, long_poll_ms=long_poll_ms, base_url=base_url)
        auth = "bearer auth" if secret else "open, no auth"
        self.stdout.write(f"Durable Streams on http://{host}:{port}/v1/stream/ ({auth})")
        self.stdout.flush()
        signal.signal(signal.SIGUSR1, report_waiters)
        try:
            from streams.server.serve import serve_uvicorn
        except ImportError:  # Daphne is always installed; uvicorn is the faster server.
            return self.serve_daphne(app, host, port)
        serve_uvicorn(app, host, port)

    def serve_daphne(self, app, host, port):
        from daphne.endpoints import build_endpoint_description_strings
        from daphne.server import Server

        endpoints = build_endpoint_description_strings(host=host, port=port)
        Server(application=app, endpoints=endpoints, verbosity=0).run()
