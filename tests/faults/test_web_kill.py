"""kill -9 one Daphne during 2,000 posts from 8 clients that retry with their ids.

The clients spread their posts over both web processes and fail over on a connection
error. Posts in flight on the killed process are retried, with the same id, on the
other one: the post's producer id makes the append itself idempotent, so a retry of a
post that had landed answers 200 (duplicate) and appends nothing. The killed process is
started again and takes posts again. The log must hold every acknowledged post once, in
each client's order.
"""

import asyncio
import time

import pytest

from tests.faults.load import PostingClient, read_log, tally, wait_until
from tests.faults.sizes import sized
from tests.peers.cluster import Cluster

CLIENTS = 8
POSTS = sized(2000, 600)
KILL_AFTER = sized(500, 150)  # acknowledged posts before the kill
DOWN_S = 2.0


@pytest.fixture(scope="module")
def cluster():
    with Cluster(web=2, workers=1, streams="reference") as cluster:
        yield cluster


def test_kill_one_daphne_during_posts(cluster, report):
    world = cluster.world(people=CLIENTS, bot=False, threads=2)
    webs = [proc.url for proc in cluster.web]
    clients = [
        PostingClient(f"c{n}", world["tokens"][n], world["threads"][n % 2], webs, POSTS // CLIENTS)
        for n in range(CLIENTS)
    ]
    victim = cluster.web[0]

    def acknowledged() -> int:
        return sum(len(c.acks) for c in clients)

    async def scenario() -> dict:
        started = time.monotonic()
        load = asyncio.gather(*(c.run() for c in clients))
        await wait_until(lambda: acknowledged() >= KILL_AFTER, timeout=120)
        killed_at = time.monotonic()
        await asyncio.to_thread(victim.kill)
        await asyncio.sleep(DOWN_S)
        await asyncio.to_thread(victim.start)
        back_at = time.monotonic()
        # Recovery: the restarted process answers a post again.
        await wait_until(
            lambda: any(a.web == 0 and a.at > back_at for c in clients for a in c.acks),
            timeout=60,
        )
        answered_at = time.monotonic()
        await load
        return {
            "restart_s": round(back_at - killed_at, 2),
            "recovery_s": round(answered_at - back_at, 2),
            "posts_per_s": round(POSTS / (time.monotonic() - started), 1),
        }

    timing = asyncio.run(scenario())
    logged = []
    for thread_id in world["threads"]:
        logged += [e["id"] for e in read_log(webs[1], world["tokens"][0], thread_id)]
    result = tally({c.name: [a.entry_id for a in c.acks] for c in clients}, logged)
    given_up = sum(len(c.given_up) for c in clients)
    errors = sum((c.errors for c in clients), start=type(clients[0].errors)())
    report(
        **result.figures(),
        given_up=given_up,
        retried=sum(c.retries for c in clients),
        answered_duplicate=sum(a.duplicate for c in clients for a in c.acks),
        errors=dict(errors),
        **timing,
    )
    assert given_up == 0, cluster.logs()
    assert result.acknowledged == POSTS
    assert result.lost == 0, cluster.logs()
    assert result.duplicated == 0
    assert result.out_of_order == 0
    assert victim.starts == 2
