"""Exact permutation p-values, the printed form of a p-value, and what a test could detect (evalcore.stats.exact)."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from evalcore.errors import InvalidInputError
from evalcore.stats.cochran import cochran_q, permutation_p
from evalcore.stats.exact import (
    PermutationP,
    cochran_exact_p,
    cochran_permutation,
    discordant_needed,
    format_p,
    mcnemar_min_p,
    newcombe_paired_ci,
)
from evalcore.stats.paired import mcnemar_exact, paired_bootstrap_ci

TOL = 1e-12
"""Both sides of an exact comparison are ratios of the same integers, computed in different orders."""


def brute_force_p(table: list[list[int]]) -> float:
    """Every arrangement of each item's successes over the conditions, listed one by one."""
    k, n = len(table), len(table[0])
    rows = [sum(table[j][i] for j in range(k)) for i in range(n)]
    observed = cochran_q(table).q
    choices = [list(itertools.combinations(range(k), r)) for r in rows]
    hits = total = 0
    for pick in itertools.product(*choices):
        shuffled = [[int(j in pick[i]) for i in range(n)] for j in range(k)]
        total += 1
        hits += cochran_q(shuffled).q >= observed - 1e-9
    return hits / total


def random_table(rng: random.Random, k: int, n: int) -> list[list[int]]:
    return [[rng.randint(0, 1) for _ in range(n)] for _ in range(k)]


@pytest.mark.parametrize("seed", range(40))
def test_the_exact_p_is_the_brute_force_enumeration(seed):
    rng = random.Random(seed)
    k = rng.randint(2, 5)
    table = random_table(rng, k, rng.randint(2, {2: 9, 3: 7, 4: 5, 5: 4}[k]))
    assert cochran_exact_p(table) == pytest.approx(brute_force_p(table), abs=TOL)


def test_the_exact_p_is_what_resampling_estimates():
    rng = random.Random(7)
    table = [[int(rng.random() < 0.3 + 0.15 * j) for _ in range(40)] for j in range(5)]
    exact = cochran_exact_p(table)
    resampled = permutation_p(table, resamples=20_000, seed=1)
    assert exact is not None
    assert abs(exact - resampled) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4


@pytest.mark.parametrize(("only_a", "only_b"), [(0, 0), (1, 0), (3, 1), (7, 0), (5, 5), (2, 9)])
def test_with_two_conditions_the_exact_p_is_mcnemars(only_a, only_b):
    # Q for k = 2 is (b - c)^2 / (b + c): the same ordering of outcomes as McNemar's exact test.
    a = [1] * only_a + [0] * only_b + [1, 0, 1]
    b = [0] * only_a + [1] * only_b + [1, 0, 1]
    assert cochran_exact_p([a, b]) == pytest.approx(mcnemar_exact(a, b).p_value, abs=TOL)


def test_a_table_where_no_item_is_informative_has_p_one():
    assert cochran_exact_p([[1, 0, 1], [1, 0, 1], [1, 0, 1]]) == 1.0  # exact: returned as the literal 1.0


def test_a_too_large_enumeration_falls_back_to_resampling_and_says_so():
    rng = random.Random(3)
    table = random_table(rng, 8, 30)
    assert cochran_exact_p(table, max_states=1) is None
    found = cochran_permutation(table, resamples=500, seed=0, max_states=1)
    assert not found.exact and found.resamples == 500
    assert found.p_value == permutation_p(table, 500, 0)
    small = random_table(rng, 4, 10)
    assert cochran_permutation(small) == PermutationP(cochran_exact_p(small), exact=True)


def test_a_resampling_floor_prints_as_an_upper_bound():
    floor = PermutationP(1 / 10_001, exact=False, resamples=10_000)
    assert floor.at_floor and format_p(floor) == "< 1e-4"
    assert not PermutationP(3 / 10_001, exact=False, resamples=10_000).at_floor
    assert format_p(PermutationP(0.000771604938, exact=True)) == "0.00077"  # exact: typed input, only formatted
    assert format_p(2.8e-20) == "2.8e-20"
    with pytest.raises(InvalidInputError, match=r"1\.5"):
        format_p(1.5)


def test_newcombes_interval_without_correlation_is_the_unpaired_hybrid_score_interval():
    # n11 * n00 == n10 * n01: phi is 0 and method 10 is Newcombe's unpaired interval on the same n.
    a = [1] * 2 + [1] * 2 + [0] * 3 + [0] * 3
    b = [1] * 2 + [0] * 2 + [1] * 3 + [0] * 3
    low, high = newcombe_paired_ci(a, b)
    ref = confint_proportions_2indep(sum(a), len(a), sum(b), len(b), method="newcomb", compare="diff")
    assert (low, high) == pytest.approx(tuple(ref), abs=1e-9)


def test_one_discordant_item_leaves_a_wide_interval_where_the_bootstrap_collapses():
    a = [1] + [0] * 50 + [1] * 13
    b = [0] + [0] * 50 + [1] * 13
    low, high = newcombe_paired_ci(a, b)
    assert low < 0 < 1 / 64 < high and high - low > 0.05
    boot = paired_bootstrap_ci(a, b)
    assert boot[0] >= 0 and boot[1] - boot[0] < high - low


@pytest.mark.parametrize("bad", [([1, 0], [1]), ([], []), ([1, 2], [0, 1])])
def test_bad_outcomes_are_refused(bad):
    with pytest.raises(InvalidInputError):
        newcombe_paired_ci(*bad)


def test_what_mcnemar_can_reach():
    assert mcnemar_min_p(0) == 1.0 and mcnemar_min_p(1) == 1.0  # exact: 2 * 0.5 capped at 1
    assert mcnemar_min_p(10) == pytest.approx(mcnemar_exact([1] * 10, [0] * 10).p_value, abs=TOL)
    assert discordant_needed(1) == 6  # 2/64 < 0.05 <= 2/32
    needed = discordant_needed(15)
    assert 15 * mcnemar_min_p(needed) < 0.05 <= 15 * mcnemar_min_p(needed - 1)
    with pytest.raises(InvalidInputError):
        mcnemar_min_p(-1)
    with pytest.raises(InvalidInputError):
        discordant_needed(0)


def test_the_paired_mean_interval_is_the_normal_interval_of_the_differences():
    from scipy import stats

    from evalcore.stats.exact import paired_mean_ci

    rng = random.Random(2)
    x = [rng.gauss(0, 1) for _ in range(64)]
    y = [v + rng.gauss(0.2, 0.5) for v in x]
    mean, low, high = paired_mean_ci(x, y)
    d = [a - b for a, b in zip(x, y, strict=True)]
    ref = stats.norm.interval(0.95, loc=sum(d) / 64, scale=stats.sem(d))
    assert (low, high) == pytest.approx(ref, abs=1e-12)
    t_low, t_high = stats.t.interval(0.95, 63, loc=sum(d) / 64, scale=stats.sem(d))
    assert 0.97 < (high - low) / (t_high - t_low) < 0.99  # "about 2% narrower than Student's t"
    assert low < mean < high
    with pytest.raises(InvalidInputError, match="finite"):
        paired_mean_ci([1.0, float("nan")], [0.0, 0.0])
    with pytest.raises(InvalidInputError, match="two or more"):
        paired_mean_ci([1.0], [0.0])
