"""The catalogue of bad inputs the chapter *When inputs go wrong* tabulates, each fed for real.

Explained in ``book/refusals.md``; the machinery is :mod:`evalbook_pages.refusals`, the
damaged copies :mod:`evalbook_pages.damage`, the calls that feed them
:mod:`evalbook_pages.triggers`. Every entry damages a copy (a data file, a run record, a
model package, a cache entry, a Part III record) in the bench's scratch directory, never
the original, then calls the public API or the command line exactly as a student would.
"""

from __future__ import annotations

import signal

from evalbook_pages import triggers as feed
from evalbook_pages.damage import (
    SCORE_NUDGE,
    data_copy,
    edit_record,
    fake_model_package,
    forge_labels,
    halve,
    not_utf8,
    nudge_score,
    part3_copy,
    score_cache_entry,
    tamper,
)
from evalbook_pages.refusals import BadInput

__all__ = ["CATALOGUE", "SCORE_NUDGE"]

OFFLINE = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
"""Variables that tell the Hugging Face libraries not to use the network."""


def _entries() -> list[BadInput]:
    from evalcore.sst2.selection import confirm_ids, dev_ids

    fp, so, co = feed.api("protocol_fingerprint"), feed.api("split_overlap"), feed.api("content_overlap")
    sr, ma = feed.api("summarize_ledger"), feed.api("merge_attempts")
    cases = [
        ("protocol-empty", "protocol", "API", "empty protocol", lambda b: fp({})),
        ("protocol-not-dict", "protocol", "API", "a protocol that is a list of pairs", lambda b: fp([["model", "x"]])),
        ("protocol-nan", "protocol", "API", "NaN inside a protocol",
         lambda b: fp({"budget": {"temperature": float("nan")}})),
        ("protocol-int-key", "protocol", "API", "non-string keys in a protocol",
         lambda b: fp({"choices": {0: "negative", 1: "positive"}})),
        ("protocol-no-identity", "protocol", "API", "a model named without revision or file hash",
         lambda b: feed.api("ModelSpec")(name="SmolLM2-135M-Instruct", source="hub:HuggingFaceTB/SmolLM2-135M-Instruct",
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
         lambda b: feed.summary(sr([{"id": str(i), "status": "error"} for i in range(3)]))),
        ("merge-no-policy", "ledger", "API", "merging attempts without naming a policy",
         lambda b: ma([{"id": "1", "status": "error", "attempt": 1}])),
        ("merge-attempt-gap", "ledger", "API", "attempts 1 and 3 of an item, no 2",
         lambda b: ma([{"id": "1", "status": "error", "attempt": 1}, {"id": "1", "status": "passed", "attempt": 3}],
                      policy="retry_errors")),
        ("data-tampered", "data", "CLI", "one review in dev.tsv changed by one space",
         lambda b: b.cli("prepare", env={"EVALBOOK_SST2_DIR": str(data_copy(b, "tampered", edit_dev=tamper))})),
        ("data-truncated", "data", "API", "dev.tsv cut short by 100 rows",
         lambda b: feed.env_data(b, "truncated", edit_dev=lambda lines: lines[:-100])),
        ("data-missing-file", "data", "API", "dev.tsv missing", lambda b: feed.env_data(b, "no-dev", drop="dev.tsv")),
        ("data-dir-unset", "data", "API", "$EVALBOOK_SST2_DIR not set", lambda b: feed.unset_data()),
        ("data-hub-offline", "data", "API", "the Hub data option with HF_HUB_OFFLINE=1", lambda b: feed.hub_data()),
        ("data-hub-unreachable", "data", "CLI", "the Hub data option with no offline flag and no network",
         lambda b: b.cli("prepare", "--data-source", "hub", env=dict.fromkeys(OFFLINE))),
        ("model-wrong-sha", "model", "CLI", "a GGUF file that is not the pinned one (cut to 1 MiB)",
         lambda b: b.cli("prepare", env={"PYTHONPATH": str(fake_model_package(b, "bad-gguf", truncate_to=1 << 20))})),
        ("model-file-missing", "model", "CLI", "the model package without its GGUF file",
         lambda b: b.cli("prepare", env={"PYTHONPATH": str(fake_model_package(b, "no-gguf", truncate_to=None))})),
        ("model-package-missing", "model", "API", "a model package that is not installed", feed.missing_package),
        ("model-hub-offline", "model", "API", "the original Hub weights without Hub access",
         lambda b: feed.api_load("smollm2-135m-instruct")),
        ("model-unknown", "model", "CLI", "an unknown model name",
         lambda b: b.cli("run", "--smoke", "--model", "gpt2")),
        ("model-cache-pickle", "model", "API", "a model cache holding an unlisted pickle file", feed.unsafe_cache),
        ("ids-out-of-range", "ids", "API", "an idx outside 0..871", lambda b: feed.api_check([3, 872])),
        ("ids-sealed", "ids", "API", "a sealed confirm id", lambda b: feed.api_check([dev_ids()[0], confirm_ids()[0]])),
        ("ids-bool", "ids", "API", "True as an item id", lambda b: feed.api_check([True])),
        ("scoring-too-long", "scoring", "API", "a prompt over 512 tokens (40 reviews joined)", feed.long_prompt),
        ("harness-unsorted", "harness", "API", "ids passed to the harness unsorted: the identity assertion",
         lambda b: feed.check_identity(feed.read(b.unsorted_dir()))),
        ("harness-unsorted-audit", "harness", "CLI", "the same run, audited",
         lambda b: b.cli("audit", str(b.unsorted_dir()), "--level", "1")),
        ("record-score-edited", "record", "CLI", "one score in a record changed by hand",
         lambda b: b.cli("audit", str(edit_record(b, "score", nudge_score, redigest=False)), "--level", "1")),
        ("record-item-removed", "record", "API", "one item deleted from a record",
         lambda b: feed.read(edit_record(b, "item", lambda r: r["items"].pop(), redigest=False))),
        ("record-fingerprint-edited", "record", "API", "the fingerprint in a record replaced",
         lambda b: feed.read(edit_record(b, "fp", lambda r: r.update(fingerprint="0" * 64), redigest=False))),
        ("record-score-redigested", "record", "CLI", "one score changed and the self-digest recomputed",
         lambda b: b.cli("audit", str(edit_record(b, "score2", nudge_score, redigest=True)), "--level", "1")),
        ("record-item-redigested", "record", "API", "one item deleted and the self-digest recomputed",
         lambda b: feed.audit(edit_record(b, "item2", lambda r: r["items"].pop(), redigest=True))),
        ("record-fingerprint-redigested", "record", "API", "the fingerprint replaced and the self-digest recomputed",
         lambda b: feed.audit(edit_record(b, "fp2", lambda r: r.update(fingerprint="0" * 64), redigest=True))),
        ("record-truncated", "record", "API", "a record cut in half", lambda b: feed.read(halve(b))),
        ("run-record-exists", "run", "CLI", "an output directory that already holds a record",
         lambda b: b.cli("run", "--smoke", "--out", str(b.copy_record("exists")))),
        ("run-read-only-dir", "run", "CLI", "a read-only output directory", feed.read_only_run),
        ("run-killed", "run", "CLI", "a run killed (SIGKILL) mid-run, then audited", feed.killed_run),
        ("run-failed", "run", "API", "a run that failed after its claim (the Hub model, offline), then read",
         feed.failed_run),
        # Tried by a careful user and a hostile input after the first table; each was once accepted or unclear.
        ("record-labels-forged", "record", "CLI",
         "every gold label flipped, targets, acc, aggregates, ledger and self-digest recomputed; audit --level 2",
         lambda b: b.cli("audit", str(edit_record(b, "labels", forge_labels, redigest=True)), "--level", "2")),
        ("record-reordered", "record", "API", "the items reordered and the self-digest recomputed",
         lambda b: feed.audit(edit_record(b, "reordered", lambda r: r["items"].reverse(), redigest=True))),
        ("record-overflow", "record", "API", "a score written as -1e400",
         lambda b: feed.read(feed.overflow(b))),
        ("run-overwrite-fails", "run", "CLI", "run --overwrite over a complete record, with the data missing",
         lambda b: b.cli("run", "--smoke", "--overwrite", "--out", str(b.copy_record("overwrite")),
                         env={"EVALBOOK_SST2_DIR": str(b.scratch / "no-data")})),
        ("run-interrupted", "run", "CLI", "Ctrl-C (SIGINT) two seconds into a run",
         lambda b: b.kill_run(b.scratch / "interrupted-run", after_s=2.0, sig=signal.SIGINT)),
        ("run-live-audited", "run", "CLI", "a run audited while it is still running", feed.live_audit),
        ("run-out-is-file", "run", "CLI", "--out naming a file",
         lambda b: b.cli("run", "--smoke", "--out", feed.a_file(b))),
        ("ids-superscript", "ids", "CLI", "--items ² (a digit to str.isdigit, not to int)",
         lambda b: b.cli("run", "--items", "²", "--out", str(b.scratch / "never"))),
        ("ids-arabic-indic", "ids", "CLI", "--items ١٢ (Arabic-Indic digits, which int() reads as 12)",
         lambda b: b.cli("run", "--items", "١٢", "--out", str(b.scratch / "never"))),
        ("ids-confirm-listed", "ids", "CLI", "--items confirm without --unseal",
         lambda b: b.cli("run", "--items", "confirm", "--out", str(b.scratch / "never"))),
        ("model-cache-no-manifest", "model", "API", "a model-cache entry whose manifest was deleted",
         feed.cache_without_manifest),
        ("model-cache-unwritable", "model", "API", "a model cache that cannot be created (a file in its path)",
         feed.cache_under_a_file),
        ("cache-nan", "cache", "API", "a score-cache entry holding NaN",
         lambda b: feed.get(score_cache_entry(b, "nan", lambda t: t.replace("-0.75", "NaN")))),
        ("cache-hand-edited", "cache", "API", "a score in a score-cache entry changed by hand",
         lambda b: feed.get(score_cache_entry(b, "edited", lambda t: t.replace("-0.75", "-0.5")))),
        ("cache-inf", "cache", "API", "a score-cache entry holding -Infinity",
         lambda b: feed.get(score_cache_entry(b, "inf", lambda t: t.replace("-0.75", "-Infinity")))),
        ("cache-duplicate-key", "cache", "API", "a score-cache entry with its scores written twice",
         lambda b: feed.get(score_cache_entry(b, "dup", lambda t: t.rstrip().removesuffix("}")
                                              + ', "loglik": [-9.0, -9.0]}'))),
        ("cache-deep", "cache", "API", "a score-cache file nested 100,000 levels deep",
         lambda b: feed.get(score_cache_entry(b, "deep", lambda t: "[" * 100_000 + "]" * 100_000))),
        ("cache-booleans", "cache", "API", "booleans stored as scores", lambda b: feed.put_booleans(b)),
        ("part3-score-edited", "part3", "API", "one Part III score moved by 1.0",
         lambda b: feed.part3(part3_copy(b, "p3-score", feed.plus_one, redigest=False))),
        ("part3-scores-swapped", "part3", "API", "one item's two Part III scores swapped (its prediction flips)",
         lambda b: feed.part3(part3_copy(b, "p3-swap", feed.swap, redigest=False))),
        ("part3-demos-missing", "part3", "API", "one item's demo list deleted, digests recomputed",
         lambda b: feed.part3(part3_copy(b, "p3-demos", lambda r: feed.first_item(r).pop("demos"), redigest=True))),
        ("part3-label-flipped", "part3", "API", "one Part III gold label flipped, digests recomputed",
         lambda b: feed.part3(part3_copy(b, "p3-label", feed.flip_label, redigest=True), data=True)),
        ("part3-confirm-dangling", "part3", "API", "the unsealing marker deleted, confirm.json a dangling link",
         feed.dangling_confirm),
        # Faults a reader found after the second table; each once ended in a traceback, a lost stop or a hang.
        ("data-not-utf8", "data", "CLI", "one byte 0xFF (not UTF-8) in dev.tsv, row idx 41",
         lambda b: b.cli("prepare", env={"EVALBOOK_SST2_DIR": str(not_utf8(b, "bytes"))})),
        ("data-not-utf8-run", "data", "CLI", "the same file, given to run (nothing may be written)",
         feed.run_on_bad_bytes),
        ("data-not-utf8-audit", "data", "CLI", "the same file, given to audit --level 2",
         lambda b: b.cli("audit", str(b.record_dir()), "--level", "2",
                         env={"EVALBOOK_SST2_DIR": str(not_utf8(b, "bytes-audit"))})),
        ("run-sigint-storm", "run", "CLI", "Ctrl-C three times within 10 ms, two seconds into a run",
         lambda b: b.kill_run(b.scratch / "sigint-storm", after_s=2.0, sig=signal.SIGINT, repeat=3)),
        ("run-sigterm", "run", "CLI", "SIGTERM two seconds into a run",
         lambda b: b.kill_run(b.scratch / "sigterm-run", after_s=2.0, sig=signal.SIGTERM)),
        ("model-cache-forged", "model", "API", "a cache entry's weights edited and its manifest rewritten to match",
         feed.forged_cache),
        ("record-audit-a-path", "record", "API", "audit_record given a path, not a record",
         lambda b: feed.api("audit_record")(b.record_dir())),
    ]  # fmt: skip
    return [BadInput(key, area, surface, what, trigger) for key, area, surface, what, trigger in cases]


CATALOGUE: list[BadInput] = _entries()
"""Every bad input of the chapter's table, in the order it is printed."""
