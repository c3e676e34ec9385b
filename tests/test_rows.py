from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest

from evalcore import sst2
from evalcore.errors import DataIntegrityError, HubUnavailableError
from evalcore.models.loader import locate_model
from evalcore.sst2.rows import load_split, row_sha256


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
    monkeypatch.setenv(sst2.DATA_ENV, str(tmp_path))
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
    monkeypatch.delenv(sst2.DATA_ENV, raising=False)
    with pytest.raises(FileNotFoundError, match=r"\$EVALBOOK_SST2_DIR is not set"):
        load_split("validation")


def test_missing_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv(sst2.DATA_ENV, str(tmp_path / "nope"))
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


# --- Row hashes, split digests and verification against oracles written here ------------------------------------

DATA = Path(sst2.__file__).resolve().parents[1] / "data"


def _json_row_hash(idx, sentence, label):
    # RFC 8785 for an array of an int, a str and an int is plain compact JSON with raw UTF-8: no spaces, only
    # '"', '\\' and control characters escaped (what json.dumps does with ensure_ascii=False).
    text = json.dumps([idx, sentence, label], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("idx", "sentence", "label"),
    [
        (0, "", 0),
        (67348, "plain words .", 1),
        (3, 'a "quoted" word and a back\\slash', 0),
        (4, "tab\there, newline\nthere, bell\x07, unit sep\x1f", 1),
        (5, "café naïve — 日本語 🎬 / slash", 0),
        (6, "line sep\u2028 and del\x7f", 1),
    ],
)
def test_row_hash_is_compact_utf8_json_of_the_triple(idx, sentence, label):
    assert row_sha256(idx, sentence, label) == _json_row_hash(idx, sentence, label)


def test_row_hash_escapes_by_hand():
    # The exact bytes hashed, written out: escaped quote, tab as \t, backslash doubled, U+00E9 as raw UTF-8.
    expected = hashlib.sha256(b'[12,"say \\"hi\\"\\t\\\\ caf\xc3\xa9",0]').hexdigest()
    assert row_sha256(12, 'say "hi"\t\\ café', 0) == expected
    # a bool label is JSON true, not 1: it must not hash like the int label
    assert row_sha256(12, "x", True) == hashlib.sha256(b'[12,"x",true]').hexdigest() != row_sha256(12, "x", 1)


def test_validation_rows_hash_to_the_committed_file(validation):
    committed = (DATA / "sst2-validation.rowhash.txt").read_text("ascii").split()
    assert len(committed) == len(validation) == 872
    computed = [_json_row_hash(r.idx, r.sentence, r.label) for r in validation]
    assert computed == committed
    assert [row_sha256(r.idx, r.sentence, r.label) for r in validation[:50]] == committed[:50]


def test_train_rows_match_the_committed_prefixes(train):
    prefixes = (DATA / "sst2-train.rowhash.txt").read_text("ascii").split()
    assert len(prefixes) == len(train) and {len(p) for p in prefixes} == {16}
    for row in train[::997]:  # a spread of rows across the whole split
        assert _json_row_hash(row.idx, row.sentence, row.label)[:16] == prefixes[row.idx]


def test_split_digest_is_sha256_of_newline_joined_hashes():
    a, b = "a" * 64, "0123456789abcdef" * 4
    assert sst2.split_digest([a, b]) == hashlib.sha256(f"{a}\n{b}".encode()).hexdigest()
    assert sst2.split_digest([a]) == hashlib.sha256(a.encode()).hexdigest()
    # SHA-256 of the empty string (FIPS 180-2 test vector): no rows, no bytes
    assert sst2.split_digest([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert sst2.split_digest([a, b]) != sst2.split_digest([b, a])  # the order is part of the digest


def test_validation_digest_matches_the_committed_json(validation):
    committed = json.loads((DATA / "sst2-digests.json").read_text("utf-8"))["validation"]
    hashes = [_json_row_hash(r.idx, r.sentence, r.label) for r in validation]
    expected = hashlib.sha256("\n".join(hashes).encode("ascii")).hexdigest()
    assert expected == committed["digest"]
    assert sst2.verify_rows("validation", list(validation)) == committed["digest"]
    assert sum(r.label for r in validation) == committed["label_counts"]["1"] == 444


def test_verify_rows_refuses_reordered_edited_short_and_long_lists(validation):
    rows = list(validation)
    swapped = [rows[1], rows[0], *rows[2:]]
    with pytest.raises(DataIntegrityError, match=r"^validation: row at position 0 has idx 1$"):
        sst2.verify_rows("validation", swapped)
    edited = [*rows[:100], sst2.Row(100, rows[100].sentence + " ", rows[100].label), *rows[101:]]
    got = _json_row_hash(100, rows[100].sentence + " ", rows[100].label)[:16]
    want = (DATA / "sst2-validation.rowhash.txt").read_text("ascii").split()[100][:16]
    with pytest.raises(DataIntegrityError, match=rf"row idx 100 differs .*\(got {got}…, expected {want}…\)"):
        sst2.verify_rows("validation", edited)
    with pytest.raises(DataIntegrityError, match=r"871 rows, expected 872 \(first missing or extra idx: 871\)"):
        sst2.verify_rows("validation", rows[:-1])
    extra = [*rows, sst2.Row(872, "x", 0)]
    with pytest.raises(DataIntegrityError, match=r"873 rows, expected 872 \(first missing or extra idx: 872\)"):
        sst2.verify_rows("validation", extra)


def test_verify_rows_on_a_train_prefix_names_the_count(train):
    with pytest.raises(DataIntegrityError, match=r"train: 10 rows, expected 67349 \(first missing or extra idx: 10\)"):
        sst2.verify_rows("train", list(train[:10]))


def _rewrite(path, edit):
    lines = path.read_text(encoding="utf-8").split("\n")
    edit(lines)
    path.write_text("\n".join(lines), encoding="utf-8")


def test_tampered_last_sentence_refused_naming_the_row(data_copy):
    def edit(lines):
        sentence, label = lines[872].split("\t")  # line 0 is the header, so line 872 is idx 871
        lines[872] = f"{sentence}x\t{label}"

    _rewrite(data_copy / "dev.tsv", edit)
    with pytest.raises(DataIntegrityError, match=r"^validation: row idx 871 differs from the committed row hash") as e:
        load_split("validation")
    assert type(e.value) is DataIntegrityError and "refusing to use this data" in str(e.value)


def test_tampered_train_label_refused_against_the_prefix_hashes(data_copy):
    def edit(lines):
        sentence, label = lines[1 + 40_000].split("\t")
        lines[1 + 40_000] = f"{sentence}\t{1 - int(label)}"

    _rewrite(data_copy / "train.tsv", edit)
    with pytest.raises(DataIntegrityError, match=r"^train: row idx 40000 differs"):
        load_split("train")
    assert len(load_split("validation")) == 872  # the other split is untouched and still loads


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda lines: lines.__setitem__(6, lines[6] + "\textra"),
            r"row idx 5 is malformed: 3 fields, label \['extra'\]",
        ),
        (lambda lines: lines.__setitem__(3, lines[3][:-1] + "2"), r"row idx 2 is malformed: 2 fields, label \['2'\]"),
        (lambda lines: lines.insert(-1, ""), r"row idx 872 is malformed: 0 fields, label \[\]"),
    ],
)
def test_malformed_rows_refused_naming_the_idx(data_copy, edit, message):
    _rewrite(data_copy / "dev.tsv", edit)
    with pytest.raises(DataIntegrityError, match=message):
        load_split("validation")


def test_missing_train_file_and_a_file_as_data_dir(data_copy, monkeypatch):
    (data_copy / "train.tsv").unlink()
    with pytest.raises(FileNotFoundError, match=r"train\.tsv does not exist \(set \$EVALBOOK_SST2_DIR\)"):
        load_split("train")
    monkeypatch.setenv(sst2.DATA_ENV, str(data_copy / "dev.tsv"))
    with pytest.raises(FileNotFoundError, match=r"EVALBOOK_SST2_DIR=.*dev\.tsv is not a directory"):
        load_split("validation")
    monkeypatch.setenv(sst2.DATA_ENV, "")
    with pytest.raises(FileNotFoundError, match=r"is not set: .*source='hub' when online"):
        load_split("validation")


def test_hub_split_offline_names_the_pinned_revision_and_the_tsv_default(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnavailableError) as e:
        load_split("validation", source="hub")
    assert f"dataset nyu-mll/glue@{sst2.DATA_REVISION} needs the Hugging Face Hub" in str(e.value)
    assert str(e.value).endswith(
        "Use the offline default instead: $EVALBOOK_SST2_DIR pointing at GLUE's SST-2 TSV files."
    )


def test_a_byte_that_is_not_utf8_is_refused_with_its_line_and_offset(tmp_path, sst2_dir):
    # Regression guard: one 0xFF byte in dev.tsv gave an uncaught UnicodeDecodeError traceback from prepare,
    # run and audit --level 2.
    from evalcore.errors import DataIntegrityError
    from evalcore.sst2.rows import read_tsv

    raw = (sst2_dir / "dev.tsv").read_bytes()
    start = raw.index(b"\n") + 1  # row idx 0 begins on line 2
    (tmp_path / "dev.tsv").write_bytes(raw[: start + 3] + b"\xff" + raw[start + 4 :])
    with pytest.raises(
        DataIntegrityError,
        match=rf"dev\.tsv: line 2 \(row idx 0\) is not UTF-8: byte 0xFF at "
        rf"offset {start + 3} \(column 4, invalid start byte\)",
    ):
        read_tsv(tmp_path / "dev.tsv")
