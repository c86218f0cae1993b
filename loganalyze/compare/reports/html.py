"""One self-contained HTML file that opens offline: verdict, a baseline-vs-candidate bar chart
of the top items, a trend line per item across the database's runs, and the full table.
Charts are hand-made inline SVG; no script, no style sheet, font or image from elsewhere."""
from __future__ import annotations

from html import escape

from .model import Report, family_label, fmt_us, table_rows

TOP = 15
TREND_ITEMS = 12
COLOURS = {"fail": "#c62828", "warn": "#ef6c00", "improved": "#2e7d32", "new": "#6a1b9a"}
BASE_COLOUR, CAND_COLOUR = "#9e9e9e", "#1565c0"

STYLE = """
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px;color:#212121}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.verdict{padding:8px 12px;border-radius:4px;display:inline-block;font-weight:600}
.v-pass{background:#e8f5e9}.v-warn{background:#fff3e0}.v-fail{background:#ffebee}.v-none{background:#e3f2fd}
table{border-collapse:collapse;font-size:12px}th,td{border:1px solid #ddd;padding:3px 6px}
td.n{text-align:right;font-variant-numeric:tabular-nums}tr.fail td{background:#ffebee}tr.warn td{background:#fff3e0}
.trends{display:flex;flex-wrap:wrap;gap:12px}.trend{border:1px solid #eee;padding:6px}
.legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
"""


def _short(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def bar_chart(report: Report, items: list[dict]) -> str:
    """Horizontal bars of the per-call statistic, baseline above candidate, for the top items."""
    stat = report.statistic
    top = sorted(items, key=lambda r: -max(r["baseline_total_us"] or 0, r["candidate_total_us"] or 0))[:TOP]
    if not top:
        return "<p>No items.</p>"
    peak = max(max(r[f"baseline_{stat}_us"] or 0, r[f"candidate_{stat}_us"] or 0) for r in top) or 1.0
    label_w, bar_w, row_h = 330, 420, 34
    height = row_h * len(top) + 10
    parts = [f'<svg class="bars" role="img" aria-label="per-call {stat}, baseline vs candidate" '
             f'width="{label_w + bar_w + 130}" height="{height}" viewBox="0 0 {label_w + bar_w + 130} {height}">']
    for i, r in enumerate(top):
        y = 5 + i * row_h
        name = f"{r['family']}: {r['item']}"
        parts.append(f'<text x="{label_w - 6}" y="{y + 19}" text-anchor="end" font-size="11">'
                     f'<title>{escape(name)}</title>{escape(_short(name))}</text>')
        for j, side in enumerate(("baseline", "candidate")):
            value = r[f"{side}_{stat}_us"]
            width = 0 if value is None else max(1.0, bar_w * value / peak)
            colour = BASE_COLOUR if side == "baseline" else COLOURS.get(r.get("verdict") or "", CAND_COLOUR)
            yy = y + 2 + j * 14
            parts.append(f'<rect x="{label_w}" y="{yy}" width="{width:.1f}" height="12" fill="{colour}">'
                         f'<title>{side}: {fmt_us(value) or "-"} µs</title></rect>')
            parts.append(f'<text x="{label_w + width + 4:.1f}" y="{yy + 10}" font-size="10">{fmt_us(value) or "-"}</text>')
    parts.append("</svg>")
    return "".join(parts)


def trend_charts(report: Report, items: list[dict]) -> str:
    """A small line chart per item across the runs of the database (when there are two or more)."""
    trend = report.trend
    if trend is None or len(trend) == 0 or trend["run"].nunique() < 2:
        return "<p>No trend: the sides do not come from a database with two or more runs.</p>"
    stat = report.statistic
    wanted = [(r["family"], r["item"]) for r in items][:TREND_ITEMS]
    runs = list(dict.fromkeys(trend.sort_values("run_index")["run"]))
    charts = []
    w, h, pad = 260, 110, 24
    for family, item in wanted:
        part = trend[(trend["family"] == family) & (trend["item"] == item)].sort_values("run_index")
        if len(part) < 2:
            continue
        values = list(part[f"{stat}_us"])
        lo, hi = min(values), max(values)
        top = hi * 1.1 or 1.0  # the axis starts at 0: a 3 % wobble looks like one
        pts = []
        for run, value in zip(part["run"], values):
            x = pad + (w - 2 * pad) * runs.index(run) / max(1, len(runs) - 1)
            y = h - pad - (h - 2 * pad) * value / top
            pts.append((x, y, run, value))
        drift = str(part["drift"].iloc[-1]) if "drift" in part else ""
        colour = COLOURS["fail"] if drift == "slower" else CAND_COLOUR
        svg = [f'<svg class="trend-line" role="img" aria-label="{escape(item)} across runs" width="{w}" '
               f'height="{h}" viewBox="0 0 {w} {h}">',
               f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="'
               + " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in pts) + '"/>']
        for x, y, run, value in pts:
            svg.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{escape(str(run))}: '
                       f'{fmt_us(value)} µs</title></circle>')
        svg.append(f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#bbb"/>')
        svg.append(f'<text x="{pad}" y="{h - 6}" font-size="10">{fmt_us(lo)}–{fmt_us(hi)} µs over '
                   f'{len(pts)} runs{" (drift: " + drift + ")" if drift else ""}</text></svg>')
        charts.append(f'<div class="trend"><div title="{escape(item)}">{escape(family)}: '
                      f'{escape(_short(item, 36))}</div>{"".join(svg)}</div>')
    return f'<div class="trends">{"".join(charts)}</div>' if charts else "<p>No item appears in two runs.</p>"


def full_table(report: Report, items: list[dict]) -> str:
    """Every item, in report order."""
    headers, rows = table_rows(report, items)
    text_cols = {"verdict", "family", "item", "note", "status"}
    out = ["<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr></thead><tbody>"]
    for r, cells in zip(items, rows):
        cls = escape(r.get("verdict") or r["status"])
        out.append(f'<tr class="{cls}">' + "".join(
            f'<td{"" if h in text_cols else " class=n"}>{escape(c)}</td>' for h, c in zip(headers, cells)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def render(report: Report) -> str:
    """The HTML document."""
    items = report.items()
    verdict = report.verdict or "none"
    title = f"loganalyze {report.command}: {report.baseline.label} vs {report.candidate.label}"
    stat = report.statistic
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{STYLE}</style></head><body>
<h1>{escape(title)}</h1>
<p class="verdict v-{escape(verdict)}" id="verdict">{escape(report.headline())}</p>
<h2>Per-call {stat}: baseline vs candidate (top {min(TOP, len(items))} items by total time)</h2>
<p class="legend"><span style="background:{BASE_COLOUR}"></span>baseline<span style="background:{CAND_COLOUR}"></span>candidate
<span style="background:{COLOURS['fail']}"></span>regression<span style="background:{COLOURS['warn']}"></span>warning</p>
{bar_chart(report, items)}
<h2>Trend across runs (per-call {stat}, µs)</h2>
{trend_charts(report, items)}
<h2>All items</h2>
{full_table(report, items)}
<p>Families: {escape(", ".join(sorted({family_label(r["family"]) for r in items})) or "none")}.
Changes are of the per-call {stat}; totals are exact sums of integer nanoseconds.</p>
</body></html>
"""
