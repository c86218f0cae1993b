"""``nsys stats`` report output: CSV (``--format csv``) and the column/table text format.

A report is an optional title (``** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):``, or
``Running [.../reports/gpukernsum.py ...]`` before 2023), a header, and rows; text tables
have a row of dashes under the header whose dash groups give each column's span, and
numbers there carry thousands separators (``88,573,480``).  Report names changed in 2023
(``gpukernsum`` -> ``cuda_gpu_kern_sum``); columns are found by header, never by position
(:func:`canonical`), and a report without a title is recognised from its columns
(:func:`report_from_columns`).
"""
from __future__ import annotations

import re

import pyparsing as pp

#: report name -> (canonical name, kind); kind says which table the rows go to
REPORTS = {
    "cuda_gpu_kern_sum": "kernel", "gpukernsum": "kernel", "cuda_gpu_kern_gb_sum": "kernel",
    "cuda_api_sum": "api", "cudaapisum": "api",
    "cuda_gpu_mem_time_sum": "memtime", "gpumemtimesum": "memtime",
    "cuda_gpu_mem_size_sum": "memsize", "gpumemsizesum": "memsize",
    "nvtx_sum": "nvtx", "nvtxsum": "nvtx", "nvtx_pushpop_sum": "nvtx", "nvtxppsum": "nvtx",
    "nvtx_startend_sum": "nvtx", "nvtx_gpu_proj_sum": "nvtx",
    "cuda_gpu_sum": "gpusum", "gpusum": "gpusum",
    "cuda_gpu_trace": "gputrace", "gputrace": "gputrace",
    "cuda_api_trace": "apitrace", "cudaapitrace": "apitrace",
    "nvtx_pushpop_trace": "nvtxtrace", "nvtxpptrace": "nvtxtrace",
}
#: ``** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):``
title = pp.Regex(r"\s*\*\*\s*(?P<title>.*?)\s*\((?P<report>[a-z_0-9]+)\):?\s*$")
#: ``Running [/opt/.../reports/gpukernsum.py report.sqlite]...`` / ``Processing [x.sqlite] with [.../cuda_gpu_kern_sum.py]...``
running = pp.Regex(r".*(?:Running|Processing) \[.*?(?:reports/)?(?P<report>[a-z_0-9]+)\.py\b.*")
TITLE_RE = re.compile(title.re.pattern)
RUNNING_RE = re.compile(running.re.pattern)
FILE_REPORT_RE = re.compile(r"_(" + "|".join(sorted(REPORTS, key=len, reverse=True)) + r")\.(?:csv|txt|tsv)$")
DASHES_RE = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
SKIPPED_RE = re.compile(r"^\s*SKIPPED:|does not contain .* data", re.I)

#: header words (lower case, unit stripped) -> canonical column
HEADER = {
    "time (%)": "time_pct", "time(%)": "time_pct", "time %": "time_pct",
    "total time": "total", "instances": "count", "num calls": "count", "calls": "count", "count": "count",
    "avg": "avg", "average": "avg", "med": "med", "median": "med", "min": "min", "minimum": "min",
    "max": "max", "maximum": "max", "stddev": "stddev", "std dev": "stddev",
    "name": "name", "operation": "name", "range": "name", "style": "style", "category": "category",
    "gridxyz": "grid", "blockxyz": "block", "total": "total",
    "start": "start", "end": "end", "duration": "duration", "corrid": "correlation_id", "corr id": "correlation_id",
    "grdx": "grid_x", "grdy": "grid_y", "grdz": "grid_z", "blkx": "block_x", "blky": "block_y", "blkz": "block_z",
    "reg/trd": "registers", "stcsmem": "static_smem", "dymsmem": "dynamic_smem", "bytes": "bytes",
    "throughput": "throughput", "srcmemkd": "src_kind", "dstmemkd": "dst_kind", "device": "device",
    "ctx": "context", "greenctx": "green_context", "strm": "stream", "result": "result", "pid": "pid",
    "tid": "tid", "t-pri": "priority", "thread name": "thread", "lvl": "level", "numchild": "children",
    "rangeid": "range_id", "parentid": "parent_id", "rangestack": "stack", "nametree": "name_tree",
    "durchild": "dur_child", "durnonchild": "dur_nonchild",
}
UNIT_RE = re.compile(r"^(?P<label>.*?)\s*\((?P<unit>[^()]*)\)\s*$")


def canonical(cell: str) -> tuple[str, str | None]:
    """(canonical column, unit) of a header cell: ``Total Time (ns)`` -> ('total', 'ns')."""
    c = cell.strip().strip('"')
    low = c.lower()
    if low in HEADER:
        return HEADER[low], None
    m = UNIT_RE.match(c)
    if m:
        label = m.group("label").lower()
        unit = m.group("unit")
        if label in HEADER:
            return HEADER[label], unit
    return low, None


def report_from_columns(cells: list[str]) -> str | None:
    """The report kind a header shows, when no title names it."""
    labels = {UNIT_RE.sub(lambda m: m.group("label"), c.strip().strip('"')).lower() for c in cells}
    canon = [canonical(c) for c in cells]
    cols = {c for c, _ in canon}
    units = {c: u for c, u in canon}
    if {"start", "duration", "name"} <= cols:
        if cols & {"grid_x", "stream", "device", "static_smem", "bytes"}:
            return "gputrace"
        return "apitrace"
    if {"start", "end", "name"} <= cols and cols & {"level", "stack", "range_id"}:
        return "nvtxtrace"
    if "name" not in cols or "total" not in cols:
        return None
    if "style" in cols or "range" in labels:
        return "nvtx"
    if "category" in cols:
        return "gpusum"
    if (units.get("total") or "").lower() in ("mb", "kb", "gb", "b"):
        return "memsize"
    if "operation" in labels:
        return "memtime"
    if "num calls" in labels:
        return "api"
    if "instances" in labels:
        return "kernel"
    return None


def number_text(text: str | None) -> str | None:
    """A number cell without its thousands separators: ``88,573,480`` -> ``88573480``;
    None for an empty cell, ``-``, ``N/A`` or ``nan``."""
    if text is None:
        return None
    s = text.strip().strip('"').replace(",", "").replace("\u202f", "").replace(" ", "")
    return None if s in ("", "-", "N/A", "nan") else s


def number(text: str | None) -> float | None:
    """``88,573,480`` / ``17,714,696.0`` / ``1.5`` -> float; empty or ``-`` -> None."""
    s = number_text(text)
    return None if s is None else float(s)


def spans(dashes: str) -> list[tuple[int, int]]:
    """Column spans of a text table from its dashes row."""
    return [(m.start(), m.end()) for m in re.finditer(r"-+", dashes)]


def cut(line: str, cols: list[tuple[int, int]]) -> list[str]:
    """Cells of a text row: each column's span, the last one to the end of the line.
    A value wider than its span (right-aligned numbers) extends left to the previous span."""
    out = []
    prev_end = 0
    for i, (a, b) in enumerate(cols):
        if i == len(cols) - 1:
            out.append(line[prev_end:].strip())
        else:
            stop = b
            while stop < len(line) and line[stop] not in " \t":
                stop += 1
            out.append(line[prev_end:stop].strip())
            prev_end = stop
    return out
