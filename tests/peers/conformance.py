"""Run the official Durable Streams conformance suite against ``serve_streams``.

    python -m tests.peers.conformance --db sqlite --db postgres

For each database: a fresh database, ``manage.py migrate``, ``serve_streams``
on a free port with a 500 ms long-poll, then ``vitest run`` with
``tests/peers/vitest.conformance.config.mjs``. Exits non-zero unless every
database has at least :data:`REQUIRED_PASSES` passed and none failed.
"""

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from tests.peers import postgres
from tests.peers.embedded import ROOT, migrate, serve_streams

REQUIRED_PASSES = 332
CONFIG = "tests/peers/vitest.conformance.config.mjs"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    @classmethod
    def parse(cls, output: str) -> "Counts":
        """From vitest's summary line: ``Tests  2 failed | 330 passed | 6 skipped (338)``."""
        text = _ANSI.sub("", output)
        line = next((ln for ln in text.splitlines() if ln.strip().startswith("Tests ")), "")
        found = {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|skipped)", line)}
        return cls(**found)

    def ok(self) -> bool:
        return self.failed == 0 and self.passed >= REQUIRED_PASSES


def run_suite(base_url: str) -> tuple[Counts, str]:
    env = dict(os.environ, CONFORMANCE_TEST_URL=base_url, NO_COLOR="1", FORCE_COLOR="0")
    result = subprocess.run(
        [os.path.join(ROOT, "node_modules/.bin/vitest"), "run", "--config", CONFIG],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    output = result.stdout + result.stderr
    return Counts.parse(output), output


@contextlib.contextmanager
def database(kind: str, tmp: str, cluster: "postgres.PostgresCluster | None"):
    if kind == "sqlite":
        yield f"sqlite:///{tmp}/conformance.sqlite3"
    else:
        yield cluster.create_database()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", action="append", choices=["sqlite", "postgres"], default=[])
    args = parser.parse_args(argv)
    kinds = args.db or ["sqlite"]
    results: dict[str, Counts] = {}
    with contextlib.ExitStack() as stack:
        cluster = None
        if "postgres" in kinds:
            cluster = stack.enter_context(postgres.PostgresCluster())
        for kind in kinds:
            with (
                tempfile.TemporaryDirectory(prefix=f"arbe-conf-{kind}-") as tmp,
                database(kind, tmp, cluster) as url,
            ):
                migrate(url, tmp)
                with serve_streams(url, tmp, long_poll_ms=500) as server:
                    counts, output = run_suite(server.url)
            results[kind] = counts
            failures = [
                ln for ln in _ANSI.sub("", output).splitlines() if " × " in ln or "FAIL" in ln
            ]
            print(
                f"[{kind}] passed={counts.passed} failed={counts.failed} skipped={counts.skipped}"
            )
            for line in failures[:50]:
                print(f"[{kind}]   {line.strip()}")
            if counts.passed == 0:
                print(output[-3000:])
            sys.stdout.flush()
    ok = all(counts.ok() for counts in results.values())
    print("conformance:", "OK" if ok else f"FAILED (need >= {REQUIRED_PASSES} passed, 0 failed)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
