"""Part III's experiments: run a condition on the dev items into a record, and audit a stored one.

Explained in Part III of the book (``book/part3-*.md``). :func:`run_condition` scores a
:class:`~evalcore.part3.conditions.Condition` and returns its record: the protocol and its
fingerprint, and per item the demo train ids and the scores (or, for generation, the
answer's SHA-256, its first token id and length, and its parsed label). No text is
stored: demos and items are ids, and a generated answer, which can quote the review, is
kept as a hash.
Items are scored with one forward pass per distinct context
(:func:`evalcore.scoring.score_requests_shared`), with the prompts built once for
scoring and auditing alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.audit.machine import arithmetic_differences
from evalcore.audit.recheck import Recheck, recheck
from evalcore.errors import EvalcoreError, InvalidInputError
from evalcore.extras import needs_run_extra
from evalcore.models.interfaces import CausalLM, Tokenizer
from evalcore.models.loader import WithoutSpecialTokens
from evalcore.part3.conditions import Condition, context_for, demos_for, encoder_for, protocol_for
from evalcore.part3.record import condition_digest, condition_problems
from evalcore.part3.typed import StoredCondition
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.fingerprint import diff_protocols
from evalcore.protocol.spec import EvalProtocol
from evalcore.tasks import TaskItem, default_task

__all__ = ["audit_condition", "condition_outcomes", "condition_predictions", "definition_problems", "run_condition"]


@dataclass(frozen=True)
class _Prompts:
    """One condition's prompts, built once for scoring and for auditing alike.

    The encoder, the answer continuations (delimiter + answer word), each item's context
    and the content-free contexts: :func:`run_condition` scores with these and
    :func:`audit_condition` re-scores with the same, so an audit cannot check a prompt
    other than the one that was scored.
    """

    cond: Condition
    tokenizer: Tokenizer
    encoder: Tokenizer | WithoutSpecialTokens
    continuations: tuple[str, ...]

    @classmethod
    def of(cls, cond: Condition, tokenizer: Tokenizer) -> _Prompts:
        continuations = tuple(cond.target_delimiter + c for c in cond.fmt.choices)
        return cls(cond, tokenizer, encoder_for(cond, tokenizer), continuations)

    def context(self, demos: Sequence[TaskItem], sentence: str) -> str:
        return context_for(self.cond, demos, sentence, self.tokenizer)

    def content_free(self, train: Sequence[TaskItem]) -> dict[str, str]:
        from evalcore.scoring.calibration import CONTENT_FREE

        shared = [train[j] for j in self.cond.demo_set]
        return {cf: self.context(shared, cf) for cf in CONTENT_FREE}

    def scores(self, model: CausalLM, context: str) -> list[float]:
        from evalcore.scoring import score_requests_shared

        requests = [(context, c) for c in self.continuations]
        return [s.loglik for s in score_requests_shared(model, self.encoder, requests)]

    def content_free_scores(self, model: CausalLM, train: Sequence[TaskItem]) -> dict[str, list[float]]:
        from evalcore.scoring.calibration import content_free_scores

        return content_free_scores(model, self.encoder, self.content_free(train), list(self.continuations))

    def generate(self, model: CausalLM, context: str) -> tuple[str, list[int]]:
        from evalcore.scoring.generation import greedy_continuation

        return greedy_continuation(model, self.encoder, context)


@needs_run_extra
def run_condition(
    model: CausalLM,
    tokenizer: Tokenizer,
    cond: Condition,
    item_ids: Sequence[int],
    train: Sequence[TaskItem],
    validation: Sequence[TaskItem],
    base: EvalProtocol,
    *,
    unseal: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Score ``cond`` on the items; returns the condition's record (JSON-ready, no text).

    ``progress`` is called as ``progress(condition name, items done, items)`` after each item.

    Raises:
        SealedItemError, ValueError, TypeError: bad ids or a bad condition.
        PromptTooLongError, ContextNotPrefixError: as :func:`evalcore.scoring.loglik.encode_pair`.

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import conditions
        >>> train = sst2.load_split("train")
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.models import load_model
        >>> from evalcore.part3.experiment import run_condition
        >>> from evalcore.protocol.spec import EvalProtocol
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> base = EvalProtocol.from_dict(a.conditions["k=0"].protocol)
        >>> run = run_condition(model, tokenizer, conditions(train)["a"][0], [13, 15],
        ...                     train, sst2.load_split("validation"), base)
        >>> sorted(run["items"]), run["fingerprint"] == a.conditions["k=0"].fingerprint
        (['13', '15'], False)
    """
    from evalcore.scoring.generation import parse_label

    demos = demos_for(cond, item_ids, train, validation, unseal=unseal)
    protocol = protocol_for(cond, base, demos, tokenizer)
    prompts = _Prompts.of(cond, tokenizer)
    items: dict[str, dict[str, Any]] = {}
    for i, ids in demos.items():
        context = prompts.context([train[j] for j in ids], default_task().field_text(validation[i]))
        if cond.rule == "generation":
            answer, answer_ids = prompts.generate(model, context)
            # The answer's text is not stored: a model can quote the review it was shown.
            items[str(i)] = {
                "demos": list(ids),
                "generated_sha256": sha256_text(answer),
                "first_token": answer_ids[0] if answer_ids else None,
                "n_tokens": len(answer_ids),
                "parsed": parse_label(answer, cond.fmt.choices),
            }
        else:
            items[str(i)] = {"demos": list(ids), "loglik": prompts.scores(model, context)}
        if progress is not None:
            progress(cond.name, len(items), len(demos))
    record: dict[str, Any] = {"protocol": protocol.to_dict(), "fingerprint": protocol.fingerprint, "items": items}
    if cond.rule == "likelihood" and cond.sampler in ("none", "fixed"):
        # One prompt for every item: its content-free scores calibrate it (Zhao et al. 2021).
        record["content_free"] = prompts.content_free_scores(model, train)
    record["items_sha256"] = condition_digest(record)  # every build checks every item against it
    return record


def _stored(condition: StoredCondition | Mapping[str, Any]) -> StoredCondition:
    return condition if isinstance(condition, StoredCondition) else StoredCondition.from_json(condition)


def condition_predictions(condition: StoredCondition | Mapping[str, Any]) -> dict[int, int | None]:
    """``{item_id: predicted label}`` from a condition's stored scores (ties to the first), or
    from its parsed generations (None where the answer was neither label).

    ``condition`` is typed (:class:`evalcore.part3.typed.StoredCondition`) or the JSON
    :func:`run_condition` returns; :meth:`~evalcore.part3.typed.StoredCondition.predictions`
    computes it.

    Examples:
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.part3.experiment import condition_predictions
        >>> predictions = condition_predictions(a.conditions["k=0"])
        >>> predictions[13], predictions[106], len(predictions)
        (0, 1, 64)
    """
    return _stored(condition).predictions()


def condition_outcomes(
    condition: StoredCondition | Mapping[str, Any], labels: Mapping[int, int], order: Sequence[int]
) -> list[int]:
    """Per-item correctness (0/1) in ``order``: the paired outcomes the statistics take.

    An unparseable generation counts as wrong here (the end-to-end view); the ledger
    keeps it apart as an ``error``.

    Raises:
        KeyError: an item of ``order`` that the condition did not score.

    Examples:
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.part3.experiment import condition_outcomes
        >>> condition_outcomes(a.conditions["k=0"], a.labels, a.item_ids[:6])
        [0, 1, 1, 0, 0, 1]
    """
    return _stored(condition).outcomes(labels, order)


def definition_problems(
    cond: Condition,
    stored_protocol: Mapping[str, Any],
    demos: Mapping[int, Sequence[int]],
    tokenizer: Tokenizer,
    validation: Sequence[TaskItem],
) -> list[str]:
    """The stored protocol against the one the condition's definition gives for these items and demos.

    The definition (template, answers, delimiter, shots, sampler, chat template, rule) is
    applied to the protocol a run of this book writes for the verified data and this
    tokenizer; every field that differs is named, so a stored condition that claims
    another template, answers or model is caught even with its fingerprint recomputed.

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import conditions
        >>> train = sst2.load_split("train")
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.models import load_tokenizer
        >>> from evalcore.part3.conditions import demos_for
        >>> from evalcore.part3.experiment import definition_problems
        >>> tokenizer = load_tokenizer()  # doctest: +MODEL
        >>> validation = sst2.load_split("validation")
        >>> cond = conditions(train)["a"][0]  # k=0
        >>> demos = demos_for(cond, a.item_ids, train, validation)
        >>> stored = a.conditions["k=0"].protocol
        >>> definition_problems(cond, stored, demos, tokenizer, validation)
        []
    """
    from evalcore.harness.runprotocol import build_protocol
    from evalcore.models.loader import DEFAULT_MODEL

    task = default_task()
    digest = task.split_digest([task.item_sha256(r) for r in validation])
    base = build_protocol(DEFAULT_MODEL, tokenizer, digest, list(demos))
    expected = protocol_for(cond, base, demos, tokenizer).to_dict()
    return [f"{cond.name}: protocol.{d.path} is {d.a!r}, but its definition gives {d.b!r}"
            for d in diff_protocols(stored_protocol, expected)]  # fmt: skip


def _as_json(stored: StoredCondition | Mapping[str, Any]) -> Mapping[str, Any]:
    """A stored condition as JSON: the audit reads JSON, because it must name values no typed field can hold."""
    return stored.to_json() if isinstance(stored, StoredCondition) else stored


def _sample_model(model: CausalLM | None, sample: Sequence[int]) -> CausalLM | None:
    """The model a non-empty ``sample`` is re-scored with (None for an empty one); refused when missing."""
    if sample and model is None:
        raise InvalidInputError(f"re-scoring the sample {list(sample)} needs the model; pass it, or sample=[]")
    return model if sample else None


def audit_condition(
    model: CausalLM | None,
    tokenizer: Tokenizer,
    cond: Condition,
    stored: StoredCondition | Mapping[str, Any],
    train: Sequence[TaskItem],
    validation: Sequence[TaskItem],
    *,
    recorded_arithmetic: Mapping[str, Any],
    sample: Sequence[int],
    unseal: bool = False,
) -> tuple[list[str], Recheck | None]:
    """Check one stored condition: structure and digest, identity, demos, and a re-scored sample.

    ``model`` is needed only to re-score a non-empty ``sample``; checks 0-3 run without it.

    0. every item has its demo list and one finite score per answer, the condition's
       ``items_sha256`` is the digest of its items, its fingerprint is its protocol's, its
       demo ids hash to the protocol's ``demos_sha256``, and the protocol's fixed parts are
       the pinned ones (:func:`evalcore.part3.record.condition_problems`); a structural
       problem ends the check there;
    1. the items are the protocol's ``item_ids``;
    2. the condition's sampler, run again on those items, gives the same demo ids;
    3. the stored protocol is the one the condition's definition gives
       (:func:`definition_problems`);
    4. the ``sample`` items, re-scored with their stored demos, and the content-free
       inputs of a calibrated condition agree with the stored scores under the
       tolerance policy (:func:`evalcore.audit.recheck.recheck`).

    Raises:
        InvalidInputError: a non-empty ``sample`` without a ``model``.

    Returns:
        ``(problems, recheck)``: an empty list when 1-3 hold, and the verdict of 4: None
        with an empty ``sample`` (nothing re-scored), and None for a generation
        condition, whose answers must be the stored ones exactly on the record's
        arithmetic (elsewhere a greedy choice between near-equal tokens may go the other
        way, so they are not compared).

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import conditions
        >>> train = sst2.load_split("train")
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.models import load_model
        >>> from evalcore.part3.experiment import audit_condition
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> cond = conditions(train)["a"][0]  # k=0
        >>> problems, _ = audit_condition(
        ...     model, tokenizer, cond, a.conditions["k=0"], train,
        ...     sst2.load_split("validation"), recorded_arithmetic=a.arithmetic,
        ...     sample=[13, 15])
        >>> problems
        []
    """
    from evalcore.audit.machine import arithmetic
    from evalcore.scoring.calibration import CONTENT_FREE

    rescorer = _sample_model(model, sample)
    stored = _as_json(stored)
    same_arithmetic = not arithmetic_differences(recorded_arithmetic, arithmetic())
    item_ids = stored.get("protocol", {}).get("data", {}).get("item_ids", []) if isinstance(stored, Mapping) else []
    problems = condition_problems(cond.name, stored, item_ids)
    items = stored.get("items") if isinstance(stored, Mapping) else None
    readable = isinstance(items, Mapping) and all(
        isinstance(e, Mapping) and isinstance(e.get("demos"), list)
        and (cond.rule == "generation" or isinstance(e.get("loglik"), list))
        for e in items.values()
    )  # fmt: skip
    if not readable or "protocol" not in stored:  # a missing demo list or score: nothing below can run
        return problems, None
    try:
        protocol = EvalProtocol.from_dict(stored["protocol"])
    except EvalcoreError as exc:
        return [*problems, f"{cond.name}: the protocol is not an EvalProtocol: {exc}"], None
    # A JSON record's items come back key-sorted as strings: order them as the protocol does.
    if sorted(int(i) for i in stored["items"]) != sorted(protocol.data.item_ids):
        problems.append("the stored items are not the protocol's item_ids")
        return problems, None
    demos = {i: tuple(stored["items"][str(i)]["demos"]) for i in protocol.data.item_ids}
    if demos_for(cond, list(demos), train, validation, unseal=unseal) != demos:
        problems.append(f"the {cond.sampler} sampler gives other demos than the stored ones")
    problems += definition_problems(cond, stored["protocol"], demos, tokenizer, validation)
    if rescorer is None:  # nothing to re-score
        return problems, None
    prompts = _Prompts.of(cond, tokenizer)
    stored_scores: dict[Any, list[float]] = {}
    fresh: dict[Any, list[float]] = {}
    for i in sample:
        context = prompts.context([train[j] for j in demos[i]], default_task().field_text(validation[i]))
        if cond.rule == "generation":
            answer, _ = prompts.generate(rescorer, context)
            digest = sha256_text(answer)
            if digest != stored["items"][str(i)]["generated_sha256"] and same_arithmetic:
                problems.append(f"item {i}: the generated answer differs from the stored one (sha256 {digest[:12]})")
        else:
            stored_scores[i] = stored["items"][str(i)]["loglik"]
            fresh[i] = prompts.scores(rescorer, context)
    if cond.rule == "generation":
        return problems, None
    if "content_free" in stored:  # the calibration's inputs are stored numbers too
        for cf, scores in prompts.content_free_scores(rescorer, train).items():
            key = -1 - CONTENT_FREE.index(cf)  # negative keys: never an item id
            stored_scores[key], fresh[key] = stored["content_free"][cf], scores
    verdict = recheck(stored_scores, fresh, dtype=protocol.model.dtype, recorded_arithmetic=recorded_arithmetic)
    return problems, verdict
