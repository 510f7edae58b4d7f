"""The scaled configuration across processes: two Daphnes and two backstage workers on
PostgreSQL, Redis and the reference stream server (``tests.peers.cluster``).

What one process can't show: a socket on web 2 sees a post made through web 1, the house
page follows across processes, replies run on the workers only, the sweep runs once per
interval whichever worker ticks, and a member removed through web 1 (from the house or from a
private thread), signed out through web 1 or deactivated by another process loses their
sockets and stream reads on web 2.
"""

from __future__ import annotations

import contextlib
import time
import uuid

import httpx
import psycopg
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.peers.cluster import Cluster

pytestmark = pytest.mark.faults
SWEEP_S = 2
WAIT_S = 30.0


@pytest.fixture(scope="module")
def cluster():
    with Cluster(web=2, workers=2, sweep_s=SWEEP_S) as cluster:
        yield cluster


@pytest.fixture
def world(cluster):
    return cluster.world(people=2, threads=1)


def post(cluster, world, text, *, web=0, person=0) -> str:
    entry_id = uuid.uuid4().hex
    response = httpx.post(
        f"{cluster.web[web].url}/api/threads/{world['threads'][0]}/entries",
        json={"id": entry_id, "payload": {"type": "chat", "text": text}},
        headers={"Authorization": f"Bearer {world['tokens'][person]}"},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return entry_id


def socket(cluster, world, path, *, web=1, person=0):
    url = cluster.web[web].url
    return connect(
        url.replace("http://", "ws://") + path,
        additional_headers={"Cookie": f"sessionid={world['sessions'][person]}", "Origin": url},
        open_timeout=WAIT_S,
    )


def receive_until(ws, needle: str, timeout: float = WAIT_S) -> str:
    """Frames until one holds ``needle``; fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            frame = ws.recv(timeout=left)
        except TimeoutError:
            break
        if needle in frame:
            return frame
    raise AssertionError(f"no frame with {needle!r} within {timeout}s")


def entries(cluster, world, *, web=1) -> list[dict]:
    """The whole log of the world's thread, read through a web process's proxy."""
    name = f"arbe-thread-{world['threads'][0]}"
    headers = {"Authorization": f"Bearer {world['tokens'][0]}"}
    out, offset = [], "-1"
    while True:
        response = httpx.get(
            f"{cluster.web[web].url}/api/stream/{name}",
            params={"offset": offset},
            headers=headers,
            timeout=30,
        )
        assert response.status_code == 200, response.text
        out += response.json()
        offset = response.headers["Stream-Next-Offset"]
        if response.headers.get("Stream-Up-To-Date") == "true":
            return out


def wait_for(predicate, timeout: float = WAIT_S, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {timeout}s")


def test_a_socket_on_web_2_receives_a_post_made_through_web_1(cluster, world):
    with socket(cluster, world, f"/ws/threads/{world['threads'][0]}/") as ws:
        ws.recv(timeout=WAIT_S)  # the panel and the offset the page starts from
        entry_id = post(cluster, world, "across the processes", web=0)
        assert "across the processes" in receive_until(ws, f"entry-{entry_id}")


def test_the_house_page_follows_posts_across_processes(cluster, world):
    with socket(cluster, world, f"/ws/houses/{world['house']}/", person=1) as ws:
        post(cluster, world, "a row that moves", web=0)
        assert f"thread-{world['threads'][0]}" in receive_until(ws, "a row that moves")


def test_replies_run_on_the_workers_and_only_there(cluster, world):
    for worker in cluster.workers:
        worker.kill()
    try:
        asked = post(cluster, world, f"@{world['bot']} are you there?", web=0)
        time.sleep(3)  # web processes send the wake to the workers' channel; nobody takes it
        assert not [e for e in entries(cluster, world) if e["payload"]["type"].startswith("pi.")]
    finally:
        for worker in cluster.workers:
            worker.start()

    # Wakes sent while no worker listened stay in Redis until one does (channel capacity).
    def bot_chat():
        return [
            e
            for e in entries(cluster, world)
            if e["payload"]["type"] == "chat" and e["authorId"] not in world["agents"]
        ]

    answered = wait_for(bot_chat, what="a reply from a worker")
    assert "are you there?" in answered[0]["payload"]["text"]
    started = [
        e for e in entries(cluster, world) if e["payload"]["type"] == "signal.dispatch.started"
    ]
    assert len(started) == 1 and asked


def test_the_sweep_runs_once_per_interval_whichever_worker_ticks(cluster):
    """Two workers tick every SWEEP_S; the lease lets one tick per interval sweep."""
    takes, holders = set(), set()
    watch_s = 6 * SWEEP_S
    deadline = time.monotonic() + watch_s
    with psycopg.connect(cluster.database_url, autocommit=True) as db:
        while time.monotonic() < deadline:
            row = db.execute(
                "SELECT holder, until FROM dispatch_lease WHERE name = 'backstage-sweep'"
            ).fetchone()
            if row:
                holders.add(row[0])
                takes.add(row[1])
            time.sleep(0.05)
    # Each take moves `until`; two workers sweeping every tick would make ~2 per interval.
    assert watch_s / SWEEP_S - 2 <= len(takes) <= watch_s / (0.9 * SWEEP_S) + 1, takes
    assert holders  # some worker holds it; which one varies


@contextlib.contextmanager
def live_sockets(cluster, world, *, person=1):
    """The thread, house and board pages' sockets on web 2, past what each sends first."""
    paths = (
        f"/ws/threads/{world['threads'][0]}/",
        f"/ws/houses/{world['house']}/",
        f"/ws/houses/{world['house']}/board/",
    )
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket(cluster, world, p, person=person)) for p in paths]
        sockets[0].recv(timeout=WAIT_S)  # the panel
        sockets[1].recv(timeout=WAIT_S)  # the list
        yield sockets


def close_code(ws) -> int | None:
    """The code ``ws`` is closed with next (frames before it are skipped)."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            ws.recv(timeout=WAIT_S)
    return closed.value.rcvd.code if closed.value.rcvd is not None else None


def test_a_member_removed_through_web_1_loses_their_sockets_on_web_2(cluster, world):
    member = world["usernames"][1]
    with live_sockets(cluster, world) as sockets:
        response = httpx.delete(
            f"{cluster.web[0].url}/api/houses/{world['house']}/members/{member}",
            headers={"Authorization": f"Bearer {world['tokens'][0]}"},
            timeout=30,
        )
        assert response.status_code == 204, response.text
        assert [close_code(ws) for ws in sockets] == [4404, 4404, 4404]


def test_a_member_removed_from_a_private_thread_through_web_1_loses_it_on_web_2(cluster, world):
    """Thread-level access across processes: the thread socket ends 4404, the house's go on."""
    api, owner = cluster.web[0].url, {"Authorization": f"Bearer {world['tokens'][0]}"}
    thread, member = world["threads"][0], world["agents"][1]
    made = httpx.post(
        f"{api}/api/threads/{thread}/private", json={"members": [member]}, headers=owner
    )
    assert made.status_code == 200, made.text
    with live_sockets(cluster, world) as sockets:
        removed = httpx.delete(f"{api}/api/threads/{thread}/members/{member}", headers=owner)
        assert removed.status_code == 200 and removed.json() == {"removed": True}
        assert close_code(sockets[0]) == 4404
        for ws in sockets[1:]:  # their house and board pages read on
            with contextlib.suppress(TimeoutError):
                while True:
                    ws.recv(timeout=1.0)
            assert ws.ping().wait(WAIT_S)  # still open: a closed one raises


def test_signing_out_through_web_1_closes_that_sessions_sockets_on_web_2(cluster, world):
    with live_sockets(cluster, world) as sockets:
        url = cluster.web[0].url
        with httpx.Client(base_url=url, cookies={"sessionid": world["sessions"][1]}) as browser:
            assert browser.get(f"/houses/{world['house']}/", timeout=30).status_code == 200
            response = browser.post(
                "/logout/",
                data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]},
                timeout=30,
            )
        assert response.status_code in (200, 302), response.text[:500]
        assert [close_code(ws) for ws in sockets] == [4401, 4401, 4401]


def test_deactivation_elsewhere_ends_sockets_and_an_sse_read_on_web_2(cluster, world):
    url = f"{cluster.web[1].url}/api/threads/{world['threads'][0]}/stream"
    auth = {"Authorization": f"Bearer {world['tokens'][1]}"}
    tail = httpx.get(url, params={"offset": "-1"}, headers=auth, timeout=30)
    assert tail.status_code == 200, tail.text
    with live_sockets(cluster, world) as sockets:
        params = {"offset": tail.headers["Stream-Next-Offset"], "live": "sse"}
        with httpx.stream("GET", url, params=params, headers=auth, timeout=WAIT_S) as sse:
            assert sse.status_code == 200
            chunks = sse.iter_raw()
            next(chunks)  # the read is open and flowing
            member = world["usernames"][1]
            cluster.manage(
                "shell",
                "-c",
                "from django.contrib.auth import get_user_model; "
                f"u = get_user_model().objects.get(username={member!r}); "
                "u.is_active = False; u.save()",
            )
            assert [close_code(ws) for ws in sockets] == [4401, 4401, 4401]
            for _ in chunks:  # ends, rather than timing out (httpx raises ReadTimeout)
                pass
    assert httpx.get(url, params={"offset": "-1"}, headers=auth, timeout=30).status_code == 401
