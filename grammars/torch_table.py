"""PyTorch ``prof.key_averages().table()`` text (torch.autograd.profiler_util ``_build_table``).

Layout (every release since 1.x; columns vary with the options and the data)::

    [==================================================]     <- only with header=...
    [<header text>]
    ---------------------------  ------------  ------------  ...      <- one dash run per column
                           Name    Self CPU %      Self CPU  ...  # of Calls
    ---------------------------  ------------  ------------  ...
                aten::conv2d         0.12%      12.345us  ...           3
    ...
    ---------------------------  ------------  ------------  ...
    Self CPU time total: 1.234ms
    [Self CUDA time total: 5.678ms]

Columns are found from the dash runs of the separator line (two spaces between columns),
so every row is cut at the same positions; names longer than the column are printed cut to
``width - 3`` characters plus ``...``.  Old releases (1.4-1.7) name the columns
``Self CPU total %``, ``Self CPU total``, ``Number of Calls`` and left-align names.
Device columns are ``Self CUDA``, ``CUDA total``, ``CUDA time avg`` (or the privateuse1
device name, ``XPU``, ``MTIA``, ...).  Time cells are ``1.234us``/``ms``/``s``; memory cells
``12.5 Kb`` (1024-based), ``0 b``; shares ``12.34%``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

import pyparsing as pp

from .units import to_ns_or_none

SEPARATOR_RE = re.compile(r"^-{3,}(?:  -{3,})+\s*$")
TOTAL_RE = re.compile(r"^Self (?P<dev>\w+) time total: (?P<value>\S+)\s*$|^(?P<dev2>\w+) time total: (?P<value2>\S+)\s*$")

# --------------------------------------------------------------------------- cells
_number = pp.Regex(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
time_cell = pp.Combine(_number("num") + pp.one_of("us ms s ns")("unit")) + pp.StringEnd()
memory_cell = _number("num") + pp.one_of("b Kb Mb Gb Tb B KB MB GB")("unit") + pp.StringEnd()
percent_cell = pp.Combine(_number("num") + pp.Literal("%")) + pp.StringEnd()

MEMORY_BYTES = {"b": 1, "B": 1, "Kb": 1024, "KB": 1024, "Mb": 1024 ** 2, "MB": 1024 ** 2,
                "Gb": 1024 ** 3, "GB": 1024 ** 3, "Tb": 1024 ** 4}
_TIME_RE = re.compile(r"^(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(ns|us|ms|s)$")


def time_ns(cell: str) -> int | None:
    """``"12.345us"`` -> 12345; None for anything else."""
    m = _TIME_RE.match(cell.strip())
    if not m:
        try:
            res = time_cell.parse_string(cell.strip())
        except pp.ParseException:
            return None
        num, unit = res["num"], res["unit"]
    else:
        num, unit = m.group(1), m.group(2)
    return to_ns_or_none(num, unit)


def memory_bytes(cell: str) -> int | None:
    try:
        res = memory_cell.parse_string(cell.strip())
    except pp.ParseException:
        return None
    return int((Decimal(res["num"]) * MEMORY_BYTES[res["unit"]]).to_integral_value())


def percent(cell: str) -> float | None:
    try:
        res = percent_cell.parse_string(cell.strip())
    except pp.ParseException:
        return None
    return float(res["num"])


# --------------------------------------------------------------------------- columns
def column_spans(separator: str) -> list[tuple[int, int]]:
    """(start, end) of each dash run; the last column runs to the end of the line."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", separator.rstrip())]
    return spans


def cut(line: str, spans: list[tuple[int, int]]) -> list[str]:
    cells = []
    for k, (a, b) in enumerate(spans):
        end = len(line) if k == len(spans) - 1 else spans[k + 1][0]
        cells.append(line[a:end].strip())
    return cells


def is_header(cells: list[str]) -> bool:
    return bool(cells) and cells[0] == "Name" and any(c in ("# of Calls", "Number of Calls") for c in cells)


#: header -> meaning; device columns are matched by pattern (CUDA, XPU, MTIA, privateuse1 names)
CPU_COLUMNS = {
    "Self CPU %": "self_pct", "Self CPU total %": "self_pct",
    "Self CPU": "self", "Self CPU total": "self",
    "CPU total %": "total_pct", "CPU total": "total", "CPU time avg": "avg",
    "# of Calls": "calls", "Number of Calls": "calls",
    "CPU Mem": "cpu_mem", "Self CPU Mem": "self_cpu_mem",
    "Input Shapes": "shapes", "Source Location": "source", "Node ID": "node",
}
_DEV_RE = [
    (re.compile(r"^Self (\w+) %$"), "gpu_self_pct"),
    (re.compile(r"^Self (\w+)$"), "gpu_self"),
    (re.compile(r"^Self (\w+) total$"), "gpu_self"),
    (re.compile(r"^(\w+) total %$"), "gpu_total_pct"),
    (re.compile(r"^(\w+) total$"), "gpu_total"),
    (re.compile(r"^(\w+) time avg$"), "gpu_avg"),
    (re.compile(r"^(\w+) Mem$"), "gpu_mem"),
    (re.compile(r"^Self (\w+) Mem$"), "self_gpu_mem"),
]


def column_role(header: str) -> str | None:
    if header in CPU_COLUMNS:
        return CPU_COLUMNS[header]
    for rx, role in _DEV_RE:
        m = rx.match(header)
        if m and m.group(1) != "CPU":
            return role
    if header.startswith("Total ") and header.endswith("FLOPs"):
        return "flops"
    return None


@dataclass
class Row:
    name: str
    truncated: bool
    calls: int | None
    values: dict  # role -> parsed value
    cells: dict  # header -> text


def parse_row(cells: list[str], headers: list[str]) -> Row | str:
    """One data row, or the reason it cannot be read."""
    if len(cells) != len(headers):
        return f"malformed: {len(cells)} cells for {len(headers)} columns"
    name = cells[0]
    values: dict = {}
    for h, c in zip(headers[1:], cells[1:]):
        role = column_role(h)
        if role in ("self", "total", "avg", "gpu_self", "gpu_total", "gpu_avg"):
            v = time_ns(c)
            if v is None:
                return f"malformed: {h} {c!r} is not a time"
            values[role] = v
        elif role == "calls":
            if not re.fullmatch(r"\d+", c):
                return f"malformed: {h} {c!r} is not a count"
            values[role] = int(c)
        elif role in ("self_pct", "total_pct", "gpu_self_pct", "gpu_total_pct"):
            values[role] = percent(c)
        elif role in ("cpu_mem", "self_cpu_mem", "gpu_mem", "self_gpu_mem"):
            values[role] = memory_bytes(c)
    return Row(name, name.endswith("..."), values.get("calls"), values, dict(zip(headers, cells)))
