"""A person claims the history an import gave a placeholder by confirming its email here.

When someone confirms an address (``houses.email_address.confirm``) that a placeholder
account holds, the placeholder's principal becomes theirs: every entry it authored (its
agent id is what they carry) is now theirs, with its memberships and read positions; the
account they signed up with keeps its login, and the principal it had is dropped. A
principal that has already written something is never dropped: then nothing is claimed
(the placeholder stays for an operator), since entries can't be re-authored.
"""

from __future__ import annotations

import logging

from archives.models import Placeholder
from houses.models import Agent, Membership
from threads.models import EntryLocation, ThreadRead

logger = logging.getLogger(__name__)


def placeholder_for(address: str, *, besides=None) -> Placeholder | None:
    found = Placeholder.objects.select_related("user").filter(user__email__iexact=address)
    if besides is not None:
        found = found.exclude(user=besides)
    return found.first()


def claim(user, address: str) -> Agent | None:
    """Run inside the confirming transaction; returns the principal claimed, if any."""
    placeholder = placeholder_for(address, besides=user)
    if placeholder is None:
        return None
    old = Agent.objects.filter(user=placeholder.user).first()
    mine = Agent.objects.filter(user=user).first()
    if old is None:
        return None
    if mine is not None and EntryLocation.objects.filter(author_id=mine.id).exists():
        logger.info("placeholder %s not claimed: the account has written", placeholder.user_id)
        return None
    houses = set(Membership.objects.filter(user=user).values_list("house_id", flat=True))
    for m in Membership.objects.filter(user=placeholder.user):
        if m.house_id not in houses:
            Membership.objects.filter(pk=m.pk).update(user=user)
    read = set(ThreadRead.objects.filter(user=user).values_list("thread_id", flat=True))
    ThreadRead.objects.filter(user=placeholder.user).exclude(thread_id__in=read).update(user=user)
    if mine is not None:
        mine.delete()
    Agent.objects.filter(pk=old.pk).update(user=user)
    placeholder.user.delete()  # its placeholder row and what wasn't moved go with it
    return Agent.objects.get(pk=old.pk)
