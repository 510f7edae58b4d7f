"""The "half private" variant the page and search benchmarks measure beside their open
houses: half the threads private, the viewer in one in three of those (another person in
each, so every private thread has readers). Rows only, as the benchmarks' threads are: the
access table is what reading consults (``houses.access``), whatever wrote it."""

import time
from collections.abc import Callable

PRIVATE_AT = 3_000  # threads in the measured house (search: in the viewer's houses)


def make_half_private(thread_ids: list, viewer_agent_id: str, other_agent_id: str) -> int:
    """Every other thread of ``thread_ids`` private; returns how many of those the viewer reads."""
    from threads.models import Thread, ThreadMember, Visibility

    private = list(thread_ids)[1::2]
    Thread.objects.filter(pk__in=private).update(visibility=Visibility.PRIVATE)
    rows = [ThreadMember(thread_id=t, agent_id=other_agent_id) for t in private]
    theirs = private[::3]
    rows += [ThreadMember(thread_id=t, agent_id=viewer_agent_id) for t in theirs]
    ThreadMember.objects.bulk_create(rows, batch_size=2000)
    return len(theirs)


def queries_of(request: Callable[[], object]) -> int:
    """The SQL statements one call of ``request`` runs."""
    from django.db import connection

    seen = []
    with connection.execute_wrapper(lambda execute, sql, *a: seen.append(sql) or execute(sql, *a)):
        request()
    return len(seen)


def p50_ms(request: Callable[[], object], calls: int) -> float:
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        request()
        out.append((time.perf_counter() - started) * 1000)
    out.sort()
    return out[len(out) // 2]
