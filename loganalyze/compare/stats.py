"""Is a candidate's per-call time really larger than the baseline's?  A one-sided Wilcoxon
signed-rank test (scipy) over paired calls.

The calls of one item are rarely alike (a oneDNN ``reorder`` item holds 1 µs copies and
1 ms layout changes; the first call of a primitive pays for its warm-up), so the raw
per-call times of two runs overlap even when every call got 30 % slower.  The test
therefore pairs each candidate call with the baseline call at the same place: the k-th call
of the same stratum (the same primitive, kernel launch shape or operator shapes, see
:mod:`.samples`), and tests whether the log ratios candidate / baseline lean above zero.
With several runs on a side, the k-th calls of its runs are represented by their median.
A uniform slowdown gives ratios that all lean one way; noise and one slow outlier do not.

The result only depends on the multiset of samples (pairs are formed by stratum and
position, and scipy's test is deterministic): reports stay byte-identical.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TestResult:
    """How many paired calls were tested and the one-sided p-value (None: too few pairs)."""

    pairs: int
    p_value: float | None


def paired_log_ratios(baseline, candidate) -> np.ndarray:
    """log((candidate + 1 ns) / (baseline + 1 ns)) for each (stratum, position) both sides have,
    sorted.  ``baseline`` and ``candidate`` are samples frames of one item."""
    def per_position(frame):
        return frame.groupby(["stratum", "seq"], observed=True)["ns"].median()

    joined = per_position(baseline).to_frame("b").join(per_position(candidate).to_frame("c"), how="inner")
    ratios = np.log((joined["c"].to_numpy(np.float64) + 1.0) / (joined["b"].to_numpy(np.float64) + 1.0))
    return np.sort(ratios)


def slower_test(baseline, candidate, min_samples: int) -> TestResult:
    """One-sided test that the candidate's calls are slower than their baseline partners;
    p-value None when fewer than ``min_samples`` calls can be paired."""
    diffs = paired_log_ratios(baseline, candidate)
    if len(diffs) < min_samples:
        return TestResult(len(diffs), None)
    if not np.any(diffs):
        return TestResult(len(diffs), 1.0)
    from scipy.stats import wilcoxon  # only when a test is due: scipy takes ~0.3 s to import

    p = float(wilcoxon(diffs, alternative="greater", zero_method="wilcox").pvalue)
    return TestResult(len(diffs), p)
