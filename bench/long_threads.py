"""Long threads for ``bench.dispatch``: a backlog no pass settled, and a long conversation.

Their history is written straight to the stream server with the service client, as
another program (an import, a house whose bot came late) would: no recency, index or
status hooks, which would only slow the setup down. What is measured goes through arbe.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import msgspec

BATCH = 5_000


def write_history(stream: str, entries) -> None:
    from streams.client import service_client
    from threads.entries import encode_entry

    client = service_client()
    try:
        for start in range(0, len(entries), BATCH):
            client.append_batch(stream, [encode_entry(e) for e in entries[start : start + BATCH]])
    finally:
        client.close()


def backlog_case(size: int) -> dict:
    """``size`` unsettled chats, then a mention: one director pass, timed, and the entries
    it wrote, measured."""
    from dispatch.director import director_pass
    from tests.factories import make_bot, make_house, make_user
    from threads.entries import Chat, to_builtins
    from threads.lifecycle import create_thread, new_entry
    from threads.log import log_reader
    from threads.reading import read_entries

    owner = make_user("backlog")
    house = make_house("backlog", owner=owner)
    make_bot(house, "helper")
    thread = create_thread(house=house, title="backlog", by=owner.agent)
    person = owner.agent.id
    history = [
        new_entry(Chat(text=f"note {n} from the import"), author=person) for n in range(size)
    ]
    history.append(new_entry(Chat(text="@helper round 1"), author=person))
    write_history(thread.stream_name, history)
    before = log_reader().head(thread.stream_name).next_offset
    started = time.perf_counter()
    start = director_pass(thread.id)
    took = (time.perf_counter() - started) * 1000
    written, _ = read_entries(thread.id, before)
    sizes = {e.type: len(msgspec.json.encode(to_builtins(e))) for e in written}
    return {"size": size, "ms": took, "sizes": sizes, "takes_in": len(start.entry_ids)}


def conversation_entries(exchanges: int, person: str, bot: str):
    """A settled one-person conversation: each exchange as the director and a reply log it."""
    from threads import entries as E
    from threads.lifecycle import new_entry

    out = []
    for n in range(exchanges):
        ask = new_entry(E.Chat(text=f"question {n}: what about the next step?"), author=person)
        d = f"d_hist{n}"
        usage = {"input": 90, "output": 12, "totalTokens": 102, "cost": {"total": 0.0}}
        message = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": usage}
        answer = new_entry(E.Chat(text=f"answer {n}: here it is."), author=bot)
        out += [
            ask,
            new_entry(E.DirectorDecided(picked=[bot], upTo=ask.id, entryIds=[ask.id])),
            new_entry(E.DispatchStarted(dispatchId=d, agentId=bot, entryIds=[ask.id]), author=bot),
            new_entry(E.DispatchPhase(dispatchId=d, phase="answering"), author=bot),
            new_entry(E.PiAssistant(dispatchId=d, message=message), author=bot),
            answer,
            new_entry(E.DispatchFinished(dispatchId=d), author=bot),
            new_entry(E.DirectorOutcome(upTo=answer.id)),
        ]
    return out


@contextlib.contextmanager
def demo_site() -> Iterator[str]:
    """This site under uvicorn on a loopback port, so Pi can reach the demo model."""
    import uvicorn
    from django.conf import settings
    from django.core.asgi import get_asgi_application

    from tests.peers.ports import free_port, wait_for_port

    config = uvicorn.Config(
        get_asgi_application(), host="127.0.0.1", port=free_port(), lifespan="off",
        log_level="warning",
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for_port(config.port)
    settings.ARBE_INTERNAL_URL = f"http://127.0.0.1:{config.port}"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "127.0.0.1"]
    settings.PI_AGENT_DIR = ""  # the managed agent dir, with the demo provider
    try:
        yield settings.ARBE_INTERNAL_URL
    finally:
        server.should_exit = True
        thread.join(10)


def mark_model(clock) -> None:
    """The demo model asked (its request read) and its last token (``[DONE]`` sent); and
    the director's pass, start to end."""
    import dispatch.director as director
    from dispatch import demo_model

    decode, sse, director_pass = demo_model.decode_request, demo_model._sse, director.director_pass

    def timed_decode(request):
        clock.mark("asked", first=True)
        return decode(request)

    def timed_pass(thread_id, writer=None):  # writer: the holder's fenced writer
        began = time.perf_counter()
        try:
            return director_pass(thread_id, writer)
        finally:
            clock.passes.append((time.perf_counter() - began) * 1000)

    demo_model.decode_request, director.director_pass = timed_decode, timed_pass

    async def timed_sse(chunks):
        async for part in sse(chunks):
            yield part
        clock.mark("last")

    demo_model._sse = timed_sse


def conversation_case(sizes: tuple[int, ...], replies: int, clock) -> dict[int, dict]:
    """Per thread length: POST → ``signal.dispatch.started``, POST → the model asked, and last
    token → the bot's chat visible (ms), over ``replies`` messages that mention nobody (the
    conversation rule answers them) with the bot's Pi warm from its last reply; and POST →
    the model asked for as many replies that start their own Pi (cold). Lengths take turns,
    so the shared machine's noise hits them alike."""
    import json

    from django.test import Client

    from dispatch.backstage import backstage
    from tests.factories import make_bot, make_house, make_user
    from threads.lifecycle import create_thread
    from threads.log import log_reader
    from threads.reading import read_entries

    keys = ("to_start", "to_model", "to_chat", "pass", "to_model_cold")
    results = {size: {key: [] for key in keys} for size in sizes}
    clock.passes = []
    with demo_site():
        mark_model(clock)
        owner = make_user("talker")
        house = make_house("talk", owner=owner)
        bot = make_bot(house, "helper")
        client = Client()
        client.force_login(owner)
        threads = {}
        for size in sizes:
            thread = create_thread(house=house, title=f"talk {size}", by=owner.agent)
            history = conversation_entries(max(1, (size - 1) // 8), owner.agent.id, bot.id)
            write_history(thread.stream_name, history)
            threads[size] = thread

        def post(thread, text: str, cold: bool = False) -> tuple[float, str]:
            if cold:  # no warm Pi anywhere: this reply starts its own
                backstage().cool_down()
            tail = log_reader().head(thread.stream_name).next_offset
            clock.marks.clear()
            clock.passes.clear()
            clock.mark("posted")
            posted = time.time() * 1000
            body = json.dumps({"payload": {"type": "chat", "text": text}})
            response = client.post(
                f"/api/threads/{thread.id}/entries", body, content_type="application/json"
            )
            assert response.status_code == 201, response.content
            backstage().wait_idle(120)
            return posted, tail

        for thread in threads.values():  # warm up: Pi's caches, the session, the offset
            post(thread, "hello again")
        for n in range(replies):
            for size, thread in threads.items():
                # A reply that starts its own Pi (none warm anywhere), then the next one on
                # the Pi that reply kept.
                post(thread, f"and cold step {n}?", cold=True)
                results[size]["to_model_cold"].append(
                    (clock.marks["asked"] - clock.marks["posted"]) * 1000
                )
                posted, tail = post(thread, f"and step {n}?")
                written, _ = read_entries(thread.id, tail)
                started = next(e for e in written if e.type == "signal.dispatch.started")
                results[size]["to_start"].append(started.ts - posted)
                marks = clock.marks
                results[size]["to_model"].append((marks["asked"] - marks["posted"]) * 1000)
                results[size]["to_chat"].append((marks["chat_visible"] - marks["last"]) * 1000)
                results[size]["pass"].append(clock.passes[0])  # the pass that started it
        backstage().cool_down()
    return results
