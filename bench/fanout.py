"""Fan-out benchmark: N sockets on one thread against a live Daphne.

    python -m bench.fanout [--quick] [--sizes 100,1000] [--posts 20] [--write-docs]
    python -m bench.fanout --cluster [--quick] [--sizes 1000] [--posts 20] [--write-docs]

For each N, opens N WebSockets on one thread (one person's session), then posts chat
through the API and times POST → fragment arrival on every socket (p50/p99 over all
sockets and posts). Memory per idle socket is the Daphne process's RSS growth from one
socket to N, divided by N - 1. Targets at 1,000 sockets: p50 ≤ 40 ms, p99 ≤ 150 ms,
≤ 64 KiB per socket. Daphne runs on a free loopback port with a throw-away SQLite
database and the embedded stream server, and is stopped by its PID.

``--cluster`` runs the scaled configuration instead (``tests.peers.cluster``: PostgreSQL,
Redis, two Daphnes serving the streams themselves on the shared database, one backstage
worker) and measures, in the same run, N sockets on one Daphne and N split over the two,
posts always through the first: the second learns of an append by LISTEN/NOTIFY.

``--quick`` is a smoke run (``make bench-smoke``): 20 sockets, 5 posts; its numbers say
nothing about the targets.
"""

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.docs import write_section

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"p50": 40.0, "p99": 150.0, "kib": 64.0}


def setup_django(var_dir: str) -> dict:
    env = {
        "DJANGO_SETTINGS_MODULE": "arbe_site.settings",
        "ARBE_VAR_DIR": var_dir,
        "DATABASE_URL": f"sqlite:///{var_dir}/fanout.sqlite3",
        "DURABLE_STREAMS_URL": "",
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "BACKSTAGE_SWEEP_S": "0",
        "METRICS_TOKEN": "bench-fanout",  # the frames' paths, read after each size
        "DEBUG": "false",
    }
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return env


def make_world():
    """A house, a member with a session and an API token, and one thread."""
    from django.test import Client

    from houses.models import ApiToken
    from tests.factories import make_house, make_user
    from threads.lifecycle import create_thread
    from threads.reading import read_entries

    user = make_user("bench")
    house = make_house("bench", owner=user)
    thread = create_thread(house=house, title="Fan-out", by=user.agent)
    client = Client()
    client.force_login(user)
    _, token = ApiToken.issue(user, "bench")
    return thread.id, client.cookies["sessionid"].value, token, read_entries(thread.id)[1]


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_size(port: int, pid: int, world, n: int, posts: int, client: str) -> dict:
    return await run_spread([(port, pid)], port, world, n, posts, client=client)


async def run_spread(
    servers: list[tuple[int, int]],
    post_port: int,
    world,
    n: int,
    posts: int,
    batch: int = 100,
    client: str = "lean",
):
    """N sockets spread evenly over ``servers`` (port, pid), opened ``batch`` at a time;
    posts through ``post_port``. ``client``: ``lean`` (``bench.ws_client``) or
    ``websockets`` (the library, tens of microseconds of client Python a frame)."""
    import httpx
    import websockets

    from bench import ws_client

    thread_id, cookie, token, offset = world
    arrivals: dict[bytes, list[float]] = {}  # the fragment's id attribute -> arrival times

    def arrived(text: bytes, now: float) -> None:
        for needle in list(arrivals):
            if needle in text:
                arrivals[needle].append(now)

    async def reader(ws):
        async for text in ws:
            arrived(text.encode(), time.perf_counter())

    async def connect(port):
        path = f"/ws/threads/{thread_id}/"
        headers = {"Cookie": f"sessionid={cookie}", "Origin": f"http://127.0.0.1:{port}"}
        for attempt in range(10):  # Daphne drops a handshake the app hasn't accepted in 5 s
            try:
                if client == "lean":
                    return await ws_client.connect(port, path, headers, arrived)
                url = f"ws://127.0.0.1:{port}{path}"
                ws = await websockets.connect(url, additional_headers=headers, max_size=None)
                await ws.recv()  # the first frame: panel and offset
                return ws
            except (OSError, EOFError, TimeoutError, websockets.WebSocketException):
                if attempt == 9:
                    raise
                await asyncio.sleep(1)

    ports = [port for port, _ in servers]
    share = [n // len(servers) + (i < n % len(servers)) for i in range(len(servers))]
    sockets = []
    for port in ports:  # the first socket on each server starts the thread's tail there
        sockets.append(await connect(port))
    await asyncio.sleep(0.5)
    base = [rss_kib(pid) for _, pid in servers]
    for port, want in zip(ports, share, strict=True):
        for start in range(1, want, batch):
            more = min(batch, want - start)
            sockets += await asyncio.gather(*(connect(port) for _ in range(more)))
    await asyncio.sleep(1.0)
    grown = sum(rss_kib(pid) - b for (_, pid), b in zip(servers, base, strict=True))
    per_socket = grown / max(1, n - len(servers))
    readers = [asyncio.create_task(reader(ws)) for ws in sockets if client != "lean"]

    latencies: list[float] = []
    spans: list[tuple[float, float, float]] = []  # per post: answered, first socket, last
    first = 0.0  # the first post: every socket's first frame (warm-up, not in the percentiles)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{post_port}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,  # the first post after the opens may wait (its time is reported)
    ) as http:
        for i in range(posts + 2):  # the first two warm up
            key = f"fanout-{n}-{len(servers)}-{i}"
            needle = f'id="entry-{key}"'.encode()
            arrivals[needle] = []
            sent = time.perf_counter()
            response = await http.post(
                f"/api/threads/{thread_id}/entries", data={"text": f"post {i}", "id": key}
            )
            response.raise_for_status()
            answered = (time.perf_counter() - sent) * 1000
            if i == 0:
                print(f"first POST answered in {(time.perf_counter() - sent) * 1000:.0f} ms")
            deadline = time.monotonic() + (10 if i >= 2 else 60)
            while len(arrivals[needle]) < n and time.monotonic() < deadline:
                await asyncio.sleep(0.005)
            got = arrivals.pop(needle)
            if len(got) < n:
                raise RuntimeError(f"{key}: {len(got)} of {n} sockets got the fragment")
            if i == 0:
                first = (max(got) - sent) * 1000
            if i >= 2:
                latencies += [(t - sent) * 1000 for t in got]
                spans.append((answered, (min(got) - sent) * 1000, (max(got) - sent) * 1000))
            await asyncio.sleep(0.1)
    for task in readers:
        task.cancel()
    if client == "lean":
        for socket in sockets:
            socket.close()
    else:
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    return {
        "n": n,
        "processes": len(servers),
        "p50": statistics.median(latencies),
        "p99": percentile(latencies, 0.99),
        "kib": per_socket,
        "samples": len(latencies),
        "first": first,
        # Medians over the posts: where a post's time goes (the answer may come last).
        "answered": statistics.median(a for a, _, _ in spans),
        "first_socket": statistics.median(f for _, f, _ in spans),
        "last_socket": statistics.median(la for _, _, la in spans),
    }


def start_daphne(env: dict, port: int, log: Path) -> subprocess.Popen:
    web = [sys.executable, "-m", "arbe_site.web"]  # Daphne on uvloop, as deployed
    with log.open("ab") as stderr:  # a file, not a pipe nobody drains
        return subprocess.Popen(
            [*web, "-b", "127.0.0.1", "-p", str(port), "arbe_site.asgi:application"],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=raise_fd_limit,
        )


def spans_line(result: dict) -> str:
    return (
        f"medians over posts: POST answered {result['answered']:.1f} ms, first socket "
        f"{result['first_socket']:.1f} ms, last socket {result['last_socket']:.1f} ms"
    )


def frame_paths(port: int) -> str:
    """How the Daphne handed out its frames (``arbe_fanout_frames_total``): a run whose
    frames all went through the queues measured the framework, not the hub's direct path."""
    import httpx

    text = httpx.get(
        f"http://127.0.0.1:{port}/metrics",
        headers={"Authorization": "Bearer bench-fanout"},
        timeout=10,
    ).text
    found = {
        path: float(line.split()[-1])
        for line in text.splitlines()
        for path in ("direct", "queued")
        if line.startswith(f'arbe_fanout_frames_total{{path="{path}"}}')
    }
    return f"frames: {found.get('direct', 0):,.0f} direct, {found.get('queued', 0):,.0f} queued"


def render(results: list[dict]) -> str:
    lines = [
        "| sockets | p50 ms | p99 ms | KiB / idle socket | samples |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['n']:,} | {r['p50']:.1f} | {r['p99']:.1f} | {r['kib']:.1f} | {r['samples']:,} |"
        )
    lines.append(
        f"\nTargets at 1,000: p50 ≤ {TARGETS['p50']:.0f} ms, p99 ≤ {TARGETS['p99']:.0f} ms, "
        f"≤ {TARGETS['kib']:.0f} KiB per socket (POST → fragment on every socket, client in one "
        "asyncio process on the same machine)."
    )
    return "\n".join(lines)


def verdict(results: list[dict]) -> str:
    at = next((r for r in results if r["n"] == 1000), None)
    if at is None:
        return "(no 1,000-socket row)"
    checks = []
    for key, unit in (("p50", "ms"), ("p99", "ms"), ("kib", "KiB")):
        ok = "ok" if at[key] <= TARGETS[key] else "MISSED"
        checks.append(f"{key} {at[key]:.1f}/{TARGETS[key]:.0f} {unit} {ok}")
    return "at 1,000: " + ", ".join(checks)


def write_docs(table: str) -> None:
    write_section("fanout", "Live fan-out (`python -m bench.fanout`)", table)


# -- across processes ---------------------------------------------------------------------


def run_cluster(
    sizes: list[int], posts: int, rounds: int, daphnes: int = 2, client: str = "lean"
) -> list[dict]:
    """N sockets on one Daphne, then split over all ``daphnes``, alternating, in one cluster."""

    from tests.peers.cluster import Cluster

    results = []
    with Cluster(web=daphnes, workers=1, streams="inprocess") as cluster:
        made = cluster.world(people=1, bot=False)
        world = (made["threads"][0], made["sessions"][0], made["tokens"][0], "")
        servers = [(web.port, web.pid) for web in cluster.web]
        post_port = servers[0][0]
        try:
            for n in sizes:
                for _ in range(rounds):
                    for spread in (servers[:1], servers):
                        run = run_spread(
                            spread, post_port, world, n, posts, batch=10, client=client
                        )
                        results.append(asyncio.run(run))
                        print(results[-1], flush=True)
                        # Closes are counted in batches (threads.watching): a moment
                        # for the last batch, then the next handshakes.
                        time.sleep(2)
        except Exception:
            print(cluster.logs(), file=sys.stderr)
            raise
    return results


def render_cluster(results: list[dict]) -> str:
    lines = [
        "| sockets | Daphnes | p50 ms | p99 ms | first post, last socket ms | KiB / idle socket "
        "| samples |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['n']:,} | {r['processes']} | {r['p50']:.1f} | {r['p99']:.1f} "
            f"| {r['first']:,.0f} | {r['kib']:.1f} | {r['samples']:,} |"
        )
    lines.append(
        "\nPostgreSQL, Redis, one backstage worker; each Daphne serves the streams itself on the "
        "shared database (LISTEN/NOTIFY wakes the other process's tail). Posts go through the "
        "first Daphne; sockets are all on it (1) or split evenly over all of them. Targets at "
        "1,000: "
        f"p50 ≤ {TARGETS['p50']:.0f} ms, p99 ≤ {TARGETS['p99']:.0f} ms."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 sockets, 5 posts")
    parser.add_argument("--sizes", help="sockets per run (default 100,1000)")
    parser.add_argument("--posts", type=int, help="timed posts per run (default 20)")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--cluster", action="store_true", help="one Daphne against two")
    parser.add_argument("--rounds", type=int, default=1, help="with --cluster: alternations")
    parser.add_argument("--daphnes", type=int, default=2, help="with --cluster: Daphnes (2, 4)")
    parser.add_argument("--client", choices=("lean", "websockets"), default="lean")
    args = parser.parse_args(argv)
    args.sizes = args.sizes or ("20" if args.quick else "100,1000")
    args.posts = args.posts or (5 if args.quick else 20)
    raise_fd_limit()
    if args.cluster:
        sizes = [int(s) for s in args.sizes.split(",")]
        found = run_cluster(sizes, args.posts, args.rounds, args.daphnes, args.client)
        table = render_cluster(found)
        print(table)
        if args.write_docs:
            title = "Live fan-out across processes (`python -m bench.fanout --cluster`)"
            write_section("fanout-cluster", title, table)
        return
    with tempfile.TemporaryDirectory(prefix="arbe-fanout-") as var_dir:
        env = setup_django(var_dir)
        world = make_world()
        from tests.peers.ports import free_port, stop, wait_for_port

        results = []
        for n in (int(s) for s in args.sizes.split(",")):
            port = free_port()
            log = Path(var_dir) / f"daphne-{n}.log"
            proc = start_daphne(env, port, log)
            try:
                wait_for_port(port, proc=proc)
                run = run_size(port, proc.pid, world, n, args.posts, args.client)
                results.append(asyncio.run(run))
                print(spans_line(results[-1]), flush=True)
                print(frame_paths(port), flush=True)
            except Exception:
                print(log.read_text()[-4000:], file=sys.stderr)
                raise
            finally:
                stop(proc)
    table = render(results)
    print(table)
    print(verdict(results))
    if args.write_docs:
        write_docs(table)


if __name__ == "__main__":
    main()
