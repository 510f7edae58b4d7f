"""The board page's socket: members only, row changes arrive as out-of-band fragments."""

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from boards.models import BoardRow, T3Host
from tests.integration.web.conftest import closed_with, frame, open_socket

pytestmark = pytest.mark.django_db(transaction=True)


async def test_strangers_are_closed_with_4404(world):
    socket = await open_socket("/ws/houses/h/board/", world.stranger)
    assert await closed_with(socket) == 4404
    anonymous = await open_socket("/ws/houses/h/board/")
    assert await closed_with(anonymous) == 4404


async def test_row_changes_reach_members_and_other_house_events_are_ignored(world):
    host = await sync_to_async(T3Host.objects.create)(
        house=world.house, label="workstation", url="http://127.0.0.1:9", token="t0ken"
    )
    row = await sync_to_async(BoardRow.objects.create)(
        host=host, thread_id="t-1", title="Fix the <b>build</b>", state="running"
    )
    socket = await open_socket("/ws/houses/h/board/", world.member)
    layer = get_channel_layer()
    await layer.group_send(f"house-{world.house.pk}", {"type": "thread.status", "thread": "x"})
    await layer.group_send(
        f"house-{world.house.pk}",
        {"type": "board.rows", "created": [row.pk], "updated": [], "removed": []},
    )
    html = await frame(socket)
    assert "hx-swap-oob" in html
    assert "Fix the &lt;b&gt;build&lt;/b&gt;" in html and "running" in html
    assert "t0ken" not in html
    await socket.disconnect()
