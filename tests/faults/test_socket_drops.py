"""Fault: forced socket drops during a burst of posts and deletions.

"A dropped socket resumes with no gap": viewers follow a thread over WebSockets the way the
page script does (``static/arbe/live.js``): apply each frame's out-of-band fragments, keep
the last ``#stream-offset`` applied, and after a drop reconnect from it with the page's
back-off. Each viewer keeps the model the page would show: the ids of ``#entries``'
children in order, an append of an id already there dropped (as the page drops it), a
tombstone's delete applied.

While posters append a burst of chat and tombstones, the drops are forced two ways:

- **by the client**: a viewer's TCP connection is aborted (no closing handshake), as when
  a laptop sleeps or a phone changes network; spread over the burst;
- **by the server**: the Daphne the viewers are connected to is killed with SIGKILL and
  started again, so every open socket drops at once; posters retry with their ids until
  acknowledged, as the page's compose box does.

At the end every viewer's model must equal a fresh load (a socket from the log's start,
the same fragments), each entry once, in order; a fresh page's ``#entries`` must be the
end of that list; and the chat it shows must be exactly what was acknowledged and not
deleted. One JSON line of figures is printed and appended to ``$ARBE_FAULTS_REPORT``.

Two configurations: one Daphne on SQLite with the embedded stream server (``make run``),
and the scaled cluster (PostgreSQL, Redis, the embedded stream server): viewers on Daphne
B, posts through Daphne A, B killed. ``ARBE_DROPS_ENTRIES``, ``ARBE_DROPS`` and
``ARBE_DROPS_KILLS`` size a run (full: 10,000, 500 and 3; CI: 1,000, 60 and 2;
``tests.faults.sizes``).
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.faults.sizes import sized
from tests.peers.cluster import ROOT, Proc
from tests.peers.ports import free_port

ENTRIES = int(os.environ.get("ARBE_DROPS_ENTRIES", sized(10000, 1000)))  # chat + tombstones
DROPS = int(os.environ.get("ARBE_DROPS", sized(500, 60)))
VIEWERS = 20
POSTERS = 8
DELETE_SHARE = 0.1  # one entry in ten of the burst is a tombstone
# Server-side drops: the viewers' Daphne is killed this many times during the burst.
KILLS = int(os.environ.get("ARBE_DROPS_KILLS", sized(3, 2)))

APPEND = re.compile(
    r'<div hx-swap-oob="beforeend:([^"]+)">\s*<(?:article|div|p) id="entry-([^"]+)"'
    r'|<div id="entry-([^"]+)" hx-swap-oob="delete">'
    r'|<div id="stream-offset" hidden data-offset="([^"]*)">'
)
PAGE_ENTRY = re.compile(r'<(?:article|div|p) id="entry-([^"]+)" class="entry')

_WORLD = """
import json
from django.test import Client
from houses.models import ApiToken
from tests.factories import make_house, make_user
from threads.lifecycle import create_thread
user = make_user("viewer")
house = make_house("drops", owner=user)
thread = create_thread(house=house, title="Drops", by=user.agent)
client = Client()
client.force_login(user)
print(json.dumps({"thread": thread.id, "token": ApiToken.issue(user, "drops")[1],
    "cookie": client.cookies["sessionid"].value}))
"""


# -- the servers ------------------------------------------------------------------------


class Single:
    """One Daphne on SQLite with the embedded stream server and backstage (``make run``)."""

    def __init__(self):
        self.var_dir = Path(tempfile.mkdtemp(prefix="arbe-drops-"))
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
            "DJANGO_SETTINGS_MODULE": "arbe_site.settings",
            "ARBE_VAR_DIR": str(self.var_dir),
            "DATABASE_URL": f"sqlite:///{self.var_dir}/drops.sqlite3",
            "DURABLE_STREAMS_URL": "",
            "REDIS_URL": "",
            "BACKSTAGE": "inprocess",
            "BACKSTAGE_SWEEP_S": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DEBUG": "false",
            "PYTHONUNBUFFERED": "1",
        }
        port = free_port()
        argv = [
            sys.executable, "-m", "arbe_site.web", "-b", "127.0.0.1", "-p", str(port),
            "arbe_site.asgi:application",
        ]  # fmt: skip
        self.web = [Proc("web1", argv, self.env, self.var_dir / "web1.log", port)]

    def __enter__(self):
        self.manage("migrate", "--noinput", "-v0")
        self.web[0].start()
        return self

    def __exit__(self, *exc):
        self.web[0].stop()
        shutil.rmtree(self.var_dir, ignore_errors=True)

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-4000:])
        return done.stdout

    def logs(self) -> str:
        return self.web[0].tail()


def servers(kind: str):
    if kind == "single":
        return Single()
    from tests.peers.cluster import Cluster

    if not shutil.which("redis-server"):
        pytest.skip("the cluster needs redis-server")
    # The embedded server on PostgreSQL: the reference server reads a stream's whole segment
    # file on every read, so at 10,000 entries its reads, not arbe, would set the pace
    # (docs/reliability.md). Its kills are in test_stream_server_kill.py.
    return Cluster(web=2, workers=1, streams="embedded")


# -- a viewer: the page script's protocol and the page's model ---------------------------


@dataclass
class Viewer:
    url: str  # ws://host:port/ws/threads/<id>/
    headers: dict
    offset: str
    ids: dict[str, None] = field(default_factory=dict)  # in page order
    ws: object = None
    dropped_at: float | None = None
    resumes: list[float] = field(default_factory=list)  # drop → first frame after it, ms
    duplicates: int = 0  # appends of an id the model already had (the page drops them)
    overflow_closes: int = 0  # 1013: the server's own "too far behind, reconnect"

    def apply(self, frame: str) -> None:
        for target, appended, deleted, offset in APPEND.findall(frame):
            if appended and target == "#entries":
                if appended in self.ids:
                    self.duplicates += 1
                else:
                    self.ids[appended] = None
            elif deleted:
                self.ids.pop(deleted, None)
            elif offset:
                self.offset = html.unescape(offset)

    def drop(self) -> bool:
        """Abort the connection without a closing handshake; False when not connected."""
        if self.ws is None:
            return False
        self.dropped_at = time.perf_counter()
        self.ws.transport.abort()
        self.ws = None
        return True

    async def follow(self, stop: asyncio.Event) -> None:
        import websockets

        retry = 0
        while not stop.is_set():
            url = f"{self.url}?offset={self.offset}"
            try:
                async with websockets.connect(
                    url, additional_headers=self.headers, max_size=None, open_timeout=10
                ) as ws:
                    self.ws, retry = ws, 0
                    async for frame in ws:
                        if self.dropped_at is not None:
                            self.resumes.append((time.perf_counter() - self.dropped_at) * 1000)
                            self.dropped_at = None
                        self.apply(frame)
            except websockets.ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else None
                if code is not None and 4400 <= code < 4500:
                    raise AssertionError(f"the server refused the viewer: {code}") from closed
                if code == 1013:
                    self.overflow_closes += 1
            except (TimeoutError, OSError, EOFError, websockets.WebSocketException):
                pass  # the server is down, starting or too busy to answer: back off, retry
            self.ws = None
            if self.dropped_at is None and not stop.is_set():
                self.dropped_at = time.perf_counter()  # a drop nobody forced
            delay = min(0.25 * 2**retry, 5.0) * (0.5 + random.random() / 2)  # live.js's back-off
            retry += 1
            await asyncio.sleep(delay)


# -- the burst ----------------------------------------------------------------------------


async def call(http, method: str, path: str, **kwargs) -> dict:
    """The compose box's rule: retry the same request (same id) until it is acknowledged."""
    for attempt in range(200):
        try:
            response = await http.request(method, path, **kwargs)
        except Exception:  # noqa: BLE001 - the server is being killed; retry as the page does
            await asyncio.sleep(min(0.1 * 2**attempt, 2.0))
            continue
        if response.status_code < 500 and response.status_code != 429:
            response.raise_for_status()
            return response.json()
        await asyncio.sleep(min(0.1 * 2**attempt, 2.0))
    raise AssertionError(f"{method} {path} was never acknowledged")


async def burst(servers_, world: dict) -> dict:
    import httpx
    import websockets

    writer, watched = servers_.web[0], servers_.web[-1]
    thread = world["thread"]
    origin = watched.url
    headers = {"Cookie": f"sessionid={world['cookie']}", "Origin": origin}
    ws_url = origin.replace("http://", "ws://") + f"/ws/threads/{thread}/"
    async with httpx.AsyncClient(base_url=origin, headers=headers, timeout=30) as page:
        first = (await page.get(f"/threads/{thread}/")).text
    start_offset = html.unescape(re.search(r'data-offset="([^"]*)"', first).group(1))
    start_ids = PAGE_ENTRY.findall(first)
    viewers = [
        Viewer(ws_url, headers, start_offset, dict.fromkeys(start_ids)) for _ in range(VIEWERS)
    ]
    stop = asyncio.Event()
    following = [asyncio.create_task(v.follow(stop)) for v in viewers]

    rng = random.Random(18)
    acked: list[str] = []
    deleted: set[str] = set()
    kinds = ["delete" if rng.random() < DELETE_SHARE else "post" for _ in range(ENTRIES)]
    done = 0
    forced = {"client": 0, "server": 0}
    kill_at = {int(ENTRIES * (k + 1) / (KILLS + 1)) for k in range(KILLS)}
    restarts: list[float] = []
    killing = asyncio.Lock()
    next_job = iter(range(ENTRIES))

    async def kill_watched() -> None:
        async with killing:
            connected = [v for v in viewers if v.drop()]  # their sockets die with the process
            forced["server"] += len(connected)
            started = time.perf_counter()
            await asyncio.to_thread(watched.kill)
            await asyncio.to_thread(watched.start)
            restarts.append((time.perf_counter() - started) * 1000)

    async def step() -> None:
        nonlocal done
        done += 1
        if done in kill_at:
            asyncio.get_running_loop().create_task(kill_watched())
        want = DROPS * done // ENTRIES
        while forced["client"] + forced["server"] < want and not killing.locked():
            connected = [v for v in viewers if v.ws is not None]
            if not connected:
                break
            rng.choice(connected).drop()
            forced["client"] += 1

    async def poster(http) -> None:
        for n in next_job:
            live = [i for i in acked[-200:] if i not in deleted]
            if kinds[n] == "delete" and live:
                target = rng.choice(live)
                deleted.add(target)
                await call(http, "DELETE", f"/api/threads/{thread}/entries/{target}")
            else:
                key = f"burst-{n}"
                await call(http, "POST", f"/api/threads/{thread}/entries",
                           data={"text": f"burst {n}", "id": key})  # fmt: skip
                acked.append(key)
            await step()

    started = time.perf_counter()
    auth = {"Authorization": f"Bearer {world['token']}"}
    async with httpx.AsyncClient(base_url=writer.url, headers=auth, timeout=30) as http:
        await asyncio.gather(*(poster(http) for _ in range(POSTERS)))
        async with killing:
            pass
        await call(http, "POST", f"/api/threads/{thread}/entries",
                   data={"text": "the end", "id": "burst-end"})  # fmt: skip
    burst_s = time.perf_counter() - started

    deadline = time.monotonic() + 120
    while any("burst-end" not in v.ids for v in viewers):
        for task in following:
            if task.done():
                task.result()  # a viewer that failed fails the test with its own error
        if time.monotonic() > deadline:
            behind = sum("burst-end" not in v.ids for v in viewers)
            raise AssertionError(f"{behind} viewers never saw the last post")
        await asyncio.sleep(0.1)
    stop.set()
    for v in viewers:
        if v.ws is not None:
            await v.ws.close()
    await asyncio.gather(*following)

    async with websockets.connect(
        ws_url + "?offset=-1", additional_headers=headers, max_size=None
    ) as ws:
        fresh = Viewer(ws_url, headers, "-1")
        frame = ""
        while 'id="stream-offset"' not in frame:  # a long catch-up comes in several frames
            frame = await ws.recv()
            fresh.apply(frame)
    async with httpx.AsyncClient(base_url=origin, headers=headers, timeout=30) as page:
        final_page = PAGE_ENTRY.findall((await page.get(f"/threads/{thread}/")).text)
    return {
        "viewers": viewers,
        "fresh": list(fresh.ids),
        "page": final_page,
        "expected_chat": [*acked, "burst-end"],
        "deleted": deleted,
        "forced": forced,
        "restarts": restarts,
        "burst_s": burst_s,
        "kinds": kinds,
    }


def report(line: dict) -> None:
    text = json.dumps(line)
    print(text)
    path = os.environ.get("ARBE_FAULTS_REPORT")
    if path:
        with open(path, "a") as out:
            out.write(text + "\n")


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("kind", ["single", "cluster"])
def test_viewers_end_with_the_fresh_page_after_forced_drops(kind):
    with servers(kind) as servers_:
        world = json.loads(servers_.manage("shell", "-c", _WORLD).strip().splitlines()[-1])
        try:
            run = asyncio.run(burst(servers_, world))
        except Exception:
            print(servers_.logs(), file=sys.stderr)
            raise

    fresh, viewers = run["fresh"], run["viewers"]
    mismatches = sum(list(v.ids) != fresh for v in viewers)
    resumes = [ms for v in viewers for ms in v.resumes]
    forced = run["forced"]
    report(
        {
            "fault": "socket_drops",
            "config": kind,
            "entries": len(run["kinds"]),
            "tombstones": len(run["deleted"]),
            "viewers": len(viewers),
            "drops": forced["client"] + forced["server"],
            "client_drops": forced["client"],
            "server_drops": forced["server"],
            "server_kills": len(run["restarts"]),
            "overflow_closes": sum(v.overflow_closes for v in viewers),
            "duplicate_appends_dropped": sum(v.duplicates for v in viewers),
            "mismatches": mismatches,
            "resume_p50_ms": round(statistics.median(resumes), 1) if resumes else None,
            "max_resume_ms": round(max(resumes), 1) if resumes else None,
            "max_restart_ms": round(max(run["restarts"]), 1) if run["restarts"] else None,
            "burst_s": round(run["burst_s"], 1),
        }
    )

    assert len(fresh) == len(set(fresh)), "the fresh load shows an entry twice"
    chat = [i for i in fresh if i.startswith("burst-")]
    expected = [i for i in run["expected_chat"] if i not in run["deleted"]]
    assert sorted(chat) == sorted(expected), "the fresh load lost or kept the wrong chat"
    assert run["page"] == fresh[-len(run["page"]) :], "a fresh page is not the log's end"
    assert forced["client"] + forced["server"] >= DROPS
    for n, viewer in enumerate(viewers):
        assert list(viewer.ids) == fresh, f"viewer {n} differs from a fresh load"
