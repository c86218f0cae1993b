"""The default output: the headline and one aligned table (numbers right-aligned)."""
from __future__ import annotations

from .model import Report, table_rows


def render(report: Report) -> str:
    """Plain text for a terminal."""
    from tabulate import tabulate

    headers, rows = table_rows(report)
    numeric = {"calls base", "calls cand", "delta µs", "delta %", "total base µs", "total cand µs", "p"}
    align = ["right" if h in numeric or h.endswith(" µs") else "left" for h in headers]
    body = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, colalign=align) if rows \
        else "(no items)"
    return f"{report.headline()}\n\n{body}\n"
