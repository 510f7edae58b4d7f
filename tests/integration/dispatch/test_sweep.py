"""The 60 s sweep: started with the process that owns backstage, once per interval overall."""

import pytest

from dispatch.backstage import HOLDER, SWEEP_LEASE, backstage, start_with_web
from dispatch.models import Lease, take_lease
from threads.models import Thread

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lease_is_held_by_one_taker_until_it_expires():
    assert take_lease("job", 60, "worker-1") is True
    assert take_lease("job", 60, "worker-2") is False  # a second worker's tick does nothing
    assert Lease.objects.get(name="job").holder == "worker-1"
    Lease.objects.filter(name="job").update(until="2000-01-01T00:00:00Z")
    assert take_lease("job", 60, "worker-2") is True
    assert Lease.objects.get(name="job").holder == "worker-2"


@pytest.mark.backstage
def test_the_web_process_starts_the_sweep_at_once(world, settings, live_wait):
    # A record stored as working with nothing behind it: only the sweep can repair it.
    Thread.objects.filter(pk=world.thread.pk).update(status="working", status_message="stale")
    settings.BACKSTAGE = "inprocess"
    settings.BACKSTAGE_SWEEP_S = 3600  # the first sweep runs now, the next in an hour
    start_with_web()
    assert backstage().sweeping is not None
    live_wait(lambda: Thread.objects.get(pk=world.thread.pk).status == "idle")
    assert Lease.objects.get(name=SWEEP_LEASE).holder == HOLDER


@pytest.fixture
def live_wait():
    import time

    def wait(predicate, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        raise AssertionError("condition not reached")

    return wait


@pytest.mark.backstage
def test_the_sweep_answers_a_mention_whose_wake_was_lost(live, world, monkeypatch):
    """Redis down at the moment of the post: the wake fails, the message waits; the next
    sweep passes over working threads and the bot answers it, once."""
    import asyncio

    from dispatch import backstage as module
    from threads.entries import Chat, DispatchFailed

    def unreachable(thread_id):
        raise ConnectionError("the channel layer is down")

    monkeypatch.setattr(module, "wake", unreachable)
    asked = live.post(f"@{world.bot.handle} are you there?")
    monkeypatch.undo()
    failed = [e for e in live.entries() if isinstance(e.payload, DispatchFailed)]
    assert [f.payload.stage for f in failed] == ["wake"]
    waiting = Thread.objects.get(pk=world.thread.pk)  # the mention waits for the director
    assert (waiting.status, waiting.status_message[:20]) == ("working", "Deciding who answers")

    from ops.metrics import REGISTRY

    def repaired() -> float:
        return REGISTRY.get_sample_value("arbe_sweep_repairs_total", {"kind": "recomputed"})

    before = repaired()
    engine = backstage()
    engine.start_in_thread()
    _, recomputed = asyncio.run_coroutine_threadsafe(engine.sweep_once(), engine.loop).result(30)
    assert repaired() - before >= recomputed >= 1  # the working thread, counted (ops.metrics)
    live.settle()
    replies = [
        e for e in live.entries() if isinstance(e.payload, Chat) and e.authorId == world.bot.id
    ]
    assert len(replies) == 1
    started = [e for e in live.entries() if e.type == "signal.dispatch.started"]
    assert [s.payload.entryIds for s in started] == [[asked]]
