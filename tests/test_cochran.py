"""Cochran's Q against statsmodels and SciPy."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy import stats as sp
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q

from evalcore.errors import InvalidInputError
from evalcore.stats.cochran import chi2_sf, cochran_q


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 23])
@pytest.mark.parametrize("x", [0.0, 1e-6, 0.3, 1.0, 2.5, 7.9, 15.0, 40.0, 120.0])
def test_chi2_tail_matches_scipy(x, df):
    assert chi2_sf(x, df) == pytest.approx(sp.chi2.sf(x, df), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("seed", range(15))
def test_cochran_q_matches_statsmodels(seed):
    rng = random.Random(seed)
    k, n = rng.choice([2, 3, 5, 8]), rng.choice([10, 64, 128])
    rates = [rng.uniform(0.2, 0.8) for _ in range(k)]
    outcomes = [[int(rng.random() < r) for _ in range(n)] for r in rates]
    ours = cochran_q(outcomes)
    ref = sm_cochrans_q(np.array(outcomes).T)  # statsmodels: items in rows, conditions in columns
    assert ours.q == pytest.approx(ref.statistic, rel=1e-10, abs=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
    assert ours.df == ref.df == k - 1


def test_two_conditions_is_mcnemar_without_continuity_correction():
    a = [1] * 10 + [0] * 5 + [1] * 3 + [0] * 6
    b = [1] * 10 + [1] * 5 + [0] * 3 + [0] * 6
    b_count, c_count = 5, 3  # only b right, only a right
    assert cochran_q([a, b]).q == pytest.approx((b_count - c_count) ** 2 / (b_count + c_count), rel=1e-12)


def test_conditions_that_never_disagree_give_q_zero():
    same = [1, 0, 1, 1]
    result = cochran_q([same, same, same])
    assert (result.q, result.p_value, result.n_informative) == (0.0, 1.0, 0)


@pytest.mark.parametrize(
    ("outcomes", "message"),
    [([[1, 0]], "at least two"), ([[1, 0], [1]], "same items"), ([[], []], "same items"),
     ([[1, 0], [1, 2]], r"outcomes\[1\]\[1\] must be 0 or 1")],
)  # fmt: skip
def test_bad_inputs_are_refused(outcomes, message):
    with pytest.raises(InvalidInputError, match=message):
        cochran_q(outcomes)


def _exact_permutation_p(outcomes):
    """Every arrangement of each item's successes over the conditions, enumerated: the exact conditional p."""
    import itertools

    k, n = len(outcomes), len(outcomes[0])
    observed = cochran_q(outcomes).q
    per_item = [sorted(set(itertools.permutations([outcomes[j][i] for j in range(k)]))) for i in range(n)]
    hits = total = 0
    for choice in itertools.product(*per_item):
        table = [[choice[i][j] for i in range(n)] for j in range(k)]
        hits += cochran_q(table).q >= observed - 1e-12
        total += 1
    return hits / total


@pytest.mark.parametrize("seed", range(4))
def test_permutation_p_approaches_the_exact_enumeration(seed):
    from evalcore.stats.cochran import permutation_p

    rng = random.Random(seed)
    outcomes = [[int(rng.random() < r) for _ in range(7)] for r in (0.2, 0.5, 0.8)]
    exact = _exact_permutation_p(outcomes)
    assert permutation_p(outcomes, resamples=20_000, seed=1) == pytest.approx(exact, abs=0.02)


def test_permutation_p_is_seeded_and_refuses_bad_resamples():
    from evalcore.stats.cochran import permutation_p

    outcomes = [[1, 0, 1, 1, 0], [0, 0, 1, 0, 0], [1, 1, 1, 0, 1]]
    assert permutation_p(outcomes, 500, seed=3) == permutation_p(outcomes, 500, seed=3)
    with pytest.raises(InvalidInputError, match="resamples"):
        permutation_p(outcomes, 0)
