"""``make run``'s last step: seed the demo house, start the web process, and print the demo
logins once the server listens and its start-up lines are out, so the logins are the last
thing on the screen (not buried under Daphne's and the backstage's first lines).

    python scripts/run_demo.py --host 127.0.0.1 --port 8000

The server's output is relayed line by line; Ctrl-C reaches the server (same process group),
and this script exits with the server's code.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUIET_S = 1.0  # start-up is over once the server has printed nothing for this long…
MOST_S = 20.0  # …or this long after it listens, whatever it still prints
LISTENING = b"Listening on TCP address"  # what Daphne prints once it listens


class Relay(threading.Thread):
    """Copies the server's output to ours, noting when the last line came."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream, self.last = stream, time.monotonic()
        self.lock = threading.Lock()
        # Daphne's own "listening" line was relayed. The port accepts connections a moment
        # before Daphne prints it, and on a busy machine the lines before it may be older
        # than QUIET_S: without this the logins could come out above it.
        self.heard_listening = False

    def run(self) -> None:
        for line in iter(self.stream.readline, b""):
            with self.lock:
                sys.stdout.buffer.write(line)
                sys.stdout.flush()
                self.last = time.monotonic()
                self.heard_listening = self.heard_listening or LISTENING in line

    def say(self, text: str) -> None:
        with self.lock:
            sys.stdout.write(text)
            sys.stdout.flush()


def listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    url = f"http://{args.host}:{args.port}/"
    seeded = subprocess.run(
        [sys.executable, "manage.py", "seed_demo", "--url", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    sys.stderr.write(seeded.stderr)
    if seeded.returncode:
        sys.stdout.write(seeded.stdout)
        return seeded.returncode
    status, _, logins = seeded.stdout.partition("\n")
    print(status, flush=True)
    server = subprocess.Popen(
        [sys.executable, "-m", "arbe_site.web", "-b", args.host, "-p", str(args.port)]
        + ["arbe_site.asgi:application"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    relay = Relay(server.stdout)
    relay.start()
    try:
        while server.poll() is None and not listening(args.host, args.port):
            time.sleep(0.1)
        up = time.monotonic()
        while server.poll() is None:
            now = time.monotonic()
            quiet = relay.heard_listening and now - relay.last >= QUIET_S
            if quiet or now - up >= MOST_S:
                relay.say("\n" + logins)
                break
            time.sleep(0.1)
        return server.wait()
    except KeyboardInterrupt:  # the server got the same Ctrl-C: let it finish
        try:
            return server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            return server.wait()
    finally:
        relay.join(timeout=2)


if __name__ == "__main__":
    sys.exit(main())
