"""The API of private threads and direct conversations: thin views over ``threads.privacy``.

``POST /api/houses/<slug>/direct {"members": [agent ids]}`` opens (or reopens) the
direct conversation of the caller with those people and bots; ``/api/threads/<id>/members``
lists, adds (``POST {"agentId"}``) and, at ``…/members/<agentId>``, removes (``DELETE``:
anyone may remove themselves); ``POST /api/threads/<id>/private {"members"}`` makes an
open thread private. A change that can't be made is a 400 with the reason; a thread the
caller doesn't read is the same 404 as one that isn't there (``houses.access``).
"""

from typing import Annotated

import msgspec
from django.views.decorators.http import require_http_methods

from arbe_lib.api import BadInput, api_view, json_response, parse_json
from houses.access import access_house, access_person_thread, access_readers, access_thread
from threads.api import AgentId, AgentIds, thread_row
from threads.people import members_of, title_for
from threads.privacy import MAX_DIRECT, PrivacyError, add_member, make_private, open_direct
from threads.privacy import remove_member as remove


class DirectBody(msgspec.Struct, forbid_unknown_fields=True):
    members: Annotated[list[AgentId], msgspec.Meta(min_length=1, max_length=MAX_DIRECT)]


class MembersBody(msgspec.Struct, forbid_unknown_fields=True):
    members: AgentIds = []


class AddMemberBody(msgspec.Struct, forbid_unknown_fields=True):
    agentId: AgentId


def member_row(agent) -> dict:
    return {
        "agentId": agent.id,
        "handle": agent.handle,
        "displayName": agent.display_name,
        "kind": agent.kind,
    }


def private_row(thread, viewer_id) -> dict:
    """The thread's row, with who reads it and its title for the caller."""
    row = thread_row(thread) | {"visibility": thread.visibility}
    if thread.is_private:
        row["members"] = [member_row(a) for a in members_of(thread)]
    if thread.is_direct:
        row["title"] = title_for(thread, viewer_id)
    return row


def refused(call, *args):
    try:
        return call(*args)
    except PrivacyError as exc:
        raise BadInput(str(exc)) from None


@api_view
@require_http_methods(["POST"])
def direct(request, slug):
    house = access_house(request.principal, slug).house
    body = parse_json(request, DirectBody)
    thread, new = refused(open_direct, house, request.principal.agent, body.members)
    answer = {"thread": private_row(thread, request.principal.agent_id), "new": new}
    return json_response(answer, status=201 if new else 200)


@api_view
@require_http_methods(["POST"])
def private(request, thread_id):
    access = access_person_thread(request.principal, thread_id)
    access_readers(access)
    body = parse_json(request, MembersBody)
    thread = refused(make_private, access.thread, request.principal.agent, body.members)
    return json_response({"thread": private_row(thread, request.principal.agent_id)})


@api_view
@require_http_methods(["GET", "POST"])
def members(request, thread_id):
    if request.method == "GET":
        access = access_thread(request.principal, thread_id)
        return json_response({"members": [member_row(a) for a in members_of(access.thread)]})
    access = access_person_thread(request.principal, thread_id)
    access_readers(access)
    body = parse_json(request, AddMemberBody)
    added = refused(add_member, access.thread, body.agentId, request.principal.agent)
    row = private_row(access.thread, request.principal.agent_id)
    return json_response({"thread": row, "added": added}, status=201 if added else 200)


@api_view
@require_http_methods(["DELETE"])
def member(request, thread_id, agent_id):
    access = access_person_thread(request.principal, thread_id)
    access_readers(access, agent_id)
    removed = refused(remove, access.thread, agent_id, request.principal.agent)
    return json_response({"removed": removed})
