"""Thread lease benchmark: what serialising a thread's work across workers costs.

    python -m bench.leases [--quick] [--write-docs] [--database-url URL]

Times each lease step (one statement or two, ``dispatch.thread_leases``) and director
passes per second over one thread, each after a new message (a pass that reads, folds and
appends an outcome), with and without the lease steps around it. SQLite by default;
``--database-url postgres://…`` (e.g. under ``python -m tests.peers.stack``) for PostgreSQL.
"""

import argparse
import statistics
import tempfile
import time

from bench.docs import write_section
from bench.now import setup_django

HOLDER = "bench-worker"


def timed(fn, n: int) -> float:
    """Median milliseconds of ``fn()`` over ``n`` calls."""
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def steps(n: int) -> dict[str, float]:
    from dispatch import thread_leases as leases
    from dispatch.models import ThreadLease

    ThreadLease.objects.all().delete()
    ids = iter(range(10**9))
    out = {}

    def cycle():
        thread_id = f"c{next(ids)}"
        leases.acquire(thread_id, HOLDER, 15)
        leases.begin(thread_id, HOLDER)
        leases.release(thread_id, HOLDER)

    out["acquire + begin + release (a quiet thread's pass)"] = timed(cycle, n)
    out["acquire (a fresh thread)"] = timed(lambda: leases.acquire(f"a{next(ids)}", "x", 15), n)
    leases.acquire("busy", "other", 15)
    out["acquire (held elsewhere: marked wanted)"] = timed(
        lambda: leases.acquire("busy", HOLDER, 15), n
    )
    leases.acquire("mine", HOLDER, 15)
    out["begin"] = timed(lambda: leases.begin("mine", HOLDER), n)
    held = {f"h{i}" for i in range(100)}
    for thread_id in held:
        leases.acquire(thread_id, HOLDER, 15)
    out["renew (1 thread held)"] = timed(lambda: leases.renew(HOLDER, {"mine"}, 15), n)
    out["renew (100 threads held)"] = timed(lambda: leases.renew(HOLDER, held, 15), n)
    out["expired (the takeover tick's scan)"] = timed(leases.expired, n)
    ThreadLease.objects.all().delete()
    return out


def passes(n: int) -> dict[str, float]:
    """Passes per second over one thread, each after a new message, with and without."""
    from dispatch import thread_leases as leases
    from dispatch.director import director_pass
    from tests.factories import make_bot, make_house, make_user
    from threads.entries import Chat
    from threads.lifecycle import create_thread, new_entry
    from threads.recency import stream_writer

    owner = make_user(f"bench{time.time_ns()}")
    house = make_house(f"b{time.time_ns()}", owner=owner)
    make_bot(house, "helper")
    thread = create_thread(house=house, title="passes", by=owner.agent)
    writer = stream_writer()

    def plain():
        writer.append(
            thread.stream_name, new_entry(Chat(text="no one named"), author=owner.agent.id)
        )
        director_pass(thread.id)

    def leased():
        writer.append(
            thread.stream_name, new_entry(Chat(text="no one named"), author=owner.agent.id)
        )
        leases.acquire(thread.id, HOLDER, 15)
        leases.begin(thread.id, HOLDER)
        director_pass(thread.id)
        leases.release(thread.id, HOLDER)

    spent = {"without lease": 0.0, "with lease": 0.0}
    for _ in range(n):  # alternating, so load on the machine weighs on both alike
        for name, fn in (("without lease", plain), ("with lease", leased)):
            start = time.perf_counter()
            fn()
            spent[name] += time.perf_counter() - start
    return {name: n / seconds for name, seconds in spent.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--database-url", default="")
    args = parser.parse_args(argv)
    n = 100 if args.quick else 1000
    # A temp dir that goes with the run: bench-smoke runs this on every CI commit.
    with tempfile.TemporaryDirectory(prefix="arbe-bench-leases-") as var_dir:
        setup_django(var_dir, args.database_url)
        from django.db import connection

        step_ms = steps(n)
        rates = passes(n // 5)
        vendor = connection.vendor
        connection.close()
    lines = [f"Lease steps on {vendor} (median of {n}):", "", "| step | ms |", "| --- | ---: |"]
    lines += [f"| {name} | {ms:.3f} |" for name, ms in step_ms.items()]
    lines += ["", f"Director passes over one thread, each after a new message ({n // 5}):", ""]
    lines += ["| | passes/s |", "| --- | ---: |"]
    lines += [f"| {name} | {rate:.0f} |" for name, rate in rates.items()]
    overhead = rates["without lease"] / rates["with lease"] - 1
    lines += ["", f"Lease overhead per pass: {overhead:.0%}."]
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        write_section(
            f"leases-{vendor}", f"Thread leases on {vendor} (`python -m bench.leases`)", table
        )


if __name__ == "__main__":
    main()
