"""A throw-away PostgreSQL cluster on a free loopback port, for tests and benchmarks.

    with PostgresCluster() as cluster:
        url = cluster.create_database("arbe_test")   # postgresql://postgres@127.0.0.1:PORT/arbe_test

or from a shell (prints ``DATABASE_URL=...`` and serves until SIGTERM or SIGINT):

    python -m tests.peers.postgres --database arbe

The cluster lives in a temp dir that is removed on stop. As root, initdb and
postgres run as the ``postgres`` user. It is stopped by the postmaster's PID,
never by name. ``durable=False`` (the default) turns fsync off: fine for tests,
wrong for benchmarks that compare durability costs (pass ``durable=True``).
"""

import argparse
import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import psycopg

from tests.peers.ports import free_port


def find_bin_dir() -> str:
    if os.environ.get("PG_BIN"):
        return os.environ["PG_BIN"]
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    if candidates:
        return candidates[-1]
    found = shutil.which("pg_ctl") or shutil.which("postgres")
    if found:
        return os.path.dirname(found)
    raise FileNotFoundError("no PostgreSQL binaries found (set PG_BIN)")


def available() -> bool:
    try:
        find_bin_dir()
    except FileNotFoundError:
        return False
    return True


class PostgresCluster:
    def __init__(self, *, durable: bool = False, bin_dir: str | None = None):
        self.durable = durable
        self.bin_dir = bin_dir or find_bin_dir()
        self.port: int | None = None
        self.tmp: str | None = None
        self.proc: subprocess.Popen | None = None
        self._as_postgres = os.geteuid() == 0

    # Lifecycle -----------------------------------------------------------

    def _command(self, *args: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *args] if self._as_postgres else list(args)

    def start(self) -> "PostgresCluster":
        self.tmp = tempfile.mkdtemp(prefix="arbe-pg-")
        data = os.path.join(self.tmp, "data")
        if self._as_postgres:
            user = pwd.getpwnam("postgres")
            os.chown(self.tmp, user.pw_uid, user.pw_gid)
        subprocess.run(
            self._command(
                f"{self.bin_dir}/initdb", "-D", data, "-U", "postgres", "--auth=trust",
                "-E", "UTF8", "--no-instructions",
            ),
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.port = free_port()
        self._spawn()
        return self

    def _spawn(self) -> None:
        data = os.path.join(self.tmp, "data")
        options = [
            "-c", "listen_addresses=127.0.0.1", "-p", str(self.port), "-k", self.tmp,
            "-c", "max_connections=200", "-c", "shared_buffers=64MB",
        ]  # fmt: skip
        if not self.durable:
            options += ["-c", "fsync=off", "-c", "full_page_writes=off"]
        self.proc = subprocess.Popen(
            self._command(f"{self.bin_dir}/postgres", "-D", data, *options),
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.tmp, "postgres.log"), "wb"),  # noqa: SIM115
            start_new_session=True,
        )
        self._wait_ready()

    def halt(self) -> None:
        """Stop the server (fast shutdown, by the postmaster's PID) and keep its data, so
        ``resume()`` brings it back on the same port (a database outage in a test)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.postmaster_pid() or self.proc.pid, signal.SIGINT)
            self.proc.wait(30)

    def resume(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self._spawn()

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited early; see {self.tmp}/postgres.log")
            try:
                with psycopg.connect(self.url("postgres"), connect_timeout=1):
                    return
            except psycopg.OperationalError:
                time.sleep(0.1)
        raise TimeoutError("postgres did not accept connections in time")

    def postmaster_pid(self) -> int | None:
        try:
            with open(os.path.join(self.tmp, "data", "postmaster.pid")) as fh:
                return int(fh.readline().strip())
        except (OSError, ValueError):
            return None

    def stop(self) -> None:
        """Fast shutdown (SIGINT to the postmaster's PID), then remove the cluster."""
        if self.proc is not None and self.proc.poll() is None:
            pid = self.postmaster_pid()
            try:
                os.kill(pid or self.proc.pid, signal.SIGINT)
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.kill(pid or self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
            except ProcessLookupError:
                pass
        self.proc = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self) -> "PostgresCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # Databases -----------------------------------------------------------

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """Create a database (a random name by default) and return its URL."""
        return create_database(self.url("postgres"), name)


def postgres_server(*, durable: bool = False) -> PostgresCluster:
    """The cluster as a context manager: ``with postgres_server() as pg: pg.create_database()``."""
    return PostgresCluster(durable=durable)


def create_database(server_url: str, name: str | None = None) -> str:
    """Create ``name`` on the server of ``server_url``; return the new database's URL."""
    name = name or f"arbe_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = server_url.rpartition("/")
    return f"{base}/{name}"


def drop_database(url: str) -> None:
    base, _, name = url.rpartition("/")
    name = name.split("?", 1)[0]
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", action="append", default=[], help="create this database")
    parser.add_argument("--durable", action="store_true", help="keep fsync on")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    with PostgresCluster(durable=args.durable) as cluster:
        for name in args.database:
            print(f"DATABASE_URL={cluster.create_database(name)}", flush=True)
        print(f"POSTGRES_URL={cluster.url('postgres')}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    return 0


def _interrupt(*_):
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
