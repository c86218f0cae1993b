"""Baseline against candidate, item by item: counts, exact totals, per-call mean and median,
absolute and relative change of the chosen per-call statistic, new and vanished items.

``compare(baseline_con, candidate_con, by="kind")`` returns a pandas DataFrame with
:data:`COLUMNS`; times are in µs, computed from integer nanoseconds (sums are exact and do
not depend on row order).  Rows are sorted by family, then by the larger of the two totals
(descending), then by item.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import samples as samples_mod

SIDE_STATS = ["count", "total_us", "mean_us", "median_us"]
COLUMNS = (["family", "item", "status"] + [f"baseline_{c}" for c in SIDE_STATS]
           + [f"candidate_{c}" for c in SIDE_STATS] + ["delta_us", "delta_pct"])
STATUSES = ("both", "new", "vanished")


@dataclass
class Comparison:
    """The per-item table and the per-call samples it was computed from (for the test)."""

    table: object          # pandas.DataFrame with COLUMNS
    baseline: object       # samples (see samples.COLUMNS)
    candidate: object
    statistic: str = "mean"


def item_stats(frame):
    """count, total_ns (exact int), mean_ns, median_ns per (family, item) of a samples frame."""
    grouped = frame.groupby(["family", "item"], observed=True, sort=True)["ns"]
    stats = grouped.agg(count="count", total_ns="sum", median_ns="median")
    stats["mean_ns"] = stats["total_ns"] / stats["count"]
    return stats


def build(baseline, candidate, statistic: str = "mean") -> Comparison:
    """Compare two samples frames (from :func:`samples.load`)."""
    import numpy as np
    import pandas as pd

    b, c = item_stats(baseline), item_stats(candidate)
    keys = sorted(set(b.index) | set(c.index),
                  key=lambda k: (list(samples_mod.FAMILIES).index(k[0]), k[1]))
    rows = []
    for key in keys:
        row = {"family": key[0], "item": key[1]}
        for side, stats in (("baseline", b), ("candidate", c)):
            present = key in stats.index
            s = stats.loc[key] if present else None
            row[f"{side}_count"] = int(s["count"]) if present else 0
            row[f"{side}_total_us"] = int(s["total_ns"]) / 1000 if present else np.nan
            row[f"{side}_mean_us"] = float(s["mean_ns"]) / 1000 if present else np.nan
            row[f"{side}_median_us"] = float(s["median_ns"]) / 1000 if present else np.nan
        row["status"] = ("both" if row["baseline_count"] and row["candidate_count"]
                         else "new" if row["candidate_count"] else "vanished")
        if row["status"] == "both":
            base, cand = row[f"baseline_{statistic}_us"], row[f"candidate_{statistic}_us"]
            row["delta_us"] = cand - base
            row["delta_pct"] = 100.0 * (cand - base) / base if base > 0 else np.nan
        else:
            row["delta_us"] = row["delta_pct"] = np.nan
        rows.append(row)
    table = pd.DataFrame(rows, columns=COLUMNS)
    if not table.empty:
        table["_family"] = table["family"].map(list(samples_mod.FAMILIES).index)
        table["_size"] = table[["baseline_total_us", "candidate_total_us"]].max(axis=1)
        table = table.sort_values(["_family", "_size", "item"], ascending=[True, False, True], kind="stable")
        table = table.drop(columns=["_family", "_size"]).reset_index(drop=True)
    for side in ("baseline", "candidate"):
        table[f"{side}_count"] = table[f"{side}_count"].astype("int64")
    return Comparison(table, baseline, candidate, statistic)


def compare(baseline_con, candidate_con, by=None, families=None, baseline_runs: list[str] | None = None,
            candidate_runs: list[str] | None = None, statistic: str = "mean"):
    """Per-item comparison of two databases (or two sets of runs of one database) as a
    pandas DataFrame with :data:`COLUMNS`; ``delta_*`` are for ``statistic`` (median or mean)."""
    return compare_full(baseline_con, candidate_con, by, families, baseline_runs, candidate_runs,
                        statistic).table


def compare_full(baseline_con, candidate_con, by=None, families=None, baseline_runs=None, candidate_runs=None,
                 statistic: str = "mean") -> Comparison:
    """Like :func:`compare`, keeping the per-call samples (``check`` tests them)."""
    base = samples_mod.load(baseline_con, by, families, baseline_runs)
    cand = samples_mod.load(candidate_con, by, families, candidate_runs)
    return build(base, cand, statistic)
