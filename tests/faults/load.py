"""Load for the fault suite: posting clients that retry with their ids, the log read back,
and the counts every fault is judged by (lost, duplicated, out of order).

A client is what a careful API user writes: every post carries its own id, a connection
error or a 5xx is retried with the same id (on the next web process, as a load balancer
would), a bounded number of times. An acknowledged post is one answered 201 or 200.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx

RETRYABLE = (httpx.TransportError,)


@dataclass
class Ack:
    entry_id: str
    web: int  # the index of the web process that answered
    at: float  # time.monotonic() of the answer
    duplicate: bool  # answered 200: an earlier try had already appended it


@dataclass
class PostingClient:
    """One client: posts ``count`` chats to ``thread_id`` in order, each retried by id."""

    name: str
    token: str
    thread_id: str
    webs: list[str]
    count: int
    attempts: int = 40
    acks: list[Ack] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)
    retries: int = 0
    errors: Counter = field(default_factory=Counter)

    async def run(self, *, pace_s: float = 0.0) -> None:
        turn = itertools.count(hash(self.name) % len(self.webs))
        timeout = httpx.Timeout(10.0, connect=2.0)
        headers = {"Authorization": f"Bearer {self.token}"}
        async with httpx.AsyncClient(headers=headers, timeout=timeout) as http:
            for n in range(self.count):
                entry_id = f"{self.name}-{n:05d}"
                await self.post(http, turn, entry_id, f"{self.name} says {n}")
                if pace_s:
                    await asyncio.sleep(pace_s)

    async def post(self, http: httpx.AsyncClient, turn, entry_id: str, text: str) -> None:
        body = {"id": entry_id, "payload": {"type": "chat", "text": text}}
        web = next(turn) % len(self.webs)
        for attempt in range(self.attempts):
            if attempt:
                self.retries += 1
                await asyncio.sleep(min(1.0, 0.05 * 2**attempt))
            url = f"{self.webs[web]}/api/threads/{self.thread_id}/entries"
            try:
                response = await http.post(url, json=body)
            except RETRYABLE as exc:
                self.errors[type(exc).__name__] += 1
                web = (web + 1) % len(self.webs)  # fail over, as a balancer would
                continue
            if response.status_code >= 500:
                self.errors[f"http {response.status_code}"] += 1
                continue
            if response.status_code in (200, 201):
                duplicate = response.status_code == 200
                self.acks.append(Ack(entry_id, web, time.monotonic(), duplicate))
                return
            raise AssertionError(f"{entry_id}: {response.status_code} {response.text[:300]}")
        self.given_up.append(entry_id)


def read_log(web: str, token: str, thread_id: str) -> list[dict]:
    """Every entry of the thread's stream, read through the members' read proxy."""
    entries: list[dict] = []
    offset = "-1"
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        while True:
            url = f"{web}/api/stream/arbe-thread-{thread_id}"
            response = http.get(url, params={"offset": offset})
            response.raise_for_status()
            entries += response.json()
            offset = response.headers["Stream-Next-Offset"]
            if response.headers.get("Stream-Up-To-Date") == "true":
                return entries


@dataclass(frozen=True)
class Tally:
    """An outcome judged against the log: what was acknowledged and what the log holds."""

    acknowledged: int
    lost: int  # acknowledged, not in the log
    duplicated: int  # ids found more than once in the log
    out_of_order: int  # a client's acknowledged entries not in the order it sent them

    def figures(self) -> dict:
        return {
            "acknowledged": self.acknowledged,
            "lost": self.lost,
            "duplicated": self.duplicated,
            "out_of_order": self.out_of_order,
        }


def tally(acked: dict[str, list[str]], logged_ids: list[str]) -> Tally:
    """``acked``: each client's acknowledged ids in sending order; ``logged_ids``: the log's."""
    counts = Counter(logged_ids)
    position = {entry_id: n for n, entry_id in enumerate(logged_ids)}
    all_acked = [i for ids in acked.values() for i in ids]
    lost = sum(1 for i in all_acked if i not in counts)
    duplicated = sum(n - 1 for n in counts.values() if n > 1)
    out_of_order = 0
    for ids in acked.values():
        places = [position[i] for i in ids if i in position]
        out_of_order += sum(1 for a, b in itertools.pairwise(places) if b < a)
    return Tally(len(all_acked), lost, duplicated, out_of_order)


async def wait_until(predicate, *, timeout: float, step: float = 0.05) -> float:
    """Seconds until ``predicate()`` held; raises TimeoutError after ``timeout``."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"not within {timeout}s")
        await asyncio.sleep(step)
    return time.monotonic() - start
