"""kill -9 the stream server during appends with idempotent producers, then start it again.

Twice: the embedded ``manage.py serve_streams`` on PostgreSQL, and the reference Node
server (file-backed). Two kinds of writers append at once:

- producers straight to the stream server (``IdempotentProducer``: ``Producer-Id``,
  epoch, seq). A send that failed is sent again with the same seq once the client's own
  backoff is spent, so a message that landed before the kill answers as a duplicate;
- people posting through arbe's API with their ids; arbe appends with the producer
  ``entry:<id>`` and answers 5xx while its stream server is down, and the client retries.

An acknowledged append is one the server answered (a producer's append returned; a post
answered 201/200). Each must be in the log once, in its writer's order.
"""

import asyncio
import json
import time

import pytest

from streams import errors
from streams.client import AsyncDurableStreamClient
from streams.wire import Backoff
from tests.faults.load import PostingClient, read_log, tally, wait_until
from tests.peers.cluster import Cluster

PRODUCERS = 4
MESSAGES = 150  # per producer
POSTERS = 4
POSTS = 75  # per poster
KILL_AFTER = 200  # acknowledged appends (both kinds) before the kill
DOWN_S = 1.5


# Known, and outside arbe: the reference server fsyncs an append to its segment file, then
# records the producer's new seq in LMDB with an asynchronous put. Killed between the two,
# it comes back with the message in the file (its recovery trusts the file for the offset)
# but the producer still at the old seq, so the retry of that seq is appended again.
REFERENCE_DUPLICATES = (
    "the reference server's producer state is not committed with the data it appended: "
    "a retry after kill -9 can append a message twice (docs/reliability.md)"
)


@pytest.fixture(scope="module", params=["embedded", "reference"])
def cluster(request):
    with Cluster(web=1, workers=0, streams=request.param) as cluster:
        yield cluster


class Producer:
    """One idempotent producer writing ``count`` numbered messages to its own stream."""

    def __init__(self, client: AsyncDurableStreamClient, n: int, count: int):
        self.stream = f"faults-producer-{n}"
        self.client, self.count = client, count
        self.producer = client.producer(
            self.stream, f"faults-{n}", backoff=Backoff(attempts=5, base=0.05, cap=0.5)
        )
        self.acked: list[str] = []
        self.acked_at: list[float] = []
        self.resends = 0
        self.deduped = 0  # resends the server answered as already appended
        self.given_up: list[str] = []

    async def run(self) -> None:
        await self.client.create(self.stream)
        for n in range(self.count):
            key = f"{self.stream}/{n}"
            for _ in range(60):
                try:
                    result = await self.producer.append({"key": key})
                except errors.StreamError as exc:
                    if not exc.transient:
                        raise
                    self.resends += 1  # the same seq again: the server dedupes it
                    await asyncio.sleep(0.25)
                    continue
                self.deduped += result.duplicate
                self.acked.append(key)
                self.acked_at.append(time.monotonic())
                break
            else:
                self.given_up.append(key)

    async def logged(self) -> list[str]:
        result = await self.client.catch_up(self.stream)
        return [json.loads(message)["key"] for message in result.messages]


def test_kill_stream_server_during_appends(cluster, report):
    world = cluster.world(people=POSTERS, bot=False, threads=1)
    thread_id = world["threads"][0]
    webs = [cluster.web[0].url]
    posters = [
        PostingClient(f"p{n}", world["tokens"][n], thread_id, webs, POSTS) for n in range(POSTERS)
    ]
    victim = cluster.streams

    async def scenario():
        client = AsyncDurableStreamClient(
            victim.url, secret=cluster.env["DURABLE_STREAMS_SECRET"], timeout=5
        )
        producers = [Producer(client, n, MESSAGES) for n in range(PRODUCERS)]

        def acknowledged() -> int:
            return sum(len(p.acked) for p in producers) + sum(len(p.acks) for p in posters)

        load = asyncio.gather(*(p.run() for p in producers), *(p.run() for p in posters))
        await wait_until(lambda: acknowledged() >= KILL_AFTER, timeout=120)
        killed_at = time.monotonic()
        await asyncio.to_thread(victim.kill)
        await asyncio.sleep(DOWN_S)
        await asyncio.to_thread(victim.start)
        back_at = time.monotonic()

        def every_writer_acked_since() -> bool:
            return all(p.acked_at and p.acked_at[-1] > back_at for p in producers) and all(
                p.acks and p.acks[-1].at > back_at for p in posters
            )

        recovery = await wait_until(every_writer_acked_since, timeout=120)
        await load
        logged = {p.stream: await p.logged() for p in producers}
        await client.aclose()
        return producers, logged, round(back_at - killed_at, 2), round(recovery, 2)

    producers, logged, restart_s, recovery_s = asyncio.run(scenario())
    direct = tally(
        {p.stream: p.acked for p in producers}, [key for keys in logged.values() for key in keys]
    )
    thread_log = [e["id"] for e in read_log(webs[0], world["tokens"][0], thread_id)]
    posted = tally({p.name: [a.entry_id for a in p.acks] for p in posters}, thread_log)
    given_up = sum(len(p.given_up) for p in [*producers, *posters])
    report(
        streams=cluster.streams_kind,
        producers=direct.figures(),
        posts=posted.figures(),
        given_up=given_up,
        producer_resends=sum(p.resends for p in producers),
        producer_answered_duplicate=sum(p.deduped for p in producers),
        post_retries=sum(p.retries for p in posters),
        posts_answered_duplicate=sum(a.duplicate for p in posters for a in p.acks),
        restart_s=restart_s,
        recovery_s=recovery_s,
    )
    assert given_up == 0, cluster.logs()
    assert direct.acknowledged == PRODUCERS * MESSAGES
    assert posted.acknowledged == POSTERS * POSTS
    assert victim.starts == 2
    for result in (direct, posted):
        assert (result.lost, result.out_of_order) == (0, 0), cluster.logs()
    if cluster.streams_kind == "reference" and direct.duplicated + posted.duplicated:
        pytest.xfail(REFERENCE_DUPLICATES)
    assert (direct.duplicated, posted.duplicated) == (0, 0)
