"""MXNet ``profiler.dumps()`` aggregate statistics: the text table and the JSON form.

Text layout (apache/mxnet ``src/profiler/aggregate_stats.cc``; docs/formats.md section 5.1)::

    Profile Statistics.                                     <- MXNet <= 1.5
            Note that counter items are counter values and not time units.
    Profile Statistics:                                     <- MXNet >= 1.6 (after a blank line)
            Note the difference in units for different entries.
    <section title>                                         <- domain: operator, MXNET_C_API, Device Storage, ...
    =================
    Name                          Total Count        Time (ms)    Min Time (ms)    Max Time (ms)    Avg Time (ms)
    ----                          -----------        ---------    -------------    -------------    -------------
    <name, setw(25) left>   <count, setw(16)> <4 decimals, setw(16)> ...
    <blank line>

In MXNet >= 1.6 the memory sections (``Device Storage``, ``Pool Memory``) have no time
column: ``Total Count  Min Use  (kB)  Max Use  (kB)  Avg Use  (kB)`` (``kb`` in some
releases).  Names can hold spaces and be longer than their column, so a row is split from
the right: the last N tokens are the numbers (N = header columns - 1), the rest is the name.

The JSON form (``dumps(format='json')``) is
``{"Time": {domain: {name: {"Count", "Total", "Min", "Max", "Avg"}}}, "Memory": {...}, "Unit": {...}}``;
one release writes a trailing comma inside ``Unit``, which is tolerated.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import pyparsing as pp

from .json_text import exact_number, unclosed

PREAMBLE_RE = re.compile(r"^Profile Statistics[.:]\s*$")
RULE_RE = re.compile(r"^={3,}\s*$")
DASHES_RE = re.compile(r"^-{3,}(\s+-{3,})+\s*$")

# --------------------------------------------------------------------------- header
_label = pp.Regex(
    r"Total Count|Time \(ms\)|(?:Min|Max|Avg) Time \(ms\)|(?:Min|Max|Avg) Use\s+\((?:kB|kb|KB)\)"
)
header_row = pp.Literal("Name")("first") + pp.OneOrMore(_label)("labels") + pp.StringEnd()

#: header label -> column key
COLUMN_KEYS = {
    "Total Count": "total_count", "Time (ms)": "time_ms", "Min Time (ms)": "min_time_ms",
    "Max Time (ms)": "max_time_ms", "Avg Time (ms)": "avg_time_ms",
    "Min Use (kB)": "min_use_kb", "Max Use (kB)": "max_use_kb", "Avg Use (kB)": "avg_use_kb",
}

MEMORY_SECTIONS = ("Device Storage", "Pool Memory")
COUNTER_NAMES = ("MXNet C API Calls", "MXNet C API Concurrency")
NUMBER_RE = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$|^[-+]?(?:nan|inf)$", re.I)


def parse_header(line: str) -> list[str] | None:
    """Column keys of a header row (``["total_count", "time_ms", ...]``), or None."""
    try:
        res = header_row.parse_string(line.strip())
    except pp.ParseException:
        return None
    labels = [re.sub(r"\s+", " ", lab).replace("(kb)", "(kB)").replace("(KB)", "(kB)") for lab in res["labels"]]
    return [COLUMN_KEYS[lab] for lab in labels]


@dataclass
class Row:
    name: str
    values: dict  # column key -> exact text
    counter: bool


def parse_row(line: str, columns: list[str], section: str) -> Row | str:
    """One data row, or the reason it cannot be read."""
    n = len(columns)
    parts = line.rstrip().rsplit(None, n)
    if len(parts) != n + 1:
        return f"malformed: {len(parts) - 1} value(s), the header has {n}"
    name, nums = parts[0], parts[1:]
    bad = [v for v in nums if not NUMBER_RE.match(v)]
    if bad:
        return f"malformed: {bad[0]!r} is not a number"
    if not re.fullmatch(r"\d+", nums[0]):
        return f"malformed: count {nums[0]!r} is not an integer"
    return Row(name, dict(zip(columns, nums)), is_counter(name, section))


def is_counter(name: str, section: str) -> bool:
    """Rows whose "time" columns hold counter values (README of the corpus; MXNet counters)."""
    return section in MEMORY_SECTIONS or name.startswith("Memory:") or name in COUNTER_NAMES


def ms_to_ns(text: str | None) -> int | None:
    """``"1588.3420"`` ms -> 1588342000 ns, exactly."""
    if text is None:
        return None
    try:
        d = Decimal(text)
    except InvalidOperation:
        return None
    if not d.is_finite():
        return None
    return int((d * 1_000_000).to_integral_value())


# --------------------------------------------------------------------------- JSON form
def looks_like_json_dump(head: bytes) -> bool:
    s = head.lstrip()
    return s.startswith(b"{") and b'"Time"' in head[:4096] and (b'"Unit"' in head or b'"Memory"' in head)


def parse_json_dump(text: str) -> dict:
    """The JSON form as a dict, tolerating what some releases write: a trailing comma inside
    ``Unit`` and one closing brace too few."""
    fixed = re.sub(r",(\s*[}\]])", r"\1", text)
    try:
        return json.loads(fixed, parse_float=exact_number, parse_int=Decimal)
    except json.JSONDecodeError:
        closers, _ = unclosed(fixed)
        if not closers:
            raise
        return json.loads(fixed.rstrip() + closers, parse_float=exact_number, parse_int=Decimal)
