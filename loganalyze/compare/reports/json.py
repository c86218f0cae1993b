"""JSON reports: our own documented schema (``docs/report.schema.json``) and
github-action-benchmark's ``customSmallerIsBetter`` list (``--json-format benchmark-action``)."""
from __future__ import annotations

import json

from .model import SCHEMA_ID, Report

FORMATS = ("loganalyze", "benchmark-action")


def _side(info) -> dict:
    return {"label": info.label, "kind": info.kind, "runs": info.runs}


def _stats(row: dict, side: str) -> dict:
    return {k: row[f"{side}_{k}"] for k in ("count", "total_us", "mean_us", "median_us")}


def document(report: Report) -> dict:
    """The report as a JSON-ready dict (see docs/report.schema.json)."""
    items = []
    for r in report.items():
        item = {"family": r["family"], "item": r["item"], "status": r["status"],
                "baseline": _stats(r, "baseline"), "candidate": _stats(r, "candidate"),
                "delta_us": r["delta_us"], "delta_pct": r["delta_pct"]}
        if report.checked:
            item.update(verdict=r["verdict"], reason=r["reason"], p_value=r["p_value"],
                        fail_pct=r["fail_pct"], warn_pct=r["warn_pct"])
        items.append(item)
    doc = {"schema": SCHEMA_ID, "command": report.command, "verdict": report.verdict,
           "exit_code": report.exit_code, "baseline": _side(report.baseline), "candidate": _side(report.candidate),
           "by": list(report.by), "statistic": report.statistic, "policy": report.policy,
           "counts": report.counts(), "items": items}
    return doc


def benchmark_action(report: Report) -> list[dict]:
    """One entry per item the candidate has: its per-call statistic in µs (smaller is better)."""
    out = []
    for r in report.items():
        value = r[f"candidate_{report.statistic}_us"]
        if value is None:
            continue
        extra = f"calls: {r['candidate_count']}; baseline {report.statistic}: " + (
            "-" if r[f"baseline_{report.statistic}_us"] is None else f"{r[f'baseline_{report.statistic}_us']:.3f} us")
        if report.checked:
            extra += f"; verdict: {r['verdict']}"
        out.append({"name": f"{r['family']}: {r['item']}", "unit": "us", "value": round(value, 3), "extra": extra})
    return out


def render(report: Report, fmt: str = "loganalyze") -> str:
    """The JSON text (sorted keys, two-space indent, trailing newline)."""
    data = benchmark_action(report) if fmt == "benchmark-action" else document(report)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
