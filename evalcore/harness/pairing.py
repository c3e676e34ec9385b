"""Pairing the two scorers' results: each logged harness sample reduced to ids, hashes and scores,
keyed by the idx of its document's *content*, never by its logged ``doc_id``.

Explained in the notebook *Running the official harness* (``notebooks/official-run.md``)
and, for why the content decides, *The doc_id bug* (``notebooks/doc-id-bug.md``). No
review text is kept: every string is stored as its SHA-256
(:func:`evalcore.protocol.digest.sha256_text`, lm-eval's ``hash_string``).
"""

from __future__ import annotations

from typing import Any

from evalcore.protocol.digest import sha256_text
from evalcore.scoring.loglik import ItemScore
from evalcore.tasks import Task, default_task

__all__ = ["independent_entry", "no_sample", "official_entry", "pair_official"]


def official_entry(sample: dict[str, Any], hash_to_idx: dict[str, int], *, task: Task | None = None) -> dict[str, Any]:
    """One logged harness sample, reduced to ids, hashes and scores (no text).

    The document is identified by the task's content hash
    (:meth:`evalcore.tasks.Task.content_sha256`; for SST-2, the row's ``row_sha256``).

    Examples:
        >>> from evalcore.harness.pairing import official_entry
        >>> from evalcore.sst2 import Row, row_sha256
        >>> doc = Row(7, "A toy review.", 1).as_doc()
        >>> sample = dict(doc_id=0, doc=doc, doc_hash="d" * 64, prompt_hash="p" * 64,
        ...               target_hash="t" * 64, target=1, acc=1.0,
        ...               arguments=[("Q:", " negative"), ("Q:", " positive")],
        ...               filtered_resps=[[-1.2, False], [-0.4, True]])
        >>> entry = official_entry(sample, {row_sha256(7, "A toy review.", 1): 7})
        >>> entry["doc_id"], entry["content_idx"], entry["loglik"], entry["acc"]
        (0, 7, [-1.2, -0.4], 1.0)
    """
    doc = sample["doc"]
    content_hash = (task or default_task()).content_sha256(doc)
    return {
        "doc_id": sample["doc_id"],
        "content_idx": hash_to_idx.get(content_hash),
        "doc_row_sha256": content_hash,
        "doc_hash": sample["doc_hash"],
        "prompt_hash": sample["prompt_hash"],
        "target_hash": sample["target_hash"],
        "continuation_sha256": [sha256_text(args[1]) for args in sample["arguments"]],
        "target": int(sample["target"]),
        "loglik": [float(r[0]) for r in sample["filtered_resps"]],
        "is_greedy": [bool(r[1]) for r in sample["filtered_resps"]],
        "acc": float(sample["acc"]),
    }


def no_sample(item_id: int) -> str:
    """The failure a run records for an item the harness was asked for and did not log.

    Examples:
        >>> from evalcore.harness.pairing import no_sample
        >>> no_sample(13)
        'item 13: no official sample logged'
    """
    return f"item {item_id}: no official sample logged"


def pair_official(entries: list[dict[str, Any]], requested: list[int]) -> tuple[dict[int, dict[str, Any]], list[str]]:
    """Key logged samples by the idx of their content; list every way the log fails to match the request.

    Returns:
        ``({item_id: entry}, failures)``. A failure is a logged document whose content is
        not a validation row, one that was not requested, one logged twice, or a
        requested item with no logged sample.

    Examples:
        >>> from evalcore.harness.pairing import pair_official
        >>> entries = [{"doc_id": 7, "content_idx": 7}, {"doc_id": 9, "content_idx": 3}]
        >>> paired, problems = pair_official(entries, [7, 8])
        >>> sorted(paired)
        [7]
        >>> for problem in problems:
        ...     print(problem)
        logged doc idx 3 (doc_id 9) was not requested
        item 8: no official sample logged
    """
    official: dict[int, dict[str, Any]] = {}
    failures = []
    wanted = set(requested)
    for e in entries:
        idx = e["content_idx"]
        if idx is None:
            failures.append(f"logged doc with unknown content (doc_id {e['doc_id']})")
        elif idx not in wanted:
            failures.append(f"logged doc idx {idx} (doc_id {e['doc_id']}) was not requested")
        elif idx in official:
            failures.append(f"item {idx}: logged twice")
        else:
            official[idx] = e
    failures += [no_sample(i) for i in requested if i not in official]
    return official, failures


def independent_entry(score: ItemScore) -> dict[str, Any]:
    """One independent score, reduced to ids, hashes and scores (no text).

    Examples:
        >>> from evalcore import sst2
        >>> train, validation = sst2.load_split("train"), sst2.load_split("validation")
        >>> from evalcore.models import load_model
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> from evalcore.harness.pairing import independent_entry
        >>> from evalcore.scoring import score_items
        >>> [score] = score_items(model, tokenizer, validation, [13])
        >>> entry = independent_entry(score)
        >>> sorted(entry)[:3], len(entry["loglik"])
        (['context_length', 'continuation_ids', 'continuation_sha256'], 2)
    """
    first = score.candidates[0]
    return {
        "prompt_hash": sha256_text(first.request_context),  # as the harness hashes it: before any whitespace moves
        "continuation_sha256": [sha256_text(c.continuation) for c in score.candidates],
        "context_length": len(first.context_ids),
        "first_token": first.context_ids[0],
        "continuation_ids": [list(c.continuation_ids) for c in score.candidates],
        "loglik": list(score.loglik),
        "token_logprobs": [list(t) for t in score.token_logprobs],
        "is_greedy": list(score.is_greedy),
        "prediction": score.prediction,
        "logits_shape": list(score.logits_shape),
    }
