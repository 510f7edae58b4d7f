"""Arbitrary JSON and arbitrary bytes against every JSON write route and the stream proxy,
malformed multipart uploads and push endpoints: never a 5xx, and a refused request appends
nothing."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from houses.models import Agent, Membership
from tests.integration.attachments.conftest import files_on_disk  # noqa: F401 (a fixture)
from tests.integration.robustness.conftest import log_bytes
from threads.models import Thread

pytestmark = pytest.mark.django_db(transaction=True)

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=16,
)
payload_like = st.fixed_dictionaries(
    {
        "payload": st.dictionaries(
            st.sampled_from(["type", "text", "message", "dispatchId", "entryId", "id"]),
            json_values | st.sampled_from(["chat", "pi.assistant", "pi.tool_result"]),
            max_size=4,
        )
    },
    optional={"id": json_values | st.text(max_size=140), "authorId": json_values},
)
bodies = (
    json_values.map(lambda v: json.dumps(v).encode())
    | payload_like.map(lambda v: json.dumps(v).encode())
    | st.lists(payload_like, max_size=3).map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=200)
    # Bytes inside a JSON string (invalid UTF-8 gets past the tokenizer), and deep nesting.
    | st.binary(min_size=1, max_size=20).map(
        lambda raw: (
            b'{"payload": {"type": "chat", "text": "'
            + raw.replace(b'"', b"").replace(b"\\", b"")
            + b'"}}'
        )
    )
    | st.integers(min_value=100, max_value=3000).map(
        lambda depth: b'{"payload": {"type": "chat", "text": ' + b"[" * depth + b"]" * depth + b"}}"
    )
)


class Snapshot:
    """What a request could have written: the thread's log and the rows beside it."""

    def __init__(self, world):
        self.world = world
        self.log = log_bytes(world.thread)
        self.rows = self.counts()

    def counts(self):
        return (Thread.objects.count(), Membership.objects.count(), Agent.objects.count())

    def unchanged(self) -> bool:
        return log_bytes(self.world.thread) == self.log and self.counts() == self.rows


def check(response, snapshot):
    assert response.status_code < 500, response.content
    if response.status_code >= 400:
        assert response["Content-Type"] == "application/json", response.content
        assert isinstance(response.json()["error"], str)
        assert snapshot.unchanged()


@FUZZ
@given(body=bodies)
def test_posting_entries_never_fails_the_server(world, body):
    snapshot = Snapshot(world)
    client = world.token_client(world.member)
    url = f"/api/threads/{world.thread.id}/entries"
    check(client.post(url, body, content_type="application/json"), snapshot)


@FUZZ
@given(body=bodies, as_bot=st.booleans())
def test_the_stream_proxy_never_fails_the_server(world, body, as_bot):
    snapshot = Snapshot(world)
    client = (
        world.jwt_client(world.jwt(dispatch="d1")) if as_bot else world.token_client(world.member)
    )
    url = f"/api/stream/{world.thread.stream_name}"
    check(client.post(url, body, content_type="application/json"), snapshot)


@FUZZ
@given(body=bodies, route=st.sampled_from(["threads", "members", "bots", "runs"]))
def test_the_other_json_routes_never_fail_the_server(world, body, route):
    snapshot = Snapshot(world)
    client = world.token_client(world.owner)
    url = {
        "threads": f"/api/houses/{world.house.slug}/threads",
        "members": f"/api/houses/{world.house.slug}/members",
        "bots": f"/api/houses/{world.house.slug}/bots",
        "runs": f"/api/threads/{world.thread.id}/runs",
    }[route]
    response = client.post(url, body, content_type="application/json")
    assert response.status_code < 500, response.content
    if response.status_code >= 400:
        assert snapshot.unchanged()


@FUZZ
@given(text=st.text(max_size=40))
def test_odd_ids_and_queries_in_urls_never_fail_the_server(world, text):
    from urllib.parse import quote

    snapshot = Snapshot(world)
    client = world.token_client(world.owner)
    part = quote(text, safe="")
    responses = [
        client.delete(f"/api/threads/{world.thread.id}/entries/{part}"),
        client.get(f"/api/threads/{part}"),
        client.get(f"/api/threads?house={part}"),
        client.get(f"/api/houses/{part}"),
    ]
    for response in responses:
        assert response.status_code < 500, response.content
    if all(r.status_code >= 400 for r in responses):
        assert snapshot.unchanged()


@FUZZ
@given(offset=st.text(max_size=40), live=st.sampled_from([None, "x", ""]))
def test_odd_offsets_on_both_read_proxies_never_fail_the_server(world, offset, live):
    from urllib.parse import urlencode

    query = {"offset": offset} | ({"live": live} if live else {})
    member = world.token_client(world.member)
    bot = world.jwt_client(world.jwt(dispatch="d1"))
    for client, path in (
        (member, f"/api/threads/{world.thread.id}/stream"),
        (bot, f"/api/stream/{world.thread.stream_name}"),
    ):
        response = client.get(f"{path}?{urlencode(query)}")
        assert response.status_code < 500, response.content


multipart_parts = st.fixed_dictionaries(
    {
        "boundary": st.text(
            st.characters(min_codepoint=1, max_codepoint=0x2FF), min_size=0, max_size=300
        )
        | st.just("b" * 5000),
        "name": st.text(max_size=300) | st.just("n" * 5000),
        "headers": st.lists(
            st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=60),
            max_size=600,
        ),
        "cut": st.integers(min_value=0, max_value=400),
    }
)


@pytest.mark.usefixtures("files_on_disk")
@FUZZ
@given(part=multipart_parts)
def test_malformed_multipart_uploads_never_fail_the_server(world, part, caplog):
    """Odd boundaries, file names and part headers: a 4xx or a stored upload, never a 5xx,
    never a logged traceback (issue 33)."""
    boundary = part["boundary"]
    head = "".join(f"{h}\r\n" for h in part["headers"])
    raw = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{part["name"]}"'
        f"\r\n{head}\r\nhello\r\n--{boundary}--\r\n"
    ).encode("utf-8", "surrogatepass")
    raw = raw[: len(raw) - part["cut"]] if part["cut"] else raw
    client = world.token_client(world.member)
    caplog.clear()
    try:
        content_type = f"multipart/form-data; boundary={boundary}"
        response = client.generic(
            "POST", f"/api/threads/{world.thread.id}/attachments", raw, content_type=content_type
        )
    except ValueError:  # the test client itself refuses some header values
        return
    assert response.status_code < 500, response.content
    if response.status_code >= 400:
        assert isinstance(response.json()["error"], str)
    assert not [r for r in caplog.records if r.exc_info], response.content


@FUZZ
@given(
    endpoint=st.text(max_size=80).map(lambda t: "https://" + t)
    | st.builds(
        lambda a, b: f"https://{a}@fcm.googleapis.com/{b}",
        st.text(max_size=20),
        st.text(max_size=20),
    )
    | st.builds(
        lambda a, sep: f"https://{a}{sep}fcm.googleapis.com/x",
        st.text(max_size=20),
        st.sampled_from(["\\@", "%2f@", "%5c@", "\t@", "#@", "?@", "/@", "\\", ";@", ":@"]),
    )
)
def test_a_push_endpoint_is_taken_only_as_the_sender_reads_it(world, endpoint, settings):
    """Whatever the endpoint, never a 5xx; one that is taken is connected to, by the client
    that sends pushes, on the very host the allow-list approved (issue 33)."""
    from urllib.parse import urlsplit

    from urllib3.util import parse_url

    settings.PUSH_SERVICE_HOSTS = ["fcm.googleapis.com"]
    body = {"endpoint": endpoint, "keys": {"p256dh": "BAAA", "auth": "BBBB"}}
    response = world.token_client(world.member).post(
        "/api/notify/devices", json.dumps(body), content_type="application/json"
    )
    assert response.status_code in (201, 400), response.content
    if response.status_code == 201:
        assert parse_url(endpoint).host == urlsplit(endpoint).hostname == "fcm.googleapis.com"
