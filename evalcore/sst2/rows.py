"""Data: GLUE SST-2 rows, located, verified against committed digests, then used.

Explained in the book chapter *Running the book*. The rows come from GLUE's TSV files
in ``$EVALBOOK_SST2_DIR``, or, for online readers who ask for it, from the Hub parquet
at a pinned revision; without Hub access that option fails at once and names the
offline default. The model side lives in :mod:`evalcore.models.loader`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any

from evalcore.errors import DataIntegrityError, DataUnavailableError, InvalidInputError
from evalcore.hub import hub_download
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.fingerprint import canonical_json
from evalcore.protocol.jsonvalue import json_object

__all__ = [
    "DATA_ENV",
    "DATA_REVISION",
    "SPLITS",
    "Row",
    "committed_row_hashes",
    "data_dir",
    "load_split",
    "read_tsv",
    "row_sha256",
    "split_digest",
    "verify_rows",
]

DATA_ENV = "EVALBOOK_SST2_DIR"
"""Environment variable naming the directory that holds GLUE's SST-2 ``train.tsv`` and ``dev.tsv``."""

DATA_REPO = "nyu-mll/glue"
"""Hub dataset of the online option."""

DATA_REVISION = "bcdcba79d07bc864c1c254ccfcedcce55bcc9a8c"
"""Pinned Hub revision of ``nyu-mll/glue`` (config ``sst2``)."""

SPLITS = {"train": "train.tsv", "validation": "dev.tsv"}
"""Split name (as the harness names it) -> GLUE file name."""


@dataclass(frozen=True)
class Row:
    """One SST-2 item."""

    idx: int
    """Row number in GLUE's file order (the Hub parquet's ``idx``): the item_id."""
    sentence: str
    """Review text, exactly as GLUE ships it."""
    label: int
    """Gold label: 0 negative, 1 positive."""

    def as_doc(self) -> dict[str, Any]:
        """The row as the harness sees a document: ``{"sentence", "label", "idx"}``.

        Examples:
            >>> from evalcore.sst2 import Row
            >>> Row(0, "A toy review.", 1).as_doc()
            {'sentence': 'A toy review.', 'label': 1, 'idx': 0}
        """
        return {"sentence": self.sentence, "label": self.label, "idx": self.idx}


def row_sha256(idx: int, sentence: str, label: int) -> str:
    """SHA-256 of the canonical JSON array ``[idx, sentence, label]``.

    Examples:
        >>> from evalcore.sst2 import committed_row_hashes, load_split, row_sha256
        >>> row = load_split("validation")[0]
        >>> digest = row_sha256(row.idx, row.sentence, row.label)
        >>> digest[:12], digest == committed_row_hashes("validation")[0]
        ('94b9b945f460', True)
    """
    return hashlib.sha256(canonical_json([idx, sentence, label])).hexdigest()


def split_digest(row_hashes: list[str]) -> str:
    """SHA-256 over a split's row hashes in idx order, one per line.

    Examples:
        >>> from evalcore.sst2 import committed_row_hashes, split_digest
        >>> split_digest(committed_row_hashes("validation"))[:12]
        'c04b9b3dc261'
    """
    return sha256_text("\n".join(row_hashes))  # hex digits only: their UTF-8 is their ASCII


@cache
def _committed() -> dict[str, Any]:
    text = importlib_resources.files("evalcore").joinpath("data/sst2-digests.json").read_text("utf-8")
    return json_object(json.loads(text), "evalcore/data/sst2-digests.json")


def committed_row_hashes(split: str) -> list[str]:
    """Per-row hashes committed for a split (full for validation, 16-hex prefixes for train).

    Examples:
        >>> from evalcore.sst2 import committed_row_hashes
        >>> validation = committed_row_hashes("validation")
            >>> train = committed_row_hashes("train")
        >>> len(validation), len(validation[0]), len(train), len(train[0])
        (872, 64, 67349, 16)
    """
    name = _committed()[split]["row_hash_file"]
    text = importlib_resources.files("evalcore").joinpath(f"data/{name}").read_text("ascii")
    return text.split()


def data_dir() -> Path:
    """The directory named by ``$EVALBOOK_SST2_DIR``.

    Raises:
        FileNotFoundError: the variable is unset, or names a directory that does not exist.

    Examples:
        >>> from evalcore.sst2 import data_dir
        >>> (data_dir() / "dev.tsv").is_file(), (data_dir() / "train.tsv").is_file()
        (True, True)
    """
    value = os.environ.get(DATA_ENV)
    if not value:
        raise DataUnavailableError(
            f"${DATA_ENV} is not set: point it at a directory holding GLUE's SST-2 train.tsv and dev.tsv "
            "(../shared/data/sst2 beside the clone), or use source='hub' when online"
        )
    path = Path(value)
    if not path.is_dir():
        raise DataUnavailableError(f"${DATA_ENV}={value} is not a directory")
    return path


def read_tsv(path: Path) -> list[Row]:
    """The rows of one GLUE SST-2 TSV file, unverified (:func:`load_split` verifies them).

    Raises:
        DataUnavailableError: no such file.
        DataIntegrityError: bytes that are not UTF-8 (naming the line, the byte and its
            offset), a wrong header, or a malformed row (naming its idx).

    Examples:
        >>> from evalcore.sst2 import data_dir, read_tsv
        >>> rows = read_tsv(data_dir() / "dev.tsv")
        >>> len(rows), rows[0].idx, rows[0].label
        (872, 0, 1)
    """
    if not path.is_file():
        raise DataUnavailableError(f"SST-2 file {path} does not exist (set ${DATA_ENV})")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        where = "the header" if line == 1 else f"row idx {line - 2}"
        raise DataIntegrityError(
            f"{path}: line {line} ({where}) is not UTF-8: byte 0x{raw[exc.start]:02X} at offset {exc.start} "
            f"(column {column}, {exc.reason}); GLUE's SST-2 files are UTF-8, so this is not the pinned file"
        ) from None
    rows = []
    with io.StringIO(text, newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header != ["sentence", "label"]:
            raise DataIntegrityError(f"{path}: header is {header!r}, expected ['sentence', 'label']")
        for idx, fields in enumerate(reader):
            if len(fields) != 2 or fields[1] not in {"0", "1"}:
                raise DataIntegrityError(
                    f"{path}: row idx {idx} is malformed: {len(fields)} fields, label {fields[-1:]!r}"
                )
            rows.append(Row(idx, fields[0], int(fields[1])))
    return rows


def _read_hub(split: str) -> list[Row]:
    path = hub_download(
        DATA_REPO, DATA_REVISION, "dataset", f"${DATA_ENV} pointing at GLUE's SST-2 TSV files",
        repo_type="dataset", allow_patterns=[f"sst2/{split}-*.parquet"],
    )  # fmt: skip
    import pyarrow.parquet as pq  # type: ignore[import-untyped]  # pyarrow ships no type information

    (file,) = sorted(Path(path, "sst2").glob(f"{split}-*.parquet"))
    table = pq.read_table(file).to_pylist()
    return [Row(int(r["idx"]), r["sentence"], int(r["label"])) for r in sorted(table, key=lambda r: r["idx"])]


def verify_rows(split: str, rows: list[Row]) -> str:
    """Check rows against the committed digests; return the split digest.

    Raises:
        DataIntegrityError: wrong count, an idx out of order, or a row whose hash
            differs; the message names the first bad idx.

    Examples:
        >>> from dataclasses import replace
        >>> from evalcore.sst2 import data_dir, read_tsv, verify_rows
        >>> rows = read_tsv(data_dir() / "dev.tsv")
        >>> verify_rows("validation", rows)[:12]
        'c04b9b3dc261'
        >>> rows[5] = replace(rows[5], label=1 - rows[5].label)
        >>> try:
        ...     verify_rows("validation", rows)
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        DataIntegrityError: validation: row idx 5 differs from the committed ...
    """
    expected = _committed()[split]
    hashes = [row_sha256(r.idx, r.sentence, r.label) for r in rows]
    committed = committed_row_hashes(split)
    for position, (row, digest, known) in enumerate(zip(rows, hashes, committed, strict=False)):
        if row.idx != position:
            raise DataIntegrityError(f"{split}: row at position {position} has idx {row.idx}")
        if not digest.startswith(known):
            raise DataIntegrityError(
                f"{split}: row idx {row.idx} differs from the committed row hash "
                f"(got {digest[:16]}…, expected {known[:16]}…); refusing to use this data"
            )
    if len(rows) != expected["rows"]:
        raise DataIntegrityError(
            f"{split}: {len(rows)} rows, expected {expected['rows']} (first missing or extra idx: "
            f"{min(len(rows), expected['rows'])})"
        )
    digest = split_digest(hashes)
    if digest != expected["digest"]:
        raise DataIntegrityError(f"{split}: split digest {digest} differs from the committed {expected['digest']}")
    return digest


def load_split(split: str, *, source: str = "local") -> list[Row]:
    """Load and verify one SST-2 split.

    Args:
        split: ``train`` or ``validation``.
        source: ``local`` (``$EVALBOOK_SST2_DIR``) or ``hub`` (``nyu-mll/glue`` at
            :data:`DATA_REVISION`).

    Raises:
        ValueError: unknown split or source.
        FileNotFoundError: no data directory or file.
        DataIntegrityError: rows that differ from the committed digests.
        HubUnavailableError: ``source="hub"`` without Hub access.

    Examples:
        >>> from evalcore import load_split
        >>> rows = load_split("validation")
        >>> len(rows), rows[0].idx, rows[0].label, sum(row.label for row in rows)
        (872, 0, 1, 444)
        >>> try:
        ...     load_split("test")
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: unknown split 'test'; expected one of [...]
    """
    if split not in SPLITS:
        raise InvalidInputError(f"unknown split {split!r}; expected one of {sorted(SPLITS)}")
    if source == "local":
        rows = read_tsv(data_dir() / SPLITS[split])
    elif source == "hub":
        rows = _read_hub(split)
    else:
        raise InvalidInputError(f"unknown data source {source!r}; expected 'local' or 'hub'")
    digest = verify_rows(split, rows)
    where = data_dir() / SPLITS[split] if source == "local" else f"the Hub at {DATA_REVISION}"
    logging.getLogger("evalcore").info("load_split: %s, %d rows from %s, digest %s", split, len(rows), where, digest)
    return rows
