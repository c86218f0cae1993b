"""Markdown for a CI job summary or a pull-request comment: the verdict line first, the
regressions (and warnings) in a table, every other item collapsed in ``<details>`` (the first
:data:`MAX_DETAIL_ROWS` of them: the rest are in the JSON and HTML reports)."""
from __future__ import annotations

from .model import Report, table_rows

#: rows of the collapsed table at most: a pull-request comment holds 65,536 characters
MAX_DETAIL_ROWS = 250
ICONS = {"pass": ":white_check_mark:", "warn": ":warning:", "fail": ":x:"}


def _table(headers: list[str], rows: list[list[str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    right = {"calls base", "calls cand", "delta µs", "delta %", "total base µs", "total cand µs", "p"}
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "| " + " | ".join("---:" if h in right or h.endswith(" µs") else "---" for h in headers) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render(report: Report) -> str:
    """The Markdown document."""
    items = report.items()
    icon = ICONS.get(report.verdict or "", "")
    out = [f"{icon} **{report.headline()}**".strip(), ""]
    if report.checked:
        p = report.policy or {}
        out += [f"Policy: fail at +{p.get('fail_pct', 10):g}%, warn at +{p.get('warn_pct', 5):g}% of the per-call "
                f"{report.statistic}; noise floor {p.get('min_delta_us', 0):g} µs; at least {p.get('min_count', 1)} "
                f"call(s); Wilcoxon signed-rank test over paired calls at alpha {p.get('alpha', 0.05):g} when "
                f"{p.get('test_min_samples', 8)} or more calls pair up.", ""]
        flagged = [r for r in items if r["verdict"] in ("fail", "warn")]
        rest = [r for r in items if r["verdict"] not in ("fail", "warn")]
    else:
        flagged, rest = [], items
    if flagged:
        headers, rows = table_rows(report, flagged)
        out += ["### Regressions and warnings", "", _table(headers, rows), ""]
    if rest:
        shown = rest[:MAX_DETAIL_ROWS]
        headers, rows = table_rows(report, shown)
        label = "other items" if report.checked else "items"
        more = ([f"{len(rest) - len(shown)} more items (the smallest by total time) are in the JSON and HTML "
                 "reports.", ""] if len(rest) > len(shown) else [])
        out += ["<details>", f"<summary>{len(rest)} {label}</summary>", "", _table(headers, rows), "", *more,
                "</details>", ""]
    if not items:
        out += ["No items: neither side has oneDNN primitives, GPU kernels, operators or NVTX ranges.", ""]
    return "\n".join(out)
