"""Durable Streams benchmark: the embedded server (SQLite, PostgreSQL) against the reference
Node server (file-backed, fsync per append), side by side in one run.

    python -m bench.streams [--quick]

Rows: sequential 100-byte JSON appends/s, appends/s from 16 concurrent clients, catch-up read of
100k messages (MB/s), append→long-poll wake latency p50/p99. Ratios are embedded/reference, so
higher is better for throughput and the latency ratio is reference/embedded. The load generator
is a bare-socket keep-alive HTTP/1.1 client (``Conn``): a heavier one would set the pace itself
and hide the servers' differences on a 2-core machine. All traffic stays on loopback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

from bench.docs import write_section

ROOT = Path(__file__).resolve().parent.parent
MESSAGE = json.dumps({"k": "x" * 91}).encode()  # 100 bytes of JSON
assert len(MESSAGE) == 100
REFERENCE = "reference (Node, file)"
# Long enough that no wake-latency long-poll times out; shutdown ends waits at once anyway.
LONG_POLL_MS = 30_000


@dataclass
class Sizes:
    sequential: int = 2000
    concurrent_clients: int = 16
    concurrent_each: int = 250
    catchup: int = 100_000
    wakes: int = 200
    rounds: int = 3


QUICK = Sizes(sequential=300, concurrent_each=40, catchup=10_000, wakes=40, rounds=1)


class Response:
    """A parsed HTTP/1.1 response: status, lower-cased headers, body."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes):
        self.status, self.headers, self.body = status, headers, body

    def getheader(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class Conn:
    """One keep-alive HTTP/1.1 connection to a stream server, on a bare socket.

    ``http.client`` costs ~0.15 ms of CPU a request; sixteen client threads then
    share one GIL and the client, not the server, sets the pace. This one sends
    prebuilt bytes and parses only the status line, headers, ``Content-Length``
    and chunked bodies: ~0.03 ms.
    """

    def __init__(self, base_url: str):
        parts = urlsplit(base_url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.host = f"Host: {parts.hostname}:{parts.port}\r\n".encode()
        self.prefix = parts.path.rstrip("/")
        self.buffer = b""

    def request(self, method: str, path: str, body: bytes | None = None, headers=None):
        head = f"{method} {self.prefix}{path} HTTP/1.1\r\n".encode() + self.host
        for name, value in (headers or {}).items():
            head += f"{name}: {value}\r\n".encode()
        if body is not None:
            head += b"Content-Length: %d\r\n" % len(body)
        self.sock.sendall(head + b"\r\n" + (body or b""))
        response = self.read_response(head_only=method == "HEAD")
        if response.status >= 400:
            raise RuntimeError(f"{method} {path} -> {response.status}: {response.body[:200]!r}")
        return response, response.body

    def read_response(self, head_only: bool) -> Response:
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            self.fill()
        lines = self.buffer[:end].decode("latin-1").split("\r\n")
        self.buffer = self.buffer[end + 4 :]
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if head_only or status in (204, 304) or 100 <= status < 200:
            return Response(status, headers, b"")
        if headers.get("transfer-encoding", "").lower() == "chunked":
            return Response(status, headers, self.read_chunked())
        return Response(status, headers, self.read_exactly(int(headers.get("content-length", 0))))

    def read_exactly(self, n: int) -> bytes:
        parts, have = [self.buffer], len(self.buffer)
        while have < n:  # gather, then join once: a catch-up page can be megabytes
            data = self.sock.recv(max(262_144, n - have))
            if not data:
                raise ConnectionError("the server closed the connection")
            parts.append(data)
            have += len(data)
        joined = b"".join(parts) if len(parts) > 1 else self.buffer
        data, self.buffer = joined[:n], joined[n:]
        return data

    def read_chunked(self) -> bytes:
        parts = []
        while True:
            while (end := self.buffer.find(b"\r\n")) < 0:
                self.fill()
            size = int(self.buffer[:end].split(b";")[0], 16)
            self.buffer = self.buffer[end + 2 :]
            if size == 0:
                while (end := self.buffer.find(b"\r\n")) != 0:  # trailers, then the blank line
                    if end < 0:
                        self.fill()
                    else:
                        self.buffer = self.buffer[end + 2 :]
                self.buffer = self.buffer[2:]
                return b"".join(parts)
            parts.append(self.read_exactly(size + 2)[:-2])

    def fill(self) -> None:
        data = self.sock.recv(262_144)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data

    def create(self, name: str) -> str:
        path = f"/v1/stream/{quote(name)}"
        self.request("PUT", path, b"", headers={"Content-Type": "application/json"})
        return path

    def append(self, path: str, body: bytes = MESSAGE):
        return self.request("POST", path, body, {"Content-Type": "application/json"})

    def close(self):
        self.sock.close()


def stream_name(tag: str) -> str:
    return f"bench-{tag}-{uuid.uuid4().hex[:10]}"


@dataclass
class Row:
    name: str
    unit: str
    higher_is_better: bool
    values: dict[str, float] = field(default_factory=dict)


def best(samples: list[float], higher_is_better: bool) -> float:
    return statistics.median(samples) if samples else float("nan")


def sequential_appends(url: str, n: int) -> float:
    conn = Conn(url)
    path = conn.create(stream_name("seq"))
    started = time.perf_counter()
    for _ in range(n):
        conn.append(path)
    elapsed = time.perf_counter() - started
    conn.close()
    return n / elapsed


def concurrent_appends(url: str, clients: int, each: int) -> float:
    conns = [Conn(url) for _ in range(clients)]
    paths = [c.create(stream_name("conc")) for c in conns]
    barrier = threading.Barrier(clients + 1)
    errors: list[BaseException] = []

    def work(conn: Conn, path: str):
        barrier.wait()
        try:
            for _ in range(each):
                conn.append(path)
        except BaseException as exc:  # reported after the run
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(c, p)) for c, p in zip(conns, paths, strict=True)
    ]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    for c in conns:
        c.close()
    if errors:
        raise errors[0]
    return clients * each / elapsed


def catchup_read(url: str, n: int) -> float:
    conn = Conn(url)
    path = conn.create(stream_name("read"))
    batch = b"[" + b",".join([MESSAGE] * 1000) + b"]"
    for _ in range(n // 1000):
        conn.append(path, batch)
    started = time.perf_counter()
    offset, total, count = "-1", 0, 0
    while True:
        response, data = conn.request("GET", f"{path}?offset={quote(offset)}")
        total += len(data)
        offset = response.getheader("Stream-Next-Offset")
        if response.getheader("Stream-Up-To-Date") == "true":
            break
        count += 1
    elapsed = time.perf_counter() - started
    conn.close()
    if total < n * len(MESSAGE):
        raise RuntimeError(f"catch-up read {total} bytes, expected at least {n * len(MESSAGE)}")
    return total / elapsed / 1e6


def wake_latencies(url: str, n: int) -> list[float]:
    writer, reader = Conn(url), Conn(url)
    path = writer.create(stream_name("wake"))
    response, _ = reader.request("HEAD", path)
    offset = response.getheader("Stream-Next-Offset")
    latencies: list[float] = []
    for _ in range(n):
        sent_at: list[float] = []

        def append_soon(sent_at=sent_at):
            time.sleep(0.005)  # let the reader's long-poll reach the server first
            sent_at.append(time.perf_counter())
            writer.append(path)

        appender = threading.Thread(target=append_soon)
        appender.start()
        response, _ = reader.request("GET", f"{path}?offset={quote(offset)}&live=long-poll")
        got_at = time.perf_counter()
        appender.join()
        if response.status != 200:
            raise RuntimeError(f"long-poll answered {response.status} instead of data")
        offset = response.getheader("Stream-Next-Offset")
        latencies.append((got_at - sent_at[0]) * 1000)
    writer.close()
    reader.close()
    return latencies


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def measure_round(url: str, sizes: Sizes) -> dict[str, float]:
    """One round of every row against one server, in the table's order."""
    seq = sequential_appends(url, sizes.sequential)
    conc = concurrent_appends(url, sizes.concurrent_clients, sizes.concurrent_each)
    read = catchup_read(url, sizes.catchup)
    lat = wake_latencies(url, sizes.wakes)
    return {
        "sequential appends/s": seq,
        f"{sizes.concurrent_clients} concurrent clients appends/s": conc,
        f"catch-up read {sizes.catchup // 1000}k msgs MB/s": read,
        "append→long-poll wake p50 ms": percentile(lat, 0.50),
        "append→long-poll wake p99 ms": percentile(lat, 0.99),
    }


def medians(rounds: list[dict[str, float]]) -> dict[str, float]:
    return {metric: statistics.median(r[metric] for r in rounds) for metric in rounds[0]}


def render(results: dict[str, dict[str, float]], reference: str) -> str:
    names = list(results)
    metrics = list(results[reference])
    others = [n for n in names if n != reference]
    header = ["metric", *names, *[f"{n} / ref" for n in others]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for metric in metrics:
        lower_is_better = metric.endswith("ms")
        cells = [metric] + [f"{results[n][metric]:,.1f}" for n in names]
        for n in others:
            a, b = results[n][metric], results[reference][metric]
            cells.append(f"{(b / a if lower_is_better else a / b):.2f}×")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "Ratios: throughput embedded/reference; latency reference/embedded (≥1 is better)."
    )
    return "\n".join(lines)


Launcher = Callable[[], contextlib.AbstractContextManager[str]]


def launchers() -> dict[str, Launcher]:
    """Each server with the durability it is compared at (see docs/performance.md)."""
    from tests.peers.embedded import migrate, serve_streams
    from tests.peers.postgres import postgres_server
    from tests.peers.reference import reference_server

    @contextlib.contextmanager
    def embedded(database_url: str | None = None) -> Iterator[str]:
        with tempfile.TemporaryDirectory(prefix="arbe-bench-") as tmp:
            url = database_url or f"sqlite:///{tmp}/bench.sqlite3"
            migrate(url, tmp)
            with serve_streams(url, tmp, long_poll_ms=LONG_POLL_MS) as server:
                yield server.url

    @contextlib.contextmanager
    def embedded_postgres() -> Iterator[str]:
        # fsync and synchronous_commit on: every commit is flushed to the WAL on disk.
        with postgres_server(durable=True) as pg, embedded(pg.create_database()) as url:
            yield url

    return {
        REFERENCE: lambda: reference_server(long_poll_ms=LONG_POLL_MS),
        "embedded SQLite": embedded,
        "embedded Postgres": embedded_postgres,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one round")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else Sizes()
    # All servers stay up and the rounds interleave (round k of each server, then round
    # k+1, in rotating order), so load drifting on a shared machine hits every side alike.
    samples: dict[str, list[dict[str, float]]] = {}
    with contextlib.ExitStack() as stack:
        urls = {}
        for name, launch in launchers().items():
            print(f"… starting {name}", flush=True)
            urls[name] = stack.enter_context(launch())
            samples[name] = []
        names = list(urls)
        for round_no in range(sizes.rounds):
            for name in names[round_no % len(names) :] + names[: round_no % len(names)]:
                print(f"… round {round_no + 1}/{sizes.rounds}: {name}", flush=True)
                samples[name].append(measure_round(urls[name], sizes))
    results = {name: medians(rounds) for name, rounds in samples.items()}
    table = render(results, reference=REFERENCE)
    print(table)
    if args.write_docs:
        write_docs(table, sizes)


def write_docs(table: str, sizes: Sizes) -> None:
    title = f"Durable Streams: embedded vs reference ({sizes.rounds} rounds, medians)"
    write_section("streams", title, table)


if __name__ == "__main__":
    main()
