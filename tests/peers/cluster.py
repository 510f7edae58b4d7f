"""The scaled configuration as separate processes, each one killable: PostgreSQL, Redis, a
stream server (the reference Node server or the embedded ``serve_streams``; or none, with
``streams="inprocess"``: every process serves the streams itself on the shared PostgreSQL), N
Daphne web processes and M ``manage.py backstage`` workers, every one on a free loopback port.

Used by the fault suite (tests/faults), the cross-process tests and ``bench.fanout
--cluster``. Each process is a ``Proc``: ``kill()`` sends SIGKILL to its PID (never by
name), ``start()`` brings it back on the same port with the same data, so a test can
fail one piece and watch the rest recover::

    with Cluster(web=2, workers=2) as cluster:
        cluster.manage("seed_demo")
        cluster.web[0].url, cluster.web[1].url
        cluster.web[0].kill(); cluster.web[0].start()
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.peers.ports import free_port, stop, wait_for_port, wait_ready
from tests.peers.postgres import PostgresCluster

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


@dataclass
class Proc:
    """One process of the cluster: started, killed and restarted by its PID, same port."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    port: int | None = None
    popen: subprocess.Popen | None = field(default=None, repr=False)
    starts: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def start(self, *, wait: bool = True) -> Proc:
        if self.alive:
            return self
        with self.log.open("ab") as out:  # a file, not a pipe nobody drains
            out.write(f"--- start {self.starts + 1} ---\n".encode())
            out.flush()
            self.popen = subprocess.Popen(
                self.argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, preexec_fn=_raise_fd_limit,
            )  # fmt: skip
        self.starts += 1
        if wait and self.port is not None:
            wait_for_port(self.port, timeout=60, proc=self.popen)
        return self

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the process group (kill -9 by default) and reap it."""
        if not self.alive:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)
        self.popen.wait(30)

    def stop(self) -> None:
        if self.popen is not None:
            stop(self.popen)

    def tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class Cluster:
    """PostgreSQL + Redis + a stream server + ``web`` Daphnes + ``workers`` backstage workers."""

    def __init__(
        self,
        *,
        web: int = 2,
        workers: int = 2,
        streams: str = "reference",
        sweep_s: int = 60,
        var_dir: str | None = None,
        extra_env: dict[str, str] | None = None,
        internal_url: str | None = None,
    ) -> None:
        if streams not in ("reference", "embedded", "inprocess"):
            raise ValueError("streams is 'reference', 'embedded' or 'inprocess'")
        self.streams_kind = streams
        self.n_web, self.n_workers, self.sweep_s = web, workers, sweep_s
        self._own_var = var_dir is None
        self.var_dir = Path(var_dir or tempfile.mkdtemp(prefix="arbe-cluster-"))
        self.extra_env = extra_env or {}
        self.internal_url = internal_url
        self.pg: PostgresCluster | None = None
        self.database_url = ""
        self.redis: Proc | None = None
        self.streams: Proc | None = None
        self.web: list[Proc] = []
        self.workers: list[Proc] = []

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> Cluster:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.var_dir.mkdir(parents=True, exist_ok=True)
        self.pg = PostgresCluster().start()
        self.database_url = self.pg.create_database("arbe")
        self.redis = self._redis().start()
        web_ports = [free_port() for _ in range(self.n_web)]
        first_web = f"http://127.0.0.1:{web_ports[0]}" if web_ports else "http://127.0.0.1:8000"
        self.env = self._env(internal_url=self.internal_url or first_web)
        self.manage("migrate", "--noinput", "-v0")
        if self.streams_kind == "inprocess":
            # Each Daphne serves the streams itself on the shared PostgreSQL; LISTEN/NOTIFY
            # wakes a long-poll in one process for an append made in another.
            self.env["DURABLE_STREAMS_URL"] = ""
        else:
            self.streams = self._streams().start()
            self.env["DURABLE_STREAMS_URL"] = self.streams.url
        for n, port in enumerate(web_ports, start=1):
            self.web.append(self._daphne(n, port))
        for n in range(1, self.n_workers + 1):
            self.workers.append(self._worker(n))
        for proc in self.web:
            proc.start(wait=False)
        for proc in self.workers:
            proc.start(wait=False)
        for proc in self.web:
            wait_for_port(proc.port, timeout=60, proc=proc.popen)
        self.wait_ready()

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Every web process's and worker's ``/readyz`` answers 200 (each dependency up)."""
        for proc in [*self.web, *self.workers]:
            if proc.alive:
                wait_ready(proc.url, timeout=timeout, proc=proc.popen)

    def stop(self) -> None:
        for proc in [*self.workers, *self.web, self.streams, self.redis]:
            if proc is not None:
                proc.stop()
        if self.pg is not None:
            self.pg.stop()
            self.pg = None
        if self._own_var and not os.environ.get("ARBE_KEEP_CLUSTER"):
            shutil.rmtree(self.var_dir, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the pieces --------------------------------------------------------------------

    def _env(self, *, internal_url: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        env.update(
            DJANGO_SETTINGS_MODULE="arbe_site.settings",
            ARBE_VAR_DIR=str(self.var_dir),
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis.url.replace("http://", "redis://") + "/0",
            BACKSTAGE="worker",
            BACKSTAGE_SWEEP_S=str(self.sweep_s),
            # Shared by every process: sessions, tokens and sandbox JWTs cross them.
            SECRET_KEY=secrets.token_urlsafe(48),
            DURABLE_STREAMS_SECRET=secrets.token_urlsafe(32),
            DEMO_MODEL_SECRET=secrets.token_urlsafe(32),
            ARBE_INTERNAL_URL=internal_url,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            DEBUG="false",
            PI_HOME=str(self.var_dir / "pi"),
            PYTHONUNBUFFERED="1",
        )
        env.update(self.extra_env)
        return env

    def _redis(self) -> Proc:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (make system-deps installs it)")
        port = free_port()
        workdir = self.var_dir / "redis"
        workdir.mkdir(exist_ok=True)
        argv = [
            binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(workdir), "--protected-mode", "yes",
        ]  # fmt: skip
        return Proc("redis", argv, dict(os.environ), self.var_dir / "redis.log", port)

    def _streams(self) -> Proc:
        port = free_port()
        if self.streams_kind == "reference":
            data = self.var_dir / "streams"
            data.mkdir(exist_ok=True)
            node = shutil.which("node") or "node"
            argv = [node, str(ROOT / "tests/peers/reference_server.mjs"), str(port), str(data)]
            return Proc("streams", argv, {**os.environ}, self.var_dir / "streams.log", port)
        argv = [
            sys.executable, "manage.py", "serve_streams", "--host", "127.0.0.1",
            "--port", str(port),
        ]  # fmt: skip
        env = {k: v for k, v in self.env.items() if k != "DURABLE_STREAMS_URL"}
        return Proc("streams", argv, env, self.var_dir / "streams.log", port)

    def _daphne(self, n: int, port: int) -> Proc:
        argv = [
            sys.executable, "-m", "arbe_site.web", "-b", "127.0.0.1", "-p", str(port),
            "arbe_site.asgi:application",
        ]  # fmt: skip
        return Proc(f"web{n}", argv, dict(self.env), self.var_dir / f"web{n}.log", port)

    def _worker(self, n: int) -> Proc:
        port = free_port()  # its health port: /healthz, /readyz, /metrics
        argv = [
            sys.executable, "manage.py", "backstage", "--interval", str(self.sweep_s),
            "--health-port", str(port),
        ]  # fmt: skip
        return Proc(f"worker{n}", argv, dict(self.env), self.var_dir / f"worker{n}.log", port)

    # -- helpers -----------------------------------------------------------------------

    def manage(self, *args: str, check: bool = True) -> str:
        """Run a ``manage.py`` command with the cluster's environment; return its stdout."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
            capture_output=True, text=True,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-4000:]}")
        return done.stdout

    def procs(self) -> list[Proc]:
        return [p for p in (self.redis, self.streams, *self.web, *self.workers) if p is not None]

    def logs(self, chars: int = 3000) -> str:
        """The end of every process's log, for a failing test's message."""
        return "\n".join(f"== {p.name} ==\n{p.tail(chars)}" for p in self.procs())

    def world(self, *, people: int = 2, bot: bool = True, threads: int = 1) -> dict:
        """A house with ``people`` members (each with an API token and a signed-in session
        key for sockets and pages), a demo-model bot and ``threads`` threads, made in the
        cluster's database; returned as plain data."""
        code = _WORLD.format(people=people, bot=bot, threads=threads, tag=secrets.token_hex(3))
        return json.loads(self.manage("shell", "-c", code).strip().splitlines()[-1])


_WORLD = """
import json
from houses.models import ApiToken
from tests.factories import make_bot, make_house, make_user
from threads.lifecycle import create_thread
people = [make_user(f"p{{n}}-{tag}") for n in range({people})]
house = make_house("h-{tag}", owner=people[0], members=people[1:])
bot = make_bot(house, "helper") if {bot} else None
owner = people[0].agent
threads = [create_thread(house=house, title=f"T{{n}}", by=owner) for n in range({threads})]
tokens = [ApiToken.issue(user, "cluster")[1] for user in people]
from django.conf import settings
from django.contrib import auth
from django.contrib.sessions.backends.db import SessionStore
sessions = []
for user in people:
    session = SessionStore()
    session[auth.SESSION_KEY] = str(user.pk)
    session[auth.BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
    session[auth.HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    sessions.append(session.session_key)
print(json.dumps({{"house": house.slug, "threads": [t.id for t in threads], "tokens": tokens,
    "sessions": sessions, "usernames": [u.username for u in people],
    "agents": [u.agent.id for u in people], "bot": bot.handle if bot else None}}))
"""
