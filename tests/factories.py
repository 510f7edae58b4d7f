"""Factory functions shared by tests: ``make_house(owner=…, members=[…])`` and friends."""

from django.contrib.auth import get_user_model

from houses.membership import add_member, agent_for_user
from houses.models import Agent, House, Membership


def make_user(username: str, password: str = "pw-for-tests-only"):
    user = get_user_model().objects.create_user(username=username, password=password)
    agent_for_user(user)
    return user


def make_house(slug: str = "h", *, owner=None, members=(), name: str | None = None) -> House:
    house = House.objects.create(slug=slug, name=name or slug.title())
    if owner is not None:
        add_member(house, owner, Membership.Role.OWNER)
    for user in members:
        add_member(house, user, Membership.Role.MEMBER)
    return house


def make_bot(house: House, handle: str = "helper", **fields) -> Agent:
    defaults = {"display_name": handle.title(), "provider": "arbe-demo", "model": "demo"}
    return Agent.objects.create(
        kind=Agent.Kind.BOT, house=house, handle=handle, **defaults | fields
    )
