"""Verdicts: compare plus, per item, pass / warn / fail / improved / new / vanished / ignored,
and one overall verdict with its exit code (0 clean, 1 regression; 2 is for usage errors).

Per item, with the item's policy (:mod:`.policy`) and the chosen per-call statistic
(mean by default):

1. an ignored item (policy override) is ``ignored``; an item on one side only is ``new`` or
   ``vanished`` (neither fails);
2. fewer calls than ``min_count`` on either side: ``pass``;
3. faster: ``improved`` when by at least ``warn``, else ``pass`` — an improvement never fails;
4. slower by less than the noise floor ``min_delta_us``: ``pass``;
5. slower by ``fail`` % or more: ``fail``; by ``warn`` % or more: ``warn``; else ``pass``;
6. a ``fail`` or ``warn`` with at least ``test_min_samples`` calls that pair up (same stratum,
   same position) must also pass a one-sided Wilcoxon signed-rank test at level ``alpha``
   (:mod:`.stats`); a ``fail`` that does not becomes a ``warn`` ("not significant").
"""
from __future__ import annotations

import math

from . import compare as compare_mod
from .policy import PolicySet
from .stats import slower_test

VERDICTS = ("fail", "warn", "new", "vanished", "improved", "pass", "ignored")
CHECK_COLUMNS = ["verdict", "reason", "p_value", "fail_pct", "warn_pct"]
EXIT_CLEAN, EXIT_REGRESSION, EXIT_USAGE = 0, 1, 2


def _verdict(row, policy, base_calls, cand_calls) -> tuple[str, str, float | None]:
    if policy.ignore:
        return "ignored", "ignored by the policy", None
    if row["status"] != "both":
        return row["status"], f"only in the {'candidate' if row['status'] == 'new' else 'baseline'}", None
    if min(row["baseline_count"], row["candidate_count"]) < policy.min_count:
        return "pass", f"fewer than {policy.min_count} calls", None
    delta, pct = row["delta_us"], row["delta_pct"]
    if math.isnan(pct):  # baseline statistic is 0
        pct = math.inf if delta > 0 else 0.0
    if delta < 0:
        return ("improved" if -pct >= policy.warn_pct else "pass"), "faster", None
    if delta == 0:
        return "pass", "unchanged", None
    if delta < policy.min_delta_us:
        return "pass", f"below the noise floor of {policy.min_delta_us:g} µs", None
    if pct >= policy.fail_pct:
        verdict, reason = "fail", f"slower by {policy.fail_pct:g}% or more"
    elif pct >= policy.warn_pct:
        verdict, reason = "warn", f"slower by {policy.warn_pct:g}% or more"
    else:
        return "pass", "within the thresholds", None
    test = slower_test(base_calls, cand_calls, policy.test_min_samples)
    if test.p_value is None:
        return verdict, reason, None
    if test.p_value > policy.alpha:
        return "warn", f"{reason}, not significant (p={test.p_value:.3g} > {policy.alpha:g})", test.p_value
    return verdict, f"{reason}, significant (p={test.p_value:.3g})", test.p_value


def verdicts(comparison: compare_mod.Comparison, policies: PolicySet | None = None):
    """The comparison table with :data:`CHECK_COLUMNS` added (same row order)."""
    policies = policies or PolicySet()
    table = comparison.table.copy()
    groups = {}
    for name, frame in (("b", comparison.baseline), ("c", comparison.candidate)):
        groups[name] = {key: part for key, part in frame.groupby(["family", "item"], observed=True, sort=False)}
    empty = comparison.baseline.iloc[0:0]
    out = {c: [] for c in CHECK_COLUMNS}
    for row in table.to_dict("records"):
        policy = policies.for_item(row["family"], row["item"])
        key = (row["family"], row["item"])
        verdict, reason, p = _verdict(row, policy, groups["b"].get(key, empty), groups["c"].get(key, empty))
        for col, value in zip(CHECK_COLUMNS, (verdict, reason, p, policy.fail_pct, policy.warn_pct)):
            out[col].append(value)
    for col in CHECK_COLUMNS:
        table[col] = out[col]
    return table


def overall(table) -> str:
    """fail when an item fails, warn when one warns, else pass."""
    found = set(table["verdict"]) if len(table) else set()
    return "fail" if "fail" in found else "warn" if "warn" in found else "pass"


def exit_code(verdict: str) -> int:
    """1 for fail, 0 otherwise."""
    return EXIT_REGRESSION if verdict == "fail" else EXIT_CLEAN


def check(baseline_con, candidate_con, by=None, families=None, baseline_runs=None, candidate_runs=None,
          policy: PolicySet | None = None):
    """Compare and give every item a verdict: a pandas DataFrame with the columns of
    :func:`compare.compare` plus :data:`CHECK_COLUMNS`; ``overall(df)`` is the run's verdict."""
    policy = policy or PolicySet()
    comparison = compare_mod.compare_full(baseline_con, candidate_con, by, families, baseline_runs,
                                          candidate_runs, policy.base.statistic)
    return verdicts(comparison, policy)
