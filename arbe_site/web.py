"""The web process: Daphne on uvloop.

    python -m arbe_site.web -b 127.0.0.1 -p 8000 arbe_site.asgi:application

Daphne's own arguments. Daphne makes its event loop when ``daphne.server`` is imported
(Twisted's asyncio reactor installed on ``asyncio.new_event_loop()``), before it imports the
application, so the loop policy is set here, first: the bare ``daphne`` command runs the
standard loop. The embedded backstage thread's loop comes from the same policy. Why uvloop:
docs/performance.md (the fan-out's p50 at 1,000 sockets).
"""

import os
import sys

from arbe_lib.runtime import use_uvloop


def main() -> None:
    use_uvloop()
    from daphne import cli
    from daphne.cli import CommandLineInterface

    if os.environ.get("LOG_FORMAT", "").strip().lower() == "json":
        # Daphne prints NCSA lines straight to stdout; JSON logs get theirs from ops.asgi.
        from ops.logs import JsonAccessLog

        cli.AccessLogGenerator = JsonAccessLog

    sys.argv[0] = "daphne"  # its usage line names the program whose arguments these are
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
