"""Warm bots: a bot's Pi kept between replies in a thread, under the thread's lease (issue 36).

A real Pi on the loopback fake model, the in-process engine, the real database and stream
server. A kept process answers the next reply; one that died or stopped answering is
replaced and the message answered once; one whose lease is lost is stopped, and the writer
of its epoch is refused by the store.
"""

import asyncio
import datetime
import os
import signal
import time
from collections import Counter

import pytest
from django.utils import timezone

import dispatch.pi.process
from dispatch import thread_leases
from dispatch.backstage import backstage
from dispatch.fencing import Fenced, FencedWriter
from dispatch.models import ThreadLease
from threads.entries import Chat, DispatchFailed, DispatchStarted, DispatchSteered, ThreadTakenOver
from threads.lifecycle import new_entry

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


def warm_of(live):
    return backstage().warm.kept.get((live.world.thread.id, live.world.bot.id))


def answers(live) -> list:
    bot = live.world.bot.id
    return [e for e in live.entries() if isinstance(e.payload, Chat) and e.authorId == bot]


def assert_each_answered_once(live, asked: list[str]) -> None:
    entries = live.entries()
    taken: Counter = Counter()
    for e in entries:
        if isinstance(e.payload, DispatchStarted | DispatchSteered):
            taken.update(e.payload.entryIds)
    assert [taken[i] for i in asked] == [1] * len(asked)
    assert len(answers(live)) == len(asked)
    assert not [e for e in entries if isinstance(e.payload, DispatchFailed)]


def wait_until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def test_a_warm_pi_answers_the_next_reply_and_holds_the_threads_lease(live):
    asked = [live.post("@helper first")]
    live.settle()
    first = warm_of(live)
    assert first is not None and first.session.returncode is None
    lease = ThreadLease.objects.get(pk=live.world.thread.pk)
    assert lease.holder == backstage().holder  # held while its bot is warm
    asked.append(live.post("@helper second"))
    live.settle()
    second = warm_of(live)
    assert second is first and second.session.pid == first.session.pid and second.replies == 2
    assert_each_answered_once(live, asked)
    last = str(live.fake.requests[-1]["messages"][-1])
    assert "second" in last and "first" not in last  # the session has the rest
    backstage().cool_down()
    assert first.session.returncode is not None  # stopped with the holding
    assert not ThreadLease.objects.filter(pk=live.world.thread.pk).exists()


def test_a_warm_pi_killed_between_replies_is_replaced_and_each_message_answered_once(live):
    asked = [live.post("@helper first")]
    live.settle()
    dead = warm_of(live)
    os.killpg(dead.session.pid, signal.SIGKILL)
    wait_until(lambda: dead.session.returncode is not None)
    asked.append(live.post("@helper second"))
    live.settle()
    fresh = warm_of(live)
    assert fresh is not None and fresh.session.pid != dead.session.pid and fresh.replies == 1
    assert_each_answered_once(live, asked)


def test_a_warm_pi_that_stops_answering_is_replaced_within_the_attempt(live, monkeypatch):
    asked = [live.post("@helper first")]
    live.settle()
    stuck = warm_of(live)
    os.killpg(stuck.session.pid, signal.SIGSTOP)  # alive, but it answers nothing
    monkeypatch.setattr(dispatch.pi.process, "REPLY_TIMEOUT", 5.0)
    asked.append(live.post("@helper second"))
    live.settle()
    fresh = warm_of(live)
    assert fresh is not None and fresh.session.pid != stuck.session.pid
    assert stuck.session.returncode is not None  # killed, not left stopped
    assert_each_answered_once(live, asked)


def test_a_lease_lost_while_warm_stops_the_pi_and_fences_its_writes(live):
    live.post("@helper first")
    live.settle()
    thread = live.world.thread
    warm = warm_of(live)
    old = FencedWriter(thread.id, warm.epoch)
    # Another engine finds the lease lapsed (a long pause here) and takes the thread over.
    ThreadLease.objects.filter(pk=thread.pk).update(
        until=timezone.now() - datetime.timedelta(seconds=1)
    )
    assert thread_leases.acquire(thread.id, "elsewhere", 60) is thread_leases.Taken.TAKEN_OVER
    epoch = thread_leases.epoch(thread.id, "elsewhere")
    FencedWriter(thread.id, epoch).append(
        thread.stream_name, new_entry(ThreadTakenOver(epoch=epoch))
    )
    engine = backstage()
    asyncio.run_coroutine_threadsafe(engine.tend_once(), engine.loop).result(30)
    wait_until(lambda: warm.session.returncode is not None)  # stopped with the lease
    assert warm_of(live) is None and thread.id not in engine.passes
    with pytest.raises(Fenced):  # and whatever it would still write is refused
        old.append(thread.stream_name, new_entry(Chat(text="late"), author=live.world.bot.id))
    assert ThreadLease.objects.get(pk=thread.pk).holder == "elsewhere"
