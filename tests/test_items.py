"""One item of a run record against itself, its partner scorer, the protocol and a re-run (evalcore.audit._items).

The module is private; its checks are reached here as every caller reaches them, through
:func:`evalcore.audit.levels.audit_record`, on copies of the committed golden record.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from evalcore.audit.levels import audit_record

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((ROOT / "records" / "golden-dev64" / "run.json").read_text())
FLOAT32_UNIT = 2.0**-24


def level1(edit):
    record = copy.deepcopy(GOLDEN)
    edit(record)
    return audit_record(record).levels[1]


def test_a_genuine_record_has_no_item_problem():
    assert level1(lambda r: None) == []


def test_a_single_token_score_must_be_its_token_log_prob_exactly():
    def nudge(r):
        r["items"][0]["independent"]["token_logprobs"][1][0] += 1e-9

    stored = "item 537: s_537,1 -4.3033447265625"  # exact: the committed record's score, read back, not recomputed
    assert level1(nudge)[0].startswith(stored + " is not the sum of its token log-probs")


def test_a_multi_token_sum_is_held_to_float32_rounding_and_no_closer():
    def split(by):
        def edit(r):
            ind = r["items"][0]["independent"]
            total = ind["loglik"][0]
            ind["continuation_ids"][0] = [3524, 3524]
            ind["token_logprobs"][0] = [total / 2, total / 2 + by * FLOAT32_UNIT * abs(total)]

        return edit

    assert not [p for p in level1(split(0.5)) if "sum of its token log-probs" in p]
    assert [p for p in level1(split(4.0)) if "sum of its token log-probs" in p]


def test_a_stored_prediction_and_a_logits_shape_are_recomputed():
    def edit(r):
        ind = r["items"][0]["independent"]
        ind["prediction"] = 1 - ind["prediction"]
        ind["logits_shape"] = [1, 7, 49152]

    problems = level1(edit)
    assert "item 537: independent prediction 0 but the argmax of its scores is 1" in problems
    assert "item 537: logits_shape [1, 7, 49152] is not [1, 43, vocabulary] for its tokens" in problems


def test_greedy_flags_that_differ_between_the_scorers_are_named():
    def edit(r):
        r["items"][0]["official"]["is_greedy"] = [True, False]

    assert level1(edit) == ["item 537: greedy flags differ (official [True, False], independent [False, False])"]


def test_candidate_hashes_are_derived_from_the_protocols_choices():
    def edit(r):
        r["items"][2]["independent"]["continuation_sha256"].reverse()
        r["items"][2]["official"]["continuation_sha256"].reverse()

    problems = level1(edit)
    assert "item 168: independent candidate hashes are not the protocol's choices" in problems
    assert "item 168: logged candidate hashes are not the protocol's choices" in problems
