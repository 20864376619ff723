# gmeter — every entry point a maintainer, submitter or CI needs.
# `make site` and `make test` set themselves up on a fresh machine (python3 >= 3.11 + make).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
GMETER := $(BIN)/gmeter
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help install site test test-all lint bench bench-scale browser clean check-submission publish site-identical

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 20

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "gmeter needs Python >= 3.11 (found $$($(PYTHON) --version))"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all,test]'
	$(BIN)/python -m pipeline.lab.aiq.gym_hook >/dev/null  # import gymnasium registers gmeter/*
	@# numba compiles the AIQ kernels on first use (~20 s); compile them once, here, into the
	@# seed each test worker's numba cache starts from (tests/conftest.py), instead of in every
	@# worker of a fresh checkout's first `make test`. Best effort: tests compile what is missing.
	NUMBA_CACHE_DIR=$(VENV)/numba-cache/seed $(BIN)/python -m pipeline.metrics.aiq.warmup \
	  >/dev/null || echo "could not compile the AIQ kernels ahead: the tests will compile them"
	touch $(STAMP)

install: $(STAMP)  ## create .venv and install gmeter with every extra and the test tools

site: install  ## validate, ingest, score and build public/ from submissions/ (gmeter site)
	$(GMETER) site --out public

# Test files run in parallel on every core (pytest-xdist); a file stays on one worker, so its
# module fixtures (built sites, stores) are made once. TEST_JOBS=0 runs them in this process.
TEST_JOBS ?= auto

test: install browser  ## the default test suite (no slow tests), in parallel
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadfile

test-all: install browser  ## every test, slow statistical ones included
	$(BIN)/python -m pytest -m '' -n $(TEST_JOBS) --dist loadfile

lint: install  ## ruff + mypy
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: install  ## speed benchmarks; writes bench/results.json and bench/RESULTS.md
	$(BIN)/python -m bench

bench-scale: install  ## the long 10,000-bundle x 20-release build (make bench keeps its last figures)
	$(BIN)/python -m bench --only scale

site-identical: install  ## rebuild public/ from the same store at REF and here; must be byte-identical
	$(BIN)/python tests/tools/site_identical.py --ref $${REF:-HEAD}

check-submission:  ## BASE's gmeter judges a pull request's tree as data (BASE=origin/main TREE=.)
	@base="$${BASE:-origin/main}"; tree="$${TREE:-.}"; report="$${REPORT:-check-report.md}"; \
	if git cat-file -e "$$base:.ci/check-submission" 2>/dev/null; then \
	  git show "$$base:.ci/check-submission" | bash -s -- "$$base" "$$report" "$$tree"; \
	else bash .ci/check-submission "$$base" "$$report" "$$tree"; fi

publish: site  ## what CI runs on main: the site, ready for GitHub Pages

browser:  # best effort: headless Chromium for the browser tests (they skip without it)
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	    || echo "could not install chromium: browser tests will be skipped"; \
	  else echo "chromium not found and not root: browser tests will be skipped"; fi; }
	@test -f tests/_vendor/node_modules/axe-core/axe.min.js || { \
	  if command -v npm >/dev/null 2>&1; then \
	    npm install --silent --no-audit --no-fund --prefix tests/_vendor axe-core@4 >/dev/null \
	    || echo "could not install axe-core: the accessibility test will be skipped"; \
	  else echo "npm not found: the accessibility test (axe-core) will be skipped"; fi; }

clean:  ## remove the venv, the store and the built site
	rm -rf $(VENV) .gmeter public/index.html public/*/ .pytest_cache .mypy_cache .ruff_cache
