"""A house's status, computed on read from its live threads' stored records — in SQL.

The top state follows the thread order blocked > working > error > done > idle;
the thread whose record speaks for the house is the highest-ranked one, newest
first; and each state has a count. One query for any number of houses and
threads, plus one for the speaking threads' rows. A person's rollup counts only the
threads they read (``houses.access.read_by``): a private thread they aren't in neither
counts nor speaks for the house; the site admin's list (``reader`` None) counts all.
"""

from django.db.models import Case, Count, IntegerField, Max, OuterRef, Q, Subquery, Value, When

from houses.access import read_by
from houses.models import House
from threads.models import STATUS_RANK, Status, Thread

RANK = Case(
    *(When(status=state, then=Value(rank)) for state, rank in STATUS_RANK.items()),
    default=Value(0),
    output_field=IntegerField(),
)
LIVE = Q(threads__archived_at__isnull=True)


def with_rollup(houses, reader, *, operator: bool = False):
    """Annotate a House queryset with ``top_thread_id`` and ``n_<state>`` counts of the
    threads ``reader`` reads (``operator``: of every thread, the site admin's view)."""
    reads = Q() if operator else read_by(reader)
    speaking = (
        Thread.objects.filter(house=OuterRef("pk"), archived_at__isnull=True)
        .filter(reads)
        .annotate(rank=RANK)
        .order_by("-rank", "-last_entry_ts", "-created_at")
        .values("id")[:1]
    )
    threads_read = Q() if operator else read_by(reader, "threads__")
    counts = {
        f"n_{state}": Count("threads", filter=LIVE & Q(threads__status=state) & threads_read)
        for state in Status.values
    }
    return houses.annotate(top_thread_id=Subquery(speaking), **counts)


def rollups(houses) -> list[dict]:
    """``houses`` (annotated by ``with_rollup``) as API rows with their status."""
    houses = list(houses)
    speakers = Thread.objects.in_bulk([h.top_thread_id for h in houses if h.top_thread_id])
    return [rollup_row(h, speakers.get(h.top_thread_id)) for h in houses]


def rollup_row(house: House, speaker: Thread | None) -> dict:
    counts = {state: getattr(house, f"n_{state}") for state in Status.values}
    return {
        "slug": house.slug,
        "name": house.name,
        "status": speaker.status if speaker else Status.IDLE,
        "speaker": (
            {"id": speaker.id, "title": speaker.title, "message": speaker.status_message}
            if speaker
            else None
        ),
        "counts": counts,
    }


def house_rollup(house: House, reader, candidates=()) -> dict:
    """One house's rollup row, as ``rollups`` makes it: the counts by state in one indexed
    query, and the speaking thread (the newest of the top state) taken from ``candidates``
    (a page of the newest threads, which usually holds it) or else one more query."""
    live = Thread.objects.filter(house=house, archived_at__isnull=True).filter(read_by(reader))
    states = live.values_list("status").annotate(n=Count("id"), newest=Max("last_entry_ts"))
    by_state = {status: (n, newest) for status, n, newest in states.order_by()}
    for state in Status.values:
        setattr(house, f"n_{state}", by_state.get(state, (0, None))[0])
    top = max(by_state, key=lambda s: STATUS_RANK.get(s, 0), default=None)
    if top is None:
        return rollup_row(house, None)
    newest = by_state[top][1]
    speaker = next(
        (t for t in candidates if t.status == top and t.last_entry_ts == newest and newest),
        None,
    )
    if speaker is None:
        speaker = live.filter(status=top).order_by("-last_entry_ts", "-created_at").first()
    return rollup_row(house, speaker)
