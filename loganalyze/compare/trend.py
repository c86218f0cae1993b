"""Per-call time of every item across the runs of a database, oldest run first, with a flag
on items that drifted: slower (or faster) by more than the threshold from the first to the
last run of the window although no single step between consecutive runs was that large.

``trend(con, by="kind", last=10)`` returns a pandas DataFrame with :data:`COLUMNS`, one row
per run per item, sorted by family, item and run order.
"""
from __future__ import annotations

import math

from .. import runmeta
from . import samples as samples_mod
from .compare import item_stats

COLUMNS = ["family", "item", "run", "run_index", "count", "total_us", "mean_us", "median_us", "step_pct",
           "drift_pct", "drift"]


def run_order(con) -> list[str]:
    """Run labels oldest first; files ingested without a label come last as ''."""
    labels = runmeta.run_labels(con)
    if con.execute("SELECT EXISTS (SELECT 1 FROM sources WHERE run_label IS NULL)").fetchall()[0][0]:
        labels.append("")
    return labels


def _pct(new: float, old: float) -> float:
    if old > 0:
        return 100.0 * (new - old) / old
    return 0.0 if new == old else math.inf


def trend(con, by=None, families=None, last: int | None = None, runs: list[str] | None = None,
          threshold_pct: float = 10.0, statistic: str = "mean"):
    """One row per run per item over the last ``last`` runs (or the ``runs`` given, in that
    order); ``step_pct`` is the change of ``statistic`` since the item's previous run,
    ``drift_pct`` the change from its first to its last run in the window, ``drift`` is
    ``slower`` or ``faster`` when that exceeds ``threshold_pct`` while no step did."""
    import pandas as pd

    order = list(runs) if runs is not None else run_order(con)
    if last is not None:
        order = order[-last:] if last > 0 else []
    frame = samples_mod.load(con, by, families, order)
    rows = []
    for run_index, run in enumerate(order):
        stats = item_stats(frame[frame["run"] == run])
        for (family, item), s in stats.iterrows():
            rows.append({"family": family, "item": item, "run": run, "run_index": run_index,
                         "count": int(s["count"]), "total_us": int(s["total_ns"]) / 1000,
                         "mean_us": float(s["mean_ns"]) / 1000, "median_us": float(s["median_ns"]) / 1000})
    families_order = list(samples_mod.FAMILIES)
    rows.sort(key=lambda r: (families_order.index(r["family"]), r["item"], r["run_index"]))
    out = []
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and (rows[j]["family"], rows[j]["item"]) == (rows[i]["family"], rows[i]["item"]):
            j += 1
        group = rows[i:j]
        values = [r[f"{statistic}_us"] for r in group]
        steps = [math.nan] + [_pct(b, a) for a, b in zip(values, values[1:])]
        drift_pct = _pct(values[-1], values[0]) if len(values) > 1 else math.nan
        drift = ""
        if len(values) > 2 and abs(drift_pct) > threshold_pct and all(abs(s) <= threshold_pct for s in steps[1:]):
            drift = "slower" if drift_pct > 0 else "faster"
        for r, step in zip(group, steps):
            out.append({**r, "step_pct": step, "drift_pct": drift_pct, "drift": drift})
        i = j
    return pd.DataFrame(out, columns=COLUMNS)
