"""``arbe dm @mia [@helper …] [--house SLUG]``: open (or reopen) the direct conversation
with those people and bots, and print its id and its title for you. Handles (with or
without ``@``) or usernames; the house may be left out when you are in only one."""

from __future__ import annotations

from cli.client import Api, CliError, OneThread, People

MAX_DIRECT = 9  # the server's threads.privacy.MAX_DIRECT, you included: it says so too


def dm(api: Api, args, out, **_) -> None:
    house = args.house or only_house(api)
    people = api.call("GET", f"/api/houses/{house}/members", People)
    ids = {}
    for m in people.members:
        ids[m.handle.lower()] = ids[m.username.lower()] = m.agentId
    for b in people.bots:
        if b.active:
            ids[b.handle.lower()] = b.agentId
    wanted = []
    for name in args.people:
        agent = ids.get(name.lstrip("@").lower())
        if agent is None:
            raise CliError(f"Nobody called {name!r} in {house}.")
        wanted.append(agent)
    body = {"members": list(dict.fromkeys(wanted))}
    thread = api.call("POST", f"/api/houses/{house}/direct", OneThread, json=body).thread
    out.line(f"{thread.id}  {thread.title}")


def only_house(api: Api) -> str:
    houses = api.houses()
    if len(houses) != 1:
        slugs = ", ".join(h.slug for h in houses) or "none"
        raise CliError(f"Which house? Say --house (yours: {slugs}).")
    return houses[0].slug
