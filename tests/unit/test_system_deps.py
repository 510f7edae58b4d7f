"""A fresh machine passes `make test` the first time: every make stage that needs a Debian
package depends on it, and scripts/system-deps.sh installs or names exactly what is missing."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "system-deps.sh"

# What each stage runs that needs a system package, and the packages it needs.
STAGES = {
    "test-unit": ("-m pytest", {"bubblewrap"}),
    "test-stack": ("tests.peers.stack", {"postgresql", "redis-server"}),
    "conformance": ("tests.peers.conformance", {"postgresql"}),
    "test-e2e": ("tests/e2e/test_", {"chromium"}),
    "bench": ("bench.streams", {"postgresql", "bubblewrap"}),
}


def dry_run(*targets: str) -> list[str]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    out = subprocess.run(
        [make, "-n", "-C", str(ROOT), *targets], capture_output=True, text=True, check=True
    ).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def installs(line: str) -> set[str]:
    match = re.match(r"bash scripts/system-deps\.sh( --optional)?((?: [a-z-]+)*)$", line)
    return set(match[2].split()) if match else set()


@pytest.mark.parametrize("stage", list(STAGES))
def test_each_stage_gets_its_system_packages_before_it_runs(stage):
    marker, needed = STAGES[stage]
    lines = dry_run(stage)
    first_use = next(i for i, line in enumerate(lines) if marker in line)
    before = set().union(*(installs(line) for line in lines[:first_use]))
    assert needed <= before, f"{stage} runs before {needed - before} is installed"


def test_make_test_installs_each_package_before_the_first_stage_that_needs_it():
    lines = dry_run("test")
    for marker, needed in STAGES.values():
        if marker == "bench.streams":
            continue  # not part of `make test`
        first_use = next(i for i, line in enumerate(lines) if marker in line)
        assert needed <= set().union(*(installs(line) for line in lines[:first_use])), marker


def test_make_run_only_recommends_bubblewrap():
    lines = dry_run("run")
    [line] = [line for line in lines if "system-deps.sh" in line]
    assert line == "bash scripts/system-deps.sh --optional bubblewrap"


@pytest.fixture
def fake_path(tmp_path):
    """A PATH holding only what the script uses, plus stand-ins for the named programs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("id", "find"):
        (bin_dir / tool).symlink_to(shutil.which(tool))

    def provide(*programs: str) -> dict[str, str]:
        for program in programs:
            stub = bin_dir / program
            stub.write_text("#!/bin/sh\n")
            stub.chmod(0o755)
        pg_bin = tmp_path / "pg"
        pg_bin.mkdir(exist_ok=True)
        if "initdb" in programs:
            (pg_bin / "initdb").symlink_to(bin_dir / "initdb")
        return {"PATH": str(bin_dir), "PG_BIN": str(pg_bin), "HOME": str(tmp_path)}

    return provide


def run_script(env, *args):
    bash = shutil.which("bash")
    return subprocess.run([bash, str(SCRIPT), *args], env=env, capture_output=True, text=True)


def test_nothing_to_do_when_every_program_is_there(fake_path):
    env = fake_path("bwrap", "chromium", "redis-server", "initdb")
    result = run_script(env)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_check_names_only_the_missing_packages_asked_for(fake_path):
    env = fake_path("chromium", "initdb")
    result = run_script(env, "--check", "bubblewrap", "chromium", "postgresql")
    assert result.returncode == 1
    assert "Missing Debian package: bubblewrap" in result.stderr
    assert "chromium" not in result.stderr.split("apt-get install")[-1]
    assert "redis-server" not in result.stderr  # not asked for


def test_optional_reports_and_goes_on(fake_path):
    result = run_script(fake_path(), "--check", "bubblewrap")
    assert result.returncode == 1
    if os.geteuid() != 0:
        result = run_script(fake_path(), "--optional", "bubblewrap")
        assert result.returncode == 0 and "bubblewrap" in result.stderr


def test_an_unknown_package_is_refused(fake_path):
    result = run_script(fake_path(), "--check", "emacs")
    assert result.returncode == 2 and "unknown package" in result.stderr
