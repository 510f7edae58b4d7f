"""Operating the scaled configuration (docs/operations.md): readiness that names the
dependency that is down and recovers with it, metrics that move as posts and replies
happen, JSON logs that hold no message text or secret, and a backup restored into a
scratch stack that ``check_restore`` finds equal. One web process and one worker, with
``LOG_FORMAT=json`` and a metrics token, on PostgreSQL, Redis and the reference stream
server (``tests.peers.cluster``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.sync.client import connect

from tests.peers.cluster import ROOT, Cluster

TOKEN = "metrics-" + uuid.uuid4().hex
WAIT_S = 60.0
SECRET_TEXT = f"the launch code is {uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def cluster():
    env = {"LOG_FORMAT": "json", "METRICS_TOKEN": TOKEN}
    with Cluster(web=1, workers=1, extra_env=env) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def world(cluster):
    world = cluster.world(people=1, threads=1)
    cluster.manage(
        "shell",
        "-c",
        "from houses.models import House; from tests.factories import make_bot; "
        f"make_bot(House.objects.get(slug={world['house']!r}), 'broken', "
        "provider='anthropic', model='claude-x', api_key_env='ARBE_BOTKEY_NOT_SET')",
    )
    return world


def metric(url: str, name: str, **labels) -> float:
    """The value of one sample of ``url``'s ``/metrics`` (0 when it has none yet)."""
    answer = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


def post(cluster, world, text: str) -> str:
    entry_id = uuid.uuid4().hex
    answer = httpx.post(
        f"{cluster.web[0].url}/api/threads/{world['threads'][0]}/entries",
        json={"id": entry_id, "payload": {"type": "chat", "text": text}},
        headers={
            "Authorization": f"Bearer {world['tokens'][0]}",
            "X-Request-ID": "ops-" + entry_id,
        },
        timeout=30,
    )
    assert answer.status_code == 201, answer.text
    assert answer.headers["x-request-id"] == "ops-" + entry_id
    return entry_id


def quiet(cluster, world, still_s: float = 3.0) -> None:
    """Until the thread's log has not grown for ``still_s`` (passes after an outage settle)."""
    from streams.client import DurableStreamClient

    client = DurableStreamClient(cluster.streams.url, secret=cluster.env["DURABLE_STREAMS_SECRET"])
    name = f"arbe-thread-{world['threads'][0]}"
    last, since = None, time.monotonic()
    while time.monotonic() - since < still_s:
        tail = client.catch_up(name).next_offset
        if tail != last:
            last, since = tail, time.monotonic()
        time.sleep(0.2)


def wait_for(predicate, what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {timeout}s")


def test_metrics_move_as_a_post_a_reply_and_a_failed_reply_happen(cluster, world):
    web, worker = cluster.web[0].url, cluster.workers[0].url

    def counts():
        return (
            metric(web, "arbe_posts_appended_total"),
            metric(worker, "arbe_replies_total", outcome="started"),
            metric(worker, "arbe_replies_total", outcome="finished"),
            metric(worker, "arbe_replies_total", outcome="failed"),
            metric(worker, "arbe_pi_starts_total", kind="cold"),
        )

    posts, started, finished, failed, pi = counts()
    post(cluster, world, f"@helper {SECRET_TEXT}")
    wait_for(lambda: counts()[2] == finished + 1, "the reply finished")
    assert counts() == (posts + 1, started + 1, finished + 1, failed, pi + 1)
    assert metric(worker, "arbe_posts_appended_total") >= 1  # the answer, written there
    labels = {"route": "api-entries", "method": "POST", "status": "201"}
    assert metric(web, "arbe_http_requests_total", **labels) >= 1  # by route name

    post(cluster, world, f"@broken {SECRET_TEXT}")
    wait_for(lambda: counts()[3] == failed + 1, "the reply failed")
    assert counts()[1:] == (started + 2, finished + 1, failed + 1, pi + 1)  # no Pi: no key


def test_open_sockets_upstream_tails_and_fan_out_are_measured(cluster, world):
    web = cluster.web[0].url
    sockets = {"route": "/ws/threads/"}
    fanned = metric(web, "arbe_fanout_duration_seconds_count")
    direct = metric(web, "arbe_fanout_frames_total", path="direct")
    headers = {"Cookie": f"sessionid={world['sessions'][0]}", "Origin": web}
    url = web.replace("http://", "ws://") + f"/ws/threads/{world['threads'][0]}/"
    with connect(url, additional_headers=headers, open_timeout=WAIT_S) as ws:
        ws.recv(timeout=WAIT_S)  # the panel: the tail is up
        assert metric(web, "arbe_websockets_open", **sockets) == 1
        assert metric(web, "arbe_upstream_tails") == 1
        entry_id = post(cluster, world, "fanned out")
        while f"entry-{entry_id}" not in ws.recv(timeout=WAIT_S):
            pass
        assert metric(web, "arbe_fanout_duration_seconds_count") >= fanned + 1
        # Under Daphne the hub wrote the frame to the socket itself (threads.socket_frames).
        assert metric(web, "arbe_fanout_frames_total", path="direct") >= direct + 1
    wait_for(
        lambda: metric(web, "arbe_websockets_open", **sockets) == 0, "the socket counted closed"
    )
    wait_for(lambda: metric(web, "arbe_upstream_tails") == 0, "the tail let go")


DEPENDENCIES = ("streams", "channel_layer", "database")


def readiness(proc) -> tuple[int, dict]:
    try:
        answer = httpx.get(f"{proc.url}/readyz", timeout=10)
    except httpx.HTTPError as exc:
        return 0, {"error": type(exc).__name__}
    return answer.status_code, answer.json()


@pytest.mark.parametrize("dependency", DEPENDENCIES)
def test_readiness_names_a_stopped_dependency_and_recovers(cluster, world, dependency):
    stop, start = {
        "streams": (cluster.streams.kill, cluster.streams.start),
        "channel_layer": (cluster.redis.kill, cluster.redis.start),
        "database": (cluster.pg.halt, cluster.pg.resume),
    }[dependency]
    cluster.wait_ready()
    stop()
    try:
        for proc in (cluster.web[0], cluster.workers[0]):
            status, body = wait_for(
                lambda p=proc: (r := readiness(p))[0] == 503 and r,
                f"{proc.name} reporting {dependency} down",
            )
            assert dependency in body["failing"], body
            expected = (
                {dependency, "leases", "streams"} if dependency == "database" else {dependency}
            )
            assert set(body["failing"]) <= expected, body  # nothing else is blamed
            assert not body["checks"][dependency]["ok"]
            assert "127.0.0.1" not in json.dumps(body) and "postgres" not in json.dumps(body)
            assert httpx.get(f"{proc.url}/healthz", timeout=10).status_code == 200  # alive
    finally:
        start()
    cluster.wait_ready(timeout=WAIT_S)  # both answer 200 again, with no restart of either


def test_a_backup_restores_into_a_scratch_stack_that_check_restore_finds_equal(
    cluster, world, tmp_path
):
    upload = httpx.post(
        f"{cluster.web[0].url}/api/threads/{world['threads'][0]}/attachments",
        files={"file": ("notes.txt", b"kept in the backup\n", "text/plain")},
        headers={"Authorization": f"Bearer {world['tokens'][0]}"},
        timeout=30,
    )
    assert upload.status_code == 201, upload.text
    quiet(cluster, world)  # a copy is compared with a quiet instance (docs/operations.md)
    script = [sys.executable, "scripts/backup_restore.py"]
    out = ["--out", str(tmp_path / "backup"), "--streams-dir", str(cluster.var_dir / "streams")]
    cluster.streams.stop()  # the reference server's files are consistent while it is stopped
    try:
        done = subprocess.run(
            [*script, "backup", *out], cwd=ROOT, env=cluster.env, capture_output=True,
            text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    finally:
        cluster.streams.start()
    done = subprocess.run(
        [*script, "check", *out], cwd=ROOT, env=cluster.env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    matched = done.stdout.splitlines()[-1]
    assert matched.startswith("the copy matches:"), done.stdout
    assert "1 attachments" in matched and "1 attachment files" in matched, matched
    assert re.search(r"1 streams with [1-9]\d* entries", matched), matched


def test_json_logs_parse_line_by_line_and_hold_no_text_or_secret(cluster, world):
    secrets = {
        "the posted text": SECRET_TEXT,
        "SECRET_KEY": cluster.env["SECRET_KEY"],
        "DURABLE_STREAMS_SECRET": cluster.env["DURABLE_STREAMS_SECRET"],
        "DEMO_MODEL_SECRET": cluster.env["DEMO_MODEL_SECRET"],
        "METRICS_TOKEN": TOKEN,
        **{f"API token {n}": t for n, t in enumerate(world["tokens"])},
        **{f"session {n}": s for n, s in enumerate(world["sessions"])},
    }
    entry_id = post(cluster, world, SECRET_TEXT)  # whatever ran before, one request here
    mine = "ops-" + entry_id
    wait_for(lambda: mine in cluster.web[0].log.read_text(), "the post's access line")
    lines = []
    for proc in (cluster.web[0], cluster.workers[0]):
        text = proc.log.read_text(errors="replace")
        for name, secret in secrets.items():
            assert secret not in text, f"{name} in {proc.name}'s log"
        for raw in text.splitlines():
            if raw.startswith("--- start "):  # the cluster's own marker between restarts
                continue
            line = json.loads(raw)  # every line is one JSON object
            assert {"ts", "level", "logger", "message"} <= set(line), raw
            lines.append(line)
    access = [line for line in lines if line.get("request_id") == mine]
    assert access and access[-1]["route"] == "api-entries" and access[-1]["status"] == 201
    assert access[-1]["thread_id"] == world["threads"][0] and access[-1]["user_id"]
