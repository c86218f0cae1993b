"""Nsight Compute ``ncu --csv`` output: the details page and the raw page.

- details (default): one row per kernel launch x metric; header ``"ID","Process ID",
  "Process Name","Host Name","Kernel Name",...,"Section Name","Metric Name","Metric Unit",
  "Metric Value"`` (older versions lack Block/Grid/Device/CC, newer add rule columns).
- ``--page raw``: one row per kernel launch with one column per metric, and a second row
  holding each metric's unit.

``==PROF==`` (and ``==WARNING==``/``==ERROR==``) lines interleave with the data.  Values
are quoted and use locale formatting (``"2,000.00"``; a European locale prints
``"2.000,00"``); :func:`number` reads both.  Block/Grid are ``"(256, 1, 1)"``.
"""
from __future__ import annotations

import re

import pyparsing as pp

#: ``==PROF== Connected to process 1234``
prof_line = pp.Regex(r"==(?:PROF|WARNING|ERROR|INFO)==.*")
PROF_RE = re.compile(r"^==(?:PROF|WARNING|ERROR|INFO)==")

HEADER = {
    "ID": "id", "Process ID": "pid", "Process Name": "process", "Host Name": "host", "Kernel Name": "kernel",
    "Kernel Time": "kernel_time", "Context": "context", "Stream": "stream", "Block Size": "block",
    "Grid Size": "grid", "Device": "device", "CC": "cc", "Section Name": "section", "Metric Name": "metric",
    "Metric Unit": "unit", "Metric Value": "value", "Rule Name": "rule", "Rule Type": "rule_type",
    "Rule Description": "rule_description", "Estimated Speedup Type": "speedup_type",
    "Estimated Speedup": "speedup",
}
IDENTITY = {"id", "pid", "process", "host", "kernel", "kernel_time", "context", "stream", "block", "grid", "device",
            "cc"}
#: metrics that are the kernel's duration (their units: :data:`loganalyze.grammars.units.NS_PER_UNIT`)
DURATION_METRICS = ("gpu__time_duration.sum", "Duration", "gpu__time_duration")

_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_EURO = re.compile(r"^[-+]?\d{1,3}(?:\.\d{3})*,\d+$")
_PLAIN = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")
dims = pp.Suppress("(") + pp.DelimitedList(pp.common.integer) + pp.Suppress(")")


def canonical_header(cells: list[str]) -> list[str]:
    return [HEADER.get(c.strip(), c.strip()) for c in cells]


def page_kind(cols: list[str]) -> str | None:
    s = set(cols)
    if {"id", "kernel", "metric", "value"} <= s:
        return "details"
    if {"id", "kernel"} <= s and len(s - IDENTITY) > 0:
        return "raw"
    return None


def number_text(text: str | None) -> str | None:
    """A value in plain decimal notation: ``2,000.00`` -> ``2000.00``, ``2.000,50`` ->
    ``2000.50``, ``12.5`` -> ``12.5``; None for text that is no number."""
    if text is None:
        return None
    s = text.strip().replace("\u202f", "").replace(" ", "")
    if not s or s in ("-", "n/a", "N/A"):
        return None
    if _PLAIN.match(s):
        return s
    if _THOUSANDS.match(s):
        return s.replace(",", "")
    if _EURO.match(s):
        return s.replace(".", "").replace(",", ".")
    return None


def number(text: str | None) -> float | None:
    """``2,000.00`` -> 2000.0, ``2.000,50`` -> 2000.5, ``12.5`` -> 12.5; None for text."""
    s = number_text(text)
    return None if s is None else float(s)


def parse_dims(text: str | None) -> str | None:
    """``(256, 1, 1)`` -> ``256x1x1``."""
    if not text:
        return None
    nums = re.findall(r"\d+", text)
    return "x".join(nums) if nums else None
