# arbe — `make run` serves the demo on 127.0.0.1:8000; `make test` runs every check a release needs.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST := $(PY) -m pytest
PY_STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test bench deps system-deps lint test-unit test-stack conformance test-e2e clean

$(PY_STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $@

$(NODE_STAMP): package.json package-lock.json
	@# `npm ci` rejects this lock file: npm 11 leaves a Windows-only optional dependency
	@# (napi-windows-process-start-time) out of it. `npm install` honours the locked versions.
	npm install --no-audit --no-fund --loglevel=error
	@touch $@

deps: $(PY_STAMP) $(NODE_STAMP)

# Debian packages the test run needs (PostgreSQL is on the image; Redis and Chromium come from apt).
system-deps:
	@bash scripts/system-deps.sh

run: deps
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo
	DEBUG=$${DEBUG:-true} ARBE_INTERNAL_URL=$${ARBE_INTERNAL_URL:-http://$(HOST):$(PORT)} \
		$(VENV)/bin/daphne -b $(HOST) -p $(PORT) arbe_site.asgi:application

lint: $(PY_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The suite on the embedded configuration: SQLite, in-memory channel layer, embedded streams.
test-unit: deps
	$(PYTEST)

# The integration suite again on PostgreSQL + Redis + the reference Node stream server.
test-stack: deps system-deps
	$(PY) -m tests.peers.stack -- $(PYTEST) tests/integration

# The official Durable Streams conformance suite against the embedded server, SQLite and Postgres.
conformance: deps system-deps
	$(PY) -m tests.peers.conformance --db sqlite --db postgres

# Browser tests: Playwright on Debian's Chromium against a live Daphne, in their own pytest
# process (pytest-asyncio and Playwright's loop must not share one; anchors-web §5).
test-e2e: deps system-deps
	$(PYTEST) tests/e2e -p no:asyncio -W ignore::pytest.PytestConfigWarning

test: lint test-unit test-stack conformance test-e2e

bench: deps system-deps
	$(PY) -m bench.streams
	$(PY) -m bench.now
	$(PY) -m bench.fanout
	$(PY) -m bench.dispatch
	$(PY) -m bench.search

clean:
	rm -rf var/test*.sqlite3 .pytest_cache .ruff_cache
