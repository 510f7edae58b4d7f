"""Racing status writers, run as a process against the cluster's database and stream server.

    python -m tests.faults.status_writers --threads ID,ID --author AGENT --first 0 --count 250

Each writer appends one status-moving entry through the server's write path
(``stream_writer().append``, whose hooks call ``track_after_append``) to one of the
threads, and so recomputes and stores that thread's status under the ``status_rev``
guard. Writers start together (a barrier per process, a shared start time across
processes) and the entries they append flip the fold between working (a person's chat
waits), idle (a pass settled it), error (an attempt failed) and blocked, so every stored
record is overtaken many times. Prints one line of JSON: writes, failures, by kind.
"""

import argparse
import json
import os
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

KINDS = ("chat", "settled", "failed", "blocked")


def payload_for(kind: str, n: int):
    from threads.entries import Chat, DirectorOutcome, DispatchFailed

    if kind == "chat":
        return Chat(text=f"writer {n}")
    if kind == "settled":
        return DirectorOutcome(upTo=f"pass-{n}", reason=f"Settled by writer {n}.")
    if kind == "failed":
        return DispatchFailed(stage="model", error=f"writer {n} failed")
    return DirectorOutcome(upTo=f"pass-{n}", reason=f"Blocked by writer {n}.", blocked=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", required=True)
    parser.add_argument("--author", required=True)
    parser.add_argument("--first", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=40)
    parser.add_argument("--start-at", type=float, required=True, help="time.time() to start")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arbe_site.settings")
    import django

    django.setup()
    from django.db import close_old_connections

    from threads.lifecycle import new_entry
    from threads.models import stream_name_for
    from threads.recency import stream_writer

    thread_ids = args.threads.split(",")
    writer = stream_writer()
    barrier = threading.Barrier(args.concurrency)
    done: Counter = Counter()
    failures: list[str] = []
    lock = threading.Lock()

    def write(n: int) -> None:
        kind = KINDS[n % len(KINDS)]
        thread_id = thread_ids[n % len(thread_ids)]
        author = args.author if kind == "chat" else None
        try:
            entry = new_entry(payload_for(kind, n), author=author, entry_id=f"w{n:05d}")
            writer.append(stream_name_for(thread_id), entry)
            with lock:
                done[kind] += 1
        except Exception as exc:  # counted and reported: the test fails on any
            with lock:
                failures.append(f"{n}: {type(exc).__name__}: {exc}"[:300])

    def worker(numbers: list[int]) -> None:
        try:
            barrier.wait(timeout=60)
            time.sleep(max(0.0, args.start_at - time.time()))
            for n in numbers:
                write(n)
        finally:
            close_old_connections()

    numbers = list(range(args.first, args.first + args.count))
    shares = [numbers[i :: args.concurrency] for i in range(args.concurrency)]
    with ThreadPoolExecutor(args.concurrency) as pool:
        list(pool.map(worker, shares))
    print(json.dumps({"writes": sum(done.values()), "by_kind": done, "failures": failures}))


if __name__ == "__main__":
    main()
