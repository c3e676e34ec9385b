"""Part I's bookkeeping helpers and exercises: the doc_id rule against the harness's own log, what the article's
counts allow, and the two graded checks with their pages' solutions and the typical wrong answers."""

from __future__ import annotations

import itertools
import random

import pytest
from page_exercises import ROOT, assert_unanswered, run_page_solution

from evalbook_pages.article import ARTICLE_LIKELIHOOD
from evalbook_pages.chain_exercises import (
    ARTICLE_MISFILED,
    check_label_mix,
    check_logged_doc_ids,
    harness_logged_ids,
    misfiled,
    positives_given,
    possible_positives,
)
from evalbook_pages.exercises import WrongAnswer
from evalcore import harness
from evalcore.errors import InvalidInputError, SealedItemError
from evalcore.records.store import read_record
from evalcore.sst2.selection import confirm_ids, dev_ids


@pytest.fixture(scope="module")
def task(train, validation):
    return harness.build_task(train, validation)


@pytest.fixture(scope="module")
def golden():
    return read_record(ROOT / "records" / "golden-dev64")


# --- the doc_id rule ----------------------------------------------------------------------------


def test_misfiled_follows_the_rule_on_small_lists():
    assert misfiled([5, 2, 9]) == [(5, 2), (2, 5)]
    assert misfiled([1, 2, 3]) == []
    assert misfiled([3, 1, 2]) == [(3, 1), (1, 2), (2, 3)]


def test_misfiled_refuses_duplicates_and_non_ints():
    for bad in ([3, 3, 1], [1, True], [1, "2"]):
        with pytest.raises(InvalidInputError, match="distinct ints"):
            misfiled(bad)


def test_the_article_count_is_quoted_and_within_its_run():
    assert 0 < ARTICLE_MISFILED <= ARTICLE_LIKELIHOOD["of"]


@pytest.mark.slow
def test_misfiled_is_what_the_harness_logs(task):
    # Guards against a rule that reads well but is not the pinned harness's: compare with its own log.
    ids = dev_ids()
    rng = random.Random(7)
    for ids_passed in (ids[:6], sorted(ids[:6]), rng.sample(ids, 12), rng.sample(ids, 12)):
        logged = harness_logged_ids(task, ids_passed)
        assert sorted(idx for _, idx in logged) == sorted(ids_passed)
        assert [(d, i) for d, i in logged if d != i] == misfiled(ids_passed)


@pytest.mark.slow
def test_harness_logged_ids_keeps_the_seal(task):
    with pytest.raises(SealedItemError):
        harness_logged_ids(task, [dev_ids()[0], confirm_ids()[0]])


# --- The doc_id bug: ex-docid-predict -----------------------------------------------------------


@pytest.mark.slow
def test_logged_doc_ids_page_solution(task):
    names = {"task": task, "SAMPLES": dev_ids()[:4]}  # SAMPLES: given in the page's answer cell
    verdict = run_page_solution("notebooks/doc-id-bug.md", "ex-docid-predict", names)
    assert "under another's id" in verdict


@pytest.mark.slow
def test_logged_doc_ids_check_names_the_typical_mistakes(task):
    samples = dev_ids()[:4]
    right = {idx: doc_id for doc_id, idx in harness_logged_ids(task, samples)}
    assert right != {i: i for i in samples}  # the exercise needs an unsorted list
    fixed = sorted(samples)
    assert check_logged_doc_ids(right, fixed, samples=samples, task=task).startswith("correct")
    assert_unanswered(check_logged_doc_ids(None, fixed, samples=samples, task=task), "logged is still None")
    assert_unanswered(check_logged_doc_ids(right, None, samples=samples, task=task), "fixed is still None")
    with pytest.raises(WrongAnswer, match="what a sorted list would get"):
        check_logged_doc_ids({i: i for i in samples}, fixed, samples=samples, task=task)
    with pytest.raises(WrongAnswer, match="the other way round"):
        check_logged_doc_ids({d: i for i, d in right.items()}, fixed, samples=samples, task=task)
    one_off = dict(right)
    wrong_doc = next(i for i in samples if right[i] != i)
    one_off[wrong_doc] = wrong_doc
    with pytest.raises(WrongAnswer, match=f"document {wrong_doc} is not logged as {wrong_doc}"):
        check_logged_doc_ids(one_off, fixed, samples=samples, task=task)
    with pytest.raises(WrongAnswer, match="must map each document"):
        check_logged_doc_ids(list(right.values()), fixed, samples=samples, task=task)
    with pytest.raises(WrongAnswer, match="still logs"):
        check_logged_doc_ids(right, list(samples), samples=samples, task=task)
    with pytest.raises(WrongAnswer, match="same ids as SAMPLES"):
        check_logged_doc_ids(right, fixed[:-1], samples=samples, task=task)


# --- Why these numbers are not the article's: ex-article-label-mix ----------------------------


def _brute_force(counts):
    """Every positive count of every confusion matrix that matches the counts (an independent oracle)."""
    n = counts["of"]
    return sorted({
        tp + fn
        for tp, fn, fp, tn in itertools.product(range(n + 1), repeat=4)
        if tp + fn + fp + tn == n and tp + fp == counts["predicted_positive"]
        and fn + tn == counts["predicted_negative"] and tp + tn == counts["correct"]
    })  # fmt: skip


@pytest.mark.parametrize(
    "counts",
    [
        {"correct": 3, "of": 6, "predicted_negative": 5, "predicted_positive": 1},
        {"correct": 6, "of": 6, "predicted_negative": 2, "predicted_positive": 4},
        {"correct": 0, "of": 5, "predicted_negative": 3, "predicted_positive": 2},
        {"correct": 4, "of": 8, "predicted_negative": 4, "predicted_positive": 4},
    ],
)
def test_possible_positives_agrees_with_every_confusion_matrix(counts):
    assert possible_positives(counts) == _brute_force(counts)


def test_label_mix_page_solution(golden):
    verdict = run_page_solution("book/article-numbers.md", "ex-article-label-mix", {"golden": golden})
    assert "positive labels" in verdict


def test_the_articles_labels_fix_its_confusion_matrix():
    # The article's four counts and its labels: one confusion matrix only, and the labels among the possible ones.
    counts = ARTICLE_LIKELIHOOD
    assert counts["labels_positive"] in possible_positives(counts)
    assert counts["labels_negative"] + counts["labels_positive"] == counts["of"]
    tps = range(counts["predicted_positive"] + 1)
    fits = [tp for tp in tps if positives_given(counts, tp) == counts["labels_positive"]]
    assert len(fits) == 1
    assert positives_given(counts, 0) == possible_positives(counts)[0]


def test_label_mix_check_names_the_typical_mistakes():
    right = possible_positives(ARTICLE_LIKELIHOOD)
    (tp,) = [t for t in range(4) if positives_given(ARTICLE_LIKELIHOOD, t) == ARTICLE_LIKELIHOOD["labels_positive"]]
    assert check_label_mix(right, tp).startswith("correct")
    assert check_label_mix(tuple(reversed(right)), tp).startswith("correct")
    assert_unanswered(check_label_mix(None, tp), "possible_positives is still None")
    assert_unanswered(check_label_mix(right, None), "article_tp is still None")
    with pytest.raises(WrongAnswer, match="more than one number"):
        check_label_mix(right[-1], tp)
    with pytest.raises(WrongAnswer, match=f"{right[0]} is possible too"):
        check_label_mix(right[1:], tp)  # all "positive" predictions taken as right, or some
    impossible = ARTICLE_LIKELIHOOD["correct"]  # a tempting guess: as many positives as right answers
    assert impossible not in right
    with pytest.raises(WrongAnswer, match=f"{impossible} is impossible"):
        check_label_mix([*right, impossible], tp)
    with pytest.raises(WrongAnswer, match="list of ints"):
        check_label_mix("29", tp)
    with pytest.raises(WrongAnswer, match="must be an int"):
        check_label_mix(right, "2")
    all_right = ARTICLE_LIKELIHOOD["predicted_positive"]  # the usual slip: every "positive" prediction right
    with pytest.raises(WrongAnswer, match=f"would have {positives_given(ARTICLE_LIKELIHOOD, all_right)} positive"):
        check_label_mix(right, all_right)
    with pytest.raises(WrongAnswer, match="not a possible number"):
        check_label_mix(right, ARTICLE_LIKELIHOOD["predicted_positive"] + 1)
