"""1,000 racing status writers: no stale overwrite, and at rest the stored status is the fold.

Four processes of 25 writer threads each (``tests.faults.status_writers``) append 1,000
status-moving entries through the server's write path to six threads of one house at
once; every append recomputes and stores its thread's status under the ``status_rev``
guard, from separate processes, so only the guard orders them. At rest, for every thread,
the stored record (``GET /api/threads/<id>``, read first: ``/now`` repairs drift) must
equal the fold ``/now`` derives from the log. A stale overwrite — an older fold written
over a newer one — would leave a thread's record behind its log.
"""

import json
import re
import subprocess
import sys
import time

import httpx
import pytest

from tests.faults.load import read_log
from tests.peers.cluster import ROOT, Cluster

WRITERS = 1000
PROCESSES = 4
CONCURRENCY = 25  # writer threads per process: 100 writing at once
THREADS = 6


@pytest.fixture(scope="module")
def cluster():
    with Cluster(web=1, workers=0, streams="reference") as cluster:
        yield cluster


def test_racing_status_writers(cluster, report):
    world = cluster.world(people=1, bot=True, threads=THREADS)
    share = WRITERS // PROCESSES
    start_at = time.time() + 8  # every process imported and at its barrier by then
    argv = [sys.executable, "-m", "tests.faults.status_writers", "--threads"]
    argv += [",".join(world["threads"]), "--author", world["agents"][0]]
    procs = [
        subprocess.Popen(
            [
                *argv,
                "--first",
                str(n * share),
                "--count",
                str(share),
                "--concurrency",
                str(CONCURRENCY),
                "--start-at",
                str(start_at),
            ],
            cwd=ROOT,
            env=cluster.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for n in range(PROCESSES)
    ]
    outputs = [proc.communicate(timeout=300) for proc in procs]
    elapsed = time.time() - start_at
    results = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    gave_up = sum(err.count("still moving after") for _, err in outputs)

    headers = {"Authorization": f"Bearer {world['tokens'][0]}"}
    stale, states = [], {}
    with httpx.Client(base_url=cluster.web[0].url, headers=headers, timeout=30) as http:
        for thread_id in world["threads"]:
            stored = http.get(f"/api/threads/{thread_id}").json()["thread"]
            folded = http.get(f"/api/threads/{thread_id}/now").json()["status"]
            states[thread_id] = folded["state"]
            if (stored["status"], stored["statusMessage"]) != (
                folded["state"],
                folded["message"][:300],
            ):
                stale.append({"thread": thread_id, "stored": stored, "fold": folded["state"]})
        logged = [
            e["id"]
            for thread_id in world["threads"]
            for e in read_log(cluster.web[0].url, world["tokens"][0], thread_id)
            if re.fullmatch(r"w\d{5}", e["id"])
        ]
    revs = _status_revs(cluster, world["threads"])

    # A writer whose hooks raised (a read timing out under this load) still appended first.
    failures = [f for r in results for f in r["failures"]]
    report(
        writers=WRITERS,
        concurrent=PROCESSES * CONCURRENCY,
        threads=THREADS,
        appended=len(set(logged)),
        duplicated=len(logged) - len(set(logged)),
        writers_raised=len(failures),
        stale=len(stale),
        status_writes_landed=sum(revs.values()),
        passes_gave_up=gave_up,
        final_states=sorted(states.values()),
        seconds=round(elapsed, 1),
    )
    assert len(set(logged)) == len(logged) == WRITERS, failures[:5]
    assert stale == [], stale
    # Each thread's record moved many times: the race was a race.
    assert min(revs.values()) > 10, revs


def _status_revs(cluster, thread_ids) -> dict[str, int]:
    code = (
        "import json; from threads.models import Thread; "
        f"print(json.dumps(dict(Thread.objects.filter(pk__in={list(thread_ids)!r})"
        ".values_list('pk', 'status_rev'))))"
    )
    return json.loads(cluster.manage("shell", "-c", code).strip().splitlines()[-1])
