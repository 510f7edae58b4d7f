"""Founding, renaming and leaving houses, and handing ownership over.

Any signed-in person may create a house and becomes its owner (``ARBE_HOUSE_CREATION``:
``anyone``, the default, or ``staff``). Owners rename it and hand ownership to another
member; anyone may leave, except the last owner, who hands over first. Membership
changes go through ``houses.membership`` (whose deletes end live reads,
``houses.revocation``).
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from houses.membership import LastOwnerError, add_member, remove_member, set_role
from houses.models import House, Membership
from houses.names import check_display_name

MAX_NAME = 200


class BadHouseName(ValueError):
    """A house name that is blank, too long or hides characters."""


def may_create(user) -> bool:
    if not user.is_authenticated:
        return False
    return settings.ARBE_HOUSE_CREATION == "anyone" or user.is_staff


def clean_name(name: str) -> str:
    name = " ".join(name.split())
    if not name or len(name) > MAX_NAME:
        raise BadHouseName(f"A house's name is 1–{MAX_NAME} characters.")
    try:
        check_display_name(name)
    except Exception as exc:  # a ValidationError: say it as a sentence
        raise BadHouseName(" ".join(getattr(exc, "messages", [str(exc)]))) from None
    return name


def create_house(user, name: str) -> House:
    """A new house named ``name`` with ``user`` as its owner; its slug from the name."""
    if not may_create(user):
        raise PermissionDenied("Only staff can create houses here.")
    name = clean_name(name)
    base = slugify(name)[:56] or "house"
    for n in range(1, 1000):
        slug = base if n == 1 else f"{base}-{n}"
        try:
            with transaction.atomic():
                house = House.objects.create(slug=slug, name=name)
                add_member(house, user, Membership.Role.OWNER)
                return house
        except IntegrityError:
            continue
    raise BadHouseName("Pick another name: too many houses have this one.")


def rename_house(house: House, name: str) -> House:
    house.name = clean_name(name)
    house.save(update_fields=["name"])
    return house


@transaction.atomic
def hand_over(house: House, giver: Membership, receiver: Membership) -> None:
    """``receiver`` becomes an owner and ``giver`` a member (in that order: the house is
    never without an owner)."""
    if receiver.house_id != house.pk or giver.house_id != house.pk or receiver.pk == giver.pk:
        raise LastOwnerError("Hand the house to another member of it.")
    set_role(receiver, Membership.Role.OWNER)
    set_role(Membership.objects.get(pk=giver.pk), Membership.Role.MEMBER)


def leave_house(membership: Membership) -> None:
    try:
        remove_member(membership)
    except LastOwnerError:
        raise LastOwnerError(
            "You are this house's last owner: hand it to another member before you leave."
        ) from None
