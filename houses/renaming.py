"""A person's new display name, saved and told to the live pages of every house they are in.

Thread tails (``threads.tail_hub``) read the names of a batch's authors as they render it,
after the rename committed, so new messages carry the new name in every process; this
event (through the channel layer) updates what live sockets say in presence. Pages rendered
from now on read it from the database anyway.
"""

from __future__ import annotations

from arbe_lib.events import send_to_group
from houses.models import Agent, Membership

EVENT = "names.changed"


def names_group(house_id: int) -> str:
    """Every live thread socket of one house."""
    return f"names-{house_id}"


def rename(agent: Agent, display_name: str) -> None:
    agent.display_name = display_name
    agent.save(update_fields=["display_name"])
    event = {"type": EVENT, "agent": agent.id, "display": display_name}
    houses = Membership.objects.filter(user_id=agent.user_id).values_list("house_id", flat=True)
    for house_id in houses:
        send_to_group(names_group(house_id), event)
