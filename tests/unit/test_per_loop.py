"""One object per event loop (``arbe_lib.per_loop``)."""

import asyncio
import gc
import threading

import pytest

from arbe_lib.per_loop import per_loop


class Made:
    """Holds its loop, as a hub's tasks or a client's connections do."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()


async def twice(thing):
    return thing(), thing()


def test_one_object_per_loop_made_on_first_use():
    thing = per_loop(Made)
    a, b = asyncio.run(twice(thing))
    assert a is b
    with asyncio.Runner() as runner:
        c, _ = runner.run(twice(thing))
        assert c is not a
        assert runner.run(twice(thing))[0] is c  # the same loop, a later call: the same one


def test_loops_in_other_threads_each_get_their_own():
    thing = per_loop(Made)
    got, ready = {}, threading.Barrier(2)

    async def in_thread(name):
        ready.wait()  # both loops running at once
        got[name] = thing()

    threads = [threading.Thread(target=asyncio.run, args=(in_thread(n),)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got["a"] is not got["b"]
    assert got["a"].loop is not got["b"].loop


def test_objects_of_closed_loops_are_dropped():
    thing = per_loop(Made)
    for _ in range(3):
        asyncio.run(twice(thing))
    gc.collect()
    # Each object holds its loop, so a weak key alone would keep all three; making a new one
    # drops those whose loop has closed.
    asyncio.run(twice(thing))
    assert len(thing.made) == 1


def test_outside_a_running_loop_is_an_error():
    thing = per_loop(Made)
    with pytest.raises(RuntimeError):
        thing()
