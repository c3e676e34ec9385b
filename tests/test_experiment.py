"""Part III's conditions: prompts, demos, protocols and fingerprints; one real-model run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.errors import SealedItemError
from evalcore.harness.registry import harness_fewshot_contexts
from evalcore.part3.conditions import HARNESS_FORMAT, Condition, PromptFormat, context_for, demos_for, protocol_for
from evalcore.part3.experiment import audit_condition, condition_outcomes, condition_predictions, run_condition
from evalcore.part3.typed import GenerationItem, LikelihoodItem, StoredCondition
from evalcore.protocol.spec import EvalProtocol
from evalcore.scoring.fewshot import demos_digest
from evalcore.sst2.rows import Row
from evalcore.sst2.selection import confirm_ids, dev_ids

GOLDEN = Path(__file__).resolve().parent.parent / "records/golden-dev64/run.json"


def _golden_protocol() -> EvalProtocol:
    return EvalProtocol.from_dict(json.loads(GOLDEN.read_text())["protocol"])


def test_zero_shot_harness_condition_is_the_golden_runs_protocol_exactly():
    # The unset few-shot fields stay out of the canonical JSON, so the dev-64 run keeps its
    # fingerprint, and the zero-shot condition built from it has that same fingerprint.
    record = json.loads(GOLDEN.read_text())
    base = _golden_protocol()
    assert base.fingerprint == record["fingerprint"]
    assert "fewshot_sampler" not in base.to_dict()["prompt"]
    demos = {i: () for i in base.data.item_ids}
    assert protocol_for(Condition("k=0"), base, demos).fingerprint == record["fingerprint"]


def test_demos_and_sampler_move_the_fingerprint():
    base = _golden_protocol()
    ids = list(base.data.item_ids)
    a = protocol_for(Condition("a", k=1, sampler="fixed", demo_set=(5,)), base, {i: (5,) for i in ids})
    b = protocol_for(Condition("b", k=1, sampler="fixed", demo_set=(6,)), base, {i: (6,) for i in ids})
    c = protocol_for(Condition("c", k=1, sampler="item-keyed"), base, {i: (5,) for i in ids})
    assert len({base.fingerprint, a.fingerprint, b.fingerprint, c.fingerprint}) == 4
    assert a.prompt.demos_sha256 == demos_digest({i: (5,) for i in ids})
    assert EvalProtocol.from_dict(a.to_dict()) == a  # the new fields round-trip


def test_demos_digest_is_order_sensitive_and_refuses_non_ints():
    assert demos_digest({1: [2, 3]}) != demos_digest({1: [3, 2]})
    assert demos_digest({1: [2, 3], 4: []}) == demos_digest({4: [], 1: [2, 3]})
    with pytest.raises(TypeError, match="must be ints"):
        demos_digest({1: ["2"]})


@pytest.mark.slow
def test_harness_condition_reproduces_the_harness_prompts(train, validation):
    # The oracle is lm-eval itself: its own sst2 task, seeded as simple_evaluate seeds it, builds the
    # 4-shot contexts; the condition must give the same strings from its own demo draw and builder.
    ids = sorted(dev_ids())
    cond = Condition("k=4, harness sampler", k=4, sampler="harness")
    demos = demos_for(cond, ids, train, validation)
    harness = harness_fewshot_contexts(train, validation, ids, 4, cond.seed)
    assert sorted(harness) == ids
    for i in ids:
        assert context_for(cond, [train[j] for j in demos[i]], validation[i].sentence) == harness[i]
    zero = harness_fewshot_contexts(train, validation, ids[:1], 0, cond.seed)
    assert context_for(Condition("k=0"), [], validation[ids[0]].sentence) == zero[ids[0]]


def test_bad_conditions_are_refused():
    with pytest.raises(ValueError, match="zero shots need 'none'"):
        Condition("x", k=2)
    with pytest.raises(ValueError, match="fixed demo set of 1 ids for k=2"):
        Condition("x", k=2, sampler="fixed", demo_set=(1,))
    with pytest.raises(ValueError, match="sampler must be one of"):
        Condition("x", k=1, sampler="random")
    with pytest.raises(ValueError, match="rule must be one of"):
        Condition("x", rule="vibes")
    with pytest.raises(ValueError, match="exactly once"):
        PromptFormat("x", "no placeholder", ("a", "b"))
    with pytest.raises(ValueError, match="distinct ignoring case"):
        PromptFormat("x", "{{sentence}}", ("a", "a"))
    with pytest.raises(ValueError, match="distinct ignoring case"):
        PromptFormat("x", "{{sentence}}", ("Good", " good"))  # the parser could not tell them apart
    with pytest.raises(ValueError, match="repeats an id"):
        Condition("x", k=2, sampler="fixed", demo_set=(3, 3))
    with pytest.raises(TypeError, match="seed must be an int"):
        Condition("x", k=1, sampler="item-keyed", seed="1234")
    assert PromptFormat("x", "{{sentence}} {x}", ("a", "b")).render("a {b}") == "a {b} {x}"  # literal, no format()


def test_outcomes_pair_items_in_the_given_order_and_count_unparsed_as_wrong():
    def stored(items):
        return StoredCondition(protocol={}, fingerprint="", items=items, content_free=None, items_sha256="")

    scored = stored({3: LikelihoodItem((), (-1.0, -2.0)), 7: LikelihoodItem((), (-2.0, -1.0)),
                     9: LikelihoodItem((), (-1.0, -1.0))})  # fmt: skip
    assert condition_predictions(scored) == {3: 0, 7: 1, 9: 0}
    assert condition_outcomes(scored, {3: 0, 7: 0, 9: 0}, [9, 7, 3]) == [1, 0, 1]
    generated = stored({3: GenerationItem((), "0" * 64, None, 0, None), 7: GenerationItem((), "0" * 64, 5, 1, 1)})
    assert condition_outcomes(generated, {3: 0, 7: 1}, [3, 7]) == [0, 1]
    # the JSON a run returns is read the same way
    unparsed = {"demos": [], "generated_sha256": "0" * 64, "first_token": None, "n_tokens": 0, "parsed": None}
    as_json = {"protocol": {}, "fingerprint": "", "items_sha256": "",
               "items": {"3": {"demos": [], "loglik": [-1.0, -2.0]}, "7": unparsed}}  # fmt: skip
    assert condition_predictions(as_json) == {3: 0, 7: None}


@pytest.mark.model
def test_real_conditions_on_dev_items(model_and_tokenizer, train, validation):
    from evalcore.audit.numerics import compare_scores

    model, tokenizer = model_and_tokenizer
    base = _golden_protocol()
    golden = json.loads(GOLDEN.read_text())
    ids = sorted(dev_ids())[:3]
    zero = run_condition(model, tokenizer, Condition("k=0"), ids, train, validation, base)
    stored = {e["item_id"]: e["independent"]["loglik"] for e in golden["items"] if e["item_id"] in ids}
    assert compare_scores(stored, {int(i): e["loglik"] for i, e in zero["items"].items()}).ok
    assert set(zero["content_free"]) == {"N/A", "", "[MASK]"}
    fixed = run_condition(model, tokenizer, Condition("s", k=2, sampler="fixed", demo_set=(10, 20)), ids, train,
                          validation, base)  # fmt: skip
    assert all(e["demos"] == [10, 20] for e in fixed["items"].values()) and fixed["fingerprint"] != zero["fingerprint"]
    chat = run_condition(model, tokenizer, Condition("chat", chat=True), ids, train, validation, base)
    assert chat["protocol"]["prompt"]["chat_template_sha256"]
    gen = run_condition(model, tokenizer, Condition("gen", rule="generation"), ids, train, validation, base)
    assert all(len(e["generated_sha256"]) == 64 and e["parsed"] in (0, 1, None) and "generated" not in e
               for e in gen["items"].values())  # fmt: skip
    assert gen["protocol"]["budget"]["max_new_tokens"] > 0
    with pytest.raises(SealedItemError):
        run_condition(model, tokenizer, Condition("k=0"), confirm_ids()[:1], train, validation, base)


def test_row_type_is_what_the_conditions_take():
    row = Row(idx=0, sentence="a fine film", label=1)
    assert context_for(Condition("k=0"), [], row.sentence) == HARNESS_FORMAT.render(row.sentence)


@pytest.mark.model
def test_audit_of_a_stored_condition_catches_edited_demos_scores_and_fingerprints(model_and_tokenizer, train,
                                                                                  validation):  # fmt: skip
    import copy

    from evalcore.audit.machine import arithmetic

    model, tokenizer = model_and_tokenizer
    base = _golden_protocol()
    ids = sorted(dev_ids())[:4]
    cond = Condition("k=2, harness sampler", k=2, sampler="harness")
    # Through JSON, as records are stored: string keys, sorted.
    stored = json.loads(json.dumps(run_condition(model, tokenizer, cond, ids, train, validation, base), sort_keys=True))
    here = arithmetic()
    problems, verdict = audit_condition(model, tokenizer, cond, stored, train, validation,
                                        recorded_arithmetic=here, sample=ids[:2])  # fmt: skip
    assert problems == [] and verdict.ok and verdict.drift.bit_identical

    edited = copy.deepcopy(stored)
    edited["items"][str(ids[0])]["demos"] = [1, 2]
    problems, _ = audit_condition(model, tokenizer, cond, edited, train, validation, recorded_arithmetic=here,
                                  sample=ids[:1])  # fmt: skip
    assert any("demos_sha256" in p for p in problems) and any("sampler gives other demos" in p for p in problems)

    nudged = copy.deepcopy(stored)
    nudged["items"][str(ids[1])]["loglik"][0] += 1e-3
    _, verdict = audit_condition(model, tokenizer, cond, nudged, train, validation, recorded_arithmetic=here,
                                 sample=ids[:2])  # fmt: skip
    assert not verdict.ok

    forged = copy.deepcopy(stored)
    forged["protocol"]["prompt"]["num_fewshot"] = 3
    problems, _ = audit_condition(model, tokenizer, cond, forged, train, validation, recorded_arithmetic=here,
                                  sample=[])  # fmt: skip
    assert any("fingerprint" in p for p in problems)
