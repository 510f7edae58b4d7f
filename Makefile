# arbe — `make run` serves the demo on 127.0.0.1:8000; `make test` runs every check a release needs.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST := $(PY) -m pytest
PY_STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# Test processes per suite (pytest-xdist): the suites wait on sockets, Pi and servers more
# than they compute, so three share two cores well.
TEST_WORKERS ?= 3

.PHONY: run test test-cluster faults bench bench-smoke deps system-deps lint test-unit test-stack conformance test-e2e clean FORCE \
	screenshots scale

$(PY_STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $@

$(NODE_STAMP): package.json package-lock.json
	@# `npm ci` installs exactly the lock file and never rewrites it, so a fresh clone stays clean.
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

deps: $(PY_STAMP) $(NODE_STAMP)

# Debian packages: each stage below depends on the ones it needs (`system-dep-<package>`), so a
# fresh machine passes `make test` the first time; as root they are installed, otherwise named.
# `make system-deps` installs all of them.
system-deps:
	@bash scripts/system-deps.sh bubblewrap chromium postgresql redis-server

system-dep-%: FORCE
	@bash scripts/system-deps.sh $*

FORCE:

# Pi runs in bubblewrap where it is available: installed when root, otherwise only a note.
run: deps
	@bash scripts/system-deps.sh --optional bubblewrap
	$(PY) manage.py migrate --noinput
	@# Seeds the demo and serves; the demo logins come last, once the server listens.
	DEBUG=$${DEBUG:-true} ARBE_INTERNAL_URL=$${ARBE_INTERNAL_URL:-http://$(HOST):$(PORT)} \
		$(PY) scripts/run_demo.py --host $(HOST) --port $(PORT)

# The scaled configuration on this machine: PostgreSQL, Redis and the reference stream server on
# free loopback ports, then the Procfile under honcho (2 Daphnes from PORT, 2 backstage workers).
scale: deps system-dep-postgresql system-dep-redis-server
	$(PY) scripts/scale.py --port $(PORT) --web $${WEB:-2} --workers $${WORKERS:-2}

lint: $(PY_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The suite on the embedded configuration: SQLite, in-memory channel layer, embedded streams.
# bubblewrap: tests/unit/test_pi_config.py builds and checks Pi's sandbox command line;
# redis-server: the presence test starts one (two channel layers, as two Daphnes have).
test-unit: deps system-dep-bubblewrap system-dep-redis-server
	$(PYTEST) -n $(TEST_WORKERS)

# The integration suite again on PostgreSQL + Redis + the reference Node stream server.
test-stack: deps system-dep-postgresql system-dep-redis-server
	$(PY) -m tests.peers.stack -- $(PYTEST) -n $(TEST_WORKERS) tests/integration

# Two Daphnes and two backstage workers as separate processes on PostgreSQL, Redis and the
# reference stream server: what only crosses processes (tests/faults/test_across_processes.py),
# and operating that layout: readiness, metrics, JSON logs, a backup restored and checked
# (tests/faults/test_operations.py, docs/operations.md).
test-cluster: deps system-dep-postgresql system-dep-redis-server system-dep-chromium
	$(PYTEST) tests/faults/test_across_processes.py tests/faults/test_operations.py
	@# Browsers in a pytest process of their own (Playwright's loop breaks async tests).
	$(PYTEST) tests/e2e/cluster -p no:asyncio -W ignore::pytest.PytestConfigWarning

# Faults on the scaled configuration as separate processes (tests.peers.cluster): a Daphne,
# the stream server and Redis killed or restarted mid-work, racing status writers.
# ARBE_FAULTS_REPORT=file collects each test's figures as JSON lines (docs/reliability.md).
# FAULTS_SIZE=ci (.ci/run) runs each fault smaller, every commit, and leaves out the
# cross-process tests `make test` ran (tests/faults/sizes.py; docs/reliability.md).
FAULTS_SIZE ?= full
faults: deps system-dep-postgresql system-dep-redis-server
	ARBE_FAULTS_SIZE=$(FAULTS_SIZE) $(PYTEST) tests/faults -p no:randomly \
		$(if $(filter ci,$(FAULTS_SIZE)),--ignore=tests/faults/test_across_processes.py \
			--ignore=tests/faults/test_operations.py)

# The official Durable Streams conformance suite against the embedded server, SQLite and Postgres.
conformance: deps system-dep-postgresql
	$(PY) -m tests.peers.conformance --db sqlite --db postgres

# Browser tests: Playwright on Debian's Chromium against a live Daphne, in their own pytest
# process (pytest-asyncio and Playwright's loop must not share one; anchors-web §5).
# One pytest process per module: a live server forked once Playwright runs (a second test
# class in the same process) never answers.
test-e2e: deps system-dep-chromium
	for module in tests/e2e/test_*.py; do \
		$(PYTEST) $$module -p no:asyncio -W ignore::pytest.PytestConfigWarning || exit 1; \
	done

test: lint test-unit test-stack test-cluster conformance test-e2e

# PostgreSQL for the stream benchmarks; bubblewrap so bench.dispatch measures Pi as it runs.
bench: deps system-dep-postgresql system-dep-bubblewrap system-dep-redis-server
	$(PY) -m bench.streams
	$(PY) -m bench.now
	$(PY) -m bench.pages
	$(PY) -m bench.fanout
	$(PY) -m bench.dispatch
	$(PY) -m bench.search
	$(PY) -m bench.leases
	$(PY) -m bench.fanout --cluster
	$(PY) -m bench.hostile
	$(PY) -m bench.imports

# Every benchmark in a quick mode (seconds each, at sizes that say nothing about the targets):
# a benchmark that no longer runs fails here, on every commit (.ci/run), not months later in
# `make bench`. The numbers are printed; nothing about speed is asserted. Each run's wall time
# and the total are printed at the end.
SMOKE_TIMES := var/bench-smoke.times
TIMED := bash scripts/timed.sh $(SMOKE_TIMES)
bench-smoke: deps system-dep-postgresql system-dep-bubblewrap system-dep-redis-server
	@mkdir -p var && rm -f $(SMOKE_TIMES)
	$(TIMED) $(PY) -m bench.streams --quick
	$(TIMED) $(PY) -m bench.now --quick
	$(TIMED) $(PY) -m bench.pages --quick
	$(TIMED) $(PY) -m bench.fanout --quick
	$(TIMED) $(PY) -m bench.dispatch --quick
	$(TIMED) $(PY) -m bench.search --quick
	$(TIMED) $(PY) -m bench.leases --quick
	$(TIMED) $(PY) -m bench.fanout --cluster --quick
	$(TIMED) $(PY) -m bench.hostile --quick
	$(TIMED) $(PY) -m bench.imports --quick
	@awk -F'\t' '{ printf "%7.1f s  %s\n", $$1, $$2; total += $$1 } \
		END { printf "%7.1f s  bench-smoke in all\n", total }' $(SMOKE_TIMES)

# The README's pictures: a fresh demo in a throw-away ARBE_VAR_DIR, Daphne on a free loopback
# port, one bot reply, PNGs by Playwright on Debian's Chromium into docs/screenshots/.
screenshots: deps system-dep-chromium system-dep-fonts-noto-color-emoji
	$(PY) scripts/screenshots.py

clean:
	rm -rf var/test*.sqlite3 .pytest_cache .ruff_cache
