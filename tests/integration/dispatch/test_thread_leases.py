"""Thread leases: one holder at a time across engines, no wake lost, lapsed ones taken over.

The interleaving test drives several engines' lease steps (wake, begin a pass, release,
heartbeat, die, takeover tick) in orders hypothesis picks, against the real database.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatch import thread_leases as leases
from dispatch.models import ThreadLease

pytestmark = pytest.mark.django_db

T = "t-one"


def lapse(thread_id: str = T) -> None:
    ThreadLease.objects.filter(pk=thread_id).update(
        until=timezone.now() - datetime.timedelta(seconds=1)
    )


def test_the_first_wake_holds_the_thread_and_the_next_is_left_to_it():
    assert leases.acquire(T, "a", 60) is leases.Taken.FRESH
    assert leases.acquire(T, "b", 60) is None
    assert ThreadLease.objects.get(pk=T).holder == "a"


def test_a_wake_during_a_pass_keeps_the_holder_for_another_pass():
    leases.acquire(T, "a", 60)
    assert leases.begin(T, "a")
    assert leases.acquire(T, "b", 60) is None  # arrives at another worker mid-pass
    assert not leases.release(T, "a")  # so the holder may not let go
    assert leases.begin(T, "a")  # it runs another pass
    assert leases.release(T, "a")
    assert not ThreadLease.objects.filter(pk=T).exists()


def test_a_lapsed_lease_is_taken_over_and_its_old_holder_loses_it():
    leases.acquire(T, "a", 60)
    leases.begin(T, "a")
    lapse()
    assert leases.expired() == [T]
    assert leases.acquire(T, "b", 60) is leases.Taken.TAKEN_OVER
    assert leases.renew("a", {T}, 60) == set()  # a's heartbeat finds it lost
    assert not leases.begin(T, "a") and not leases.release(T, "a")
    assert leases.renew("b", {T}, 60) == {T}


def test_an_engine_never_takes_over_its_own_live_work_but_does_its_leftovers():
    leases.acquire(T, "a", 60)
    lapse()  # a's heartbeat is late, but its pass is still running
    assert leases.acquire(T, "a", 60, True) is None
    lapse()  # a's work ended without letting go (a crash between steps)
    assert leases.acquire(T, "a", 60, False) is leases.Taken.TAKEN_OVER


def test_renewal_extends_only_the_threads_named():
    leases.acquire("t1", "a", 60)
    leases.acquire("t2", "a", 60)
    lapse("t1")
    lapse("t2")
    assert leases.renew("a", {"t1"}, 60) == {"t1"}
    assert leases.expired() == ["t2"]


@dataclass
class Engine:
    name: str
    alive: bool = True
    holding: bool = False
    in_pass: bool = False
    pass_saw: int = 0  # how many wakes the current pass reads past


class Protocol:
    """The engine's lease steps as a model: each step is one call the engine makes."""

    def __init__(self, count: int) -> None:
        self.engines = [Engine(f"e{i}") for i in range(count)]
        self.wakes = 0  # wakes asked for (each after its entry was appended)
        self.read_up_to = 0  # the most wakes any pass read past

    def holders(self) -> list[Engine]:
        return [e for e in self.engines if e.alive and e.holding]

    def step(self, kind: str, engine: Engine) -> None:
        if not engine.alive:
            return
        if kind == "wake":
            self.wakes += 1
            self._ask(engine)
        elif kind == "advance" and engine.holding:
            self._advance(engine)
        elif kind == "die":
            engine.alive = False
            if ThreadLease.objects.filter(pk=T, holder=engine.name).exists():
                lapse()  # it stopped renewing, and the lease ran out
        elif kind == "tick":
            for thread_id in leases.expired():
                if not (engine.holding and thread_id == T):
                    self._ask(engine)

    def _ask(self, engine: Engine) -> None:
        taken = leases.acquire(T, engine.name, 60, engine.holding)
        if taken is not None:
            assert not engine.holding, "an engine took over its own live work"
            engine.holding, engine.in_pass = True, False

    def _advance(self, engine: Engine) -> None:
        if not engine.in_pass:
            if leases.begin(T, engine.name):
                engine.in_pass, engine.pass_saw = True, self.wakes
            else:
                engine.holding = False  # lost it to a takeover
            return
        self.read_up_to = max(self.read_up_to, engine.pass_saw)
        engine.in_pass = False
        if leases.release(T, engine.name):
            engine.holding = False

    def settle(self) -> None:
        """Let every live engine run to the end (a tick first, as a live worker would)."""
        for _ in range(50):
            for engine in self.engines:
                self.step("tick", engine)
                while engine.alive and engine.holding:
                    self._advance(engine)
            if not ThreadLease.objects.filter(pk=T).exists():
                return


steps = st.lists(
    st.tuples(
        st.sampled_from(["wake", "wake", "advance", "advance", "advance", "tick", "die"]),
        st.integers(0, 2),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_interleaved_engines_never_both_hold_and_never_lose_a_wake(plan):
    ThreadLease.objects.all().delete()
    protocol = Protocol(3)
    for kind, index in plan:
        if kind == "die" and sum(e.alive for e in protocol.engines) == 1:
            continue  # someone has to be left to take over
        protocol.step(kind, protocol.engines[index])
        live_holders = protocol.holders()
        assert len(live_holders) <= 1
        row = ThreadLease.objects.filter(pk=T).first()
        if live_holders and row is not None and row.until > timezone.now():
            assert row.holder == live_holders[0].name
    protocol.settle()
    assert protocol.holders() == []
    assert protocol.read_up_to == protocol.wakes  # the last wake was read by some pass
