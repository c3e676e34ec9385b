"""Holm's adjustment against statsmodels."""

from __future__ import annotations

import random

import pytest
from statsmodels.stats.multitest import multipletests

from evalcore.errors import InvalidInputError
from evalcore.stats.multiplicity import holm


@pytest.mark.parametrize("seed", range(10))
def test_holm_matches_statsmodels(seed):
    rng = random.Random(seed)
    p = [rng.random() ** 3 for _ in range(rng.choice([1, 2, 5, 15, 40]))]
    assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]), abs=1e-15)


def test_fifteen_comparisons_make_a_lone_p_of_0_031_unremarkable():
    p = [0.03125] + [1.0] * 14
    assert holm(p)[0] == pytest.approx(15 * 0.03125)


@pytest.mark.parametrize("bad", [[], [0.5, 1.2], [float("nan")], [True]])
def test_bad_inputs_are_refused(bad):
    with pytest.raises(InvalidInputError):
        holm(bad)
