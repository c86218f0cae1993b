"""The one report model every output is written from (terminal, Markdown, JSON, JUnit, HTML).

A :class:`Report` holds the comparison table (with verdicts for ``check``), the two sides
and the policy; :meth:`Report.items` gives the rows in report order — for ``check``
regressions first, then warnings, new, vanished, improved, passing and ignored items; within
each, family order then the larger total first — as plain dicts with None for missing numbers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..check import VERDICTS, exit_code, overall
from ..samples import FAMILIES

SCHEMA_ID = "loganalyze-report/1"
NUMBER_FIELDS = ("baseline_total_us", "baseline_mean_us", "baseline_median_us", "candidate_total_us",
                 "candidate_mean_us", "candidate_median_us", "delta_us", "delta_pct", "p_value",
                 "fail_pct", "warn_pct")


@dataclass(frozen=True)
class SideInfo:
    """What one side was: its label, kind (run, database, files) and the runs read (None: all)."""

    label: str
    kind: str
    runs: list[str] | None = None


@dataclass
class Report:
    """Everything a report shows."""

    command: str                       # compare | check
    baseline: SideInfo
    candidate: SideInfo
    table: Any                         # DataFrame from compare() or check()
    by: list[str] = field(default_factory=lambda: ["kind"])
    statistic: str = "mean"
    policy: dict | None = None         # PolicySet.as_dict() for check
    trend: Any = None                  # DataFrame from trend() (HTML trend lines), or None

    @property
    def checked(self) -> bool:
        """True for check reports (items have verdicts)."""
        return "verdict" in self.table.columns

    @property
    def verdict(self) -> str | None:
        """pass, warn or fail for check; None for compare."""
        return overall(self.table) if self.checked else None

    @property
    def exit_code(self) -> int:
        """The exit code of the command that made the report."""
        return exit_code(self.verdict) if self.checked else 0

    def items(self) -> list[dict]:
        """Rows in report order, numbers as floats or None."""
        rows = []
        for position, row in enumerate(self.table.to_dict("records")):
            clean = {k: _clean(v) for k, v in row.items()}
            clean["_position"] = position
            rows.append(clean)
        if self.checked:
            rows.sort(key=lambda r: (VERDICTS.index(r["verdict"]), r["_position"]))
        for r in rows:
            del r["_position"]
        return rows

    def counts(self) -> dict[str, int]:
        """How many items have each verdict (check) or status (compare), in a fixed order."""
        key = "verdict" if self.checked else "status"
        names = VERDICTS if self.checked else ("both", "new", "vanished")
        values = list(self.table[key]) if len(self.table) else []
        return {n: values.count(n) for n in names}

    def headline(self) -> str:
        """One line: the verdict (check) or what was compared, with the counts that matter."""
        c = self.counts()
        sides = f"baseline {self.baseline.label} -> candidate {self.candidate.label}"
        if not self.checked:
            return (f"loganalyze compare: {len(self.table)} items ({c['new']} new, {c['vanished']} vanished), "
                    f"{sides}, per-call {self.statistic}")
        return (f"loganalyze check: {self.verdict.upper()} - {c['fail']} regression(s), {c['warn']} warning(s), "
                f"{c['improved']} improved, {c['new']} new, {c['vanished']} vanished of {len(self.table)} items; "
                f"{sides}, per-call {self.statistic}")


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        value = value.item()
        if isinstance(value, float) and math.isnan(value):
            return None
    return value


def family_label(family: str) -> str:
    """The words reports use for a family."""
    return FAMILIES.get(family, family)


def fmt_us(value: float | None) -> str:
    """µs with ns resolution, '' for missing."""
    return "" if value is None else f"{value:.3f}"


def fmt_pct(value: float | None) -> str:
    """Signed percentage with one decimal, '' for missing."""
    if value is None:
        return ""
    if math.isinf(value):
        return "+inf%" if value > 0 else "-inf%"
    return f"{value:+.1f}%"


def fmt_p(value: float | None) -> str:
    """A p-value with three significant digits, '' for missing."""
    return "" if value is None else f"{value:.3g}"


def table_rows(report: Report, items: list[dict] | None = None) -> tuple[list[str], list[list[str]]]:
    """Headers and text cells shared by the terminal and Markdown tables."""
    stat = report.statistic
    headers = (["verdict"] if report.checked else []) + [
        "family", "item", "calls base", "calls cand", f"{stat} base µs", f"{stat} cand µs", "delta µs", "delta %",
        "total base µs", "total cand µs"] + (["p", "note"] if report.checked else ["status"])
    rows = []
    for r in report.items() if items is None else items:
        cells = ([r["verdict"]] if report.checked else []) + [
            r["family"], r["item"], str(r["baseline_count"]), str(r["candidate_count"]),
            fmt_us(r[f"baseline_{stat}_us"]), fmt_us(r[f"candidate_{stat}_us"]), fmt_us(r["delta_us"]),
            fmt_pct(r["delta_pct"]), fmt_us(r["baseline_total_us"]), fmt_us(r["candidate_total_us"])]
        cells += [fmt_p(r["p_value"]), r["reason"]] if report.checked else [r["status"]]
        rows.append(cells)
    return headers, rows
