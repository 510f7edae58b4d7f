"""The thread API: post, delete by tombstone, list. Thin views over ``threads.posting``.

The stream read proxy and the sandbox writers' proxy live in ``threads.stream_proxy``.
"""

import contextlib
from typing import Annotated

import msgspec
from django.core.exceptions import PermissionDenied, ValidationError
from django.views.decorators.http import require_http_methods

from arbe_lib.api import BadInput, api_view, json_response, parse_json, people_only
from houses.access import access_house, access_person_thread, access_thread, threads_of
from threads.current import load_view
from threads.editing import edit_chat, latest_text
from threads.entries import Chat, EntryError, convert_payload, to_builtins
from threads.lifecycle import archive_thread, create_thread, rename_thread
from threads.paging import limit_of, page_of
from threads.posting import Posted, delete_chat, post_chat
from threads.privacy import PrivacyError, start_private
from threads.reacting import react
from threads.signals import MAX_THREAD_MEMBERS
from threads.status import derive_thread_status
from threads.status_sync import agent_name, now_ms, repair_drift
from threads.windows import thread_spend


class PostEntryBody(msgspec.Struct, forbid_unknown_fields=True):
    payload: dict
    id: str | None = None
    authorId: str | None = None


AgentId = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
AgentIds = Annotated[list[AgentId], msgspec.Meta(max_length=MAX_THREAD_MEMBERS)]


class CreateThreadBody(msgspec.Struct, forbid_unknown_fields=True):
    title: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    # Given: a private thread read by the caller and these agents only (threads.privacy).
    members: (
        Annotated[
            list[Annotated[str, msgspec.Meta(max_length=32)]],
            msgspec.Meta(max_length=MAX_THREAD_MEMBERS),
        ]
        | None
    ) = None


def posted(result: Posted, status: int = 201):
    """The entry written (or, for a retry, the one already there) and the offset after it."""
    body = {"entry": to_builtins(result.entry), "offset": result.offset}
    if result.duplicate:
        body["duplicate"] = True
    return json_response(body, status)


def thread_row(thread) -> dict:
    return {
        "id": thread.id,
        "house": thread.house.slug,
        "title": thread.title,
        "status": thread.status,
        "statusMessage": thread.status_message,
        "lastEntryTs": thread.last_entry_ts,
        "archived": thread.archived_at is not None,
        "parentId": thread.parent_id,
        "visibility": thread.visibility,
    }


def placeholders(ids: list) -> list[dict]:
    """Refs that only name upload ids: posting fills them in from the uploads' rows."""
    return [{"id": i, "name": "-", "size": 0, "contentType": "-"} for i in ids]


def chat_from_request(request) -> tuple[Chat, str | None, list[str] | None]:
    """The chat payload and optional client id, from a JSON body or an htmx form."""
    if request.content_type == "application/json":
        body = parse_json(request, PostEntryBody)
        if body.authorId is not None and body.authorId != request.principal.agent_id:
            raise PermissionDenied("authorId: set by the server; it can't name someone else")
        files = body.payload.pop("attachments", None)  # upload ids, or refs with an id
        if files is not None:
            if not isinstance(files, list):
                raise EntryError("Expected `array` - at `$.payload.attachments`")
            files = [f.get("id") if isinstance(f, dict) else f for f in files]
            body.payload["attachments"] = placeholders(files)
        payload, entry_id = convert_payload(body.payload), body.id
    else:
        files = request.POST.getlist("attachment")
        chat = {"type": "chat", "text": request.POST.get("text", "")}
        chat["attachments"] = placeholders(files)
        payload = convert_payload(chat)
        entry_id = request.POST.get("id") or None
    if not isinstance(payload, Chat):
        raise EntryError(f"Only chat is posted here, not {payload.type!r} - at `$.payload.type`")
    return payload, entry_id, files


@api_view
@require_http_methods(["POST"])
def entries(request, thread_id):
    access = access_person_thread(request.principal, thread_id)
    payload, entry_id, files = chat_from_request(request)
    return posted(post_chat(access, payload, entry_id, files))


class EditBody(msgspec.Struct, forbid_unknown_fields=True):
    text: str


@api_view
@require_http_methods(["GET", "PATCH", "DELETE"])
def entry(request, thread_id, entry_id):
    """A chat message: GET its latest text, PATCH ``{"text"}`` to edit it (its author),
    DELETE to tombstone it (its author or an owner)."""
    if request.method == "GET":
        access = access_thread(request.principal, thread_id)
        return json_response({"id": entry_id, "text": latest_text(access, entry_id)})
    access = access_person_thread(request.principal, thread_id)
    if request.method == "PATCH":
        body = parse_json(request, EditBody)
        return posted(edit_chat(access, entry_id, body.text), status=200)
    return posted(delete_chat(access, entry_id), status=200)


class ReactBody(msgspec.Struct, forbid_unknown_fields=True):
    emoji: str
    on: bool = True


@api_view
@require_http_methods(["POST"])
def reactions(request, thread_id, entry_id):
    """React to a chat message ``{"emoji", "on"?}``; ``"on": false`` takes it back."""
    access = access_person_thread(request.principal, thread_id)
    body = parse_json(request, ReactBody)
    return posted(react(access, entry_id, body.emoji, body.on), status=200)


@api_view
@require_http_methods(["GET"])
def thread_list(request):
    """The caller's threads, newest activity first, a page at a time (``?cursor=&limit=``)."""
    rows = threads_of(people_only(request.principal).user).select_related("house")
    if house := request.GET.get("house"):
        rows = rows.filter(house__slug=house)
    page = page_of(rows, request.GET.get("cursor", ""), limit_of(request.GET.get("limit")))
    return json_response({"threads": [thread_row(t) for t in page.rows], "next": page.next or None})


class ChangeThreadBody(msgspec.Struct, forbid_unknown_fields=True):
    title: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    archived: bool | None = None


@api_view
@require_http_methods(["GET", "PATCH"])
def thread(request, thread_id):
    """A thread's row; ``PATCH {"title"?, "archived"?}`` renames or (un)archives it (an owner
    of the house or the thread's starter), each change appended to its log first."""
    if request.method == "GET":
        access = access_thread(request.principal, thread_id)
        return json_response({"thread": thread_row(access.thread)})
    access = access_person_thread(request.principal, thread_id)
    body = parse_json(request, ChangeThreadBody)
    agent = request.principal.agent
    if not access.is_owner and access.thread.created_by_id != agent.pk:
        raise PermissionDenied("Only an owner of the house or the thread's starter may do that.")
    if body.title is not None:
        with titled():
            rename_thread(access.thread, body.title, by=agent)
    if body.archived is not None:
        archive_thread(access.thread, by=agent, archived=body.archived)
    return json_response({"thread": thread_row(access.thread)})


@api_view
@require_http_methods(["POST"])
def house_threads(request, slug):
    access = access_house(request.principal, slug)
    body = parse_json(request, CreateThreadBody)
    by = request.principal.agent
    with titled():
        if body.members is None:
            thread = create_thread(house=access.house, title=body.title, by=by)
        else:
            try:
                thread = start_private(access.house, body.title, by, body.members)
            except PrivacyError as exc:
                raise BadInput(str(exc)) from None
    return json_response({"thread": thread_row(thread)}, status=201)


@contextlib.contextmanager
def titled():
    """A title ``houses.names.clean_title`` refuses is the caller's 400, naming the field."""
    try:
        yield
    except ValidationError as exc:
        raise BadInput(f"title: {exc.messages[0]}") from None


@api_view
@require_http_methods(["GET"])
def thread_now(request, thread_id):
    """The current view, the offset it reached (tail /stream from there), the status, and
    the fold's state a client resumes ``NowFold`` from to fold what it tails."""
    access = access_thread(request.principal, thread_id)
    loaded = load_view(access.thread, now_ms=now_ms())
    status = derive_thread_status(loaded.now, thread_id=thread_id, name_of=agent_name)
    repair_drift(access.thread, status)
    tokens, cost = thread_spend(thread_id)
    body = {
        "now": loaded.now,
        "offset": loaded.offset,
        "status": status,
        "fold": loaded.fold,
        # "now.spend" is the current (or last) reply's; this is the thread's, as its page says.
        "total": {"totalTokens": tokens, "costUsd": cost},
    }
    return json_response(body)


class RunBody(msgspec.Struct, forbid_unknown_fields=True):
    agent: str
    task: Annotated[str, msgspec.Meta(min_length=1, max_length=20_000)]


@api_view
@require_http_methods(["POST"])
def runs(request, thread_id):
    """Delegate a coding run to a bot in a child thread ``T/<childId>``."""
    from dispatch.backstage import start_run
    from dispatch.runs import RunRefused, claim_run

    access = access_person_thread(request.principal, thread_id)
    body = parse_json(request, RunBody)
    try:
        claim = claim_run(
            access.thread, handle=body.agent.lstrip("@"), task=body.task, by=request.principal.agent
        )
    except RunRefused as exc:
        raise BadInput(str(exc)) from None
    start_run(claim)
    return json_response({"run": {"id": claim.run_id, "childThreadId": claim.child_id}}, 201)
