"""Is a candidate's per-call time really larger than the baseline's?  A one-sided
Mann–Whitney U test (scipy) over per-call times normalised per stratum.

The calls of one item are rarely alike (a oneDNN ``reorder`` item holds 1 µs copies and
1 ms layout changes), so raw per-call times of two runs overlap even when every call got
30 % slower.  Each call is therefore divided by the baseline median of its stratum (the
same primitive, kernel launch shape or operator shapes, see :mod:`.samples`); the test
compares those ratios.  Calls of strata the baseline lacks, or whose baseline median is 0,
take no part.  The result only depends on the multiset of samples: it is deterministic.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TestResult:
    """The normalised sample sizes and the one-sided p-value (None: too few samples to test)."""

    n_baseline: int
    n_candidate: int
    p_value: float | None


def normalised(baseline, candidate) -> tuple[np.ndarray, np.ndarray]:
    """Per-call times of one item divided by the baseline median of their stratum.

    ``baseline`` and ``candidate`` are DataFrames with ``stratum`` and ``ns`` columns.
    """
    medians = baseline.groupby("stratum", observed=True)["ns"].median()
    medians = medians[medians > 0]

    def ratios(frame) -> np.ndarray:
        ref = frame["stratum"].map(medians)
        keep = ref.notna().to_numpy()
        values = frame["ns"].to_numpy(dtype=np.float64)[keep] / ref.to_numpy(dtype=np.float64)[keep]
        return np.sort(values)

    return ratios(baseline), ratios(candidate)


def slower_test(baseline, candidate, min_samples: int) -> TestResult:
    """One-sided test that the candidate's calls are slower; p-value None when either side
    has fewer than ``min_samples`` comparable calls."""
    base, cand = normalised(baseline, candidate)
    if len(base) < min_samples or len(cand) < min_samples:
        return TestResult(len(base), len(cand), None)
    from scipy.stats import mannwhitneyu  # only when a test is due: scipy takes ~0.3 s to import

    p = float(mannwhitneyu(cand, base, alternative="greater").pvalue)
    return TestResult(len(base), len(cand), p)
