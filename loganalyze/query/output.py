"""Rows to text: table, csv, json or markdown.  tabulate is imported only when needed."""
from __future__ import annotations

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


#: decimals shown for float columns in tables, by the unit suffix of the column name
DECIMALS = {"_ms": 4, "_us": 3, "_ns": 1, "_pct": 2, "_s": 6}
DEFAULT_DECIMALS = 3


def _decimals(column: str) -> int:
    for suffix, n in DECIMALS.items():
        if column.endswith(suffix):
            return n
    return DEFAULT_DECIMALS


def _is_number(v) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def _cell(v, decimals: int) -> str:
    if v is None:
        return ""
    if isinstance(v, (float, Decimal)):
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            return str(v)
        return f"{v:.{decimals}f}"
    return str(v)


def render(columns: list[str], rows: list[tuple], fmt: str = "table") -> str:
    """Rows as text.  Tables: numbers right-aligned, floats with a fixed number of decimals per
    column (by the column's unit suffix); CSV and JSON: the values as they are."""
    if fmt == "json":
        import json

        return json.dumps([{c: _jsonable(v) for c, v in zip(columns, r)} for r in rows], indent=1)
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if v is None else v for v in r])
        return buf.getvalue().rstrip("\n")
    from tabulate import tabulate

    numeric = [bool(rows) and all(r[i] is None or _is_number(r[i]) for r in rows) and
               any(r[i] is not None for r in rows) for i in range(len(columns))]
    decimals = [_decimals(c) for c in columns]
    table = [[_cell(v, decimals[i]) for i, v in enumerate(r)] for r in rows]
    align = ["right" if n else "left" for n in numeric]
    style = "github" if fmt == "markdown" else "simple"
    return tabulate(table, headers=columns, tablefmt=style, disable_numparse=True, colalign=align)
