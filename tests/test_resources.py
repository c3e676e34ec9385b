from __future__ import annotations

import hashlib
import shutil
import time

import pytest

from evalcore import resources
from evalcore.models import locate_model
from evalcore.resources import DataIntegrityError, HubUnavailableError, load_split, row_sha256


def test_splits_have_pinned_sizes_and_labels(train, validation):
    assert len(train) == 67_349 and len(validation) == 872
    assert sum(r.label for r in validation) == 444
    assert [r.idx for r in validation[:3]] == [0, 1, 2]


def test_row_hash_is_canonical_json_of_idx_sentence_label():
    expected = hashlib.sha256(b'[0,"a",1]').hexdigest()
    assert row_sha256(0, "a", 1) == expected
    assert row_sha256(0, "a", 1) != row_sha256(0, "a", 0) != row_sha256(1, "a", 1)


@pytest.fixture
def data_copy(tmp_path, sst2_dir, monkeypatch):
    for name in ("train.tsv", "dev.tsv"):
        shutil.copy(sst2_dir / name, tmp_path / name)
    monkeypatch.setenv(resources.DATA_ENV, str(tmp_path))
    return tmp_path


def test_tampered_row_refused_naming_first_bad_idx(data_copy):
    # Guards against scoring an edited dataset: one changed label must stop everything.
    lines = (data_copy / "dev.tsv").read_text(encoding="utf-8").split("\n")
    sentence, label = lines[1 + 17].split("\t")
    lines[1 + 17] = f"{sentence}\t{1 - int(label)}"
    (data_copy / "dev.tsv").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DataIntegrityError, match=r"validation: row idx 17 differs"):
        load_split("validation")


def test_truncated_file_refused(data_copy):
    lines = (data_copy / "dev.tsv").read_text(encoding="utf-8").split("\n")
    (data_copy / "dev.tsv").write_text("\n".join(lines[:500]) + "\n", encoding="utf-8")
    with pytest.raises(DataIntegrityError, match=r"499 rows, expected 872 \(first missing or extra idx: 499\)"):
        load_split("validation")


def test_wrong_header_refused(data_copy):
    text = (data_copy / "dev.tsv").read_text(encoding="utf-8")
    (data_copy / "dev.tsv").write_text(text.replace("sentence\tlabel", "text\tlabel", 1), encoding="utf-8")
    with pytest.raises(DataIntegrityError, match="header is"):
        load_split("validation")


def test_missing_file_refused(data_copy):
    (data_copy / "dev.tsv").unlink()
    with pytest.raises(FileNotFoundError, match=r"dev\.tsv does not exist"):
        load_split("validation")


def test_unset_data_dir_names_the_variable(monkeypatch):
    monkeypatch.delenv(resources.DATA_ENV, raising=False)
    with pytest.raises(FileNotFoundError, match=r"\$EVALBOOK_SST2_DIR is not set"):
        load_split("validation")


def test_missing_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv(resources.DATA_ENV, str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        load_split("validation")


def test_unknown_split_and_source():
    with pytest.raises(ValueError, match="unknown split 'test'"):
        load_split("test")
    with pytest.raises(ValueError, match="unknown data source 'ftp'"):
        load_split("validation", source="ftp")


@pytest.mark.parametrize(
    "call", [lambda: locate_model("smollm2-135m-instruct"), lambda: load_split("train", source="hub")]
)
def test_hub_options_fail_fast_offline_naming_the_default(monkeypatch, call):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(HubUnavailableError, match=r"cannot be used here \(HF_HUB_OFFLINE=1 is set\).*offline default"):
        call()
    assert time.monotonic() - start < 5
