"""Search benchmark: query latency over 1,000,000 chat messages, the index write a post adds,
and the rebuild rate from real logs.

    python -m bench.search [--quick] [--docs N] [--db postgres|sqlite] [--write-docs]

The index is filled in bulk (``COPY`` into a staging table, then one ``INSERT … SELECT
to_tsvector(…)`` with the GIN index built afterwards) with messages of 8–30 words (about
18) drawn from a Zipf-weighted vocabulary of 5,000 words, with a fixed seed: 1,000 threads
in 10 houses, 210 authors, a year of timestamps. The viewer belongs to 4 of the houses.
Queries go through Django (``GET /api/search``, session auth, the access module, the
backend, snippets, authors). The post cost is ``search.index.after_append`` for one chat
entry, at the append seam, on the full table. The rebuild reads real logs (the embedded
stream server on the same database) through ``manage.py reindex_search --house``.
PostgreSQL runs with fsync on (``PostgresCluster(durable=True)``).
"""

import argparse
import contextlib
import io
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.corpus import SEED, VOCABULARY, messages, vocabulary
from bench.docs import write_section

ROOT = Path(__file__).resolve().parent.parent
HOUSES, THREADS, PEOPLE, BOTS = 10, 1_000, 200, 10
MEMBER_OF = 4  # houses the viewer belongs to
YEAR_MS = 365 * 86_400_000
START_MS = 1_764_547_200_000  # 2025-12-01


def setup_django(database_url: str, var_dir: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="arbe_site.settings",
        ARBE_VAR_DIR=var_dir,
        DATABASE_URL=database_url,
        DURABLE_STREAMS_URL="",
        ALLOWED_HOSTS="testserver",
        LOG_LEVEL="WARNING",
    )
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def make_world(threads: int = THREADS):
    """Houses, threads (rows only: the bulk load needs no logs), people, bots, the viewer."""
    from django.contrib.auth import get_user_model

    from houses.membership import agent_for_user
    from houses.models import Agent, House, Membership
    from threads.models import Thread

    def make_user(name):  # no password: hashing 200 of them would dominate the set-up
        user = get_user_model().objects.create(username=name)
        agent_for_user(user)
        return user

    viewer = make_user("viewer")
    houses = [House.objects.create(slug=f"house{n}", name=f"House {n}") for n in range(HOUSES)]
    for house in houses[:MEMBER_OF]:
        Membership.objects.create(house=house, user=viewer, role="member")
    people = [viewer.agent] + [make_user(f"person{n}").agent for n in range(PEOPLE - 1)]
    bots = [
        Agent.objects.create(
            kind="bot", house=houses[n % HOUSES], handle=f"bot{n}", display_name=f"Bot {n}"
        )
        for n in range(BOTS)
    ]
    threads = Thread.objects.bulk_create(
        [Thread(house=houses[n % HOUSES], title=f"Thread {n}") for n in range(threads)]
    )
    return viewer, houses, people + bots, threads


def bulk_load(n: int, words: list[str], agents, threads) -> float:
    """Fill the index with ``n`` messages; returns seconds taken."""
    from django.db import connection

    rng = random.Random(SEED + 1)
    started = time.perf_counter()
    rows = (
        (
            f"b{i}",
            (t := threads[rng.randrange(len(threads))]).id,
            t.house_id,
            agents[rng.randrange(len(agents))].id,
            START_MS + i * YEAR_MS // n,
            text,
        )
        for i, text in enumerate(messages(n, words))
    )
    if connection.vendor == "postgresql":
        _load_postgres(connection, rows)
    else:
        _load_sqlite(connection, rows)
    return time.perf_counter() - started


_started = time.perf_counter()


def phase(what: str) -> None:
    print(f"  {what} at {time.perf_counter() - _started:.0f} s", flush=True)


def _load_postgres(connection, rows) -> None:
    connection.ensure_connection()
    raw = connection.connection
    with raw.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute("DROP INDEX search_doc_sv")
        cursor.execute(
            "CREATE UNLOGGED TABLE bench_staging (n serial, entry_id text, thread_id text,"
            " house_id bigint, author_id text, ts bigint, body text)"
        )
        with cursor.copy(
            "COPY bench_staging (entry_id, thread_id, house_id, author_id, ts, body) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row(row)
        phase("copied")
        cursor.execute(
            "INSERT INTO search_doc (entry_id, thread_id, house_id, author_id, ts, body, sv)"
            " SELECT entry_id, thread_id, house_id, author_id, ts, body,"
            " to_tsvector('simple', body) FROM bench_staging ORDER BY n"
        )
        cursor.execute("DROP TABLE bench_staging")
        phase("vectors computed")
        cursor.execute(
            "CREATE INDEX search_doc_sv ON search_doc USING gin (sv) WITH (fastupdate = off)"
        )
        phase("GIN built")
        cursor.execute("VACUUM ANALYZE")


def _load_sqlite(connection, rows) -> None:
    from search.models import FTS_TABLE

    with connection.cursor() as cursor:
        batch = []
        for i, row in enumerate(rows, 1):
            batch.append(row)
            if len(batch) == 10_000:
                _sqlite_batch(cursor, batch, i - len(batch) + 1, FTS_TABLE)
                batch = []
        if batch:
            _sqlite_batch(cursor, batch, i - len(batch) + 1, FTS_TABLE)
        cursor.execute("ANALYZE")


def _sqlite_batch(cursor, batch, first_id, fts) -> None:
    cursor.executemany(
        "INSERT INTO search_doc (id, entry_id, thread_id, house_id, author_id, ts, body)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
        [(first_id + k, *row) for k, row in enumerate(batch)],
    )
    cursor.executemany(
        f"INSERT INTO {fts} (rowid, body) VALUES (%s, %s)",
        [(first_id + k, row[5]) for k, row in enumerate(batch)],
    )


def query_mix(words: list[str], people) -> list[tuple[str, dict]]:
    author = people[1].handle
    return [
        (f"{words[2]}", {}),  # a very common word (in ~1 message of 4)
        (f"{words[120]}", {}),
        (f"{words[2_000]}", {}),  # a rare word
        (f"{words[4_900]}", {}),  # among the rarest
        (f"{words[40]} {words[90]}", {}),
        (f'"{words[0]} {words[1]}"', {}),  # a phrase of two common words
        (f"{words[60]} -{words[3]}", {}),
        (f"{words[30]} from:@{author}", {}),
        (f"from:@{author}", {}),
        (f"{words[150]} in:house1", {}),
        (f"{words[80]} after:2026-06-01", {}),
        (f"{words[500]}", {"house": "house2"}),
        (f"{words[200]}", {"sort": "relevance"}),
        (f"{words[1_000]} {words[1_500]}", {"sort": "relevance"}),
    ]


def query_latencies(viewer, mix, rounds: int) -> tuple[list[float], list[tuple[str, float, int]]]:
    from django.test import Client

    client = Client()
    client.force_login(viewer)
    per_query: list[list[float]] = [[] for _ in mix]
    shown = []
    for q, params in mix:  # warm, and the second page by cursor once
        answer = client.get("/api/search", {"q": q, **params}).json()
        shown.append(len(answer["results"]))
        if answer["next"]:
            response = client.get("/api/search", {"q": q, "cursor": answer["next"], **params})
            assert response.status_code == 200, response.content
    samples = []
    for _ in range(rounds):
        for k, (q, params) in enumerate(mix):
            started = time.perf_counter()
            response = client.get("/api/search", {"q": q, **params})
            ms = (time.perf_counter() - started) * 1000
            assert response.status_code == 200, response.content
            samples.append(ms)
            per_query[k].append(ms)
    rows = [
        (label(q, params), statistics.median(v), shown[k])
        for k, ((q, params), v) in enumerate(zip(mix, per_query, strict=True))
    ]
    return samples, rows


def label(q: str, params: dict) -> str:
    extra = ", ".join(f"{k}={v}" for k, v in params.items())
    return f"`{q}`" + (f" ({extra})" if extra else "")


def post_costs(threads, agent, count: int) -> list[float]:
    """``search.index.after_append`` for one chat entry, as the append seam calls it."""
    import search.index
    from threads.entries import Chat
    from threads.lifecycle import new_entry

    rng = random.Random(SEED + 2)
    words = vocabulary()
    out = []
    for n in range(count):
        text = " ".join(rng.choices(words[:800], k=18))
        entry = new_entry(Chat(text=text), author=agent.id)
        thread = threads[n % len(threads)]
        started = time.perf_counter()
        search.index.after_append(thread.id, [entry])
        out.append((time.perf_counter() - started) * 1000)
    return out


def round_trips(count: int) -> list[float]:
    """A bare statement through the same connection: the floor under any write."""
    from django.db import connection

    out = []
    with connection.cursor() as cursor:
        for _ in range(count):
            started = time.perf_counter()
            cursor.execute("SELECT 1")
            cursor.fetchall()
            out.append((time.perf_counter() - started) * 1000)
    return out


def rebuild_rate(viewer, n_threads: int, per_thread: int) -> tuple[int, int, float]:
    """Entries read per second by ``reindex_search --house`` from real logs."""
    from django.core.management import call_command

    from houses.models import House, Membership
    from streams.client import service_client
    from threads import entries as E
    from threads.entries import encode_entry
    from threads.lifecycle import create_thread

    house = House.objects.create(slug="rebuild", name="Rebuild")
    Membership.objects.create(house=house, user=viewer, role="owner")
    writer = service_client()  # seeding skips the hooks: the rebuild is what is measured
    rng, words = random.Random(SEED + 3), vocabulary()
    total = chats = 0
    for t in range(n_threads):
        thread = create_thread(house=house, title=f"Rebuild {t}", by=viewer.agent)
        batch = []
        for i in range(per_thread):
            if i % 3 == 2:  # a third of a live thread is bookkeeping: director, dispatch
                payload = E.DirectorOutcome(upTo=f"r{t}-{i - 1}", reason="Answered.")
            else:
                payload = E.Chat(text=" ".join(rng.choices(words[:2000], k=18)))
                chats += 1
            entry = E.Entry(id=f"r{t}-{i}", ts=START_MS + i, payload=payload, authorId="ag_x")
            batch.append(encode_entry(entry))
        for start in range(0, len(batch), 1000):
            writer.append_batch(thread.stream_name, batch[start : start + 1000])
        total += per_thread + 1
    started = time.perf_counter()
    call_command("reindex_search", "--house", "rebuild", stdout=io.StringIO(), stderr=io.StringIO())
    return total, chats, time.perf_counter() - started


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@contextlib.contextmanager
def database(kind: str, var_dir: str) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{var_dir}/bench.sqlite3"
        return
    from tests.peers.postgres import postgres_server

    with postgres_server(durable=True) as pg:
        yield pg.create_database("arbe_bench")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k messages, fewer rounds")
    parser.add_argument("--docs", type=int, help="messages in the index (default 1,000,000)")
    parser.add_argument("--db", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    parser.add_argument(
        "--half-private",
        action="store_true",
        help="only the query mix, all open then half the threads private (its own section)",
    )
    args = parser.parse_args(argv)
    if args.half_private:
        from bench.search_private import half_private

        return half_private(args)
    n = args.docs or (100_000 if args.quick else 1_000_000)
    rounds = 10 if args.quick else 30
    with (
        tempfile.TemporaryDirectory(prefix="arbe-bench-search-") as var_dir,
        database(args.db, var_dir) as url,
    ):
        setup_django(url, var_dir)
        words = vocabulary()
        viewer, _, agents, threads = make_world()
        print(f"… loading {n:,} messages", flush=True)
        load_s = bulk_load(n, words, agents, threads)
        print(f"… loaded in {load_s:.1f} s; querying", flush=True)
        samples, per_query = query_latencies(viewer, query_mix(words, agents), rounds)
        print("… post cost", flush=True)
        costs = post_costs(threads, agents[1], 300 if args.quick else 1_000)
        floor = round_trips(1_000)
        print("… rebuild from logs", flush=True)
        total, chats, rebuild_s = rebuild_rate(viewer, 10, 2_000 if args.quick else 5_000)
    engine = "PostgreSQL 15 (stored tsvector, GIN)" if args.db == "postgres" else "SQLite FTS5"
    lines = [
        f"{engine}, {n:,} chat messages (~18 words, Zipf vocabulary of {VOCABULARY:,}), "
        f"bulk-loaded in {load_s:.0f} s; viewer in {MEMBER_OF} of {HOUSES} houses. "
        f"Times through `GET /api/search` (Django test client, session auth), 20 results.",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| query p50 (mix of {len(per_query)}, {len(samples)} requests) | "
        f"{statistics.median(samples):.1f} ms | ≤ 50 ms |",
        f"| query p99 | {pct(samples, 0.99):.1f} ms | ≤ 200 ms |",
        f"| index write per post (`after_append`, p50 / p99 of {len(costs)}) | "
        f"{statistics.median(costs):.2f} / {pct(costs, 0.99):.2f} ms | ≤ 1 ms |",
        f"| of which a bare round trip (`SELECT 1`, p50 / p99) | "
        f"{statistics.median(floor):.2f} / {pct(floor, 0.99):.2f} ms | — |",
        f"| rebuild from logs (`reindex_search --house`, {total:,} entries, {chats:,} chat) | "
        f"{total / rebuild_s:,.0f} entries/s | — |",
        "",
        "| query | results | p50 ms |",
        "|---|---|---|",
        *(f"| {q} | {shown} | {ms:.1f} |" for q, ms, shown in per_query),
    ]
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        title = "Search (`python -m bench.search`" + (", SQLite)" if args.db == "sqlite" else ")")
        write_section("search" if args.db == "postgres" else "search-sqlite", title, table)


if __name__ == "__main__":
    main()
