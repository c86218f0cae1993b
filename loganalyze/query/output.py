"""Rows to text: table, csv, json or markdown.  tabulate is imported only when needed."""
from __future__ import annotations

import csv
import io
import json
import math
from decimal import Decimal

FORMATS = ("table", "csv", "json", "markdown")


def _jsonable(v):
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if v is None or isinstance(v, (int, str, bool)):
        return v
    return str(v)


def _cell(v):
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.1f}"
    if v is None:
        return ""
    return v


def render(columns: list[str], rows: list[tuple], fmt: str = "table") -> str:
    if fmt == "json":
        return json.dumps([{c: _jsonable(v) for c, v in zip(columns, r)} for r in rows], indent=1)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if v is None else v for v in r])
        return buf.getvalue().rstrip("\n")
    from tabulate import tabulate

    table = [[_cell(v) for v in r] for r in rows]
    if fmt == "markdown":
        return tabulate(table, headers=columns, tablefmt="github", disable_numparse=True)
    return tabulate(table, headers=columns, tablefmt="simple", disable_numparse=True)
