"""Changing who is in a house. A house always keeps at least one owner."""

from django.db import transaction
from django.db.models import Q

from houses import house_log
from houses.models import Agent, House, Membership, handle_clash
from houses.names import ascii_handle_base, strip_hidden
from threads.unread import start_at_tail


class LastOwnerError(ValueError):
    """Raised when a change would leave a house without an owner."""


class HandleTaken(ValueError):
    """Raised when a person's handle is a bot's in the house they would join."""


def agent_for_user(user, house: House | None = None) -> Agent:
    """The person's principal, created on first use (display name and handle from the user;
    the handle avoids the bots' handles in ``house``, the house they are signing up to)."""
    try:
        return user.agent
    except Agent.DoesNotExist:
        pass
    agent, _ = Agent.objects.get_or_create(
        user=user,
        defaults={
            "kind": Agent.Kind.PERSON,
            "display_name": strip_hidden(user.get_full_name()).strip()
            or strip_hidden(user.get_username()),
            "handle": _free_person_handle(user.get_username(), house),
        },
    )
    return agent


def _free_person_handle(username: str, house: House | None = None) -> str:
    base = ascii_handle_base(username)
    taken = Agent.objects.filter(kind=Agent.Kind.PERSON)
    if house is not None:
        taken = Agent.objects.filter(Q(kind=Agent.Kind.PERSON) | Q(house=house))
    handle, n = base, 1
    while taken.filter(handle=handle).exists():
        n += 1
        handle = f"{base}{n}"
    return handle


def _check_handle(house: House, agent: Agent) -> None:
    clash = handle_clash(agent, house.pk)
    if clash:
        raise HandleTaken(f"{clash} Mentions of it would be ambiguous.")


def add_member(
    house: House, user, role: str = Membership.Role.MEMBER, *, by: Agent | None = None
) -> Membership:
    """``user`` in ``house`` with ``role``; refused (``HandleTaken``) if a bot there has
    their handle. A new member is a fact of the house's log (``houses.house_log``)."""
    agent = agent_for_user(user, house)
    if not Membership.objects.filter(house=house, user=user).exists():
        _check_handle(house, agent)
    with transaction.atomic():
        membership, created = Membership.objects.get_or_create(
            house=house, user=user, defaults={"role": role}
        )
        if created:
            house_log.member_added(house.pk, agent, by=by)
    if created:
        start_at_tail(user.pk, house.pk)
    if not created and membership.role != role:
        membership = set_role(membership, role)
    return membership


def join_house(house: House, user) -> tuple[Membership, bool]:
    """``user`` in ``house`` as a member unless already in it (their role is kept).

    Returns the membership and whether it is new. Their unread count starts at the join
    (``threads.unread.start_at_tail``). Joining is a fact of the house's log, not of any
    thread's (``houses.house_log``; docs/decisions.md, "Lifecycle facts"). Refused
    (``HandleTaken``) if a bot in the house has their handle.
    """
    agent = agent_for_user(user, house)
    if not Membership.objects.filter(house=house, user=user).exists():
        _check_handle(house, agent)
    with transaction.atomic():
        membership, created = Membership.objects.get_or_create(
            house=house, user=user, defaults={"role": Membership.Role.MEMBER}
        )
        if created:
            house_log.member_added(house.pk, agent, by=agent)
    if created:
        start_at_tail(user.pk, house.pk)
    return membership, created


@transaction.atomic
def set_role(membership: Membership, role: str) -> Membership:
    owners = _locked_owners(membership.house)
    if membership.is_owner and role != Membership.Role.OWNER and len(owners) == 1:
        raise LastOwnerError("A house needs at least one owner.")
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def remove_member(membership: Membership, *, by: Agent | None = None) -> None:
    owners = _locked_owners(membership.house)
    if membership.is_owner and len(owners) == 1:
        raise LastOwnerError("The last owner can't leave the house.")
    # Its live reads end through the delete signal (``houses.revocation``), as for a cascade.
    agent = agent_for_user(membership.user)
    membership.delete()
    house_log.member_removed(membership.house_id, agent, by=by)


def _locked_owners(house: House) -> list[int]:
    # Lock the owner rows so two concurrent demotions can't both see a second owner.
    return list(
        Membership.objects.select_for_update()
        .filter(house=house, role=Membership.Role.OWNER)
        .values_list("pk", flat=True)
    )


def add_bot(
    house: House, *, handle: str, display_name: str = "", by: Agent | None = None, **runtime
) -> Agent:
    """A new bot in ``house``; ``runtime``: provider, model, instructions, api_key_env,
    involvement. A configuration Pi can't run is refused (``ValidationError``)."""
    bot = Agent(
        kind=Agent.Kind.BOT,
        house=house,
        handle=handle,
        display_name=display_name or handle,
        **runtime,
    )
    bot.full_clean()
    _check_runtime(bot)
    with transaction.atomic():
        bot.save()
        house_log.member_added(house.pk, bot, by=by)
    return bot


BOT_SETTINGS = ("display_name", "provider", "model", "instructions", "api_key_env", "involvement")


def configure_bot(bot: Agent, **changes) -> Agent:
    """Change a bot's settings (any of ``BOT_SETTINGS``), checked like a new bot's."""
    unknown = set(changes) - set(BOT_SETTINGS)
    if unknown:
        raise ValueError(f"not a bot setting: {', '.join(sorted(unknown))}")
    for name, value in changes.items():
        setattr(bot, name, value)
    bot.full_clean()
    if {"provider", "api_key_env"} & set(changes):
        _check_runtime(bot)
    bot.save(update_fields=list(changes))
    return bot


def _check_runtime(bot: Agent) -> None:
    from dispatch.botcheck import validate_bot_config

    validate_bot_config(bot.provider, bot.api_key_env)


def retire_bot(bot: Agent, *, by: Agent | None = None) -> None:
    """Take a bot out of its house. Its record stays: entries name it by id."""
    with transaction.atomic():
        if Agent.objects.filter(pk=bot.pk, active=True).update(active=False):
            house_log.member_removed(bot.house_id, bot, by=by)
