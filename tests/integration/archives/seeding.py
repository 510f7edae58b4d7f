"""A house with something of everything, for export and restore tests: chat with
mentions, an edit, a deletion, reactions, a file, a bot's reply, a delegated run, a
private thread, a direct conversation, an archived thread, read positions."""

import json
from dataclasses import dataclass

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from houses.membership import add_member, remove_member
from houses.models import Agent, House
from tests.factories import make_bot, make_house, make_user
from tests.integration.attachments.files import png
from threads.entries import Chat, ThreadChildFinished, ThreadRunState
from threads.lifecycle import archive_thread, create_thread, new_entry
from threads.models import Thread, Visibility
from threads.readers import Readers
from threads.recency import stream_writer


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@dataclass
class Seeded:
    house: House
    owner: object
    member: object
    guest: object
    bot: Agent
    threads: list[Thread]


def _post(client, thread, text, **extra) -> str:
    body = {"payload": {"type": "chat", "text": text, **extra}}
    response = client.post(
        f"/api/threads/{thread.id}/entries", json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return response.json()["entry"]["id"]


def seed_house() -> Seeded:
    owner, member, guest = (make_user(n) for n in ("olive", "mia", "gus"))
    for user, email in ((owner, "olive@example.org"), (member, "mia@example.org")):
        user.email = email
        user.save(update_fields=["email"])
    house = make_house("acme", owner=owner, members=[member, guest], name="Acme works")
    bot = make_bot(house, "helper")
    o, m, g = client_for(owner), client_for(member), client_for(guest)

    plans = create_thread(house=house, title="Plans", by=owner.agent)
    first = _post(o, plans, "Hello @mia, the *plan* is in `main`")
    typo = _post(m, plans, "teh roadmap for spring")
    gone = _post(g, plans, "a secret I regret")
    up = m.post(
        f"/api/threads/{plans.id}/attachments",
        {"file": SimpleUploadedFile("chart.png", png(300, 200), content_type="image/png")},
    )
    assert up.status_code == 201, up.content
    _post(m, plans, "the chart", attachments=[up.json()["attachment"]["id"]])
    url = f"/api/threads/{plans.id}/entries"
    assert (
        m.patch(
            f"{url}/{typo}", json.dumps({"text": "the roadmap for spring"}), "application/json"
        ).status_code
        == 200
    )
    assert g.delete(f"{url}/{gone}").status_code == 200
    for client, emoji in ((m, "👍"), (g, "👍"), (o, "🎉")):
        response = client.post(
            f"{url}/{first}/reactions", json.dumps({"emoji": emoji}), "application/json"
        )
        assert response.status_code == 200, response.content
    writer = stream_writer()
    writer.append(plans.stream_name, new_entry(Chat(text="On it, @olive."), author=bot.id))

    run = create_thread(house=house, title="Run: tidy the docs", by=bot, parent=plans)
    writer.append(
        run.stream_name,
        new_entry(ThreadRunState(runId="run1", state="finished", agentId=bot.id), author=bot.id),
    )
    writer.append(run.stream_name, new_entry(Chat(text="Docs tidied."), author=bot.id))
    writer.append(
        plans.stream_name,
        new_entry(
            ThreadChildFinished(childThreadId=run.id, report="Docs tidied.", runId="run1"),
            author=bot.id,
        ),
    )

    secret = create_thread(
        house=house,
        title="Owners only",
        by=owner.agent,
        readers=Readers(Visibility.PRIVATE, frozenset({owner.agent.id, member.agent.id})),
    )
    _post(o, secret, "the budget is tight")
    _post(m, secret, "searchable budget words")
    direct = create_thread(
        house=house,
        title="Olive and Gus",
        by=owner.agent,
        readers=Readers(Visibility.DIRECT, frozenset({owner.agent.id, guest.agent.id})),
    )
    _post(g, direct, "hi olive, quick question about the budget")

    old = create_thread(house=house, title="Old news", by=owner.agent)
    _post(o, old, "archived words")
    archive_thread(old, by=owner.agent)

    # Someone who wrote and then left: their message keeps their name.
    fred = make_user("fred")
    add_member(house, fred)
    _post(client_for(fred), plans, "bye all, fred here")
    remove_member(house.memberships.get(user=fred), by=owner.agent)

    # Read positions: the member has read Plans, the guest nothing.
    assert m.get(f"/threads/{plans.id}/").status_code == 200
    _post(o, plans, "one more thing after mia read")
    threads = [plans, run, secret, direct, old]
    return Seeded(house, owner, member, guest, bot, threads)
