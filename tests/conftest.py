from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path

import pytest
from hypothesis import settings

from evalcore.sst2.rows import DATA_ENV

# Fuzzing budgets. "ci" is the default and is derandomized, so a CI run is repeatable;
# "deep" (HYPOTHESIS_PROFILE=deep) is for a long local search with fresh random inputs.
settings.register_profile("ci", max_examples=300, derandomize=True, deadline=None, print_blob=True)
settings.register_profile("deep", max_examples=5_000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config: pytest.Config) -> None:
    """Give Ctrl-C back to a test process that was started with SIGINT ignored.

    A non-interactive shell starts a command sent to the background (``make test &`` in a
    script) with SIGINT ignored; Python then installs no handler, and every command the tests
    start inherits the ignored signal. The tests that press Ctrl-C stand for a user at a
    terminal, where SIGINT raises ``KeyboardInterrupt``: without this they would fail, and
    the runs they start would not see the signal at all. A process whose SIGINT has a
    handler starts its commands with the default, so this also reaches them.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def sst2_dir() -> Path:
    value = os.environ.get(DATA_ENV)
    if not value or not Path(value, "dev.tsv").is_file():
        # A missing data directory is a set-up error, not a reason to skip: fail loudly.
        raise RuntimeError(f"${DATA_ENV} must point at GLUE's SST-2 files for these tests (got {value!r})")
    return Path(value)


@pytest.fixture(scope="session")
def validation(sst2_dir):
    from evalcore.sst2.rows import load_split

    return load_split("validation")


@pytest.fixture(scope="session")
def train(sst2_dir):
    from evalcore.sst2.rows import load_split

    return load_split("train")


@pytest.fixture(scope="session")
def model_and_tokenizer():
    from evalcore.models.loader import load_model

    return load_model()


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, sst2_dir):
    """A real smoke run (4 items independent, 2 official), written to disk."""
    from evalcore.workflow.run import execute_run

    return execute_run(tmp_path_factory.mktemp("smoke"), smoke=True)


@pytest.fixture(scope="session")
def unsorted_run(tmp_path_factory, sst2_dir):
    """A real run of three dev items passed to the harness unsorted (the doc_id bug path)."""
    from evalcore.sst2.selection import dev_ids
    from evalcore.workflow.run import execute_run

    return execute_run(tmp_path_factory.mktemp("unsorted"), ids=dev_ids()[:3], sort_ids=False)


MODEL_FIXTURES = {"model_and_tokenizer", "smoke_run", "unsorted_run"}
"""Fixtures that load the real model; a test using one (directly or through another fixture) is a model test."""


def pytest_collection_modifyitems(config, items):
    # `make unit` deselects the model marker to stay fast; a model test without the marker would
    # silently make it slow, so an unmarked one is a collection error, not a convention.
    unmarked = [
        item.nodeid
        for item in items
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())) and item.get_closest_marker("model") is None
    ]
    if unmarked:
        raise pytest.UsageError(f"tests load the real model without @pytest.mark.model: {unmarked}")


@pytest.fixture(scope="session")
def site_loads() -> Path:
    """Where this run of the site check keeps each page's measured load (scripts/page_weight.py):
    one folder per run, shared by pytest-xdist's workers (their common run id), so the page-weight
    check reuses the loads the render check made instead of loading every page again."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex
    return Path(__file__).resolve().parents[1] / "_build" / "site-loads" / run
