"""The scaled configuration on one machine: ``make scale``.

    python scripts/scale.py [--web 2] [--workers 2] [--port 8000] [--streams reference]

Starts the shared services on free loopback ports — PostgreSQL (a throw-away cluster),
Redis, and the reference Node Durable Streams server as the external store (or
``--streams embedded``: ``manage.py serve_streams`` on the same PostgreSQL) — migrates,
seeds the demo house, then runs the Procfile with honcho: ``--web`` Daphnes on
consecutive ports from ``--port`` and ``--workers`` backstage workers (their health ports
from ``--port`` + 100, as honcho numbers them). Waits until every process's ``/readyz``
answers 200, then prints the URLs and the demo logins. Ctrl-C stops honcho's processes,
then the services, each by PID.

Everything lives in a temporary ``ARBE_VAR_DIR``, removed at the end (``--keep`` keeps
it). docs/deploy.md explains the same layout across machines.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.peers.cluster import Cluster  # noqa: E402
from tests.peers.ports import wait_ready  # noqa: E402

WORKER_PORT_STEP = 100  # honcho: each process type's ports start 100 above the previous one


def free_run(start: int, count: int, workers: int = 0) -> int:
    """The first port from ``start`` where ``count`` consecutive loopback ports are free,
    and the ``workers`` ports honcho gives the workers, 100 above them."""
    port = start
    while port < 65000 - WORKER_PORT_STEP:
        wanted = [port + n for n in range(count)]
        wanted += [port + WORKER_PORT_STEP + n for n in range(workers)]
        if all(_free(p) for p in wanted):
            return port
        port += count
    raise RuntimeError("no free run of loopback ports")


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--web", type=int, default=2, help="Daphne processes (default 2)")
    parser.add_argument("--workers", type=int, default=2, help="backstage workers (default 2)")
    parser.add_argument("--port", type=int, default=8000, help="first web port (default 8000)")
    parser.add_argument("--streams", choices=("reference", "embedded"), default="reference")
    parser.add_argument("--keep", action="store_true", help="keep the var dir at the end")
    args = parser.parse_args(argv)
    if args.keep:
        os.environ["ARBE_KEEP_CLUSTER"] = "1"
    signal.signal(signal.SIGTERM, _interrupt)  # stop like Ctrl-C: every process by its PID

    port = free_run(args.port, args.web, args.workers)
    web_urls = [f"http://127.0.0.1:{port + n}" for n in range(args.web)]
    worker_urls = [f"http://127.0.0.1:{port + WORKER_PORT_STEP + n}" for n in range(args.workers)]
    cluster = Cluster(web=0, workers=0, streams=args.streams, internal_url=web_urls[0])
    with cluster:
        print(cluster.manage("seed_demo", "--url", web_urls[0] + "/"), end="", flush=True)
        env = {
            **cluster.env,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "DEBUG": os.environ.get("DEBUG", "false"),
        }
        honcho = [
            sys.executable, "-m", "honcho", "start", "--no-colour",
            "-f", str(ROOT / "Procfile"), "-d", str(ROOT), "-p", str(port),
            "-c", f"web={args.web},worker={args.workers}",
        ]  # fmt: skip
        proc = subprocess.Popen(honcho, cwd=ROOT, env=env, start_new_session=True)
        try:
            for url in [*web_urls, *worker_urls]:
                wait_ready(url, timeout=120, proc=proc)  # a timeout names what isn't ready
            print(_summary(cluster, web_urls, worker_urls), flush=True)
            proc.wait()
        except BaseException:
            # Ctrl-C (honcho leads its own session, so it reached only us) or a process
            # that never got ready: pass SIGINT on, and honcho stops its processes before
            # we stop the services.
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGINT)
            proc.wait(30)
            if not isinstance(sys.exc_info()[1], KeyboardInterrupt):
                raise
    return 0


def _interrupt(*_):
    raise KeyboardInterrupt


def _summary(cluster: Cluster, web_urls: list[str], worker_urls: list[str]) -> str:
    lines = [
        "",
        "arbe, scaled, on this machine (every /readyz answered 200):",
        *(f"  web {n}:      {url}/" for n, url in enumerate(web_urls, start=1)),
        *(f"  worker {n}:   {url}/readyz" for n, url in enumerate(worker_urls, start=1)),
        f"  PostgreSQL: {cluster.database_url}",
        f"  Redis:      {cluster.env['REDIS_URL']}",
        f"  streams:    {cluster.streams.url} ({cluster.streams_kind})",
        f"  var dir:    {cluster.var_dir}",
        "Ctrl-C stops everything.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
