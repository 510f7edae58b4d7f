"""Reply overhead benchmark: what arbe adds around the model, against the loopback fake.

    python -m bench.dispatch [--quick] [--write-docs]

For each reply: time from the POST to the first ``signal.dispatch.started`` (director
pass + start), and from the model's last token to the bot's ``chat`` entry (Pi decoding
the stream, our decoding, appends). The fake answers instantly with a short text, so the
model's own time is excluded: its last token is taken as the moment its answer request
arrived (the stream then takes well under a millisecond). Real Pi process per reply,
embedded streams, SQLite, the director in-process.
"""

import argparse
import json
import statistics
import tempfile
import time

from bench.docs import write_section
from bench.now import setup_django


def run(replies: int) -> tuple[list[float], list[float]]:
    from django.test import Client

    from dispatch.backstage import backstage
    from houses.models import Agent
    from tests.factories import make_bot, make_house, make_user
    from tests.peers.fake_llm import MODEL, PROVIDER, fake_llm_server
    from tests.peers.pi_home import write_pi_home
    from threads.lifecycle import create_thread
    from threads.reading import read_entries

    to_start, to_chat = [], []
    with fake_llm_server() as fake:
        arrivals: list[float] = []
        take = fake._take

        def timed_take(body):
            arrivals.append(time.time())
            return take(body)

        fake._take = timed_take
        from django.conf import settings

        settings.PI_AGENT_DIR = str(write_pi_home(settings.PI_HOME / "agent", fake.base_url))
        owner = make_user("bench")
        house = make_house("bench", owner=owner)
        bot = make_bot(house, "helper", provider=PROVIDER, model=MODEL)
        client = Client()
        client.force_login(owner)
        for n in range(replies):
            thread = create_thread(house=house, title=f"reply {n}", by=owner.agent)
            posted_at = time.time()
            response = client.post(
                f"/api/threads/{thread.id}/entries",
                json.dumps({"payload": {"type": "chat", "text": "@helper hello"}}),
                content_type="application/json",
            )
            assert response.status_code == 201, response.content
            backstage().wait_idle(120)
            entries = read_entries(thread.id)[0]
            started = next(e for e in entries if e.type == "signal.dispatch.started")
            answer = next(e for e in entries if e.type == "chat" and e.authorId == bot.id)
            to_start.append(started.ts - posted_at * 1000)
            to_chat.append(answer.ts - arrivals[-1] * 1000)
        assert Agent.objects.filter(pk=bot.pk).exists()
    return to_start, to_chat


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered):.1f} | {p90:.1f}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="arbe-bench-dispatch-") as var_dir:
        setup_django(var_dir)
        to_start, to_chat = run(5 if args.quick else 20)
    table = "\n".join(
        [
            "| reply overhead | p50 ms | p90 ms |",
            "|---|---|---|",
            f"| POST → first `signal.dispatch.started` | {summary(to_start)} |",
            f"| model's last token → bot's `chat` entry | {summary(to_chat)} |",
        ]
    )
    print(table)
    if args.write_docs:
        write_section("dispatch", "Reply overhead (`python -m bench.dispatch`)", table)


if __name__ == "__main__":
    main()
