"""One comparison from start to report: open both sides, compare (and check), add the trend.

Used by :meth:`loganalyze.Database.compare` / :meth:`~loganalyze.Database.check` and by the
``compare`` and ``check`` commands, which then write the reports.
"""
from __future__ import annotations

from .. import runmeta
from . import check as check_mod
from . import compare as compare_mod
from .policy import STATISTICS, PolicySet
from .reports import Report, SideInfo
from .samples import SampleError, parse_by, parse_families
from .sides import SideError, SideOpener
from .trend import trend

FAMILY_WORDS = {"onednn": "oneDNN primitive execs", "kernel": "GPU kernels", "op": "operators",
                "nvtx": "NVTX ranges"}


class CompareError(ValueError):
    """A comparison that cannot be made as asked; worth one line to the user (exit 2)."""


def build_report(command: str, baseline: str, candidate: str, db_path: str | None = None, store=None,
                 by: str | list[str] | None = "kind", family: str | None = None, statistic: str = "mean",
                 policy: PolicySet | None = None, record: bool = False) -> Report:
    """The report of ``compare`` (no ``policy``) or ``check`` (with one) of two sides; with
    ``record``, a check's verdict is stored with a candidate run of the database."""
    if statistic not in STATISTICS:
        raise CompareError(f"unknown statistic {statistic!r}; choose from {', '.join(STATISTICS)}")
    try:
        keys, families = parse_by(by), parse_families(family)
    except SampleError as exc:
        raise CompareError(str(exc)) from None
    with SideOpener(db_path, writable=record, store=store) as opener:
        try:
            cand = opener.open(candidate)
            base = opener.open(baseline, other_label=cand.label if cand.kind == "run" else None)
        except SideError as exc:
            raise CompareError(str(exc)) from None
        comparison = compare_mod.compare_full(base.con, cand.con, keys, families, base.runs, cand.runs, statistic)
        for side, calls in ((base, comparison.baseline), (cand, comparison.candidate)):
            if calls.empty:
                what = ", ".join(FAMILY_WORDS[f] for f in families)
                raise CompareError(f"{side.label}: nothing to compare: no {what} (timed calls) in it")
        table = check_mod.verdicts(comparison, policy) if policy is not None else comparison.table
        trend_con = cand.con if cand.kind in ("run", "database") else base.con if base.kind in ("run", "database") \
            else None
        trend_df = trend(trend_con, keys, families, last=20, statistic=statistic) if trend_con is not None else None
        report = Report(command, SideInfo(base.label, base.kind, base.runs), SideInfo(cand.label, cand.kind, cand.runs),
                        table, by=list(keys), statistic=statistic,
                        policy=policy.as_dict() if policy is not None else None, trend=trend_df)
        if record and cand.kind == "run" and opener.database() is not None and report.verdict:
            runmeta.record_verdict(opener.database().con, cand.label, report.verdict, base.label)
    return report
