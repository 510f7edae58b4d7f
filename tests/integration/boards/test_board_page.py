"""The board page: stored rows for members, 404 for others, a row opens its projection."""

import pytest
from django.test import Client

from boards.consumers import rows_fragment
from boards.models import BoardRow, T3Host
from tests.factories import make_house, make_user

pytestmark = pytest.mark.django_db

PROJECTION = {
    "thread": {"id": "t1", "title": "One", "archivedAt": None, "deletedAt": None},
    "runs": [],
    "messages": [
        {
            "id": "m2",
            "role": "assistant",
            "text": "second   reply",
            "createdAt": "2026-09-01T12:01:00.000Z",
        },
        {
            "id": "m1",
            "role": "user",
            "text": "first <b>ask</b>",
            "createdAt": "2026-09-01T12:00:00.000Z",
        },
    ],
}


@pytest.fixture
def board(settings):
    settings.BACKSTAGE = "worker"  # the page must not start subscribers in these tests
    owner, stranger = make_user("owner"), make_user("stranger")
    house = make_house("h", owner=owner)
    host = T3Host.objects.create(
        house=house, label="ws", url="http://127.0.0.1:9", token="s3cret-token"
    )
    older = BoardRow.objects.create(
        host=host,
        thread_id="t0",
        title="Old",
        state="completed",
        last_turn_at="2026-09-01T10:00:00Z",
    )
    newer = BoardRow.objects.create(
        host=host,
        thread_id="t1",
        title="One",
        state="running",
        last_turn_at="2026-09-01T12:00:00.000Z",
        last_message_snippet="hello",
        meta={"run": {"id": "r1"}},
    )
    return house, host, owner, stranger, older, newer


def client_for(user):
    client = Client()
    client.force_login(user)
    return client


def test_members_see_stored_rows_newest_first_and_never_the_token(board):
    house, host, owner, *_, older, newer = board
    page = client_for(owner).get("/houses/h/board/")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.index("One") < html.index("Old")
    assert "running" in html and "hello" in html and f"board-row-{newer.pk}" in html
    assert 'ws-connect="/ws/houses/h/board/"' in html
    assert "s3cret-token" not in html and "s3cret-token" not in repr(host)


def test_non_members_get_404(board):
    *_, stranger, older, newer = board
    assert client_for(stranger).get("/houses/h/board/").status_code == 404
    assert client_for(stranger).get(f"/houses/h/board/rows/{newer.pk}/").status_code == 404


def test_opening_a_row_shows_recent_messages(board, t3_server):
    house, host, owner, *_ = board
    server = t3_server({"threads": {"t1": {"projection": PROJECTION}}})
    T3Host.objects.filter(pk=host.pk).update(url=server.url, token=server.token)
    row = BoardRow.objects.get(thread_id="t1")
    html = (
        client_for(owner)
        .get(f"/houses/h/board/rows/{row.pk}/", HTTP_HX_REQUEST="true")
        .content.decode()
    )
    assert html.index("first &lt;b&gt;ask&lt;/b&gt;") < html.index("second reply")
    missing = BoardRow.objects.get(thread_id="t0")
    html = client_for(owner).get(f"/houses/h/board/rows/{missing.pk}/").content.decode()
    assert "Could not load" in html and "OrchestrationV2GetThreadProjectionError" in html


def test_opening_a_row_of_an_unreachable_host_says_so(board):
    owner, newer = board[2], board[5]
    html = client_for(owner).get(f"/houses/h/board/rows/{newer.pk}/").content.decode()
    assert "Could not load" in html


def test_pushed_fragments_are_oob_swaps(board):
    house, host, *_, older, newer = board
    html = rows_fragment(house.pk, {"created": [older.pk], "updated": [newer.pk], "removed": [999]})
    assert f'id="board-row-{newer.pk}" hx-swap-oob="true"' in html
    assert 'hx-swap-oob="afterbegin:#board-rows"' in html and f"board-row-{older.pk}" in html
    assert 'id="board-row-999" hx-swap-oob="delete"' in html
    assert rows_fragment(house.pk + 1, {"updated": [newer.pk]}).count("board-row-") == 0
