"""Free loopback ports and stopping processes by PID."""

import os
import signal
import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process {proc.pid} exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {timeout}s")


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM the process (its group when it leads one), then SIGKILL after ``timeout``."""
    if proc.poll() is not None:
        return
    try:
        target = os.getpgid(proc.pid) if os.getpgid(proc.pid) == proc.pid else None
    except ProcessLookupError:
        return
    sender = (lambda sig: os.killpg(target, sig)) if target else proc.send_signal
    sender(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        sender(signal.SIGKILL)
        proc.wait(5)


def wait_ready(url: str, timeout: float = 60.0, proc: subprocess.Popen | None = None) -> dict:
    """Poll ``url``'s ``/readyz`` until it answers 200; return its JSON. Fails with the
    last answer (which names the failing dependency) after ``timeout`` seconds."""
    import json
    import urllib.error
    import urllib.request

    deadline, last = time.monotonic() + timeout, "no answer"
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process {proc.pid} exited with {proc.returncode} before ready")
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=5) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            last = exc.read().decode(errors="replace")
        except OSError as exc:
            last = type(exc).__name__
        time.sleep(0.1)
    raise TimeoutError(f"{url}/readyz not ready within {timeout}s: {last}")
