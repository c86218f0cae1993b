"""``nsys stats`` reports as printed (CSV or column text), one or several in a file.

Summary reports (kernels, API calls, memory operations, NVTX ranges) go to gpu_report_rows;
trace reports (``cuda_gpu_trace``, ``cuda_api_trace``, ``nvtx_pushpop_trace``) to the
per-instance tables.  Progress lines, titles, headers, dashes and blank lines are "other";
rows of a report that is not read (``osrt_sum``, ...) or that cannot be parsed are skipped
with the reason.  Grammar: :mod:`loganalyze.grammars.nsys_stats`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..grammars import nsys as gn
from ..grammars import nsys_stats as g
from ..grammars.cuda_api import base_api_name
from ..grammars.units import NS_PER_UNIT, scale_exact
from ..names import name_forms
from .base import IngestContext
from .gpu_common import checked_time, first_lines, table_rows
from .text import csv_cells, feed_lines, header_cells

LABEL_TO_SHORT = {label: short for short, label in gn.COPY_KINDS.values()}
MB = 1e6  # nsys stats sizes are decimal megabytes


@dataclass
class _Table:
    report: str
    kind: str | None
    mode: str
    line_no: int
    cols: list[str]
    units: dict[str, str | None]
    spans: list = field(default_factory=list)
    bad_reason: str | None = None


class NsysStatsImporter:
    format = "nsys_stats"

    def sniff(self, head: bytes, name: str) -> int:
        lines = first_lines(head, 300)
        for l in lines:
            if g.TITLE_RE.match(l) and g.TITLE_RE.match(l).group("report") in g.REPORTS:
                return 85
            m = g.RUNNING_RE.match(l)
            if m and m.group("report") in g.REPORTS:
                return 85
        for l in lines[:5]:
            low = l.lower()
            if ("total time (ns)" in low or "start (ns)" in low) and ("name" in low or "operation" in low
                                                                      or "range" in low):
                return 80
        return 0

    def ingest(self, ctx: IngestContext) -> None:
        _Stats(ctx).run()


def _ns_per(unit: str | None) -> int:
    """The size of a header's time unit in ns (ns when it names none or an unknown one)."""
    return NS_PER_UNIT.get(unit or "ns", 1)


def _time(v: str | None, unit: str | None) -> int | None:
    """A time cell in integer ns, exactly."""
    s = g.number_text(v)
    return None if s is None else scale_exact(s, _ns_per(unit))


def _timef(v: str | None, unit: str | None) -> float | None:
    """A statistic cell (average, median, deviation) in float ns."""
    x = g.number(v)
    return None if x is None else x * _ns_per(unit)


class _Stats:
    def __init__(self, ctx: IngestContext):
        self.ctx = ctx
        self.reports = table_rows(ctx, "gpu_report_rows")
        self.kernels = table_rows(ctx, "gpu_kernels")
        self.memops = table_rows(ctx, "gpu_memops")
        self.apis = table_rows(ctx, "gpu_api_calls")
        self.nvtx = table_rows(ctx, "nvtx_ranges")
        self.parsed = self.other = 0
        self.table: _Table | None = None
        self.pending_report: str | None = None
        self.prev: tuple[int, str] | None = None
        self.seen: dict[str, int] = {}
        m = g.FILE_REPORT_RE.search(ctx.file.name)
        self.file_report = m.group(1) if m else None

    def run(self) -> None:
        ctx = self.ctx
        total = feed_lines(ctx, self.line, (self.reports, self.kernels, self.memops, self.apis, self.nvtx))
        ctx.finish(total, self.parsed, self.other, what="nsys stats report row",
                   hint="no report header such as Time (%),Total Time (ns),...,Name")
        modes = sorted({m for m in self.seen.values()})
        ctx.source["dialect"] = "nsys stats " + ", ".join(self.seen) + f" ({'/'.join(modes)})"

    # ------------------------------------------------------------------ lines
    def line(self, n: int, line: str) -> None:
        t = self.table
        if t is not None:
            if not line.strip():
                self.table = None
                self.other += 1
                return
            if t.mode == "csv":
                try:
                    cells = csv_cells(line)
                except ValueError as exc:
                    self.ctx.skip(n, f"malformed {t.report} row: {exc}", line)
                    return
                if len(cells) != len(t.cols):
                    self.table = None
                    self.line(n, line)
                    return
            else:
                cells = g.cut(line, t.spans)
            if t.bad_reason:
                self.ctx.skip(n, t.bad_reason, line)
                return
            try:
                self.row(n, dict(zip(t.cols, cells)), t)
            except (ValueError, ArithmeticError) as exc:
                self.ctx.skip(n, f"malformed {t.report} row: {exc}", line)
                return
            self.parsed += 1
            return
        m = g.TITLE_RE.match(line) or g.RUNNING_RE.match(line)
        if m:
            self.pending_report = m.group("report")
            self.other += 1
            self.prev = None
            return
        if g.DASHES_RE.match(line) and self.prev is not None:
            hn, header = self.prev
            sp = g.spans(line)
            cells = g.cut(header.ljust(sp[-1][1]), sp)
            self.other += 1
            self._start(hn, cells, "text", sp)
            self.prev = None
            return
        if "," in line and not line.startswith(" "):
            cells = header_cells(line)
            canon = {g.canonical(c)[0] for c in cells}
            if len(cells) >= 3 and ("name" in canon or "style" in canon) and (canon & {"total", "start", "count"}):
                self.other += 1
                self._start(n, cells, "csv", [])
                self.prev = None
                return
        self.other += 1
        self.prev = (n, line) if line.strip() else None

    def _start(self, n: int, cells: list[str], mode: str, spans) -> None:
        canon = [g.canonical(c) for c in cells]
        cols = [c for c, _ in canon]
        units = {c: u for c, u in canon}
        report = self.pending_report or self.file_report
        kind = g.REPORTS.get(report) if report else g.report_from_columns(cells)
        report = report or kind or "?"
        self.pending_report = None
        t = _Table(report, kind, mode, n, cols, units, spans)
        if kind is None:
            t.bad_reason = f"nsys stats report {report} is not read (only CUDA kernel, API, memory and NVTX reports)"
            self.ctx.warnings.append(f"{self.ctx.file.path}: line {n}: {t.bad_reason}")
        self.seen.setdefault(report, mode)
        self.table = t

    # ------------------------------------------------------------------ rows
    def row(self, n: int, r: dict, t: _Table) -> None:
        u = t.units
        k = t.kind
        if k in ("kernel", "api", "memtime", "nvtx", "gpusum", "memsize"):
            name = (r.get("name") or "").strip()
            if not name:
                raise ValueError("no name")
            category, kind = {"kernel": ("kernel", None), "api": ("api", None), "nvtx": ("nvtx", None)}.get(k, (None, None))
            if k in ("memtime", "memsize") or (k == "gpusum" and "MEMORY" in (r.get("category") or "").upper()):
                category, kind = _memop(name)
                if k == "memsize":
                    category = "memory_size"
            elif k == "gpusum":
                category = "kernel" if "KERNEL" in (r.get("category") or "").upper() else "other"
            if k == "memsize":
                tot = g.number(r.get("total"))
                self.reports.add(row_no=n, report=t.report, category=category, name=name, kind=kind,
                                 count=_int(r.get("count")), total_bytes=None if tot is None else tot * MB)
                return
            tu = u.get("total") or "ns"
            self.reports.add(
                row_no=n, report=t.report, category=category, name=name, kind=kind,
                style=(r.get("style") or "").strip() or None, count=_int(r.get("count")),
                total_ns=checked_time(_time(r.get("total"), tu), "total time"),
                avg_ns=checked_time(_timef(r.get("avg"), u.get("avg") or tu), "average time"),
                median_ns=checked_time(_timef(r.get("med"), u.get("med") or tu), "median time"),
                min_ns=checked_time(_time(r.get("min"), u.get("min") or tu), "minimum time"),
                max_ns=checked_time(_time(r.get("max"), u.get("max") or tu), "maximum time"),
                stddev_ns=_timef(r.get("stddev"), u.get("stddev") or tu),
                time_pct=g.number(r.get("time_pct")), grid=_dims_text(r.get("grid")), block=_dims_text(r.get("block")))
            return
        start = _time(r.get("start"), u.get("start"))
        if k == "nvtxtrace":
            end = _time(r.get("end"), u.get("end"))
            dur = checked_time(_time(r.get("duration"), u.get("duration")))
            if start is None:
                raise ValueError("no start time")
            if end is not None:
                checked_time(end - start, "duration (end before start)")
            pid, tid = _int(r.get("pid")), _int(r.get("tid"))
            self.nvtx.add(row_no=n, text=(r.get("name") or "").strip(), event_type="push_pop", start_ns=start,
                          end_ns=end, duration_ns=dur if dur is not None else (end - start if end is not None else None),
                          pid=pid, tid=tid, global_tid=_gtid(pid, tid), depth=_int(r.get("level")))
            return
        dur = checked_time(_time(r.get("duration"), u.get("duration")))
        if start is None or dur is None:
            raise ValueError("no start or duration")
        name = (r.get("name") or "").strip()
        common = dict(row_no=n, start_ns=start, end_ns=start + dur, duration_ns=dur,
                      correlation_id=_int(r.get("correlation_id")), origin=t.report)
        if k == "apitrace":
            pid, tid = _int(r.get("pid")), _int(r.get("tid"))
            self.apis.add(api="driver" if name.startswith("cu") and not name.startswith("cuda") else "runtime",
                          name=name, base_name=base_api_name(name), pid=pid, tid=tid, global_tid=_gtid(pid, tid),
                          return_value=_int(r.get("result")), **common)
            return
        if name.startswith("[CUDA mem"):
            op, kind = _memop(name)
            mb = g.number(r.get("bytes"))
            bu = (u.get("bytes") or "MB").upper()
            scale = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}.get(bu, 1e6)
            self.memops.add(op=op, kind=kind, name=name, bytes=None if mb is None else int(round(mb * scale)),
                            device=_int(r.get("device")), context=_int(r.get("context")),
                            stream=_int(r.get("stream")), src_kind=_blank(r.get("src_kind")),
                            dst_kind=_blank(r.get("dst_kind")), **common)
            return
        d, s, mg = name_forms(name)
        su = (u.get("static_smem") or "MB").upper()
        sscale = {"B": 1, "KB": 1e3, "MB": 1e6}.get(su, 1e6)
        self.kernels.add(name=name, demangled=d, short_name=s, mangled=mg, device=_int(r.get("device")),
                         context=_int(r.get("context")), stream=_int(r.get("stream")),
                         grid_x=_int(r.get("grid_x")), grid_y=_int(r.get("grid_y")), grid_z=_int(r.get("grid_z")),
                         block_x=_int(r.get("block_x")), block_y=_int(r.get("block_y")),
                         block_z=_int(r.get("block_z")), registers=_int(r.get("registers")),
                         static_smem=_scaled(r.get("static_smem"), sscale),
                         dynamic_smem=_scaled(r.get("dynamic_smem"), sscale), **common)


def _memop(name: str) -> tuple[str, str | None]:
    if "memset" in name:
        return "memset", None
    label = name.strip("[] ").replace("CUDA memcpy", "").strip()
    return "memcpy", LABEL_TO_SHORT.get(label, label or None)


def _int(v) -> int | None:
    try:
        x = g.number(v)
    except ValueError:  # "Sample GPU (0)": the device's number is in parentheses
        m = re.search(r"\((\d+)\)\s*$", v or "")
        return int(m.group(1)) if m else None
    return None if x is None else int(x)


def _scaled(v, scale) -> int | None:
    x = g.number(v)
    return None if x is None else int(round(x * scale))


def _blank(v) -> str | None:
    v = (v or "").strip()
    return None if v in ("", "-") else v


def _gtid(pid, tid) -> int | None:
    if pid is None or tid is None:
        return None
    return (pid << 32) | (tid & 0xFFFFFFFF)


def _dims_text(v) -> str | None:
    if not v or not v.strip():
        return None
    parts = v.replace(",", " ").split()
    return "x".join(parts) if parts else None
