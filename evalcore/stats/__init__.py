"""Layer 2, the statistics: paired comparisons of two scorings of the same items, written from their
definitions in pure Python, torch-free.

``paired`` (accuracy intervals, McNemar's exact test, paired differences, their bootstrap),
``auc`` (the AUC of a score and DeLong's paired test), ``cochran`` (Cochran's Q across several
conditions), ``exact`` (exact and permutation p-values, the paired Newcombe interval),
``multiplicity`` (Holm's correction). Part III and ``evalcore compare`` use them; they use no
other layer but the errors.
"""

from __future__ import annotations

from evalcore.stats.auc import AucComparison, AucEstimate, auc_ci, auc_contrast, compare_auc
from evalcore.stats.cochran import CochranQ, chi2_sf, cochran_q, permutation_p
from evalcore.stats.exact import (
    PermutationP,
    cochran_exact_p,
    cochran_permutation,
    discordant_needed,
    format_p,
    mcnemar_min_p,
    newcombe_paired_ci,
)
from evalcore.stats.multiplicity import holm
from evalcore.stats.paired import (
    McNemar,
    PairedComparison,
    clopper_pearson,
    comparator_z_test,
    compare_paired,
    mcnemar_exact,
    mean_stderr,
    paired_bootstrap_ci,
    paired_stderr,
    paired_z_test,
    unpaired_stderr,
    unpaired_z_test,
    wilson,
)

__all__ = [
    "AucComparison",
    "AucEstimate",
    "CochranQ",
    "McNemar",
    "PairedComparison",
    "PermutationP",
    "auc_ci",
    "auc_contrast",
    "chi2_sf",
    "clopper_pearson",
    "cochran_exact_p",
    "cochran_permutation",
    "cochran_q",
    "comparator_z_test",
    "compare_auc",
    "compare_paired",
    "discordant_needed",
    "format_p",
    "holm",
    "mcnemar_exact",
    "mcnemar_min_p",
    "mean_stderr",
    "newcombe_paired_ci",
    "paired_bootstrap_ci",
    "paired_stderr",
    "paired_z_test",
    "permutation_p",
    "unpaired_stderr",
    "unpaired_z_test",
    "wilson",
]
