from __future__ import annotations

import math

import pytest

from evalcore.scoring.calibration import answer_probabilities, calibrated_prediction, content_free_prior
from evalcore.scoring.generation import parse_label


def test_answer_probabilities_are_a_softmax_over_the_answers():
    p = answer_probabilities([math.log(0.2), math.log(0.6)])
    assert p == pytest.approx([0.25, 0.75])
    # Shift invariance: only differences of log-likelihoods matter, even far from zero.
    assert answer_probabilities([-1000.0, -1001.0]) == pytest.approx(answer_probabilities([0.0, -1.0]))
    assert answer_probabilities([-math.inf, -3.0]) == [0.0, 1.0]


def test_calibration_divides_by_the_content_free_prior_zhao_2021():
    # The model prefers "positive" 3:1 on content-free inputs; an item at 2:1 for
    # "positive" is below that baseline, so calibration predicts "negative".
    prior = content_free_prior({"N/A": [math.log(0.25), math.log(0.75)], "": [math.log(0.25), math.log(0.75)]})
    assert prior == pytest.approx([0.25, 0.75])
    item = [math.log(1 / 3), math.log(2 / 3)]
    assert calibrated_prediction(item, prior) == 0
    assert calibrated_prediction(item, [0.5, 0.5]) == 1  # a uniform prior changes nothing
    assert content_free_prior({"a": [0.0, -math.inf], "b": [-math.inf, 0.0]}) == [0.5, 0.5]


def test_the_published_prior_averages_raw_probabilities_then_normalises():
    # Zhao et al.'s get_p_content_free: p_y per input holds exp(log-prob) of each answer, unnormalised;
    # np.mean over inputs, then p_y / sum(p_y). Hand-computed: raw (0.1, 0.3) and (0.4, 0.2) average to
    # (0.25, 0.25), i.e. (1/2, 1/2); normalising first gives (0.25, 0.75) and (2/3, 1/3), averaging to
    # (11/24, 13/24).
    scores = {"N/A": [math.log(0.1), math.log(0.3)], "[MASK]": [math.log(0.4), math.log(0.2)]}
    assert content_free_prior(scores) == pytest.approx([0.5, 0.5], abs=1e-15)
    assert content_free_prior(scores, method="published") == content_free_prior(scores)
    assert content_free_prior(scores, method="per-input") == pytest.approx([11 / 24, 13 / 24], abs=1e-15)
    # An input on which the model is unsure of everything weighs little in the published prior.
    quiet = {"N/A": [math.log(0.9), math.log(0.1)], "": [-30.0, -29.0]}
    assert content_free_prior(quiet)[0] == pytest.approx(0.9, abs=1e-9)
    assert content_free_prior(quiet, method="per-input")[0] == pytest.approx((0.9 + 1 / (1 + math.e)) / 2)
    # Far from zero the common shift keeps it exact, where exp() alone would underflow to 0/0.
    far = {"a": [-2000.0, -2001.0], "b": [-2001.0, -2000.0]}
    assert content_free_prior(far) == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: answer_probabilities([]), "no scores"),
        (lambda: answer_probabilities([math.nan, 0.0]), "finite"),
        (lambda: answer_probabilities([-math.inf, -math.inf]), "probability zero"),
        (lambda: content_free_prior({}), "no content-free"),
        (lambda: content_free_prior({"a": [0.0, 0.0], "b": [0.0, 0.0, 0.0]}), "same answers"),
        (lambda: content_free_prior({"a": [0.0, 0.0]}, method="median"), "method must be one of"),
        (lambda: content_free_prior({"a": [0.0, math.nan]}), "finite"),
        (lambda: content_free_prior({"a": [-math.inf, -math.inf]}), "probability zero"),
        (lambda: calibrated_prediction([0.0, 0.0], [1.0, 0.0]), "positive probabilities"),
        (lambda: calibrated_prediction([0.0, 0.0], [1.0]), "positive probabilities"),
        (lambda: calibrated_prediction([0.0, 0.0], [math.inf, 0.5]), "positive probabilities"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (" positive", 1),
        (" Negative.", 0),
        ("\nPOSITIVE!", 1),
        (" positively", None),
        (" neutral", None),
        ("", None),
        (" 42", None),
        (" negative or positive", 0),
        ("This sentence is positive.", 1),
        ("It is not positive", 1),
    ],
)
def test_parse_label_takes_the_first_answer_word(text, expected):
    assert parse_label(text, ("negative", "positive")) == expected


def test_parse_label_refuses_non_text():
    with pytest.raises(TypeError, match="must be str"):
        parse_label(None, ("a", "b"))  # type: ignore[arg-type]
