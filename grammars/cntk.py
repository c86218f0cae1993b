"""CNTK performance profiler files (microsoft/CNTK ``Source/PerformanceProfilerDll/PerformanceProfiler.cpp``).

Written at a clean exit into ``<dir>/profiler``, one pair per MPI rank:
``%Y-%m-%d_%H-%M-%S_summary_<suffix>.txt`` and ``..._detail_<suffix>.csv``.

**Summary** (``ProfilerGenerateReport``)::

    CNTK Performance Profiler Summary Report
    <blank>
    Time Stamp: 2017/06/01 12:34:56
    <blank>
    Description................ ............Mean ..........StdDev .............Min .............Max ...........Count ...........Total
    <blank>
    Main Thread                                              <- separator rows: fixed text
    <blank>
    Epoch                     :      1234.567 ms       0.000 ms ...        1       1234.567 ms
    _Minibatch Iteration      : ...
    Data Reader
    Prefetch Minibatch        : ...

Each event row is ``%-26s: `` then values.  Times are ``%13.3f ms``, or ``    %02d:%02d:%06.3f``
(hours:minutes:seconds) from 60 s on; the count is ``%16d``.  Throughput events print
``%11.3f MBps`` and a byte total ``%13lld kB`` (below 1 MiB) or ``MB``.  Older builds have
no ``Total`` column.  Leading underscores in names show nesting and are kept.

**Detail** (``ProfilerGenerateDetailFile``): header
``EventDescription,ThreadId,BeginTimeStamp(ms),EndTimeStamp(ms)`` then
``"<desc>",<tid>,%.8f,%.8f`` per custom event; the description is quoted but not escaped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import pyparsing as pp

from .units import to_ns, to_ns_or_none

TITLE = "CNTK Performance Profiler Summary Report"
DETAIL_HEADER = "EventDescription,ThreadId,BeginTimeStamp(ms),EndTimeStamp(ms)"
TIMESTAMP_RE = re.compile(r"^Time Stamp:\s*(?P<ts>\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2})\s*$")
HEADER_RE = re.compile(r"^Description\.+\s")
FILE_RE = re.compile(r"_(?P<kind>summary|detail)_(?P<suffix>[^./\\]*)\.(?:txt|csv)(?:\.gz)?$")

# --------------------------------------------------------------------------- values
_float = pp.Regex(r"-?\d+\.\d+")
time_ms = (_float("ms") + pp.Suppress(pp.Literal("ms"))).set_parse_action(lambda t: [("ms", t[0])])
time_hms = pp.Regex(r"(?P<h>\d+):(?P<m>\d{2}):(?P<s>\d+\.\d+)").set_parse_action(
    lambda t: [("hms", t[0])])
time_value = time_ms | time_hms
mbps = (_float + pp.Suppress(pp.Literal("MBps"))).set_parse_action(lambda t: [("MBps", t[0])])
count = pp.Regex(r"\d+").set_parse_action(lambda t: [("count", t[0])])
size = (pp.Regex(r"-?\d+") + pp.one_of("kB MB")).set_parse_action(lambda t: [(t[1], t[0])])
#: mean, stddev, min, max, count[, total]
time_values = pp.Group(time_value * 4) + count + pp.Optional(time_value) + pp.StringEnd()
throughput_values = pp.Group(mbps * 4) + count + pp.Optional(size) + pp.StringEnd()

def value_ns(v: tuple) -> int | None:
    """A parsed time value (``("ms", "12.345")`` or ``("hms", "01:02:03.456")``) in ns."""
    kind, text = v
    if kind == "ms":
        return to_ns_or_none(text, "ms")
    h, m, s = text.split(":")
    try:
        return to_ns(Decimal(int(h) * 3600 + int(m) * 60) + Decimal(s), "s")
    except (InvalidOperation, ValueError):
        return None


@dataclass
class SummaryRow:
    name: str
    kind: str  # time | throughput
    mean_ns: int | None = None
    stddev_ns: int | None = None
    min_ns: int | None = None
    max_ns: int | None = None
    total_ns: int | None = None
    count: int | None = None
    mbps: tuple | None = None  # mean, stddev, min, max (MB/s)
    total_bytes: int | None = None
    cells: dict | None = None


ROW_RE = re.compile(r"^(?P<name>.*?)\s*: (?P<values>.*\S)\s*$")
COLUMNS = ("Mean", "StdDev", "Min", "Max", "Count", "Total")


def parse_summary_row(line: str) -> SummaryRow | str | None:
    """An event row; a reason string when it looks like one but does not read; None for
    other lines (separators, header, blank)."""
    m = ROW_RE.match(line)
    if not m:
        return None
    name, values = m.group("name"), m.group("values")
    try:
        res = time_values.parse_string(values).as_list()
        stats = [value_ns(v) for v in res[0]]
        total = value_ns(res[2]) if len(res) > 2 else None
        cells = dict(zip(COLUMNS, _cell_texts(values)))
        return SummaryRow(name, "time", stats[0], stats[1], stats[2], stats[3], total, int(res[1][1]), cells=cells)
    except pp.ParseException:
        pass
    try:
        res = throughput_values.parse_string(values).as_list()
        stats = tuple(float(v[1]) for v in res[0])
        total = None
        if len(res) > 2:
            unit, num = res[2]
            total = int(num) * (1024 if unit == "kB" else 1024 * 1024)
        cells = dict(zip(COLUMNS, _cell_texts(values)))
        return SummaryRow(name, "throughput", count=int(res[1][1]), mbps=stats, total_bytes=total, cells=cells)
    except pp.ParseException:
        return f"malformed: values {values[:60]!r} are neither times nor throughputs"


def _cell_texts(values: str) -> list[str]:
    """The printed cells: numbers with their unit."""
    return re.findall(r"-?\d+\.\d+ (?:ms|MBps)|\d+:\d{2}:\d+\.\d+|-?\d+ (?:kB|MB)|\d+", values)


def file_rank(name: str) -> tuple[str | None, int | None]:
    """The suffix of ``..._summary_<suffix>.txt`` and, when it is a number, the rank."""
    m = FILE_RE.search(name)
    if not m:
        return None, None
    suffix = m.group("suffix")
    return suffix, int(suffix) if suffix.isdigit() else None


@dataclass
class DetailRow:
    name: str
    tid: str
    begin_ns: int
    end_ns: int


def parse_detail_row(line: str) -> DetailRow | str:
    parts = line.rsplit(",", 3)
    if len(parts) != 4:
        return f"malformed: {len(parts)} fields, the detail format has 4"
    desc, tid, begin, end = parts
    desc = desc.strip()
    if len(desc) >= 2 and desc[0] == '"' and desc[-1] == '"':
        desc = desc[1:-1]
    tid = tid.strip()
    if not re.fullmatch(r"\d+", tid):
        return f"malformed: thread id {tid!r} is not a number"
    try:
        b = to_ns(begin.strip(), "ms")
        e = to_ns(end.strip(), "ms")
    except ValueError:
        return f"malformed: timestamps {begin.strip()!r}, {end.strip()!r} are not numbers"
    return DetailRow(desc, tid, b, e)
