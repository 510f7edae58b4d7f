"""The houses page (``/``): each house's status and the person's unread total, live.

Rows come from the rollup (one query for any number of houses, one for the speaking
threads) and ``threads.unread.house_unread`` (one query); the page's socket
(``houses.home_socket``) re-renders one house's row when that house has news.
"""

from django.db.models import Subquery
from django.template.loader import render_to_string

from houses.access import houses_of
from houses.fragments import AGENT_ID, who_is_working
from houses.models import Agent
from houses.rollup import rollups, with_rollup
from threads.narration import Name, Names
from threads.unread import house_unread

SPEAKS = ("working", "blocked", "error")  # an idle or replied house has nothing to say


def house_rows(user, houses=None) -> tuple[list[dict], int]:
    """The person's houses as rows, and their unread total across all of them."""
    houses = list(with_rollup(houses if houses is not None else houses_of(user), user))
    unread = house_unread(user, [h.pk for h in houses])
    rows = []
    for house, row in zip(houses, rollups(houses), strict=True):
        speaker = row["speaker"] if row["status"] in SPEAKS else None
        unread_here = unread.get(house.pk, 0)
        me_name = getattr(house, "me_name", None)
        rows.append(
            row | {"id": house.pk, "speaker": speaker, "unread": unread_here, "me_name": me_name}
        )
    _named(rows)
    return rows, sum(unread.values())


def _named(rows: list[dict]) -> None:
    """Records stored before they named bots held their ids: show names (one query, and
    only when there are such ids)."""
    ids = {i for r in rows if r["speaker"] for i in AGENT_ID.findall(r["speaker"]["message"])}
    if not ids:
        return
    names = Names(
        (a.id, Name(a.display_name, a.handle, a.kind == Agent.Kind.BOT, a.active))
        for a in Agent.objects.filter(pk__in=ids)
    )
    for r in rows:
        if r["speaker"]:
            r["speaker"] = r["speaker"] | {
                "message": who_is_working(r["speaker"]["message"], names)
            }


def home_context(user) -> dict:
    # The top bar's name rides the houses' query (the page's query budget holds).
    me = Agent.objects.filter(user=user).values("display_name")[:1]
    houses = houses_of(user).annotate(me_name=Subquery(me))
    rows, total = house_rows(user, houses)
    context = {"houses": rows, "unread_total": total}
    if rows:
        context["me_name"] = rows[0]["me_name"] or user.get_username()
    return context


def house_row_fragment(user, house_id: int) -> str:
    """One house's row, fresh, swapped in place; with the page's unread total (tab title)."""
    houses = houses_of(user)
    rows, _ = house_rows(user, houses.filter(pk=house_id))
    total = sum(house_unread(user, houses.values_list("pk", flat=True)).values())
    context = {"rows": rows, "unread_total": total, "oob": True}
    return render_to_string("houses/_house_rows_oob.html", context)
