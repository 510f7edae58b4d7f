"""The houses API: who is in a house. Owners add and remove people and bots."""

import re
from typing import Annotated

import msgspec
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_http_methods

from arbe_lib.api import BadInput, api_view, error, json_response, parse_json, people_only
from arbe_lib.concurrency import in_thread
from dispatch.botcheck import check_bot as run_check
from houses.access import (
    access_house,
    access_owned_bot,
    access_owned_house,
    house_threads,
    houses_of,
    read_by,
)
from houses.membership import (
    HandleTaken,
    LastOwnerError,
    add_bot,
    add_member,
    configure_bot,
    remove_member,
    retire_bot,
)
from houses.models import Agent, Membership
from houses.rollup import house_rollup, rollups, with_rollup
from threads.models import EntryLocation

Role = Annotated[str, msgspec.Meta(pattern="^(owner|member)$")]
Involvement = Annotated[str, msgspec.Meta(pattern="^(mentions|everything)$")]


class AddMemberBody(msgspec.Struct, forbid_unknown_fields=True):
    username: str
    role: Role = "member"


class AddBotBody(msgspec.Struct, forbid_unknown_fields=True):
    handle: str
    displayName: str = ""
    provider: str = ""
    model: str = ""
    instructions: str = ""
    apiKeyEnv: str = ""
    involvement: Involvement = "mentions"


class BotChanges(msgspec.Struct, forbid_unknown_fields=True):
    """A PATCH of a bot: only the fields given change."""

    displayName: str | msgspec.UnsetType = msgspec.UNSET
    provider: str | msgspec.UnsetType = msgspec.UNSET
    model: str | msgspec.UnsetType = msgspec.UNSET
    instructions: str | msgspec.UnsetType = msgspec.UNSET
    apiKeyEnv: str | msgspec.UnsetType = msgspec.UNSET
    involvement: Involvement | msgspec.UnsetType = msgspec.UNSET


CHANGE_FIELDS = {
    "displayName": "display_name",
    "provider": "provider",
    "model": "model",
    "instructions": "instructions",
    "apiKeyEnv": "api_key_env",
    "involvement": "involvement",
}


def member_row(membership: Membership) -> dict:
    agent = membership.user.agent
    return {
        "username": membership.user.get_username(),
        "displayName": agent.display_name,
        "agentId": agent.id,
        "handle": agent.handle,
        "role": membership.role,
    }


def bot_row(bot: Agent) -> dict:
    return {
        "agentId": bot.id,
        "handle": bot.handle,
        "displayName": bot.display_name,
        "provider": bot.provider,
        "model": bot.model,
        "apiKeyEnv": bot.api_key_env,
        "involvement": bot.involvement,
        "active": bot.active,
    }


MAX_AUTHORS = 200
AGENT_ID = re.compile(r"^ag_[a-z0-9]{1,29}\Z")


def author_ids(text: str) -> set[str]:
    """``?authors=ag_1,ag_2``: the ids a reader of the house's entries could not name."""
    ids = {i for i in text.split(",") if i}
    if len(ids) > MAX_AUTHORS or not all(AGENT_ID.match(i) for i in ids):
        raise BadInput(f"authors: up to {MAX_AUTHORS} agent ids (ag_…), comma-separated")
    return ids


def former_authors(house, ids: set[str], reader) -> list[Agent]:
    """Of ``ids``, the house's retired bots and the people who wrote in its threads (those
    ``reader`` reads) and have left it: their messages keep their names. Anyone else stays
    unknown (nothing leaks about people who never wrote where the reader reads)."""
    if not ids:
        return []
    wrote = set(
        EntryLocation.objects.filter(thread__house=house, author_id__in=ids)
        .filter(read_by(reader, "thread__"))
        .values_list("author_id", flat=True)
        .distinct()
    )
    return list(
        Agent.objects.filter(pk__in=ids)
        .select_related("user")
        .filter(Q(house=house) | Q(kind=Agent.Kind.PERSON, pk__in=wrote))
        .order_by("handle")
    )


def former_row(agent: Agent) -> dict:
    return {
        "agentId": agent.id,
        "handle": agent.handle,
        "displayName": agent.display_name,
        "username": agent.user.get_username() if agent.user else "",
        "bot": agent.is_bot,
    }


@api_view
@require_http_methods(["GET", "POST"])
def members(request, slug):
    if request.method == "GET":
        house = access_house(request.principal, slug).house
        rows = list(house.memberships.select_related("user__agent").order_by("user__username"))
        bots = list(house.bots.filter(active=True).order_by("handle"))
        answer = {"members": [member_row(m) for m in rows], "bots": [bot_row(b) for b in bots]}
        if "authors" in request.GET:
            known = {m.user.agent.id for m in rows} | {b.id for b in bots}
            asked = author_ids(request.GET["authors"]) - known
            former = former_authors(house, asked, request.principal.user)
            answer["former"] = [former_row(a) for a in former]
        return json_response(answer)
    house = access_owned_house(request.principal, slug).house
    body = parse_json(request, AddMemberBody)
    user = get_user_model().objects.filter(username=body.username, is_active=True).first()
    if user is None:
        raise BadInput(f"username: no active account named {body.username!r}")
    try:
        membership = add_member(house, user, body.role, by=request.principal.agent)
    except (LastOwnerError, HandleTaken) as exc:
        return error(409, str(exc))
    return json_response({"member": member_row(membership)}, status=201)


@api_view
@require_http_methods(["DELETE"])
def member(request, slug, username):
    """Owners remove anyone; a member may remove themselves (leave)."""
    access = access_house(request.principal, slug)
    leaving = username == request.principal.user.get_username()
    if not leaving:
        access = access_owned_house(request.principal, slug)
    membership = access.house.memberships.filter(user__username=username).first()
    if membership is None:
        raise Http404
    try:
        remove_member(membership, by=request.principal.agent)
    except LastOwnerError as exc:
        return error(409, str(exc))
    return HttpResponse(status=204)


@api_view
@require_http_methods(["POST"])
def bots(request, slug):
    house = access_owned_house(request.principal, slug).house
    body = parse_json(request, AddBotBody)
    try:
        bot = add_bot(
            house,
            by=request.principal.agent,
            handle=body.handle,
            display_name=body.displayName,
            provider=body.provider,
            model=body.model,
            instructions=body.instructions,
            api_key_env=body.apiKeyEnv,
            involvement=body.involvement,
        )
    except ValidationError as exc:
        raise _bad_bot_input(exc) from None
    return json_response({"bot": bot_row(bot)}, status=201)


API_FIELD = {v: k for k, v in CHANGE_FIELDS.items()}


def _bad_bot_input(exc: ValidationError) -> BadInput:
    field, messages = next(iter(exc.message_dict.items()))
    field = "handle" if field == "__all__" else API_FIELD.get(field, field)
    return BadInput(f"{field}: {' '.join(messages)}")


@api_view
@require_http_methods(["GET", "PATCH", "DELETE"])
def bot(request, slug, handle):
    if request.method == "GET":
        house = access_house(request.principal, slug).house
    else:
        house = access_owned_house(request.principal, slug).house
    found = house.bots.filter(handle=handle, active=True).first()
    if found is None:
        raise Http404
    if request.method == "GET":
        return json_response({"bot": bot_row(found)})
    if request.method == "DELETE":
        retire_bot(found, by=request.principal.agent)
        return HttpResponse(status=204)
    body = parse_json(request, BotChanges)
    changes = {
        CHANGE_FIELDS[name]: value
        for name in BotChanges.__struct_fields__
        if (value := getattr(body, name)) is not msgspec.UNSET
    }
    try:
        configure_bot(found, **changes)
    except ValidationError as exc:
        raise _bad_bot_input(exc) from None
    return json_response({"bot": bot_row(found)})


@api_view
@require_http_methods(["POST"])
async def check_bot(request, slug, handle):
    """A one-token call through Pi with the bot's configuration; says how it went."""
    result = await run_check(await in_thread(access_owned_bot, request.principal, slug, handle))
    return json_response({"ok": result.ok, "result": result.text})


@api_view
@require_http_methods(["GET"])
def houses(request):
    user = people_only(request.principal).user
    return json_response({"houses": rollups(with_rollup(houses_of(user), user))})


@api_view
@require_http_methods(["GET"])
def house(request, slug):
    """The house with its rollup (in SQL, over every live thread) and a page of its live
    threads, newest activity first (``?cursor=&limit=``)."""
    from threads.api import thread_row
    from threads.paging import limit_of, page_of

    access = access_house(request.principal, slug)
    user = request.principal.user
    live = house_threads(user, access.house.pk).filter(archived_at__isnull=True)
    page = page_of(live, request.GET.get("cursor", ""), limit_of(request.GET.get("limit")))
    row = house_rollup(access.house, user, page.rows if not request.GET.get("cursor") else ())
    for thread in page.rows:
        thread.house = access.house  # no query per row for the slug
    threads = [thread_row(t) for t in page.rows]
    return json_response({"house": row, "threads": threads, "next": page.next or None})
