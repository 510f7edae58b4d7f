"""Invite links: an owner makes one, people join a house with it until it expires or is revoked.

The raw token is returned once, to be shown to the owner; only its SHA-256 digest is
stored, with its first characters (``houses.invite_limits``). Finding an invite by token
goes through ``houses.access.access_invite``, which answers every miss with the same 404
and counts misses per client address and per token prefix.
"""

import secrets
from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from houses.invite_limits import prefix_of
from houses.membership import join_house
from houses.models import House, HouseInvite, Membership, token_digest

DEFAULT_DAYS = 7


def make_invite(house: House, by, days: int = DEFAULT_DAYS) -> tuple[HouseInvite, str]:
    raw = secrets.token_urlsafe(16)
    invite = HouseInvite.objects.create(
        house=house,
        token_hash=token_digest(raw),
        token_prefix=prefix_of(raw),
        created_by=by,
        expires_at=timezone.now() + timedelta(days=days),
    )
    return invite, raw


def live_invites(house: House):
    """The invites that still work, newest first (the members page lists them)."""
    live = house.invites.filter(revoked_at__isnull=True, expires_at__gt=timezone.now())
    return live.select_related("created_by__agent")


def revoke_invite(invite: HouseInvite) -> None:
    HouseInvite.objects.filter(pk=invite.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )


def accept_invite(invite: HouseInvite, user) -> tuple[Membership, bool]:
    """``user`` joins the invite's house as a member; a member already in it stays as they are."""
    membership, joined = join_house(invite.house, user)
    if joined:
        HouseInvite.objects.filter(pk=invite.pk).update(joined_count=F("joined_count") + 1)
    return membership, joined
