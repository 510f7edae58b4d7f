"""The backstage worker: director wakes from the channel layer, replies, runs, the sweep.

In the scaled configuration (``BACKSTAGE=worker``, Redis as channel layer) web
processes send wakes and run starts to the ``director`` channel; this process
receives them and runs passes, replies and runs. Every 60 s it orphans silent runs
and recomputes threads stored as working or blocked, whose evidence ages without
new entries.

SIGTERM (a deploy): it stops taking wakes at once, lets running replies finish within
``BACKSTAGE_DRAIN_S``, then hands what is left to another worker (``Backstage.drain``):
the lease lapses at once and a wake goes out, so the taker answers the reply again.

``--health-port N`` serves ``/healthz``, ``/readyz`` (with the lease table) and ``/metrics``
for this worker (ops/probe_server.py, docs/operations.md) on ``--health-host``.
"""

import asyncio
import logging
import signal

from channels.layers import get_channel_layer
from django.conf import settings
from django.core.management.base import BaseCommand

from arbe_lib.runtime import use_uvloop
from dispatch.backstage import DIRECTOR_CHANNEL, backstage
from dispatch.runs import Claim
from notify.worker import Notifier
from ops import context, probe_server

SWEEP_INTERVAL_S = 60
RECEIVE_RETRY_S = 1.0

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Run backstage work: director wakes, replies, runs, and the 60 s status sweep."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="one sweep, then exit")
        parser.add_argument("--interval", type=float, default=SWEEP_INTERVAL_S)
        parser.add_argument("--health-port", type=int, default=0, help="serve /readyz here")
        parser.add_argument("--health-host", default="127.0.0.1", help="default 127.0.0.1")

    def handle(self, *args, once=False, interval=SWEEP_INTERVAL_S, **options):
        use_uvloop()  # as the web processes (arbe_site.web)
        self.health = (options.get("health_host") or "127.0.0.1", options.get("health_port") or 0)
        asyncio.run(self.serve(once=once, interval=interval))

    def say(self, line: str) -> None:
        """A line about the worker's life: a log record when logs are JSON, else stdout."""
        if settings.LOG_FORMAT == "json":
            logger.info(line)
            return
        self.stdout.write(line, ending="\n")
        self.stdout.flush()

    async def serve(self, *, once: bool, interval: float) -> None:
        engine = backstage()
        host, port = getattr(self, "health", ("127.0.0.1", 0))
        probes = await probe_server.serve(host, port) if port and not once else None
        engine.attach(asyncio.get_running_loop())
        if once:
            await self.sweep_once(engine)
            return
        engine.start_boards()  # T3 board subscribers live in the worker, not in web processes
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        self.say("backstage: listening for director wakes")
        tasks = [
            asyncio.create_task(self.receive(engine)),
            asyncio.create_task(engine.sweep_forever(interval)),
            asyncio.create_task(Notifier(engine.holder).run_forever()),  # notify/worker.py
        ]
        await stop.wait()
        tasks[0].cancel()  # no new wakes from now on: they stay for the other workers
        self.say("backstage: draining")
        handed = await engine.drain(settings.BACKSTAGE_DRAIN_S)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        while engine.busy():  # wakes asked before the drain see it and give up
            await asyncio.sleep(0.1)
        if probes is not None:
            probes.close()
        self.say(f"backstage: stopped ({handed} threads handed over)")

    async def receive(self, engine) -> None:
        layer = get_channel_layer()
        failures = 0
        while True:
            try:
                message = await layer.receive(DIRECTOR_CHANNEL)
            except Exception:
                # Redis gone (restarted, unreachable): keep asking until it is back, so the
                # worker needs no restart; the log says so once, then a line a minute.
                if failures % 60 == 0:
                    logger.warning("director channel unreachable; retrying", exc_info=True)
                failures += 1
                await asyncio.sleep(RECEIVE_RETRY_S)
                continue
            failures = 0
            kind = message.pop("type", None)
            if kind == "director.wake" and message.get("thread"):
                with context.from_wake(message, message["thread"]):  # its request id, on
                    engine.schedule(message["thread"])
            elif kind == "run.start":
                engine.spawn_run(Claim(**message))

    async def sweep_once(self, engine) -> None:
        orphaned, count = await engine.sweep_once()
        self.stdout.write(f"sweep: {count} threads recomputed, {orphaned} runs orphaned")
