"""The thread director: decides from the log which bots owe a reply.

This is the wake interface posting relies on. The decision pass (mentions,
one-bot conversations, the owed tail, ``signal.thread_director.*``) arrives
with the dispatch capability; until then a wake is accepted and nothing is
decided, which the current view reports as "nobody was asked".
"""


def wake(thread_id: str) -> None:
    """Ask for a director pass over ``thread_id``. Must not block the poster."""
    return None
