"""Every route × every kind of caller, with the status each must get.

Callers: anonymous, a non-member, a member, the author of the chat, a house owner, a bot's JWT
for this stream, a bot's JWT for another stream, an expired JWT, and a member forging authorId,
and (issue 35) a member of the house outside the private thread.
No answer, body or header, may ever contain the service secret. Routes: posting, deleting and
reading entries, both stream proxies, thread lists and creation, and (issue 33) uploading and
fetching files, removing a message's files (its author or an owner), renaming a thread (an
owner or its starter) and registering a push device; (issue 34) the sidebar's pages, the
inbox API and the add-the-demo-bot shortcut; (issue 35) the thread is private, its members
the owner, the member, the author and the bot, and ``outsider`` is a member of the house who
isn't in it: every thread route answers them what it answers for a thread that doesn't exist
(``test_an_outsider_is_told_what_a_missing_thread_tells``), and no list shows them the thread.
"""

import dataclasses
import json
import re

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient, Client

from tests.integration.attachments.conftest import files_on_disk  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

CALLERS = [
    "anonymous",
    "non_member",
    "member",
    "author",
    "owner",
    "jwt_this",
    "jwt_other",
    "jwt_expired",
    "forged",
    "outsider",  # in the house, not in the (private) thread
]

# route: expected status per caller, in CALLERS order.
MATRIX = {
    "post_entry": [401, 404, 201, 201, 201, 403, 404, 401, 403, 404],
    "delete_entry": [401, 404, 403, 200, 200, 403, 404, 401, 403, 404],
    "read_stream": [401, 404, 200, 200, 200, 200, 404, 401, 200, 404],
    "sandbox_append": [401, 404, 200, 200, 200, 200, 404, 401, 403, 404],
    "sandbox_read": [401, 404, 200, 200, 200, 200, 404, 401, 200, 404],
    "list_threads": [401, 200, 200, 200, 200, 403, 403, 401, 200, 200],
    "create_thread": [401, 404, 201, 201, 201, 404, 404, 401, 201, 201],
    # Issue 33's surfaces: files, their removal by the author, titles, push devices.
    "upload_file": [401, 404, 201, 201, 201, 403, 404, 401, 201, 404],
    # A bot reads its stream's files.
    "fetch_file": [404, 404, 200, 200, 200, 200, 404, 404, 200, 404],
    "purge_files": [401, 404, 403, 200, 200, 403, 404, 401, 403, 404],
    "rename_thread": [401, 404, 403, 403, 200, 403, 404, 401, 403, 404],
    "register_device": [401, 201, 201, 201, 201, 403, 403, 401, 201, 201],
    # Issue 34's: the sidebar's next page, the inbox (everyone has their own), and the
    # add-the-demo-bot shortcut (an owner's). Pages send the signed-out to sign in (302).
    "sidebar_page": [302, 404, 200, 200, 200, 302, 302, 302, 200, 200],
    "inbox_api": [401, 200, 200, 200, 200, 403, 403, 401, 200, 200],  # a stranger's is their own
    "demo_bot": [302, 404, 403, 403, 302, 302, 302, 302, 403, 403],  # the owner's: added, back
    # Issue 35's routes: a direct conversation (each caller's own, with the bot), making the
    # open other thread private (its starter is the owner) and adding the outsider to the
    # private thread (its starter or an owner who reads it).
    "open_direct": [401, 404, 201, 201, 201, 404, 404, 401, 201, 201],
    "make_private": [401, 404, 403, 403, 200, 404, 403, 401, 403, 403],
    "add_thread_member": [401, 404, 403, 403, 201, 403, 404, 401, 403, 404],
}


def client_for(world, caller, client_class=Client):
    people = {
        "non_member": world.stranger,
        "member": world.member,
        "author": world.author,
        "owner": world.owner,
        "forged": world.member,
        "outsider": getattr(world, "outsider", None),
    }
    if caller == "anonymous":
        return client_class()
    if caller in people:
        client = client_class()
        client.force_login(people[caller])
        return client
    token = {
        "jwt_this": lambda: world.jwt(),
        "jwt_other": lambda: world.jwt(stream=world.other_thread.stream_name),
        "jwt_expired": lambda: world.jwt(ttl_s=-60),
    }[caller]()
    client = client_class(headers={"Authorization": f"Bearer {token}"})
    client.bearer = token  # AsyncClient drops constructor headers; read() sends it per request
    return client


def chat_body(world, caller, **extra):
    body = {"payload": {"type": "chat", "text": f"from {caller}"}, **extra}
    if caller == "forged":
        body["authorId"] = world.owner.agent.id
    return json.dumps(body)


def call(world, route, caller, client, authored_id, file_id=""):
    thread = world.thread
    if route == "post_entry":
        return client.post(
            f"/api/threads/{thread.id}/entries",
            chat_body(world, caller),
            content_type="application/json",
        )
    if route == "delete_entry":
        return client.delete(f"/api/threads/{thread.id}/entries/{authored_id}")
    if route == "read_stream":
        return read(client, f"/api/threads/{thread.id}/stream")
    if route == "sandbox_append":
        return client.post(
            f"/api/stream/{thread.stream_name}",
            chat_body(world, caller),
            content_type="application/json",
        )
    if route == "sandbox_read":
        return read(client, f"/api/stream/{thread.stream_name}")
    if route == "list_threads":
        return client.get("/api/threads")
    if route == "create_thread":
        return client.post(
            "/api/houses/h/threads", json.dumps({"title": "t"}), content_type="application/json"
        )
    if route == "upload_file":
        from django.core.files.uploadedfile import SimpleUploadedFile

        upload = SimpleUploadedFile("n.txt", b"notes", content_type="text/plain")
        return client.post(f"/api/threads/{thread.id}/attachments", {"file": upload})
    if route == "fetch_file":
        return client.get(f"/attachments/{thread.id}/{file_id}/file")
    if route == "purge_files":
        return client.delete(f"/api/threads/{thread.id}/entries/{authored_id}/files")
    if route == "rename_thread":
        return client.patch(
            f"/api/threads/{thread.id}",
            json.dumps({"title": f"renamed by {caller}"}),
            content_type="application/json",
        )
    if route == "register_device":
        body = {
            "endpoint": f"https://fcm.googleapis.com/fcm/send/{caller}",
            "keys": {"p256dh": "BAAA", "auth": "BBBB"},
        }
        return client.post("/api/notify/devices", json.dumps(body), content_type="application/json")
    if route == "sidebar_page":
        return client.get("/houses/h/sidebar", {"current": thread.id})
    if route == "inbox_api":
        return client.get("/api/inbox")
    if route == "demo_bot":
        return client.post("/houses/h/bots/demo")
    if route == "open_direct":
        body = json.dumps({"members": [world.bot.id]})
        return client.post("/api/houses/h/direct", body, content_type="application/json")
    if route == "make_private":
        body = json.dumps({"members": [world.member.agent.id]})
        url = f"/api/threads/{world.other_thread.id}/private"
        return client.post(url, body, content_type="application/json")
    if route == "add_thread_member":
        body = json.dumps({"agentId": world.outsider.agent.id})
        return client.post(
            f"/api/threads/{thread.id}/members", body, content_type="application/json"
        )
    raise AssertionError(route)


def read(client, path):
    """Stream reads are async views with async bodies: read them on one event loop."""

    async def go():
        bearer = getattr(client, "bearer", None)
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else None
        response = await client.get(path, {"offset": "-1"}, headers=headers)
        if response.streaming:
            response.body = b"".join([chunk async for chunk in response.streaming_content])
        else:
            response.body = response.content
        return response

    return async_to_sync(go)()


def body_of(response) -> bytes:
    if getattr(response, "body", None):
        return response.body
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


@pytest.fixture
def private(world):
    """``world`` with its thread private (the owner, the member, the author and the bot in
    it) and ``outsider``, a member of the house who isn't."""
    from tests.factories import add_member, make_user
    from threads.privacy import make_private

    world.outsider = make_user("otto")
    add_member(world.house, world.outsider, "member")
    members = [world.member.agent.pk, world.author.agent.pk, world.bot.pk]
    world.thread = make_private(world.thread, world.owner.agent, members)
    return world


@pytest.mark.parametrize("route", list(MATRIX))
@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.usefixtures("files_on_disk")
def test_permission_matrix(private, service_secret, route, caller):
    world = private
    author = world.client_for(world.author)
    file_id = ""
    if route in ("fetch_file", "purge_files"):  # the author's message carries a file
        from django.core.files.uploadedfile import SimpleUploadedFile

        upload = SimpleUploadedFile("a.txt", b"a file", content_type="text/plain")
        file_id = author.post(f"/api/threads/{world.thread.id}/attachments", {"file": upload})
        file_id = file_id.json()["attachment"]["id"]
    authored = author.post(
        f"/api/threads/{world.thread.id}/entries",
        json.dumps({"payload": {"type": "chat", "text": "mine", "attachments": [file_id]}})
        if file_id
        else json.dumps({"payload": {"type": "chat", "text": "mine, @otto"}}),
        content_type="application/json",
    )
    reads = route.endswith("_read") or route == "read_stream"
    client = client_for(world, caller, AsyncClient if reads else Client)
    if route == "delete_entry" and caller == "forged":
        # A forged deletion: the member names the owner as author of the tombstone.
        response = client.generic(
            "DELETE",
            f"/api/threads/{world.thread.id}/entries/{authored.json()['entry']['id']}",
            json.dumps({"authorId": world.owner.agent.id}),
            content_type="application/json",
        )
    else:
        response = call(world, route, caller, client, authored.json()["entry"]["id"], file_id)
    expected = MATRIX[route][CALLERS.index(caller)]
    content = body_of(response)
    assert response.status_code == expected, content[:300]
    assert service_secret.encode() not in content
    assert all(service_secret not in value for value in response.headers.values())
    if caller == "outsider":  # nothing of the thread in any answer: no row, no item, no title
        assert world.thread.id.encode() not in content and b"Plans" not in content


# Thread routes beyond the matrix's, each answered to the outsider as for a missing thread.
MORE = {
    "thread_page": ("get", "/threads/{t}/"),
    "thread_window": ("get", "/threads/{t}/window"),
    "thread_notify": ("post", "/threads/{t}/notify"),
    "thread_run": ("post", "/threads/{t}/runs"),
    "api_thread": ("get", "/api/threads/{t}"),
    "api_now": ("get", "/api/threads/{t}/now"),
    "api_entry": ("get", "/api/threads/{t}/entries/{e}"),
    "api_edit": ("patch", "/api/threads/{t}/entries/{e}"),
    "api_react": ("post", "/api/threads/{t}/entries/{e}/reactions"),
    "api_runs": ("post", "/api/threads/{t}/runs"),
    "thumb": ("get", "/attachments/{t}/{f}/thumb"),
}
THREAD_ROUTES = [r for r, row in MATRIX.items() if row[CALLERS.index("outsider")] == 404]


@dataclasses.dataclass
class Missing:
    """A thread id nobody created: what the outsider's answers are compared with."""

    id: str

    @property
    def stream_name(self) -> str:
        return f"arbe-thread-{self.id}"


@pytest.mark.parametrize("route", THREAD_ROUTES + list(MORE))
@pytest.mark.usefixtures("files_on_disk")
def test_an_outsider_is_told_what_a_missing_thread_tells(private, route):
    """Same status, same body (ids aside): the answer says nothing of the thread."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from arbe_lib.ids import random_id

    world = private
    author = world.client_for(world.author)
    upload = SimpleUploadedFile("a.txt", b"a file", content_type="text/plain")
    file_id = author.post(f"/api/threads/{world.thread.id}/attachments", {"file": upload})
    file_id = file_id.json()["attachment"]["id"]
    body = {"payload": {"type": "chat", "text": "x", "attachments": [file_id]}}
    entry_id = author.post(
        f"/api/threads/{world.thread.id}/entries", json.dumps(body), content_type="application/json"
    ).json()["entry"]["id"]
    nowhere = dataclasses.replace(world, thread=Missing(random_id(10)))
    nowhere.outsider = world.outsider
    answers = []
    for target in (world, nowhere):
        reads = route.endswith("_read") or route == "read_stream"
        client = client_for(world, "outsider", AsyncClient if reads else Client)
        if route in MORE:
            method, path = MORE[route]
            path = path.format(t=target.thread.id, e=entry_id, f=file_id)
            payload = json.dumps({"text": "y", "emoji": "👍", "agent": "helper", "task": "t"})
            if method == "get":
                response = client.get(path)
            else:
                response = getattr(client, method)(path, payload, content_type="application/json")
        else:
            response = call(target, route, "outsider", client, entry_id, file_id)
        text = body_of(response).replace(target.thread.id.encode(), b"<thread>")
        # Per request: a page's nonce and CSRF token.
        text = re.sub(rb'((?:nonce|value)=|"x-csrftoken": )"[^"]*"', rb'\1""', text)
        answers.append((response.status_code, response.get("Content-Type"), text))
    import difflib

    diff = difflib.unified_diff(*(a[2].decode().splitlines() for a in answers), lineterm="")
    assert answers[0] == answers[1], "\n".join(diff)
    assert answers[0][0] == 404
