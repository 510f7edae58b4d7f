"""A throw-away Redis server on a free loopback port, stopped by its PID."""

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

from tests.peers.ports import free_port, stop, wait_for_port


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """Run ``redis-server`` without persistence; yield its ``redis://`` URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (make system-deps installs it)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="arbe-redis-") as workdir:
        proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                workdir,
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for_port(port, proc=proc)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            stop(proc)
