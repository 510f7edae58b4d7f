"""Current-view benchmark: fold throughput and ``/now`` latency by thread length.

    python -m bench.now [--quick] [--write-docs]

Fold: decode a JSON array of N entries and fold them (entries/s, decode included); the
target is ≥ 300k entries/s. ``/now``: GET through Django (session auth, access check,
stream read, fold, status) on threads of 1k, 10k and 100k entries whose director has
decided up to near the tail, as a live thread's has; the target is p50 ≤ 10 ms and flat in
thread length. Runs on a throw-away SQLite database with the embedded stream server
in-process.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.docs import write_section

ROOT = Path(__file__).resolve().parent.parent
LENGTHS = (1_000, 10_000, 100_000)
TAIL = 20  # entries after the director's decided offset


def setup_django(var_dir: str, database_url: str = "") -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="arbe_site.settings",
        ARBE_VAR_DIR=var_dir,
        DATABASE_URL=database_url or f"sqlite:///{var_dir}/bench.sqlite3",
        DURABLE_STREAMS_URL="",
        ALLOWED_HOSTS="testserver",  # django.test.Client's host
    )
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def sample_entries(n: int, start: int = 0):
    from threads import entries as E

    out, ts = [], 1_700_000_000_000
    for i in range(start, start + n):
        kind = i % 6
        if kind == 0:
            payload = E.Chat(text=f"message {i} for @helper, with a few words in it")
        elif kind == 1:
            payload = E.DirectorDecided(picked=["ag_bot"], upTo=f"e{i - 1}")
        elif kind == 2:
            payload = E.DispatchStarted(
                dispatchId=f"d{i}", agentId="ag_bot", entryIds=[f"e{i - 2}"]
            )
        elif kind == 3:
            content = [{"type": "text", "text": "Here is what I found."}]
            payload = E.PiAssistant(
                dispatchId=f"d{i - 1}", message={"role": "assistant", "content": content}
            )
        elif kind == 4:
            payload = E.DispatchFinished(dispatchId=f"d{i - 2}")
        else:
            payload = E.DirectorOutcome(upTo=f"e{i - 5}", picked=[], reason="Answered.")
        out.append(E.Entry(id=f"e{i}", ts=ts + i, payload=payload, authorId="ag_person"))
    return out


def fold_rate(n: int, rounds: int) -> float:
    from threads.entries import decode_entries, encode_entries
    from threads.now import reduce_thread_now

    data = encode_entries(sample_entries(n))
    rates = []
    for _ in range(rounds):
        started = time.perf_counter()
        reduce_thread_now(decode_entries(data), now_ms=0, bots={"ag_bot"})
        rates.append(n / (time.perf_counter() - started))
    return statistics.median(rates)


def now_latencies(n: int, calls: int) -> list[float]:
    from django.test import Client

    from streams.client import service_client
    from tests.factories import make_house, make_user
    from threads.lifecycle import create_thread
    from threads.models import Thread

    owner = make_user(f"bench{n}")
    house = make_house(f"bench-{n}", owner=owner)
    thread = create_thread(house=house, title=f"{n} entries", by=owner.agent)
    # Seeding skips the recency hooks on purpose: the bench measures the fold, not appends.
    writer = service_client()
    body = sample_entries(n - TAIL)
    for chunk in range(0, len(body), 1000):
        writer.append_batch(thread.stream_name, [_raw(e) for e in body[chunk : chunk + 1000]])
    decided = writer.head(thread.stream_name).next_offset
    Thread.objects.filter(pk=thread.pk).update(director_offset=decided, director_tail=[])
    for entry in sample_entries(TAIL, start=n - TAIL):
        writer.append(thread.stream_name, _raw(entry))
    client = Client()
    client.force_login(owner)
    url = f"/api/threads/{thread.id}/now"
    client.get(url)  # warm
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        response = client.get(url)
        out.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content
    return out


def _raw(entry) -> bytes:
    from threads.entries import encode_entry

    return encode_entry(entry)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    lengths = LENGTHS[:2] if args.quick else LENGTHS
    with tempfile.TemporaryDirectory(prefix="arbe-bench-now-") as var_dir:
        setup_django(var_dir)
        rows = [
            "| thread length | fold entries/s (decode incl.) | /now p50 ms | /now p99 ms |",
            "|---|---|---|---|",
        ]
        for n in lengths:
            rate = fold_rate(n, 3)
            lat = sorted(now_latencies(n, 30 if args.quick else 100))
            p50, p99 = statistics.median(lat), lat[min(len(lat) - 1, int(0.99 * (len(lat) - 1)))]
            rows.append(f"| {n:,} | {rate:,.0f} | {p50:.2f} | {p99:.2f} |")
            print(rows[-1], flush=True)
    table = (
        "\n".join(rows) + "\n\nTargets: fold ≥ 300,000 entries/s; /now p50 ≤ 10 ms, flat in length."
    )
    print(table)
    if args.write_docs:
        write_section("now", "Current view (`python -m bench.now`)", table)


if __name__ == "__main__":
    main()
