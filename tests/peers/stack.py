"""Run a command against the scaled configuration: PostgreSQL + Redis + the reference Node
Durable Streams server, each started here on a free loopback port and stopped by its PID.

    python -m tests.peers.stack -- pytest tests/integration
"""

import contextlib
import os
import subprocess
import sys

from tests.peers.postgres import postgres_server
from tests.peers.redis import redis_server
from tests.peers.reference import reference_server


def main(argv: list[str]) -> int:
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    if not argv:
        print("usage: python -m tests.peers.stack -- COMMAND…", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        pg = stack.enter_context(postgres_server())
        env = {
            **os.environ,
            "DATABASE_URL": pg.create_database("arbe"),
            "REDIS_URL": stack.enter_context(redis_server()),
            "DURABLE_STREAMS_URL": stack.enter_context(reference_server()),
            "ARBE_STACK": "postgres+redis+reference",
            # Most tests drive the director in-process; the worker test opts into Redis wakes.
            "BACKSTAGE": "inprocess",
        }
        print(
            f"stack: {env['DATABASE_URL']} · {env['REDIS_URL']} · {env['DURABLE_STREAMS_URL']}",
            flush=True,
        )
        return subprocess.run(argv, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
