"""Search over open and half-private threads (``python -m bench.search --half-private``):
the query mix of ``bench.search`` over 3,000 threads, all open and then half of them private
(``bench.private_mix``), p50, p99 and SQL per request side by side."""

import statistics
import tempfile

from bench.corpus import vocabulary
from bench.docs import write_section
from bench.search import (
    HOUSES,
    MEMBER_OF,
    bulk_load,
    database,
    make_world,
    pct,
    query_latencies,
    query_mix,
    setup_django,
)


def half_private(args) -> None:
    """The query mix over 3,000 threads (``bench.private_mix``), all open and then half of
    them private, the viewer in a third of those: p50, p99 and SQL per request, side by side."""
    from bench.private_mix import PRIVATE_AT, make_half_private, queries_of

    n = args.docs or (100_000 if args.quick else 1_000_000)
    rounds = 10 if args.quick else 30
    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="arbe-bench-search-") as var_dir,
        database(args.db, var_dir) as url,
    ):
        setup_django(url, var_dir)
        from django.test import Client

        words = vocabulary()
        viewer, _, agents, threads = make_world(PRIVATE_AT)
        print(f"… loading {n:,} messages over {PRIVATE_AT:,} threads", flush=True)
        bulk_load(n, words, agents, threads)
        mix = query_mix(words, agents)
        client = Client()
        client.force_login(viewer)
        for variant in ("open", "half private"):
            if variant == "half private":
                theirs = make_half_private([t.pk for t in threads], viewer.agent.pk, agents[1].pk)
                variant = f"half private (viewer in {theirs:,} of {len(threads) // 2:,})"
            samples, _ = query_latencies(viewer, mix, rounds)
            sql = [
                queries_of(lambda q=q, p=p: client.get("/api/search", {"q": q, **p}))
                for q, p in mix
            ]
            rows.append(
                f"| {variant} | {statistics.median(samples):.1f} ms | {pct(samples, 0.99):.1f} ms "
                f"| {min(sql)}–{max(sql)} |"
            )
            print(rows[-1], flush=True)
    engine = "PostgreSQL 15" if args.db == "postgres" else "SQLite FTS5"
    table = "\n".join(
        [
            f"{engine}, {n:,} chat messages over {PRIVATE_AT:,} threads in {HOUSES} houses; viewer "
            f"in {MEMBER_OF}. The query mix of `GET /api/search` ({rounds} rounds), the same "
            "index before and after half the threads are made private. Target: the same SQL "
            "per request, p50 within 1.5×.",
            "",
            "| threads | query p50 | query p99 | SQL per request |",
            "|---|---|---|---|",
            *rows,
        ]
    )
    print(table)
    if args.write_docs:
        name = "search-private" if args.db == "postgres" else "search-sqlite-private"
        title = "Search, open and half private (`python -m bench.search --half-private`"
        write_section(name, title + (", SQLite)" if args.db == "sqlite" else ")"), table)
