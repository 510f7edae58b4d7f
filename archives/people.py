"""Who an imported entry's author is here: a person linked by email, or a placeholder.

An archive names people by their agent id (what entries carry in ``authorId``), username,
handle, display name and confirmed email. Here each becomes, in order:

1. the person already known under the same id in a previous step of this import (resume);
2. the account here whose confirmed email is the same (case-insensitive);
3. the person with the same agent id on this server (an archive restored where it was made);
4. a placeholder: an account with that email and no usable password, its agent id kept when
   free, its username and handle made unique. It claims nothing and can't sign in until
   the person confirms the same email on their own account here (``archives.claiming``)
   or an operator sets a password (``manage.py changepassword``).

Memberships are stored as rows directly: joining a house during an import is not a new
fact for the house's log (the archive carries that log as it was).
"""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from archives.models import Placeholder
from houses.membership import agent_for_user
from houses.models import HANDLE_PATTERN, Agent, House, Membership, new_agent_id
from houses.names import ascii_handle_base, check_display_name, strip_hidden

_HANDLE = re.compile(HANDLE_PATTERN)
_USERNAME = re.compile(r"^[\w.@+-]{1,150}\Z")


def checked_email(address: str) -> str:
    """``address`` if it is an email address, else "" (an archive says what it likes)."""
    try:
        validate_email(address)
    except ValidationError:
        return ""
    return address


def free_handle(base: str, taken) -> str:
    """``base`` (made a valid handle) or ``base2``, ``base3``… whichever ``taken`` lacks."""
    base = ascii_handle_base(base) if not _HANDLE.match(base) else base
    base = base[:28] or "person"
    handle, n = base, 1
    while taken.filter(handle=handle).exists():
        n += 1
        handle = f"{base}{n}"
    return handle


def free_username(base: str) -> str:
    User = get_user_model()
    if not _USERNAME.match(base):  # what Django's own validator takes, nothing else
        base = ascii_handle_base(base) or "person"
    base = base[:140] or "person"
    name, n = base, 1
    while User.objects.filter(username__iexact=name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


def shown_name(name: str, fallback: str) -> str:
    name = strip_hidden(name).strip()[:100]
    try:
        check_display_name(name)
    except ValidationError:
        name = ""
    return name or fallback


def agent_id_here(wanted: str) -> str:
    """``wanted`` when no principal here has it, else a new one."""
    if wanted and len(wanted) <= 32 and not Agent.objects.filter(pk=wanted).exists():
        return wanted
    return new_agent_id()


def link_person(
    house: House,
    *,
    agent_id: str,
    username: str,
    handle: str,
    display_name: str,
    email: str = "",
    role: str | None = Membership.Role.MEMBER,
    source: str = "archive",
) -> tuple[Agent, bool]:
    """The person here for an imported principal, a member of ``house`` (see the module),
    and whether a placeholder was made for them now."""
    User = get_user_model()
    agent = None
    email = checked_email(email) if email else ""
    if email:
        user = User.objects.filter(email__iexact=email).order_by("pk").first()
        if user is not None:
            agent = agent_for_user(user, house)
    if agent is None:
        agent = Agent.objects.filter(pk=agent_id, kind=Agent.Kind.PERSON).first()
    made = agent is None
    if agent is None:
        agent = _placeholder(agent_id, username, handle, display_name, email, source)
    if role is not None:  # None: someone who left the house (their entries stay)
        Membership.objects.get_or_create(
            house=house, user_id=agent.user_id, defaults={"role": role}
        )
    return agent, made


def _placeholder(agent_id, username, handle, display_name, email, source) -> Agent:
    User = get_user_model()
    with transaction.atomic():
        user = User(username=free_username(username), email=email)
        user.set_unusable_password()
        user.save()
        Placeholder.objects.create(user=user, source=source)
        people = Agent.objects.filter(kind=Agent.Kind.PERSON)
        handle = free_handle(handle, people)
        return Agent.objects.create(
            id=agent_id_here(agent_id),
            kind=Agent.Kind.PERSON,
            user=user,
            display_name=shown_name(display_name, handle),
            handle=handle,
        )


def make_bot(house: House, *, agent_id: str, handle: str, display_name: str, **config) -> Agent:
    """The house's bot for an imported one: the same handle if it is still there (a resumed
    import), else a new bot with the id kept when free and a handle nobody in the house has."""
    found = Agent.objects.filter(house=house, kind=Agent.Kind.BOT, pk=agent_id).first()
    if found is not None:
        return found
    members = Agent.objects.filter(kind=Agent.Kind.PERSON, user__memberships__house=house)
    taken = Agent.objects.filter(house=house) | members
    handle = free_handle(handle, taken)
    return Agent.objects.create(
        id=agent_id_here(agent_id),
        kind=Agent.Kind.BOT,
        house=house,
        handle=handle,
        display_name=shown_name(display_name, handle),
        **config,
    )
