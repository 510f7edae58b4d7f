"""Presence in a crowd: every event reaches every viewer, so a crowd relays less of it."""

from threads import presence


def viewers(thread: str, n: int) -> None:
    for _ in range(n):
        presence.joined(thread)


def test_a_small_room_relays_every_event():
    viewers("t-small", presence.CROWD)
    try:
        assert all(presence.should_relay("t-small", "ag_a", "joined") for _ in range(5))
    finally:
        for _ in range(presence.CROWD):
            presence.left("t-small")


def test_a_crowd_relays_one_event_per_person_and_state_a_second():
    viewers("t-crowd", presence.CROWD + 1)
    try:
        sent = [presence.should_relay("t-crowd", "ag_a", "joined") for _ in range(50)]
        assert sent.count(True) == 1  # 50 sockets of one person joining: one event
        assert presence.should_relay("t-crowd", "ag_b", "joined")  # someone else: their own
        assert presence.should_relay("t-crowd", "ag_a", "left")  # leaving always says so
    finally:
        for _ in range(presence.CROWD + 1):
            presence.left("t-crowd")


def test_past_the_limit_nothing_is_relayed_and_the_room_is_forgotten_when_empty():
    viewers("t-big", presence.MAX_VIEWERS + 1)
    assert not presence.should_relay("t-big", "ag_a", "typing")
    for _ in range(presence.MAX_VIEWERS + 1):
        presence.left("t-big")
    assert "t-big" not in presence._viewers
    assert presence.should_relay("t-big", "ag_a", "typing")
