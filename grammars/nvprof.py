"""nvprof text and CSV output: message lines, tables, units and values, in one place.

nvprof prints (see docs/formats.md, "nvprof")::

    ==12400== NVPROF is profiling process 12400, command: ./matrixMul      message lines
    ==12400== Profiling result:
    "Start","Duration",...,"Name"                                          CSV header
    ms,ms,,,,,,,,KB,B,KB,MB/s,,,,                                          CSV units row
    584.620743,1.028854,,,,...,"[CUDA memcpy HtoD]"                        CSV rows

or, without ``--csv``, column-aligned text whose values carry their own unit
(``264.39ms  1.0240us  (1 1 1)  (256 1 1) ... foo(float*, int) [113]``).

Tables: GPU trace (``--print-gpu-trace``), API trace (``--print-api-trace``), summary
(``Type Time(%) Time Calls Avg Min Max Name``, ``GPU activities:`` / ``API calls:``
sections; CUDA <= 8 has no Type column), metrics and events (``--metrics``/``--events``).
Columns are found by their header, never by position.  The CSV rows themselves are split
by the standard ``csv`` module (names are quoted and contain commas); this module says what
each header cell, unit and value means.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

import pyparsing as pp

from .units import BYTES_PER_UNIT, NS_PER_UNIT, SHORT_TIME_UNITS, scale_exact

# --------------------------------------------------------------------------- message lines
#: ``==12400== Profiling result:``; ``==PROF==`` belongs to Nsight Compute, not here
pid_prefix = pp.Regex(r"==(?P<pid>\d+)==")
message_line = pp.Regex(r"==(?P<pid>\d+)==(?: (?P<msg>.*))?$")
MESSAGE_RE = re.compile(r"^==(\d+)==(?: |$)")
#: the message lines that announce a table
RESULT_MESSAGES = ("Profiling result:", "API calls:", "Metric result:", "Event result:")

# --------------------------------------------------------------------------- values and units
NUMBER_PATTERN = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
number = pp.Regex(NUMBER_PATTERN)
#: the unit spellings nvprof prints (their sizes: :mod:`loganalyze.grammars.units`)
TIME_UNITS = SHORT_TIME_UNITS
SIZE_UNITS = ("B", "KB", "MB", "GB", "TB")
RATE_UNITS = tuple(f"{u}/s" for u in SIZE_UNITS)
#: every cell a units row may hold
UNIT_CELLS = set(TIME_UNITS) | set(SIZE_UNITS) | set(RATE_UNITS) | {"%", ""}

time_unit = pp.one_of(list(TIME_UNITS))
size_unit = pp.one_of(list(SIZE_UNITS))
#: ``1.0240us``, ``264.39ms``, ``8.43532s``: text-mode times carry their unit
time_value = pp.Combine(number("num") + time_unit("unit"))
#: ``112B``, ``1.5000KB``
size_value = pp.Combine(number("num") + size_unit("unit"))
#: ``104.31MB/s``
rate_value = pp.Combine(number("num") + pp.one_of(list(RATE_UNITS))("unit"))
#: ``(1 1 1)`` in text traces
dims3 = pp.Suppress("(") + pp.common.integer * 3 + pp.Suppress(")")
dash = pp.Literal("-")

TIME_VALUE_RE = re.compile(rf"^({NUMBER_PATTERN})({'|'.join(TIME_UNITS)})$")
SIZE_VALUE_RE = re.compile(rf"^([-+]?(?:\d+(?:\.\d*)?|\.\d+))({'|'.join(SIZE_UNITS)})$")
DIMS_RE = re.compile(r"^\(\s*(\d+)\s+(\d+)\s+(\d+)\s*\)$")


def cell(text: str | None) -> str | None:
    """A cell's text without surrounding blanks; None for a missing or empty cell or ``-``."""
    if text is None:
        return None
    text = text.strip()
    return None if not text or text == "-" else text


def scale_to_int(text: str, factor: int) -> int | None:
    """``text`` (a decimal number) times ``factor``, exactly, rounded half-even to an
    integer (:func:`~loganalyze.grammars.units.scale_exact`); None for an empty cell or ``-``."""
    text = cell(text)
    return None if text is None else scale_exact(text, factor)


def time_to_ns(text: str, unit: str | None = None) -> int | None:
    """A time cell in ns: ``text`` in ``unit`` (CSV), or with its own suffix (text mode)."""
    text = cell(text)
    if text is None:
        return None
    if unit:
        if unit not in TIME_UNITS:
            raise ValueError(f"unknown time unit {unit!r}")
        return scale_to_int(text, NS_PER_UNIT[unit])
    m = TIME_VALUE_RE.match(text)
    if not m:
        raise ValueError(f"not a time with a unit: {text!r}")
    return scale_to_int(m.group(1), NS_PER_UNIT[m.group(2)])


def size_to_bytes(text: str, unit: str | None = None) -> int | None:
    """A size cell in bytes: ``text`` in ``unit`` (CSV), or with its own suffix (text mode)."""
    text = cell(text)
    if text is None:
        return None
    if unit:
        return scale_to_int(text, BYTES_PER_UNIT[unit] if unit in SIZE_UNITS else 1)
    m = SIZE_VALUE_RE.match(text)
    if not m:
        return scale_to_int(text, 1)
    return scale_to_int(m.group(1), BYTES_PER_UNIT[m.group(2)])


def parse_dims(text: str) -> tuple[int | None, int | None, int | None]:
    m = DIMS_RE.match(text.strip()) if text else None
    if not m:
        return (None, None, None)
    return tuple(int(g) for g in m.groups())  # type: ignore[return-value]


def parse_int(text: str | None) -> int | None:
    """An integer cell (``12``, ``12.0``); None for an empty cell or text."""
    text = cell(text)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return int(Decimal(text))
        except InvalidOperation:
            return None


DEVICE_RE = re.compile(r"^(?P<name>.*?)\s*\((?P<id>\d+)\)$")


def parse_device(text: str | None) -> tuple[int | None, str | None]:
    """``GeForce GTX 1080 Ti (0)`` -> (0, 'GeForce GTX 1080 Ti')."""
    if not text:
        return (None, None)
    m = DEVICE_RE.match(text.strip())
    if m:
        return int(m.group("id")), m.group("name")
    return (parse_int(text), text.strip() or None)


#: ``void foo<int>(int) [1073]``: older nvprof appends the correlation id to the name
CORRELATION_SUFFIX_RE = re.compile(r"^(?P<name>.*\S) \[(?P<corr>\d+)\]$")


def split_correlation(name: str) -> tuple[str, int | None]:
    if name.startswith("[CUDA "):
        return name, None
    m = CORRELATION_SUFFIX_RE.match(name)
    if m:
        return m.group("name"), int(m.group("corr"))
    return name, None


def activity_kind(name: str) -> tuple[str, str | None]:
    """('memcpy', 'HtoD') for ``[CUDA memcpy HtoD]``, ('memset', None), or ('kernel', None)."""
    if name.startswith("[CUDA memcpy"):
        kind = name[len("[CUDA memcpy"):].strip(" ]") or None
        return "memcpy", kind
    if name.startswith("[CUDA memset"):
        return "memset", None
    return "kernel", None


# --------------------------------------------------------------------------- headers
#: header cell (CSV or text) -> canonical column.  Unknown cells are kept under their own name.
HEADER: dict[str, str] = {
    "Start": "start", "Duration": "duration",
    "Grid X": "grid_x", "Grid Y": "grid_y", "Grid Z": "grid_z",
    "Block X": "block_x", "Block Y": "block_y", "Block Z": "block_z",
    "Grid Size": "grid", "Block Size": "block",
    "Registers Per Thread": "registers", "Regs*": "registers", "Regs": "registers",
    "Static SMem": "static_smem", "SSMem*": "static_smem", "SSMem": "static_smem",
    "Dynamic SMem": "dynamic_smem", "DSMem*": "dynamic_smem", "DSMem": "dynamic_smem",
    "Size": "size", "Throughput": "throughput",
    "SrcMemType": "src_kind", "DstMemType": "dst_kind",
    "Device": "device", "Context": "context", "Stream": "stream", "Name": "name",
    "Correlation_ID": "correlation_id", "CorrId": "correlation_id",
    "Src Dev": "src_device", "Src Ctx": "src_context", "Dst Dev": "dst_device", "Dst Ctx": "dst_context",
    "Type": "type", "Time(%)": "time_pct", "Time": "time", "Calls": "calls",
    "Avg": "avg", "Min": "min", "Max": "max",
    "Kernel": "kernel", "Invocations": "invocations", "Metric Name": "metric",
    "Metric Description": "description", "Event Name": "metric", "Total": "total",
}

#: which table a header is, from the canonical columns it has
TABLE_KINDS = {
    "summary": {"time_pct", "time", "calls", "avg", "min", "max", "name"},
    "metrics": {"kernel", "invocations", "metric", "min", "max", "avg"},
    "events": {"kernel", "invocations", "metric", "min", "max", "avg"},
    "gpu_trace": {"start", "duration", "name"},
}


def canonical_header(cells: list[str]) -> list[str]:
    return [HEADER.get(c.strip(), c.strip()) for c in cells]


def table_kind(columns: list[str]) -> str | None:
    """gpu_trace (also a merged GPU+API trace), api_trace, summary, metrics, events, or None."""
    cols = set(columns)
    if TABLE_KINDS["summary"] <= cols:
        return "summary"
    if {"invocations", "metric"} <= cols and ("avg" in cols or "total" in cols):
        return "metrics" if "description" in cols else "events"
    if TABLE_KINDS["gpu_trace"] <= cols:
        gpu = cols & {"device", "stream", "grid_x", "grid", "size", "context"}
        return "gpu_trace" if gpu else "api_trace"
    return None


def is_units_row(cells: list[str]) -> bool:
    """Every cell is a unit (or empty) and at least one is not empty."""
    stripped = [c.strip() for c in cells]
    return any(stripped) and all(c in UNIT_CELLS for c in stripped)


# --------------------------------------------------------------------------- text tables
#: a text header: the known column labels separated by two or more blanks
TEXT_HEADER_RE = re.compile(r"^\s*(Start|Type|Time\(%\)|Invocations)\s{2,}.*\bName\s*$|"
                            r"^\s*Invocations\s+(Metric|Event) Name")

#: a summary section label: `` GPU activities:`` / ``      API calls:``
summary_type = pp.Regex(r"[A-Za-z][A-Za-z ]*?(?=:)")("type") + pp.Suppress(":")
percent = pp.Combine(number + pp.Literal("%"))
#: a cell of a text row ends at a blank (``33.333us`` is one cell, not ``33`` and ``.333us``)
_cell_end = pp.WordEnd(pp.printables)
#: one text summary row; the name is the rest of the line
summary_row = (
    pp.Optional(summary_type)
    + number("time_pct") + pp.Suppress("%") + _cell_end
    + time_value("time") + _cell_end + pp.common.integer("calls") + _cell_end
    + time_value("avg") + _cell_end + time_value("min") + _cell_end + time_value("max") + _cell_end
    + pp.Regex(r".+")("name")
)
#: the fast path: every row :data:`summary_row` reads, read into the same cells
#: (tests/test_gpu_formats.py); it takes any text for a time, which its reader then checks
SUMMARY_ROW_RE = re.compile(
    r"^\s*(?:(?P<type>[A-Za-z][A-Za-z ]*?):)?\s*(?P<time_pct>[-+\d.eE]+)%\s+(?P<time>\S+)\s+(?P<calls>\d+)\s+"
    r"(?P<avg>\S+)\s+(?P<min>\S+)\s+(?P<max>\S+)\s+(?P<name>\S.*?)\s*$"
)


def parse_summary_text_row(line: str) -> dict | None:
    """A text summary row as a dict of strings, None for a line that is not one."""
    m = SUMMARY_ROW_RE.match(line)
    return m.groupdict() if m else None


def text_columns(header: str) -> list[tuple[str, int, int]]:
    """Column labels of a text header with the character span each label covers.

    Labels are separated by two or more blanks (``Grid Size`` is one label)."""
    return [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", header)]


def cut_text_row(line: str, columns: list[tuple[str, int, int]]) -> dict[str, str] | None:
    """Cut a right-aligned text row by the end of each header label; ``Name`` (left-aligned,
    last) is the rest of the line.  Returns label -> cell text."""
    out: dict[str, str] = {}
    prev_end = 0
    n = len(columns)
    for i, (label, start, end) in enumerate(columns):
        if i == n - 1:  # the name: the rest of the line
            out[label] = line[prev_end:].strip()
            break
        # a right-aligned cell may run left past its label; it ends where the label ends,
        # unless the value overflows: then it ends at the next blank
        stop = end
        while stop < len(line) and line[stop] != " ":
            stop += 1
        out[label] = line[prev_end:stop].strip()
        prev_end = stop
    return out


#: ``Device "GeForce GTX 1080 Ti (0)"`` and ``    Kernel: vectorAdd(...)`` in text metrics
METRIC_DEVICE_RE = re.compile(r'^\s*Device "(?P<device>.*)"\s*$')
METRIC_KERNEL_RE = re.compile(r"^\s*Kernel: (?P<kernel>.*\S)\s*$")
_VAL = r"(?:[A-Za-z]+ \(\d+\)|\S+)"
METRIC_TEXT_ROW_RE = re.compile(
    rf"^\s*(?P<invocations>\d+)\s+(?P<metric>\S+)\s+(?P<description>.*?)\s+(?P<min>{_VAL})\s+"
    rf"(?P<max>{_VAL})\s+(?P<avg>{_VAL})\s*$"
)
EVENT_TEXT_ROW_RE = re.compile(
    rf"^\s*(?P<invocations>\d+)\s+(?P<metric>\S+)\s+(?P<min>{_VAL})\s+(?P<max>{_VAL})\s+(?P<avg>{_VAL})"
    rf"(?:\s+(?P<total>{_VAL}))?\s*$"
)

# --------------------------------------------------------------------------- metric values
metric_category = pp.Regex(r"[A-Za-z]+ \((?P<level>\d+)\)")
metric_percent = pp.Combine(number("num") + pp.Literal("%"))
metric_with_unit = pp.Combine(number("num") + pp.Regex(r"[A-Za-z/]+")("unit"))

_CATEGORY_RE = re.compile(r"^[A-Za-z]+ \((\d+)\)$")
_PERCENT_RE = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)%$")
_NUMBER_RE = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")
_WITH_UNIT_RE = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)([A-Za-z/]+)$")
#: units of rates and sizes in metric values, in base units (bytes/s, bytes)
METRIC_UNIT_SCALE = {"B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
                     "B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}


def metric_value(text: str) -> tuple[str, float | None, str | None]:
    """(shape, number, unit) of a metric value: shapes percent, number, number_with_unit,
    category (``Low (1)`` gives 1), or text."""
    t = (text or "").strip()
    if m := _PERCENT_RE.match(t):
        return "percent", float(m.group(1)), "%"
    if _NUMBER_RE.match(t):
        return "number", float(t), None
    if m := _WITH_UNIT_RE.match(t):
        return "number_with_unit", float(m.group(1)), m.group(2)
    if m := _CATEGORY_RE.match(t):
        return "category", float(m.group(1)), None
    return "text", None, None
