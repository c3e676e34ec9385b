"""What lm-eval 0.4.9.2 records about a run besides its scores, produced by its own code.

Explained in the chapters *The per-item hashes of the harness's log*
(``book/trackers.md``) and *The config tracker, the git hash and what a record keeps*
(``book/config-tracker.md``). The harness's ``evaluate`` logs one item with a stand-in
model (no forward pass), its tracker writes a results file, its ``get_git_commit_hash``
runs in a chosen directory; evalcore recomputes the per-item hashes without the harness.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.capture import captured
from evalcore.errors import InvalidInputError, UnavailableError
from evalcore.harness.pairing import official_entry
from evalcore.harness.registry import TASK
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.jsonvalue import json_object
from evalcore.sst2.rows import Row, committed_row_hashes
from evalcore.sst2.task import doc_to_text

__all__ = [
    "HASH_FIELDS", "GitHash", "expected_hashes", "git_hash_in", "harness_hashes", "logged_entry",
    "make_repo", "saved_results", "stand_in_lm",
]  # fmt: skip

HASH_FIELDS = ("doc_hash", "prompt_hash", "target_hash")
"""The per-sample hash fields of the harness's log, in the order the task hash joins them."""


def stand_in_lm() -> Any:
    """An lm-eval ``LM`` that scores every log-likelihood request 0.0 without a model."""
    from lm_eval.api.model import LM

    # lm-eval ships no type information, so LM is Any to the type checker.
    class StandIn(LM):  # type: ignore[misc]  # no forward pass: every request scores 0.0, not greedy
        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
            return [(0.0, False) for _ in requests]

        def unused(self, requests: list[Any], disable_tqdm: bool = False) -> Any:
            raise NotImplementedError("sst2 only asks for log-likelihoods")

        loglikelihood_rolling = generate_until = unused

    return StandIn()


def _doc(task: Any, item_id: int) -> dict[str, Any]:
    docs = task.eval_docs
    if isinstance(item_id, bool) or not isinstance(item_id, int) or not 0 <= item_id < len(docs):
        raise InvalidInputError(f"item_id must be an int in [0, {len(docs)}), got {item_id!r}")
    return json_object(docs[item_id], f"the harness's document {item_id}")


def logged_entry(task: Any, item_id: int) -> dict[str, Any]:
    """The harness's logged sample for one validation item, reduced to ids and hashes (no text)."""
    from lm_eval.evaluator import evaluate

    _doc(task, item_id)  # refuse a bad id before the harness sees it
    with captured([]):
        out = evaluate(lm=stand_in_lm(), task_dict={TASK: task}, samples={TASK: [item_id]},
                       bootstrap_iters=0, log_samples=True)  # fmt: skip
    hash_to_idx = {h: i for i, h in enumerate(committed_row_hashes("validation"))}
    return official_entry(out["samples"][TASK][0], hash_to_idx)


def harness_hashes(task: Any, item_id: int) -> dict[str, str]:
    """The three hashes, recomputed with ``hash_string`` on the harness's doc, context, target."""
    from lm_eval.utils import handle_non_serializable, hash_string

    doc = _doc(task, item_id)
    dumped = json.dumps(doc, indent=2, default=handle_non_serializable, ensure_ascii=False)
    return {"doc_hash": hash_string(dumped),
            "prompt_hash": hash_string(task.fewshot_context(doc, num_fewshot=0)),
            "target_hash": hash_string(str(task.doc_to_target(doc)))}  # fmt: skip


def expected_hashes(row: Row) -> dict[str, str]:
    """The three hashes derived without the harness: evalcore's row, prompt and label."""
    dumped = json.dumps(row.as_doc(), indent=2, ensure_ascii=False)
    return {"doc_hash": sha256_text(dumped), "prompt_hash": sha256_text(doc_to_text(row.sentence)),
            "target_hash": sha256_text(str(row.label))}  # fmt: skip


def saved_results(samples: Sequence[Mapping[str, Any]], **experiment_args: Any) -> dict[str, Any]:
    """The results file the harness's ``EvaluationTracker`` writes for ``samples``, read back.

    ``experiment_args`` go to ``GeneralConfigTracker.log_experiment_args``. Raises
    InvalidInputError for a sample without a hash field, UnavailableError if no file was
    written (the tracker swallows its own errors)."""
    from lm_eval.loggers import EvaluationTracker

    if missing := [(n, f) for n, s in enumerate(samples) for f in HASH_FIELDS if f not in s]:
        raise InvalidInputError(f"samples without a hash field, as (sample, field): {missing}")
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="evalbook-tracker-") as where, captured(notes):
        tracker = EvaluationTracker(output_path=str(Path(where) / "results.json"))
        if experiment_args:
            tracker.general_config_tracker.log_experiment_args(**experiment_args)
        tracker.save_results_aggregated(results={}, samples={TASK: [dict(s) for s in samples]})
        files = list(Path(where).glob("results_*.json"))
        if len(files) != 1:
            raise UnavailableError(f"the tracker wrote {len(files)} results files: {notes}")
        return json_object(json.loads(files[0].read_text(encoding="utf-8")), str(files[0]))


@dataclass(frozen=True)
class GitHash:
    """``get_git_commit_hash``'s result in a directory, and the lines printed meanwhile."""

    value: str | None
    console: tuple[str, ...]


def git_hash_in(path: str | os.PathLike[str]) -> GitHash:
    """The harness's ``get_git_commit_hash`` run with ``path`` as working directory (restored)."""
    from lm_eval.loggers.utils import get_git_commit_hash

    if not Path(path).is_dir():
        raise InvalidInputError(f"{path} is not a directory")
    console: list[str] = []
    with contextlib.chdir(path), captured(console):
        value = get_git_commit_hash()
    return GitHash(value, tuple(line for line in console if line.strip()))


def make_repo(path: str | os.PathLike[str], *, tag: str | None = None) -> str:
    """``git init`` an empty directory, commit one file (and an annotated ``tag``); return HEAD."""
    where = Path(path)
    if not where.is_dir() or any(where.iterdir()):
        raise InvalidInputError(f"{where} must be an existing, empty directory")
    config = ["-c", "user.name=evalbook", "-c", "user.email=evalbook@example.invalid",
              "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"]  # fmt: skip

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(where), *config, *args],
                              check=True, capture_output=True, text=True)  # fmt: skip
        return done.stdout.strip()

    git("init", "-q")
    (where / "README").write_text("one commit\n", encoding="utf-8")
    git("add", "README")
    git("commit", "-q", "-m", "one commit")
    if tag is not None:
        git("tag", "-a", tag, "-m", tag)
    return git("rev-parse", "HEAD")
