"""Back up a running arbe stack, restore it into a scratch stack, and check the copy.

    python scripts/backup_restore.py [all|backup|check] --out DIR [--streams-dir DIR] [--keep]

The stack is the one this environment names, as for ``manage.py``: ``DATABASE_URL``
(PostgreSQL), ``DURABLE_STREAMS_URL``/``DURABLE_STREAMS_SECRET`` and ``ARBE_VAR_DIR``
(attachments on the filesystem). ``--streams-dir`` is the reference Node server's data
directory; without it the streams are taken to live in the database (``serve_streams``).
That server's files are a consistent copy only while it is stopped (or from a volume
snapshot): stop it for ``backup``, start it again, then ``check``. With the streams in the
database, ``pg_dump`` alone is consistent and ``all`` runs both phases on a live stack.

1. backup into ``--out``: ``pg_dump -Fc`` of the database first, then the stream
   server's files, then the attachments directory (in that order: a log may run ahead of
   the database's caches, which the sweep and ``reindex_search`` repair, but no thread
   may lack its log);
2. restore into a scratch stack on free loopback ports: a throw-away PostgreSQL cluster
   (``pg_restore``), the stream server on the restored files (or ``serve_streams`` on the
   restored database), the attachments in a scratch var dir;
3. ``manage.py check_restore`` against the live stack: people, houses, bots, threads,
   attachments and every thread's entries must match.

Scratch processes are stopped by their PIDs and removed (``--keep`` keeps the files).
docs/operations.md walks through the same steps by hand.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.peers.ports import free_port, stop, wait_for_port  # noqa: E402
from tests.peers.postgres import PostgresCluster  # noqa: E402

PARTS = {
    "database": "database.dump",
    "streams": "streams.tar.gz",
    "attachments": "attachments.tar.gz",
}


def backup(out: Path, env: dict[str, str], streams_dir: Path | None) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    made = {"database": out / PARTS["database"]}
    pg_dump = _pg_tool("pg_dump")
    subprocess.run(
        [pg_dump, "--format=custom", "--no-owner", "--file", str(made["database"]),
         env["DATABASE_URL"]],
        check=True,
    )  # fmt: skip
    if streams_dir is not None:
        made["streams"] = _tar(out / PARTS["streams"], streams_dir)
    attachments = Path(env["ARBE_VAR_DIR"]) / "attachments"
    if attachments.is_dir():
        made["attachments"] = _tar(out / PARTS["attachments"], attachments)
    return made


def restore_and_check(made: dict[str, Path], env: dict[str, str], keep: bool) -> str:
    scratch = Path(tempfile.mkdtemp(prefix="arbe-restore-"))
    pg = PostgresCluster().start()
    streams = None
    try:
        url = pg.create_database("arbe_restored")
        subprocess.run(
            [_pg_tool("pg_restore"), "--no-owner", "--exit-on-error", "--dbname", url,
             str(made["database"])],
            check=True,
        )  # fmt: skip
        scratch_env = {**env, "DATABASE_URL": url, "ARBE_VAR_DIR": str(scratch / "var")}
        # The code may be newer than the backup: migrate brings the copy up to it.
        _manage(scratch_env, "migrate", "--noinput", "-v0")
        port = free_port()
        if "streams" in made:
            data = scratch / "streams"
            _untar(made["streams"], data)
            argv = [shutil.which("node") or "node", str(ROOT / "tests/peers/reference_server.mjs"),
                    str(port), str(data)]  # fmt: skip
        else:
            argv = [sys.executable, "manage.py", "serve_streams", "--host", "127.0.0.1",
                    "--port", str(port)]  # fmt: skip
        streams = subprocess.Popen(
            argv, cwd=ROOT, env={**scratch_env, "DURABLE_STREAMS_URL": ""},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        wait_for_port(port, timeout=60, proc=streams)
        check = ["check_restore", "--other-database", url,
                 "--other-streams-url", f"http://127.0.0.1:{port}"]  # fmt: skip
        if "attachments" in made:
            files = scratch / "var" / "attachments"
            _untar(made["attachments"], files)
            check += ["--other-attachments", str(files)]
        return _manage(env, *check)
    finally:
        if streams is not None:
            stop(streams)
        pg.stop()
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def _pg_tool(name: str) -> str:
    from tests.peers.postgres import find_bin_dir

    found = Path(find_bin_dir()) / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def _tar(target: Path, source: Path) -> Path:
    with tarfile.open(target, "w:gz") as archive:
        archive.add(source, arcname=".")
    return target


def _untar(archive: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as opened:
        opened.extractall(target, filter="data")


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"manage.py {args[0]} failed:\n{done.stdout}{done.stderr[-4000:]}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "phase", nargs="?", choices=("all", "backup", "check"), default="all",
        help="backup, then check (the default); or one of them",
    )  # fmt: skip
    parser.add_argument("--out", required=True, type=Path, help="the backup's directory")
    parser.add_argument("--streams-dir", type=Path, help="the reference server's data dir")
    parser.add_argument("--keep", action="store_true", help="keep the scratch files")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    for name in ("DATABASE_URL", "ARBE_VAR_DIR"):
        if not env.get(name):
            parser.error(f"{name} must name the stack to back up")
    if args.phase in ("all", "backup"):
        made = backup(args.out, env, args.streams_dir)
        print("backup: " + ", ".join(f"{k} {v}" for k, v in made.items()), flush=True)
    if args.phase in ("all", "check"):
        made = {k: args.out / v for k, v in PARTS.items() if (args.out / v).exists()}
        if "database" not in made:
            parser.error(f"no backup in {args.out}")
        print(restore_and_check(made, env, args.keep), end="", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
