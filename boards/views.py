"""The house's T3 board: stored rows, kept live over ``ws/houses/<slug>/board/``.

Opening a row asks the row's T3 host for the thread's projection and shows its
recent messages; the board itself never needs a live connection to render.
"""

from datetime import UTC, datetime

from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from boards.models import BoardRow
from boards.t3.rows import instant, snippet
from boards.t3.rpc import Client, RpcError

RECENT_MESSAGES = 20
PROJECTION_TIMEOUT_S = 10.0
NEVER = datetime.min.replace(tzinfo=UTC)


def board_rows(house):
    """The house's rows, most recent activity first; rows without any activity last."""
    rows = BoardRow.objects.filter(host__house=house).select_related("host")
    return sorted(
        rows, key=lambda row: (instant(row.last_turn_at) or NEVER, row.thread_id), reverse=True
    )


@login_required
def board_page(request, slug):
    from houses.access import access_house

    access = access_house(request.user, slug)
    if settings.BACKSTAGE != "worker":  # in-process backstage: make sure the subscribers run
        from dispatch.backstage import backstage

        backstage().start_boards()
    return render(
        request,
        "boards/board.html",
        {
            "house": access.house,
            "rows": board_rows(access.house),
            "hosts": access.house.t3_hosts.all(),
        },
    )


@login_required
def row_detail(request, slug, pk):
    from houses.access import access_house

    access = access_house(request.user, slug)
    row = get_object_or_404(
        BoardRow.objects.select_related("host"), pk=pk, host__house=access.house
    )
    try:
        projection = async_to_sync(fetch_projection)(row.host, row.thread_id)
        error = None
    except (RpcError, TimeoutError) as exc:
        projection, error = None, exc
    return render(
        request,
        "boards/_row_detail.html",
        {"row": row, "messages": recent_messages(projection), "error": error},
    )


async def fetch_projection(host, thread_id: str) -> dict:
    client = await Client.connect(
        host.url, token=host.token or None, open_timeout=PROJECTION_TIMEOUT_S
    )
    try:
        return await client.call(
            "orchestration.getThreadProjection",
            {"threadId": thread_id},
            timeout=PROJECTION_TIMEOUT_S,
        )
    finally:
        await client.close()


def recent_messages(projection) -> list[dict]:
    messages = projection.get("messages") if isinstance(projection, dict) else None
    messages = [m for m in messages or [] if isinstance(m, dict)]
    messages.sort(key=lambda m: instant(m.get("createdAt") or m.get("updatedAt")) or NEVER)
    return [
        {
            "role": m.get("role"),
            "text": snippet(m.get("text"), 2000),
            "at": m.get("createdAt") or m.get("updatedAt"),
            "streaming": bool(m.get("streaming")),
        }
        for m in messages[-RECENT_MESSAGES:]
    ]
