"""Page benchmark: the thread page, older windows, the house page and the list APIs by size.

    python -m bench.pages [--quick] [--write-docs]

Threads are made of ``bench.now``'s entry mix (chat, director, dispatch, Pi transcript),
seeded through the raw service client, then indexed by ``manage.py reindex_entries`` (the
repair path builds the history marks). Requests go through ``django.test.Client`` (session
auth, access, stream reads, rendering) on a throw-away SQLite database with the embedded
stream server in-process; the median (p50) of the timed requests is reported, with the
HTML size and the SQL queries of one request. Targets (docs/history.md): the thread page at
100,000 entries p50 ≤ 30 ms, ≤ 100 KiB and within 1.5× of the page at 100 entries; an older
window at any depth ≤ 30 ms; the house page and the list APIs with 10,000 threads p50 ≤ 30 ms
and ≤ 6 queries. The thread page with its sidebar in a house of 3,000 threads (and other
houses, unread positions, inbox items): the page at 20,000 entries within 1.5× of the page
at 100, ≤ 100 KiB; the sidebar's part (``houses.sidebar``, context and render) p50 ≤ 30 ms
and ≤ 6 queries. The house page and list APIs at 3,000 threads, all open and then half
private (``bench.private_mix``): the same query counts.
"""

import argparse
import statistics
import tempfile
import time

from bench.docs import write_section
from bench.now import TAIL, _raw, sample_entries, setup_django
from bench.private_mix import PRIVATE_AT

THREAD_LENGTHS = (100, 10_000, 100_000)
HOUSE_SIZES = (10, 10_000)
SIDEBAR_SIZE = (3_000, 20_000)  # threads in the house, entries in the thread shown
SIDEBAR_QUICK = (300, 2_000)
APPEND = 12  # entries per seeded append
PRIVATE_NOTE = (
    "\n\nThe same house and viewer (a member, not the owner), before and after half its "
    "threads are made private. Target: the same query counts, p50 within 1.5×. Median of "
    "{calls} requests after one warm-up, `django.test.Client`, SQLite, embedded streams."
)


def timed(client, url: str, calls: int, **params) -> tuple[float, int, int]:
    """p50 ms, response bytes and the queries of one request."""
    from django.db import connection

    response = client.get(url, params)  # warm
    assert response.status_code == 200, (url, response.status_code)
    queries = []
    with connection.execute_wrapper(
        lambda execute, sql, *args: queries.append(sql) or execute(sql, *args)
    ):
        response = client.get(url, params)
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        response = client.get(url, params)
        out.append((time.perf_counter() - started) * 1000)
    return statistics.median(out or [0.0]), len(response.content), len(queries)


def seeded_thread(house, owner, n: int):
    from django.core.management import call_command

    from streams.client import service_client
    from threads.lifecycle import create_thread
    from threads.models import Thread

    thread = create_thread(house=house, title=f"{n} entries", by=owner.agent)
    decided = None
    # Seeding skips the append hooks on purpose; the repair path then builds the marks.
    writer = service_client()
    body = sample_entries(n)
    # Appends of a few entries, as a live thread gets them (an offset exists only between
    # appends, so one huge batch would be one window).
    for chunk in range(0, len(body), APPEND):
        if chunk >= len(body) - TAIL and decided is None:
            decided = writer.head(thread.stream_name).next_offset
        writer.append_batch(thread.stream_name, [_raw(e) for e in body[chunk : chunk + APPEND]])
    call_command("reindex_entries", "--thread", thread.id, stdout=_Quiet(), stderr=_Quiet())
    # A live thread's director has decided up to near the tail (as in bench.now).
    Thread.objects.filter(pk=thread.pk).update(director_offset=decided, director_tail=[])
    return thread


class _Quiet:
    def write(self, *_args, **_kwargs):
        pass

    def flush(self):
        pass


def thread_rows(calls: int, lengths) -> tuple[list[str], dict]:
    from django.test import Client

    from tests.factories import make_house, make_user
    from threads.models import WindowMark

    owner = make_user("bench-pages")
    house = make_house("bench-pages", owner=owner)
    client = Client()
    client.force_login(owner)
    rows, page_ms = [], {}
    for n in lengths:
        thread = seeded_thread(house, owner, n)
        p50, size, queries = timed(client, f"/threads/{thread.id}/", calls)
        page_ms[n] = p50
        rows.append(
            f"| thread page | {n:,} entries | {p50:.1f} | {size / 1024:.1f} KiB | {queries} |"
        )
        print(rows[-1], flush=True)
        marks = list(WindowMark.objects.filter(thread=thread).exclude(offset="").order_by("seq"))
        if len(marks) < 3:
            continue
        picks = {"oldest": marks[0], "middle": marks[len(marks) // 2], "newest": marks[-2]}
        for depth, mark in picks.items():
            url = f"/threads/{thread.id}/window"
            p50, size, queries = timed(client, url, calls, upto=mark.entry_id)
            label = f"{n:,} entries, {depth} (window {mark.seq} of {len(marks) + 1})"
            rows.append(
                f"| older window | {label} | {p50:.1f} | {size / 1024:.1f} KiB | {queries} |"
            )
            print(rows[-1], flush=True)
    return rows, page_ms


def house_rows(calls: int, sizes) -> list[str]:
    from django.test import Client

    from tests.factories import make_house, make_user
    from threads.models import Status, Thread

    rows = []
    for n in sizes:
        owner = make_user(f"bench-house-{n}")
        house = make_house(f"bench-house-{n}", owner=owner)
        states = list(Status.values)
        Thread.objects.bulk_create(
            [
                Thread(
                    house=house,
                    title=f"thread {i}",
                    created_by=owner.agent,
                    status=states[i % len(states)],
                    last_entry_ts=1_700_000_000_000 + i * 1000,
                )
                for i in range(n)
            ],
            batch_size=2000,
        )
        client = Client()
        client.force_login(owner)
        for label, url in (
            ("house page", f"/houses/{house.slug}/"),
            ("`GET /api/houses/:slug`", f"/api/houses/{house.slug}"),
            ("`GET /api/threads`", "/api/threads"),
        ):
            p50, size, queries = timed(client, url, calls)
            unit = "KiB"
            rows.append(
                f"| {label} | {n:,} threads | {p50:.1f} | {size / 1024:.1f} {unit} | {queries} |"
            )
            print(rows[-1], flush=True)
    return rows


def private_rows(calls: int, n: int) -> list[str]:
    """The house page, ``/api/houses/:slug`` and ``/api/threads`` for a member of a house of
    ``n`` threads: all open, then half private (``bench.private_mix``), same house."""
    from django.test import Client

    from bench.private_mix import make_half_private
    from tests.factories import make_house, make_user
    from threads.models import Thread

    owner, viewer = make_user(f"bench-private-{n}"), make_user(f"bench-viewer-{n}")
    house = make_house(f"bench-private-{n}", owner=owner, members=[viewer])
    made = Thread.objects.bulk_create(
        [
            Thread(
                house=house,
                title=f"thread {i}",
                created_by=owner.agent,
                last_entry_ts=1_700_000_000_000 + i * 1000,
            )
            for i in range(n)
        ],
        batch_size=2000,
    )
    client = Client()
    client.force_login(viewer)
    urls = (
        ("house page", f"/houses/{house.slug}/"),
        ("`GET /api/houses/:slug`", f"/api/houses/{house.slug}"),
        ("`GET /api/threads`", "/api/threads"),
    )
    rows = []
    for variant in ("open", "half private"):
        if variant == "half private":
            reads = make_half_private([t.pk for t in made], viewer.agent.pk, owner.agent.pk)
            variant = f"half private (viewer in {reads:,} of {n // 2:,})"
        for label, url in urls:
            p50, size, queries = timed(client, url, calls)
            rows.append(
                f"| {label} | {n:,} threads, {variant} | {p50:.1f} | {size / 1024:.1f} KiB "
                f"| {queries} |"
            )
            print(rows[-1], flush=True)
    return rows


def sidebar_house(threads: int):
    """A house of ``threads`` threads for one person: some unread, some with items in their
    inbox, and ten other houses of theirs."""
    from notify.models import InboxItem
    from tests.factories import make_house, make_user
    from threads.models import Thread, ThreadRead

    owner, member = make_user("bench-side"), make_user("bench-side-member")
    house = make_house("bench-side", owner=owner, members=[member])
    made = Thread.objects.bulk_create(
        [
            Thread(
                house=house,
                title=f"thread {i}",
                created_by=owner.agent,
                chat_seq=i % 9,
                last_entry_ts=1_700_000_000_000 + i * 1000,
            )
            for i in range(threads)
        ],
        batch_size=2000,
    )
    ThreadRead.objects.bulk_create(
        [
            ThreadRead(user=owner, thread=t, read_seq=max(t.chat_seq - i % 3, 0))
            for i, t in enumerate(made)
        ],
        batch_size=2000,
    )
    InboxItem.objects.bulk_create(
        [
            InboxItem(
                user=owner,
                thread=t,
                house=house,
                entry_id=f"bench-item-{i}",
                kind="mention",
                author_id=member.agent.id,
                text="@bench-side have a look",
                seq=t.chat_seq,
                ts=t.last_entry_ts,
            )
            for i, t in enumerate(made[::5])
        ],
        batch_size=2000,
    )
    for n in range(10):
        other = make_house(f"bench-side-{n}", owner=member, members=[owner])
        Thread.objects.bulk_create(
            [Thread(house=other, title=f"t{i}", chat_seq=3, last_entry_ts=i) for i in range(50)]
        )
    return house, owner


def sidebar_rows(calls: int, size: tuple[int, int]) -> list[str]:
    """The thread page with its sidebar, and the sidebar's part alone."""
    from django.db import connection
    from django.template.loader import render_to_string
    from django.test import Client

    from houses.sidebar import sidebar_context

    threads, entries = size
    house, owner = sidebar_house(threads)
    client = Client()
    client.force_login(owner)
    rows, page = [], {}
    seeded = {n: seeded_thread(house, owner, n) for n in (100, entries)}
    # The two pages take turns, so a load that comes and goes on a shared machine weighs on
    # both sides of the ratio alike.
    turns = {n: timed(client, f"/threads/{t.id}/", 0) for n, t in seeded.items()}
    samples: dict[int, list[float]] = {n: [] for n in seeded}
    for _ in range(calls):
        for n, t in seeded.items():
            started = time.perf_counter()
            client.get(f"/threads/{t.id}/")
            samples[n].append((time.perf_counter() - started) * 1000)
    for n in seeded:
        p50, (_, size_b, queries) = statistics.median(samples[n]), turns[n]
        page[n] = p50
        rows.append(
            f"| thread page with sidebar | {threads:,} threads, {n:,} entries | {p50:.1f} "
            f"| {size_b / 1024:.1f} KiB | {queries} |"
        )
        print(rows[-1], flush=True)

    thread = seeded[entries]

    def part() -> str:
        return render_to_string("houses/_sidebar.html", sidebar_context(house, owner, thread.pk))

    part()  # warm
    queries = []
    with connection.execute_wrapper(lambda ex, sql, *a: queries.append(sql) or ex(sql, *a)):
        html = part()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        part()
        times.append((time.perf_counter() - started) * 1000)
    rows.append(
        f"| the sidebar's part | {threads:,} threads, 10 other houses | "
        f"{statistics.median(times):.1f} | {len(html) / 1024:.1f} KiB | {len(queries)} |"
    )
    print(rows[-1], flush=True)
    rows.append(
        f"| thread page with sidebar, {entries:,} / 100 entries | {threads:,} threads "
        f"| {page[entries] / page[100]:.2f}× | | |"
    )
    print(rows[-1], flush=True)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--sidebar-only", action="store_true", help="only the sidebar's rows")
    parser.add_argument("--private-only", action="store_true", help="only open vs half private")
    args = parser.parse_args(argv)
    calls = 5 if args.quick else 21
    lengths = THREAD_LENGTHS[:2] if args.quick else THREAD_LENGTHS
    with tempfile.TemporaryDirectory(prefix="arbe-bench-pages-") as var_dir:
        setup_django(var_dir)
        head = [
            "| page | size of the work | p50 ms | response | SQL queries |",
            "|---|---|---|---|---|",
        ]
        if args.sidebar_only:  # each row is printed as it is measured
            sidebar_rows(calls, SIDEBAR_QUICK if args.quick else SIDEBAR_SIZE)
            return
        if args.private_only:  # open beside half private, in their own section
            table = "\n".join(head + private_rows(calls, PRIVATE_AT))
            print(table)
            if args.write_docs:
                title = "Pages, open and half private (`python -m bench.pages --private-only`)"
                write_section("pages-private", title, table + PRIVATE_NOTE.format(calls=calls))
            return
        rows, page_ms = thread_rows(calls, lengths)
        rows += house_rows(calls, HOUSE_SIZES)
        rows += sidebar_rows(calls, SIDEBAR_QUICK if args.quick else SIDEBAR_SIZE)
        rows += private_rows(calls, PRIVATE_AT)
    ratio = page_ms[lengths[-1]] / page_ms[lengths[0]]
    table = "\n".join(head + rows) + (
        f"\n\nThread page at {lengths[-1]:,} entries / at {lengths[0]:,}: {ratio:.2f}×. "
        "Targets: thread page at 100,000 entries p50 ≤ 30 ms, ≤ 100 KiB, ≤ 1.5× the page at "
        "100 entries; an older window at any depth ≤ 30 ms; house page and list APIs with "
        "10,000 threads p50 ≤ 30 ms, ≤ 6 queries. Median of "
        f"{calls} requests after one warm-up, `django.test.Client`, SQLite, embedded streams."
    )
    print(table)
    if args.write_docs:
        write_section("pages", "Pages by size (`python -m bench.pages`)", table)


if __name__ == "__main__":
    main()
