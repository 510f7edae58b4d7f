"""``var/`` is the owner's only: the directory 0700, the SQLite file (session keys) and its
-wal/-shm and the generated secrets 0600, when created under a permissive umask and when an
older install left them readable."""

import os
import stat
import subprocess
import sys
from pathlib import Path

from arbe_lib.env import private_dir

ROOT = Path(__file__).resolve().parents[2]
SECRETS = ("secret_key", "durable_streams_secret", "demo_model_secret")
# Writes a row in WAL mode and, with the connection still open (so -wal and -shm exist),
# prints each file's mode.
WRITE_AND_LIST = """
import django, os, stat
django.setup()
from django.conf import settings
from django.db import connection
with connection.cursor() as c:
    c.execute("CREATE TABLE IF NOT EXISTS probe (x)")
    c.execute("INSERT INTO probe VALUES (1)")
    for path in sorted(settings.VAR_DIR.iterdir()):
        print(path.name, oct(stat.S_IMODE(path.stat().st_mode)))
print(".", oct(stat.S_IMODE(settings.VAR_DIR.stat().st_mode)))
"""


def start(var_dir: Path) -> dict[str, str]:
    """A fresh process with the embedded defaults and a permissive umask (022)."""
    env = dict.fromkeys(("DATABASE_URL", "REDIS_URL", "DURABLE_STREAMS_URL"), "")
    env |= dict.fromkeys(("SECRET_KEY", "DURABLE_STREAMS_SECRET", "DEMO_MODEL_SECRET"), "")
    env |= {"ARBE_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "arbe_site.settings"}
    result = subprocess.run(
        [sys.executable, "-c", WRITE_AND_LIST],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert result.returncode == 0, result.stderr
    return dict(line.split() for line in result.stdout.splitlines())


def test_a_fresh_var_dir_is_the_owners_only(tmp_path):
    var_dir = tmp_path / "var"
    modes = start(var_dir)
    assert modes["."] == "0o700"
    for name in ("arbe.sqlite3", "arbe.sqlite3-wal", "arbe.sqlite3-shm", *SECRETS):
        assert modes[name] == "0o600", (name, modes)
    assert modes["attachments"] == "0o700"  # uploaded files (docs/attachments.md)


def test_an_old_install_is_tightened_on_start(tmp_path):
    var_dir = tmp_path / "var"
    start(var_dir)
    os.chmod(var_dir, 0o755)
    for path in var_dir.iterdir():
        path.chmod(0o644)
    (var_dir / "arbe.sqlite3-wal").touch(mode=0o644)  # left by a process that died
    os.chmod(var_dir / "arbe.sqlite3-wal", 0o644)
    modes = start(var_dir)
    assert modes["."] == "0o700"
    dirs = (".", "attachments")
    assert all(mode == "0o600" for name, mode in modes.items() if name not in dirs), modes
    assert modes["attachments"] == "0o700"


def test_a_shared_directory_named_by_mistake_is_left_alone(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    private_dir(shared)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
