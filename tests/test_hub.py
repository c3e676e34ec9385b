"""The Hub helper: a pinned revision when online, an immediate refusal naming the offline default otherwise."""

from __future__ import annotations

import os
import time

import pytest

from evalcore.errors import HubUnavailableError
from evalcore.hub import hub_download


def test_hub_download_refuses_offline_at_once_with_the_whole_message(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(HubUnavailableError) as e:
        hub_download("someone/thing", "abc123", "model", "the local file in $SOMEWHERE", repo_type="model")
    assert time.monotonic() - start < 1
    assert str(e.value) == (
        "model someone/thing@abc123 needs the Hugging Face Hub, which cannot be used here (HF_HUB_OFFLINE=1 is set). "
        "Use the offline default instead: the local file in $SOMEWHERE."
    )
    assert isinstance(e.value, RuntimeError)


@pytest.mark.parametrize(("var", "value"), [("TRANSFORMERS_OFFLINE", " True "), ("HF_DATASETS_OFFLINE", "yes")])
def test_any_offline_variable_names_itself(monkeypatch, var, value):
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "0")
    monkeypatch.setenv(var, value)
    with pytest.raises(HubUnavailableError, match=rf"cannot be used here \({var}={value} is set\)"):
        hub_download("a/b", "r", "dataset", "x")


def test_hub_download_failure_names_the_exception_and_default(monkeypatch):
    # Online flags off, the Hub call itself fails: the refusal names the exception, not a traceback.
    import huggingface_hub

    calls = []

    def failing(repo_id, **kwargs):
        calls.append(
            (repo_id, kwargs, os.environ.get("HF_HUB_ETAG_TIMEOUT"), os.environ.get("HF_HUB_DOWNLOAD_TIMEOUT"))
        )
        raise ConnectionError("no route to host")

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HUB_ETAG_TIMEOUT"):
        monkeypatch.setenv(name, "")  # recorded first, so the teardown restores it even if it was unset
        monkeypatch.delenv(name)
    monkeypatch.setenv("HF_HUB_DOWNLOAD_TIMEOUT", "3")
    monkeypatch.setattr(huggingface_hub, "snapshot_download", failing)
    with pytest.raises(HubUnavailableError, match=r"\(ConnectionError: no route to host\)\. Use the offline default"):
        hub_download("a/b", "rev1", "dataset", "the TSVs", repo_type="dataset", allow_patterns=["x"])
    # the pinned revision and extra arguments reach the Hub call; a timeout is defaulted, a set one kept
    assert calls == [("a/b", {"revision": "rev1", "repo_type": "dataset", "allow_patterns": ["x"]}, "10", "3")]
    monkeypatch.setattr(
        huggingface_hub, "snapshot_download", lambda repo_id, **kw: f"/cache/{repo_id}@{kw['revision']}"
    )
    assert hub_download("a/b", "rev2", "dataset", "x") == "/cache/a/b@rev2"
