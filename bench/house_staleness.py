"""How stale a house page can be when a house event is lost: the measured bound.

    python -m bench.house_staleness [--quick] [--write-docs]

House events (``thread.status``, ``thread.row``) ride the channel layer and may be lost
(a Redis blip while the socket stays open). The rows stay the truth, and an open house
socket compares a fingerprint of the rows every ``RESYNC_S`` (30 s), sending the whole list
again when it moved (``houses.consumers``). This measures that path end to end: with every
house event dropped, a thread's status is written at a random moment, and the time until
the open socket delivers a list showing it is taken. The bound is ``RESYNC_S`` plus one
fingerprint query and one list render, each timed here by house size. ``--quick`` shortens
``RESYNC_S`` to 2 s (the lag scales with it); the full run uses the real 30 s.
"""

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time

from bench.docs import write_section
from bench.now import setup_django

SIZES = (10, 1_000, 10_000)


def timed(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def seed(house, n: int) -> None:
    from threads.models import Thread

    Thread.objects.bulk_create(
        [Thread(house=house, title=f"t{i}", last_entry_ts=1_700_000_000_000 + i) for i in range(n)],
        batch_size=1000,
    )


def costs(n: int) -> list[tuple[int, float, float]]:
    """(threads, fingerprint ms, list render ms) per house size."""
    from houses.consumers import rows_fingerprint
    from houses.fragments import list_fragment
    from tests.factories import make_house, make_user

    out = []
    for size in SIZES:
        owner = make_user(f"s{size}")
        house = make_house(f"s{size}", owner=owner)
        seed(house, size)
        fingerprint = timed(lambda h=house: rows_fingerprint(h.pk), n)
        render = timed(lambda h=house, u=owner: list_fragment(h.pk, u), max(n // 5, 3))
        out.append((size, fingerprint, render))
    return out


def block(thread_id: str, n: int) -> None:
    """A real status change: a director outcome that blocks the thread, through the seam
    (its status write announces on the channel layer, where the event is lost)."""
    from threads.entries import DirectorOutcome
    from threads.lifecycle import new_entry
    from threads.models import stream_name_for
    from threads.recency import stream_writer

    outcome = DirectorOutcome(upTo="-", picked=[], reason=f"Needs a person ({n})", blocked=True)
    stream_writer().append(stream_name_for(thread_id), new_entry(outcome))


async def lags(samples: int, resync_s: float) -> list[float]:
    """Seconds from a status write (its event lost) until the open socket shows it."""
    from asgiref.sync import sync_to_async
    from channels.layers import get_channel_layer

    from houses import consumers
    from tests.factories import make_house, make_user
    from tests.integration.web.conftest import house_socket
    from threads.lifecycle import create_thread

    consumers.RESYNC_S = resync_s
    owner = await sync_to_async(make_user)("lagging")
    house = await sync_to_async(make_house)("lagging", owner=owner)
    thread = await sync_to_async(create_thread)(house=house, title="lost", by=owner.agent)
    layer = get_channel_layer()
    real = layer.group_send

    async def dropped(group, message):  # every house event is lost
        if not group.startswith("house-"):
            await real(group, message)

    layer.group_send = dropped
    socket = await house_socket(house.slug, owner)
    out = []
    for n in range(samples):
        await asyncio.sleep(random.uniform(0, resync_s))  # a random phase of the tick
        await sync_to_async(block)(thread.id, n)
        start = time.perf_counter()
        while f"Needs a person ({n})" not in await socket.receive_from(resync_s * 3):
            pass
        out.append(time.perf_counter() - start)
        print(f"lag {n + 1}/{samples}: {out[-1]:.2f} s", flush=True)
    await socket.disconnect()
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--resync-s", type=float, default=0.0, help="override RESYNC_S")
    args = parser.parse_args(argv)
    resync_s, samples, n = (2.0, 5, 20) if args.quick else (30.0, 8, 100)
    resync_s = args.resync_s or resync_s
    os.environ["BACKSTAGE_SWEEP_S"] = "0"  # the sockets' app starts no sweep of its own
    with tempfile.TemporaryDirectory(prefix="arbe-bench-house-") as var_dir:
        setup_django(var_dir)
        from django.conf import settings

        settings.ALLOWED_HOSTS = ["*"]
        sizes = costs(n)
        measured = asyncio.run(lags(samples, resync_s))
    lines = ["| threads in the house | fingerprint (ms) | whole list render (ms) |"]
    lines += ["| ---: | ---: | ---: |"]
    lines += [f"| {size:,} | {fp:.2f} | {render:.1f} |" for size, fp, render in sizes]
    worst_cost = max(fp + render for _, fp, render in sizes) / 1000
    lines += [
        "",
        f"A lost event, {samples} status writes at random moments, `RESYNC_S` = {resync_s:g} s: "
        f"lag median {statistics.median(measured):.1f} s, max {max(measured):.1f} s "
        f"(bound: {resync_s:g} s + {worst_cost * 1000:.0f} ms at {SIZES[-1]:,} threads).",
    ]
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        write_section(
            "house-staleness",
            "A lost house event: how stale a page gets (`python -m bench.house_staleness`)",
            table,
        )


if __name__ == "__main__":
    main()
