"""Dispatch benchmarks: reply overhead, a backlog pass, and a long conversation.

    python -m bench.dispatch [--quick] [--case overhead|backlog|conversation]... [--write-docs]

``--quick`` runs every case small, in seconds (``make bench-smoke``).

**overhead** — what arbe adds around the model, against the loopback fake.

For each reply: time from the POST to the first ``signal.dispatch.started`` (director
pass + start), and from the model's last token to the bot's ``chat`` entry, by stage:

1. last token → Pi writes its final ``message_end`` (Pi's own work: the SDK's stream
   end, its message assembly, JSON on stdout);
2. → the reply's loop reaches it (our appends of earlier events still in progress);
3. → Pi's ``agent_end`` read (the ``pi.assistant`` append, Pi's turn end);
4. → the chat entry made (the last assistant message checked, Pi's shutdown started);
5. → the chat entry appended to the stream (readers can see it from here);
6. → the append's bookkeeping done (recency, chat index, status record).

The fake answers at once with a short text; its last token is taken when it has
flushed the stream's last chunk. Real Pi process per reply, embedded streams, SQLite,
the director in-process.

**backlog** — a thread holding 200,000 chat entries no director pass settled (written
straight to the stream server, as another program would), then a mention: the director
pass's time and the size of each entry it writes.

**conversation** — a one-person conversation with the demo bot (the built-in demo model,
served by this site under uvicorn) at 100 and at 20,000 entries: POST → the reply's
``signal.dispatch.started``, POST → the model asked with the bot's Pi warm and with a cold
start, and the model's last token → the bot's ``chat`` visible, each for the short and the
long thread in the same run, with their ratio.
"""

import argparse
import json
import math
import statistics
import tempfile
import time

from bench.docs import write_section
from bench.now import setup_django

STAGES = [
    ("last token → Pi writes its final `message_end`", "last", "pi_message_end"),
    ("→ the reply's loop reaches it", "pi_message_end", "message_end"),
    ("→ Pi's `agent_end` read", "message_end", "agent_end"),
    ("→ chat entry made", "agent_end", "chat_made"),
    ("→ chat appended to the stream (visible)", "chat_made", "chat_visible"),
    ("→ append bookkeeping done (recency, index, status)", "chat_visible", "chat_done"),
]


class Clock:
    """Marks per reply, set by the wrappers ``instrument`` installs."""

    def __init__(self):
        self.marks: dict[str, float] = {}

    def mark(self, name: str, *, first: bool = False) -> None:
        if not (first and name in self.marks):
            self.marks[name] = time.perf_counter()


def instrument(fake, clock: Clock):
    """Wrap the fake, the reply's Pi decoding and its writer to mark each stage."""
    import dispatch.replies as replies
    from dispatch.pi.events import AgentEnd, MessageEnd
    from dispatch.pi.process import PiSession
    from threads.entries import Chat

    handler = fake._server.RequestHandlerClass
    stream = handler._stream

    def timed_stream(self, body, reply):
        stream(self, body, reply)
        clock.mark("last")  # the last chunk is flushed: the model is done

    handler._stream = timed_stream

    dispatch_line = PiSession._dispatch

    def timed_dispatch(self, line):
        if b'"type":"message_end"' in line[:64] and b'"role":"assistant"' in line:
            clock.mark("pi_message_end")
        return dispatch_line(self, line)

    PiSession._dispatch = timed_dispatch

    payloads_for = replies.payloads_for

    def timed_payloads_for(event, dispatch_id, narration=None):
        if isinstance(event, MessageEnd) and event.message.get("role") == "assistant":
            clock.mark("message_end")
        elif isinstance(event, AgentEnd):
            clock.mark("agent_end")
        return payloads_for(event, dispatch_id, narration)

    replies.payloads_for = timed_payloads_for

    new_entry = replies.new_entry

    def timed_new_entry(payload, **kw):
        if isinstance(payload, Chat):
            clock.mark("chat_made")
        return new_entry(payload, **kw)

    replies.new_entry = timed_new_entry

    mark_visible(clock)


_visible: list[Clock] = []


def mark_visible(clock: Clock) -> None:
    """Mark a chat visible when the writer hands its append to the hooks (the stream has it,
    readers can see it) and done when the hooks return (the bookkeeping). The writer's own
    seam, not its client: the raw client is the writer's alone, and a reply's fenced writer
    goes through the same seam."""
    import threads.recency as recency
    from threads.entries import Chat

    if _visible:  # installed once per process
        _visible[:] = [clock]
        return
    _visible.append(clock)
    after_append = recency.after_append

    def timed_after_append(name, entries, next_offset=None):
        chat = any(isinstance(e.payload, Chat) for e in entries)
        if chat:
            _visible[0].mark("chat_visible")
        result = after_append(name, entries, next_offset)
        if chat:  # the hooks ran: recency, the search index, status tracking
            _visible[0].mark("chat_done")
        return result

    recency.after_append = timed_after_append


def pi_alone(fake, clock: Clock, replies: int) -> list[float]:
    """The floor: the same Pi on the same fake with nothing of ours around it (no appends,
    no director), from the last token to Pi's final ``message_end`` on its stdout."""
    import asyncio
    from pathlib import Path

    from django.conf import settings

    from dispatch.pi.events import MessageEnd
    from dispatch.pi.process import PiConfig, PiSession
    from tests.peers.fake_llm import MODEL, PROVIDER

    async def one(n: int) -> float:
        root = Path(settings.PI_HOME) / "alone"
        config = PiConfig(
            provider=PROVIDER,
            model=MODEL,
            instructions="",
            session_file=root / f"s{n}.jsonl",
            workspace=root / "ws",
            agent_dir=Path(settings.PI_AGENT_DIR),
        )
        clock.marks.clear()
        async with await PiSession.start(config) as session:
            events = session.events()
            await session.prompt("hello")
            async for event in events:
                if isinstance(event, MessageEnd) and event.message.get("role") == "assistant":
                    clock.mark("alone_end")
                    break
        return (clock.marks["alone_end"] - clock.marks["last"]) * 1000

    return [asyncio.run(one(n)) for n in range(replies)]


def run(replies: int) -> tuple[list[float], dict[str, list[float]], list[float], list[float]]:
    from django.test import Client

    from dispatch.backstage import backstage
    from tests.factories import make_bot, make_house, make_user
    from tests.peers.fake_llm import MODEL, PROVIDER, fake_llm_server
    from tests.peers.pi_home import write_pi_home
    from threads.lifecycle import create_thread
    from threads.reading import read_entries

    to_start, total = [], []
    stages: dict[str, list[float]] = {key: [] for _, _, key in STAGES}
    with fake_llm_server() as fake:
        clock = Clock()
        instrument(fake, clock)
        from django.conf import settings

        settings.PI_AGENT_DIR = str(write_pi_home(settings.PI_HOME / "agent", fake.base_url))
        owner = make_user("bench")
        house = make_house("bench", owner=owner)
        make_bot(house, "helper", provider=PROVIDER, model=MODEL)
        client = Client()
        client.force_login(owner)
        for n in range(replies + 1):  # the first reply warms Pi's caches and is not counted
            clock.marks.clear()
            thread = create_thread(house=house, title=f"reply {n}", by=owner.agent)
            posted_at = time.time()
            response = client.post(
                f"/api/threads/{thread.id}/entries",
                json.dumps({"payload": {"type": "chat", "text": "@helper hello"}}),
                content_type="application/json",
            )
            assert response.status_code == 201, response.content
            backstage().wait_idle(120)
            if n == 0:
                continue
            entries = read_entries(thread.id)[0]
            started = next(e for e in entries if e.type == "signal.dispatch.started")
            to_start.append(started.ts - posted_at * 1000)
            marks = clock.marks
            for _, since, until in STAGES:
                stages[until].append((marks[until] - marks[since]) * 1000)
            total.append((marks["chat_visible"] - marks["last"]) * 1000)
        floor = pi_alone(fake, clock, replies)
    return to_start, stages, total, floor


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, math.ceil(0.9 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered):.1f} | {p90:.1f}"


def ratio_row(label: str, short: list[float], long: list[float]) -> str:
    ratio = statistics.median(long) / statistics.median(short)
    return f"| {label} | {summary(short)} | {summary(long)} | {ratio:.2f}× |"


def overhead_table(replies: int) -> str:
    to_start, stages, total, floor = run(replies)
    rows = [f"| {label} | {summary(stages[until])} |" for label, _, until in STAGES]
    return "\n".join(
        [
            "| reply overhead | p50 ms | p90 ms |",
            "|---|---|---|",
            f"| POST → first `signal.dispatch.started` | {summary(to_start)} |",
            f"| **model's last token → bot's `chat` entry visible** | {summary(total)} |",
            *rows,
            f"| Pi alone (no arbe): last token → `message_end` | {summary(floor)} |",
        ]
    )


def backlog_table(size: int) -> str:
    from bench.long_threads import backlog_case

    found = backlog_case(size)
    sizes = ", ".join(f"`{kind}` {n:,} B" for kind, n in found["sizes"].items())
    return "\n".join(
        [
            "| backlog (unsettled chat) | director pass ms | entries it wrote | reply takes in |",
            "|---|---|---|---|",
            f"| {found['size']:,} + a mention | {found['ms']:.0f} | {sizes} | "
            f"{found['takes_in']} messages |",
        ]
    )


def conversation_table(sizes: tuple[int, int], replies: int) -> str:
    from bench.long_threads import conversation_case

    clock = Clock()
    mark_visible(clock)
    found = conversation_case(sizes, replies, clock)
    short, long = (found[n] for n in sizes)
    rows = [
        ("POST → `signal.dispatch.started`", "to_start"),
        ("the director's pass that started it", "pass"),
        ("**model's last token → bot's `chat` visible**", "to_chat"),
        ("**POST → the model asked, warm** (the bot's Pi kept from its last reply)", "to_model"),
        ("POST → the model asked, cold (the reply starts Pi)", "to_model_cold"),
    ]
    return "\n".join(
        [
            f"| one person and the demo bot | {sizes[0]:,} entries: p50 ms | p90 ms "
            f"| {sizes[1]:,} entries: p50 ms | p90 ms | long / short (p50) |",
            "|---|---|---|---|---|---|",
            *(ratio_row(label, short[key], long[key]) for label, key in rows),
        ]
    )


CASES = ("overhead", "backlog", "conversation")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every case small: seconds")
    parser.add_argument("--case", action="append", choices=CASES, help="default: all")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    cases = args.case or CASES
    tables = []
    with tempfile.TemporaryDirectory(prefix="arbe-bench-dispatch-") as var_dir:
        setup_django(var_dir)
        if "overhead" in cases:
            table = overhead_table(1 if args.quick else 20)
            tables.append(("dispatch", "Reply overhead (`python -m bench.dispatch`)", table))
        if "backlog" in cases:
            table = backlog_table(20_000 if args.quick else 200_000)
            tables.append(("dispatch-backlog", "A backlog pass (`--case backlog`)", table))
        if "conversation" in cases:
            sizes = (100, 2_000) if args.quick else (100, 20_000)
            table = conversation_table(sizes, 1 if args.quick else 7)
            title = "A long one-person conversation (`--case conversation`)"
            tables.append(("dispatch-conversation", title, table))
    for key, title, table in tables:
        print(f"{title}\n{table}\n")
        if args.write_docs:
            write_section(key, title, table)


if __name__ == "__main__":
    main()
