# chitta: `make run` sets up and starts chitta on the default store; `make test` sets up and tests.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
EXPORT_STAMP := $(VENV)/.installed-export

.PHONY: install install-export browser run test test-export test-peers test-fresh test-e2e lint \
        format bench soak clean

$(PY):
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or make PYTHON=/path/to/python3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

# Reinstalls only when pyproject.toml changes.
$(STAMP): pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[bench,code,dev]'
	touch $@

install: $(STAMP)

# torch first and pinned: any other spelling pulls a multi-GB CUDA build.
$(EXPORT_STAMP): $(STAMP)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[export]'
	touch $@

install-export: $(EXPORT_STAMP)

run: install
	$(VENV)/bin/chitta init
	$(VENV)/bin/chitta serve

# Debian's chromium for the HTML report's browser test; does nothing when it is installed.
browser:
	.ci/install-chromium

test: install browser
	$(PY) -m pytest -q

test-peers: install
	$(PY) -m pytest -q -m peers

test-export: install-export
	$(PY) -m pytest -q -m export

# Builds the wheel and sdist from a clone of HEAD, installs each into a new venv, and runs the
# README's first lines from a fresh clone (pip's cache keeps it to minutes).
test-fresh: install
	$(PY) -m pytest -q -m fresh

# The real Claude Code client against a loopback model stand-in (tests/e2e). Claude Code comes
# from the npm registry at the pinned version, into .e2e/ of the checkout, never globally; if
# npm cannot reach its registry, the tests say so and skip.
CLAUDE_CODE_VERSION := $(shell cat tests/e2e/claude-code-version)
E2E_PREFIX := .e2e
CLAUDE := $(E2E_PREFIX)/node_modules/.bin/claude

test-e2e: install
	@if [ "$$($(CLAUDE) --version 2>/dev/null | cut -d' ' -f1)" != "$(CLAUDE_CODE_VERSION)" ]; then \
	  if command -v npm >/dev/null 2>&1; then \
	    echo "npm install @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) into $(E2E_PREFIX)"; \
	    npm install --prefix $(E2E_PREFIX) --no-save --no-audit --no-fund \
	      @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) || echo "npm install failed"; \
	  else echo "npm is not on PATH"; fi; \
	fi
	$(PY) -m pytest -q -m e2e

lint: install
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

format: install
	$(VENV)/bin/ruff format src tests benchmarks
	$(VENV)/bin/ruff check --fix src tests benchmarks

# Store sizes for `make bench`, e.g. make bench BENCH_N=10000,100000 (docs/benchmarks.md).
BENCH_N ?= 10000
bench: install
	$(VENV)/bin/chitta bench scale --n $(BENCH_N)

# Seconds of hostile load for `make soak` (docs/benchmarks.md, "Hostile load on the daemon").
SOAK_S ?= 300
soak: install
	$(VENV)/bin/chitta bench soak --duration $(SOAK_S)

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache
