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
