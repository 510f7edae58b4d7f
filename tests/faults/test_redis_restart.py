"""Redis restarted under load: sockets and workers recover without a restart of arbe.

Redis carries the channel layer: director wakes to the backstage workers, house-page
events, and the groups sockets join (it keeps no data here: a restart forgets every
group and queued message). The test opens thread and house sockets on both web
processes, checks a bot answers a mention, then posts from four clients while Redis is
killed (-9) and started again on the same port. Afterwards:

- every acknowledged post is in the log once (posting never needs Redis: a wake that
  can't be sent is recorded as ``signal.dispatch.failed``, stage ``wake``);
- every thread socket's page shows every chat of the thread, once, in log order (sockets
  that dropped reconnect from the last offset they applied, and a copy of an entry the
  page already has is dropped, as the page does);
- every house socket receives live row events again (it is subscribed to its groups);
- a mention posted after the restart is answered by a bot on a worker.
"""

import asyncio
import contextlib
import re
import time

import httpx
import pytest
import websockets

from tests.faults.load import PostingClient, read_log, tally, wait_until
from tests.peers.cluster import Cluster

POSTERS = 4
POSTS = 60  # per poster, paced
PACE_S = 0.1
THREAD_VIEWERS = 3  # per web process
DOWN_S = 10.0  # longer than the Redis client's own retries (about 7 s)
CHAT_ID = re.compile(r'<article id="entry-([^"]+)" class="entry chat')
OFFSET = re.compile(r'id="stream-offset" hidden data-offset="([^"]*)"')


class Viewer:
    """A page's socket: reconnects after any close, from the last offset it applied.

    Like the page (static/arbe/live.js), it keeps the first copy of an entry and drops any
    later one: live frames and a reconnect's catch-up may both bring it.
    """

    def __init__(self, url: str, cookie: str, origin: str):
        self.url, self.origin = url, origin
        self.headers = {"Cookie": f"sessionid={cookie}", "Origin": origin}
        self.offset = ""
        self.page: dict[str, None] = {}  # chat ids in the order the page shows them
        self.copies = 0  # chat that arrived again and was dropped, as the page does
        self.connects = 0
        self.connected_at = 0.0
        self.events: list[float] = []  # frames after the first one of a connection
        self.chat_at: list[float] = []  # when frames bringing chat arrived
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self.run())

    async def run(self) -> None:
        while True:
            url = self.url + (f"?offset={self.offset}" if self.offset else "")
            try:
                async with websockets.connect(
                    url, additional_headers=self.headers, max_size=None, open_timeout=5
                ) as ws:
                    self.connects += 1
                    first = True
                    async for frame in ws:
                        if first:
                            self.connected_at, first = time.monotonic(), False
                        else:
                            self.events.append(time.monotonic())
                        if chat := CHAT_ID.findall(frame):
                            self.copies += sum(1 for i in chat if i in self.page)
                            self.page.update(dict.fromkeys(chat))
                            self.chat_at.append(time.monotonic())
                        if found := OFFSET.findall(frame):
                            self.offset = found[-1]
            except (TimeoutError, OSError, websockets.WebSocketException):
                pass
            await asyncio.sleep(0.5)  # the page's reconnect delay

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


@pytest.fixture(scope="module")
def cluster():
    with Cluster(web=2, workers=2, streams="reference") as cluster:
        yield cluster


def bot_replies(web: str, token: str, thread_id: str, bot_id: str) -> list[dict]:
    return [
        e
        for e in read_log(web, token, thread_id)
        if e.get("authorId") == bot_id and e["payload"]["type"] == "chat"
    ]


def test_redis_restart_under_load(cluster, report):
    world = cluster.world(people=POSTERS, bot=True, threads=2)
    busy, quiet = world["threads"]
    token = world["tokens"][0]
    webs = [proc.url for proc in cluster.web]
    cookie = world["sessions"][0]
    bot_id = _bot_id(cluster, world["house"])
    posters = [
        PostingClient(f"r{n}", world["tokens"][n], busy, webs, POSTS) for n in range(POSTERS)
    ]
    http = httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30)

    def mention(web: str, text: str) -> None:
        body = {"payload": {"type": "chat", "text": f"@{world['bot']} {text}"}}
        http.post(f"{web}/api/threads/{quiet}/entries", json=body).raise_for_status()

    async def answered(count: int, timeout: float) -> float:
        """Seconds until the bot has answered ``count`` mentions (the log read off the loop)."""
        start = time.monotonic()
        while len(await asyncio.to_thread(bot_replies, webs[1], token, quiet, bot_id)) < count:
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"the bot gave no answer {count} within {timeout}s")
            await asyncio.sleep(0.5)
        return time.monotonic() - start

    async def scenario() -> dict:
        threads = [
            Viewer(f"{web.replace('http', 'ws')}/ws/threads/{busy}/", cookie, web)
            for web in webs
            for _ in range(THREAD_VIEWERS)
        ]
        houses = [
            Viewer(f"{web.replace('http', 'ws')}/ws/houses/{world['house']}/", cookie, web)
            for web in webs
        ]
        viewers = [*threads, *houses]
        for viewer in viewers:
            viewer.start()
        await wait_until(lambda: all(v.connected_at for v in viewers), timeout=60)
        # Workers answer before the fault: the baseline.
        await asyncio.to_thread(mention, webs[0], "before the restart")
        baseline_s = await answered(1, timeout=120)

        load = asyncio.gather(*(p.run(pace_s=PACE_S) for p in posters))
        await wait_until(lambda: sum(len(p.acks) for p in posters) >= 40, timeout=120)
        await asyncio.to_thread(cluster.redis.kill)
        await asyncio.sleep(DOWN_S)
        await asyncio.to_thread(cluster.redis.start)
        back_at = time.monotonic()
        await asyncio.to_thread(mention, webs[1], "after the restart")

        def house_live() -> bool:
            # An event after the restart, on a connection that was open when it came.
            return all(any(at > max(back_at, h.connected_at) for at in h.events) for h in houses)

        def threads_live() -> bool:
            return all(any(at > back_at for at in v.chat_at) for v in threads)

        worker_s, house_s, thread_s = await asyncio.gather(
            answered(2, timeout=120),
            wait_until(house_live, timeout=120),
            wait_until(threads_live, timeout=120),
        )
        await load
        log = [e for e in read_log(webs[1], token, busy) if e["payload"]["type"] == "chat"]
        expected = [e["id"] for e in log]
        await wait_until(lambda: all(len(v.page) >= len(expected) for v in threads), timeout=60)
        for viewer in viewers:
            await viewer.stop()
        return {
            "threads": threads,
            "houses": houses,
            "expected": expected,
            "baseline_reply_s": round(baseline_s, 2),
            "worker_recovery_s": round(worker_s, 2),
            "house_recovery_s": round(house_s, 2),
            "thread_recovery_s": round(thread_s, 2),
        }

    outcome = asyncio.run(scenario())
    http.close()
    expected = outcome["expected"]
    posted = tally({p.name: [a.entry_id for a in p.acks] for p in posters}, expected)
    viewers_wrong = sum(1 for v in outcome["threads"] if list(v.page) != expected)
    missing = sum(1 for v in outcome["threads"] for i in expected if i not in v.page)
    wake_failures = sum(
        1
        for thread_id in world["threads"]
        for e in read_log(webs[1], token, thread_id)
        if e["payload"]["type"] == "signal.dispatch.failed" and e["payload"]["stage"] == "wake"
    )
    report(
        **posted.figures(),
        given_up=sum(len(p.given_up) for p in posters),
        post_retries=sum(p.retries for p in posters),
        wake_failures_recorded=wake_failures,
        thread_sockets=len(outcome["threads"]),
        thread_sockets_wrong=viewers_wrong,
        thread_socket_entries_missing=missing,
        copies_dropped_as_the_page_does=sum(v.copies for v in outcome["threads"]),
        thread_reconnects=sum(v.connects - 1 for v in outcome["threads"]),
        house_reconnects=sum(v.connects - 1 for v in outcome["houses"]),
        baseline_reply_s=outcome["baseline_reply_s"],
        worker_recovery_s=outcome["worker_recovery_s"],
        house_recovery_s=outcome["house_recovery_s"],
        thread_recovery_s=outcome["thread_recovery_s"],
        down_s=DOWN_S,
    )
    assert posted.acknowledged == POSTERS * POSTS
    assert (posted.lost, posted.duplicated, posted.out_of_order) == (0, 0, 0)
    assert viewers_wrong == 0, _differences(outcome["threads"], expected)


def _differences(viewers, expected: list[str]) -> list[dict]:
    """Where each wrong socket's chat differs from the log: first divergence, counts."""
    found = []
    for n, viewer in enumerate(viewers):
        shown = list(viewer.page)
        if shown == expected:
            continue
        at = next(
            (i for i, (a, b) in enumerate(zip(shown, expected, strict=False)) if a != b),
            min(len(shown), len(expected)),
        )
        found.append(
            {"socket": n, "shown": len(shown), "log": len(expected), "diverges_at": at,
             "shown_there": shown[at : at + 3], "log_there": expected[at : at + 3],
             "connects": viewer.connects}
        )  # fmt: skip
    return found


def _bot_id(cluster, house_slug: str) -> str:
    code = (
        "from houses.models import Agent; "
        f"print(Agent.objects.get(house__slug={house_slug!r}, kind='bot').id)"
    )
    return cluster.manage("shell", "-c", code).strip().splitlines()[-1]
