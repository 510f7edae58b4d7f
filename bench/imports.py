"""Import benchmark: a Slack export of 100,000 messages moved into a house, then that house
exported and restored, in messages per second, against a peer measured in the same run.

    python -m bench.imports [--quick] [--messages N] [--db sqlite|postgres] [--write-docs]

The export is generated with a fixed seed: 20 channels (2 private), 200 people, messages of
8–30 words from the benchmark corpus (a mention, a bold word or a link in some), a day
file per 500 messages, reactions on one in ten and replies in threads. ``import_slack``
runs whole: reading and checking the zip, placeholders, appends (no seam) and the rebuild
of every cache from the logs. The peer appends the same kind of chat through the ordinary
write seam (``stream_writer().append_batch``: every seam step for each batch of 100), the
way a live house takes messages; its rate is measured over a sample.
"""

import argparse
import contextlib
import json
import os
import random
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

from bench import search
from bench.corpus import messages as corpus_messages
from bench.corpus import vocabulary
from bench.docs import write_section

CHANNELS, PEOPLE, PER_DAY = 20, 200, 500
START = 1_700_000_000


def write_export(path: Path, n: int) -> None:
    rng = random.Random(7)
    words = vocabulary()
    texts = list(corpus_messages(n, words))
    users = [
        {"id": f"U{i}", "name": f"person{i}", "profile": {"email": f"p{i}@example.org"}}
        for i in range(PEOPLE)
    ]
    channels = [
        {
            "id": f"C{c}",
            "name": f"channel{c}",
            "creator": "U0",
            "members": [f"U{i}" for i in range(PEOPLE)],
        }
        for c in range(CHANNELS - 2)
    ]
    groups = [
        {
            "id": f"G{c}",
            "name": f"private{c}",
            "creator": "U0",
            "members": [f"U{i}" for i in range(10)],
        }
        for c in range(2)
    ]
    folders = [c["name"] for c in channels + groups]
    per_channel: dict[str, list] = {f: [] for f in folders}
    for i in range(n):
        folder = folders[i % len(folders)]
        text = texts[i]
        if i % 7 == 0:
            text = f"<@U{rng.randrange(PEOPLE)}> {text}"
        if i % 11 == 0:
            text = f"*{text.split(' ', 1)[0]}* {text}"
        message = {
            "type": "message",
            "user": f"U{rng.randrange(PEOPLE)}",
            "text": text,
            "ts": f"{START + i}.{i % 1_000_000:06d}",
        }
        if i % 10 == 0:
            message["reactions"] = [{"name": "thumbsup", "users": [f"U{rng.randrange(PEOPLE)}"]}]
        if i % 13 == 0 and per_channel[folder]:
            message["thread_ts"] = per_channel[folder][-1]["ts"]
        per_channel[folder].append(message)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("users.json", json.dumps(users))
        z.writestr("channels.json", json.dumps(channels))
        z.writestr("groups.json", json.dumps(groups))
        for folder, msgs in per_channel.items():
            for day, start in enumerate(range(0, len(msgs), PER_DAY)):
                name = f"{folder}/2023-{1 + day // 28:02d}-{1 + day % 28:02d}.json"
                z.writestr(name, json.dumps(msgs[start : start + PER_DAY]))


def setup_django(database_url: str, var_dir: str) -> None:
    """As ``bench.search``'s, with no notifier and no sweep beside the import."""
    os.environ.update(NOTIFY_POLL_S="0", BACKSTAGE_SWEEP_S="0")
    search.setup_django(database_url, var_dir)


@contextlib.contextmanager
def database(kind: str, var_dir: str) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{var_dir}/bench.sqlite3"
        return
    from tests.peers.postgres import postgres_server

    with postgres_server(durable=True) as pg:
        yield pg.create_database("arbe_bench")


def seam_rate(sample: int) -> float:
    """Chat through the ordinary write seam, 100 per batch: messages per second."""
    from tests.factories import make_house, make_user
    from threads.entries import Chat
    from threads.lifecycle import create_thread, new_entry
    from threads.recency import stream_writer

    owner = make_user("peer-owner")
    house = make_house("peer", owner=owner)
    thread = create_thread(house=house, title="peer", by=owner.agent)
    words = vocabulary()
    rng = random.Random(3)
    writer = stream_writer()
    started = time.perf_counter()
    for start in range(0, sample, 100):
        batch = [
            new_entry(
                Chat(text=" ".join(rng.choice(words) for _ in range(18))), author=owner.agent.id
            )
            for _ in range(min(100, sample - start))
        ]
        writer.append_batch(thread.stream_name, batch)
    return sample / (time.perf_counter() - started)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 messages")
    parser.add_argument("--messages", type=int, help="messages in the export (default 100,000)")
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    n = args.messages or (5_000 if args.quick else 100_000)
    with (
        tempfile.TemporaryDirectory(prefix="arbe-bench-imports-") as var_dir,
        database(args.db, var_dir) as url,
    ):
        setup_django(url, var_dir)
        from archives.export import export_house
        from archives.restore import restore_archive
        from archives.slack.importer import import_slack
        from houses.models import House

        export = Path(var_dir) / "slack.zip"
        print(f"… writing a Slack export of {n:,} messages", flush=True)
        write_export(export, n)
        print("… import_slack", flush=True)
        started = time.perf_counter()
        done = import_slack(export, house_name="Moved in")
        slack_s = time.perf_counter() - started
        print(f"… {done.messages:,} messages in {slack_s:.1f} s; export", flush=True)
        archive = Path(var_dir) / "house.zip"
        started = time.perf_counter()
        manifest = export_house(House.objects.get(slug="moved-in"), archive)
        export_s = time.perf_counter() - started
        entries = manifest.counts.entries
        print(f"… {entries:,} entries exported in {export_s:.1f} s; restore", flush=True)
        started = time.perf_counter()
        restore_archive(archive, slug="restored")
        restore_s = time.perf_counter() - started
        sample = min(n, 2_000 if args.quick else 10_000)
        print(f"… peer: {sample:,} messages through the write seam", flush=True)
        peer = seam_rate(sample)
    engine = "SQLite, embedded streams" if args.db == "sqlite" else "PostgreSQL, embedded streams"
    slack_rate = done.messages / slack_s
    lines = [
        f"{engine}; a generated Slack export of {done.messages:,} messages in {CHANNELS} "
        f"channels ({entries:,} entries once imported, with edits, reactions and the "
        "lifecycle entries). Whole commands, from the zip to every cache rebuilt.",
        "",
        "| measure | value | vs the write seam |",
        "|---|---|---|",
        f"| `import_slack` | {slack_rate:,.0f} messages/s ({slack_s:.0f} s) | "
        f"{slack_rate / peer:.1f}× |",
        f"| `export_house` of that house | {entries / export_s:,.0f} entries/s "
        f"({export_s:.1f} s) | — |",
        f"| `import_house` of that archive | {entries / restore_s:,.0f} entries/s "
        f"({restore_s:.0f} s) | {entries / restore_s / peer:.1f}× |",
        f"| peer: chat through the write seam (batches of 100, {sample:,}) | "
        f"{peer:,.0f} messages/s | 1× |",
    ]
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        write_section("imports", "Imports (`python -m bench.imports`)", table)


if __name__ == "__main__":
    main()
