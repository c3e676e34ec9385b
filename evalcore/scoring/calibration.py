"""Contextual calibration (Zhao et al. 2021), applied to stored scores.

Explained in Part III (``book/part3-format.md``). The model's preference among the
answers is measured on *content-free* inputs ("N/A", the empty string, "[MASK]") written
in the same prompt, with the same demos, as the real items. As in Zhao et al.'s released
code (``get_p_content_free``), the answers' raw probabilities are averaged over the
content-free inputs and then normalised over the answers, giving p̂_cf (the
``"published"`` prior); each real item's renormalised probabilities p̂ are then divided
by p̂_cf (W = diag(p̂_cf)⁻¹, no bias) and the largest wins. The ``"per-input"`` variant
normalises each content-free input first and then averages: an input on which the model
is unsure of everything then weighs as much as one it is sure about. Only scores are
needed: the content-free scores are stored with the condition, so calibration never
re-runs the model on the items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from evalcore.errors import InvalidInputError
from evalcore.models.interfaces import CausalLM, Encoder
from evalcore.scoring.loglik import argmax_first

__all__ = ["CONTENT_FREE", "PRIOR_METHODS", "answer_probabilities", "calibrated_prediction", "content_free_prior"]

CONTENT_FREE = ("N/A", "", "[MASK]")
"""The content-free inputs of Zhao et al. (2021), written where a review goes."""


def answer_probabilities(loglik: Sequence[float]) -> list[float]:
    """p̂: the answers' probabilities renormalised over the answers (a softmax of the s_ij).

    Raises:
        ValueError: no scores, or a score that is NaN or +inf.

    Examples:
        >>> from evalcore.scoring import answer_probabilities
        >>> [round(p, 3) for p in answer_probabilities([-7.91, -7.41])]
        [0.378, 0.622]
    """
    if not loglik:
        raise InvalidInputError("no scores")
    if any(math.isnan(s) or s == math.inf for s in loglik):
        raise InvalidInputError(f"scores must be finite or -inf, got {list(loglik)!r}")
    top = max(loglik)
    if top == -math.inf:
        raise InvalidInputError("every answer has probability zero")
    weights = [math.exp(s - top) for s in loglik]
    total = sum(weights)
    return [w / total for w in weights]


PRIOR_METHODS = ("published", "per-input")
"""How the content-free inputs are combined: raw probabilities averaged then normalised (Zhao et
al.'s code), or each input normalised then averaged."""


def content_free_prior(scores: Mapping[str, Sequence[float]], method: str = "published") -> list[float]:
    """p̂_cf from the content-free inputs' scores (``{input: [s_0, s_1, ...]}``).

    Args:
        method: ``"published"`` (default): the mean of each answer's raw probability
            exp(s_j) over the inputs, normalised over the answers, as Zhao et al.'s code
            does; ``"per-input"``: the mean of the normalised p̂ of each input.

    Raises:
        ValueError: no inputs, inputs with different numbers of answers, an unknown
            method, or (published) every answer at probability zero on every input.

    Examples:
        >>> from evalcore.scoring import content_free_prior
        >>> scores = {"N/A": [-2.0, -1.0], "": [-1.5, -1.2], "[MASK]": [-2.2, -0.9]}
        >>> [round(p, 3) for p in content_free_prior(scores)]
        [0.304, 0.696]
        >>> [round(p, 3) for p in content_free_prior(scores, method="per-input")]
        [0.303, 0.697]
    """
    if method not in PRIOR_METHODS:
        raise InvalidInputError(f"method must be one of {PRIOR_METHODS}, got {method!r}")
    if not scores:
        raise InvalidInputError("no content-free scores")
    if len({len(s) for s in scores.values()}) != 1:
        raise InvalidInputError("content-free inputs must score the same answers")
    if method == "per-input":
        probs = [answer_probabilities(s) for s in scores.values()]
        return [sum(p[j] for p in probs) / len(probs) for j in range(len(probs[0]))]
    rows = [list(s) for s in scores.values()]
    for s in rows:
        answer_probabilities(s)  # the same refusals: NaN, +inf, all -inf
    top = max(max(s) for s in rows)  # one common shift keeps the raw probabilities' ratios exact
    means = [sum(math.exp(s[j] - top) for s in rows) / len(rows) for j in range(len(rows[0]))]
    total = sum(means)
    return [m / total for m in means]


def calibrated_prediction(loglik: Sequence[float], prior: Sequence[float]) -> int:
    """argmax_j p̂_j / p̂_cf,j (ties to the first, as the uncalibrated rule).

    Raises:
        ValueError: a prior of another length, or one with a zero or negative entry.

    Examples:
        >>> from evalcore.scoring import argmax_first, calibrated_prediction
        >>> loglik = [-7.91, -7.41]
        >>> argmax_first(loglik), calibrated_prediction(loglik, prior=[0.3, 0.7])
        (1, 0)
    """
    p = answer_probabilities(loglik)
    if len(prior) != len(p) or any(not (0 < q < math.inf) for q in prior):
        raise InvalidInputError(f"prior must be {len(p)} positive probabilities, got {list(prior)!r}")
    return argmax_first([pj / qj for pj, qj in zip(p, prior, strict=True)])


def content_free_scores(
    model: CausalLM, tokenizer: Encoder, contexts: Mapping[str, str], continuations: Sequence[str]
) -> dict[str, list[float]]:
    """Score each content-free context (``{input: context string}``) on the answers: ``{input: [s_j]}``."""
    from evalcore.scoring._shared_context import score_requests_shared

    return {
        name: [r.loglik for r in score_requests_shared(model, tokenizer, [(ctx, c) for c in continuations])]
        for name, ctx in contexts.items()
    }
