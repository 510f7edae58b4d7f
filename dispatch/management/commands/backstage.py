"""The backstage worker: the 60 s status sweep (director wakes and supervision join it)."""

import signal
import threading

from django.core.management.base import BaseCommand
from django.db import close_old_connections

from threads.status_sync import sweep

SWEEP_INTERVAL_S = 60


class Command(BaseCommand):
    help = "Run backstage work: recompute threads stored as working or blocked every 60 s."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="one sweep, then exit")
        parser.add_argument("--interval", type=float, default=SWEEP_INTERVAL_S)

    def handle(self, *args, once=False, interval=SWEEP_INTERVAL_S, **options):
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        while True:
            try:
                count = sweep()
                self.stdout.write(f"sweep: {count} working/blocked threads recomputed")
            finally:
                close_old_connections()
            if once or stop.wait(interval):
                return
