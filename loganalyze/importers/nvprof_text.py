"""nvprof text and CSV output: GPU trace, API trace, summary, metrics and events tables.

The file is read line by line.  ``==PID==`` message lines, blank lines, table headers and
units rows are "other" lines; each table row is parsed by the table kind its header says
(columns found by name, :mod:`loganalyze.grammars.nvprof`) and written to gpu_kernels,
gpu_memops, gpu_api_calls (traces), gpu_report_rows (summaries) or gpu_metrics.  Rows that
cannot be read, and the rows of a table whose header is unknown or whose units row is
missing, are skipped with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..grammars import nvprof as g
from ..grammars.cuda_api import base_api_name
from ..names import name_forms
from .base import IngestContext
from .gpu_common import checked_time, first_lines, put_meta, table_rows
from .text import csv_cells, feed_lines, header_cells


TABLE_LABELS = {"gpu_trace": "--print-gpu-trace", "api_trace": "--print-api-trace", "summary": "--print-summary",
                "metrics": "--metrics", "events": "--events"}


@dataclass
class _Table:
    kind: str | None
    mode: str                 # csv | text
    line_no: int
    columns: list[str]        # canonical names
    text_cols: list = field(default_factory=list)
    units: dict[str, str] | None = None
    awaiting_units: bool = True
    bad_reason: str | None = None
    section: str | None = None  # summary section (carried Type)
    device: str | None = None   # text metrics: current Device "..."
    kernel: str | None = None   # text metrics: current Kernel:


class NvprofTextImporter:
    format = "nvprof_text"

    def sniff(self, head: bytes, name: str) -> int:
        lines = first_lines(head, 400)
        if any(g.MESSAGE_RE.match(l) for l in lines):
            return 85
        for l in lines[:5]:
            s = l.strip()
            if s.startswith('"Start","Duration"') or s.startswith('"Type","Time(%)"') or \
                    s.startswith('"Device","Kernel","Invocations"'):
                return 75
        return 0

    def ingest(self, ctx: IngestContext) -> None:
        _NvprofText(ctx).run()


class _NvprofText:
    def __init__(self, ctx: IngestContext):
        self.ctx = ctx
        self.kernels = table_rows(ctx, "gpu_kernels")
        self.memops = table_rows(ctx, "gpu_memops")
        self.apis = table_rows(ctx, "gpu_api_calls")
        self.reports = table_rows(ctx, "gpu_report_rows")
        self.metrics = table_rows(ctx, "gpu_metrics")
        self.table: _Table | None = None
        self.pid: int | None = None
        self.messages: list[str] = []
        self.kinds: dict[str, int] = {}
        self.parsed = self.other = 0
        self.expect_table = False
        self.section_hint: str | None = None
        self.stripped_suffixes = 0

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        ctx = self.ctx
        total = feed_lines(ctx, self.line, (self.kernels, self.memops, self.apis, self.reports, self.metrics))
        ctx.finish(total, self.parsed, self.other, what="nvprof table row",
                   hint="no table header such as \"Start\",\"Duration\",... or Type  Time(%) ... Name")
        ctx.source["dialect"] = ", ".join(
            f"nvprof {TABLE_LABELS[k]}{' --csv' if self.kinds[k] == 'csv' else ''}" for k in TABLE_LABELS if k in self.kinds)
        put_meta(ctx, {"nvprof_pid": self.pid, "nvprof_messages": "\n".join(self.messages[:20]),
                       "correlation_suffix_stripped": self.stripped_suffixes})

    def line(self, n: int, line: str) -> None:
        ctx = self.ctx
        m = g.MESSAGE_RE.match(line)
        if m:
            self.other += 1
            self.pid = self.pid or int(m.group(1))
            msg = line[m.end():].strip()
            self.messages.append(line.rstrip())
            self.table = None
            if msg.endswith(g.RESULT_MESSAGES) or msg in g.RESULT_MESSAGES:
                self.expect_table = True
                self.section_hint = "API calls" if msg.startswith("API calls") else None
            return
        if not line.strip():
            self.other += 1
            if self.table is not None and self.table.mode == "text":
                self.table = None
            return
        if self.table is None:
            self._header(n, line)
            return
        t = self.table
        if t.bad_reason:
            ctx.skip(n, t.bad_reason, line)
            return
        if t.mode == "csv":
            try:
                cells = csv_cells(line)
            except ValueError as exc:
                ctx.skip(n, f"malformed {t.kind} row: {exc}", line)
                return
            if t.awaiting_units:
                t.awaiting_units = False
                if g.is_units_row(cells):
                    t.units = {c: u.strip() for c, u in zip(t.columns, cells) if u.strip()}
                    self.other += 1
                    return
                if t.kind in ("gpu_trace", "api_trace", "summary"):
                    t.bad_reason = (f"no units row after the header on line {t.line_no}: "
                                    "the unit of the times is unknown")
                    ctx.warnings.append(f"{ctx.file.path}: line {n}: {t.bad_reason}; that table was skipped")
                    ctx.skip(n, t.bad_reason, line)
                    return
            if len(cells) != len(t.columns):
                if len(cells) > 1 and _looks_like_header(cells):
                    self.table = None
                    self._header(n, line)
                    return
                ctx.skip(n, f"{len(cells)} fields, the header on line {t.line_no} has {len(t.columns)}", line)
                return
            row = dict(zip(t.columns, cells))
        else:
            row = self._text_row(n, line, t)
            if row is None:
                return
        try:
            self._row(n, row, t)
        except (ValueError, ArithmeticError) as exc:
            ctx.skip(n, f"malformed {t.kind} row: {exc}", line)
            return
        self.parsed += 1

    # ------------------------------------------------------------------ headers
    def _header(self, n: int, line: str) -> None:
        s = line.strip()
        if s.startswith('"'):
            cols = g.canonical_header(header_cells(s))
            kind = g.table_kind(cols)
            if kind:
                self.table = _Table(kind, "csv", n, cols, section=self.section_hint)
                self.kinds[kind] = "csv"
                self.other += 1
                self.expect_table = False
                return
        elif g.TEXT_HEADER_RE.match(line):
            tcols = g.text_columns(line)
            cols = g.canonical_header([c[0] for c in tcols])
            kind = g.table_kind(cols) or ("summary" if "time_pct" in cols and "name" in cols else None)
            if kind:
                self.table = _Table(kind, "text", n, cols, text_cols=tcols, units={}, awaiting_units=False,
                                    section=self.section_hint)
                self.kinds[kind] = "text"
                self.other += 1
                self.expect_table = False
                return
        if self.expect_table:
            reason = "unrecognised nvprof table header (not a GPU trace, API trace, summary, metrics or events table)"
            self.ctx.warnings.append(f"{self.ctx.file.path}: line {n}: {reason}: {s[:80]!r}")
            self.table = _Table(None, "csv" if s.startswith('"') else "text", n, [], bad_reason=
                                f"row of the unrecognised nvprof table whose header is on line {n}")
            self.ctx.skip(n, reason, line)
            self.expect_table = False
            return
        self.other += 1  # application output before, between or after nvprof's tables

    # ------------------------------------------------------------------ text rows
    def _text_row(self, n: int, line: str, t: _Table) -> dict | None:
        if t.kind == "summary":
            row = g.parse_summary_text_row(line)
            if row is None:
                self.ctx.skip(n, "not a summary row (Time(%) Time Calls Avg Min Max Name)", line)
            return row
        if t.kind in ("metrics", "events"):
            if m := g.METRIC_DEVICE_RE.match(line):
                t.device = m.group("device")
                self.other += 1
                return None
            if m := g.METRIC_KERNEL_RE.match(line):
                t.kernel = m.group("kernel")
                self.other += 1
                return None
            m = (g.METRIC_TEXT_ROW_RE if t.kind == "metrics" else g.EVENT_TEXT_ROW_RE).match(line)
            if not m:
                self.ctx.skip(n, f"not a {t.kind} row", line)
                return None
            row = {k: v for k, v in m.groupdict().items() if v is not None}
            row.update(kernel=t.kernel, device=t.device)
            return row
        cells = g.cut_text_row(line, t.text_cols)
        return {g.HEADER.get(k, k): v for k, v in cells.items()}

    # ------------------------------------------------------------------ rows
    def _unit(self, t: _Table, col: str) -> str | None:
        return (t.units or {}).get(col) if t.mode == "csv" else None

    def _row(self, n: int, row: dict, t: _Table) -> None:
        if t.kind in ("gpu_trace", "api_trace"):
            self._trace_row(n, row, t)
        elif t.kind == "summary":
            self._summary_row(n, row, t)
        else:
            self._metric_row(n, row, t)

    def _trace_row(self, n: int, row: dict, t: _Table) -> None:
        name = (row.get("name") or "").strip()
        if not name:
            raise ValueError("no name")
        corr = g.parse_int(row.get("correlation_id"))
        if corr is None and "correlation_id" not in t.columns:
            stripped, corr = g.split_correlation(name)
            if corr is not None:
                self.stripped_suffixes += 1
                name = stripped
        start = g.time_to_ns(row.get("start"), self._unit(t, "start"))
        dur = checked_time(g.time_to_ns(row.get("duration"), self._unit(t, "duration")))
        if start is None or dur is None:
            raise ValueError("no start or duration")
        end = start + dur
        device, _devname = g.parse_device(row.get("device"))
        context, stream = g.parse_int(row.get("context")), g.parse_int(row.get("stream"))
        kind, copy_kind = g.activity_kind(name)
        common = dict(row_no=n, start_ns=start, end_ns=end, duration_ns=dur, correlation_id=corr, pid=self.pid,
                      origin=t.kind)
        no_gpu = not (row.get("device") or "").strip() or (row.get("device") or "").strip() == "-"
        if t.kind == "api_trace" or (kind == "kernel" and no_gpu and not (row.get("grid_x") or row.get("grid"))):
            self.apis.add(api="driver" if name.startswith("cu") and not name.startswith("cuda") else "runtime",
                          name=name, base_name=base_api_name(name), **common)
            return
        if kind == "kernel":
            gx, gy, gz = (g.parse_int(row.get("grid_x")), g.parse_int(row.get("grid_y")), g.parse_int(row.get("grid_z")))
            bx, by, bz = (g.parse_int(row.get("block_x")), g.parse_int(row.get("block_y")), g.parse_int(row.get("block_z")))
            if gx is None and row.get("grid"):
                gx, gy, gz = g.parse_dims(row["grid"])
            if bx is None and row.get("block"):
                bx, by, bz = g.parse_dims(row["block"])
            d, s, mg = name_forms(name)
            self.kernels.add(name=name, demangled=d, short_name=s, mangled=mg, device=device, context=context,
                             stream=stream, grid_x=gx, grid_y=gy, grid_z=gz, block_x=bx, block_y=by, block_z=bz,
                             registers=g.parse_int(row.get("registers")),
                             static_smem=g.size_to_bytes(row.get("static_smem"), self._unit(t, "static_smem")),
                             dynamic_smem=g.size_to_bytes(row.get("dynamic_smem"), self._unit(t, "dynamic_smem")),
                             **common)
            return
        self.memops.add(op=kind, kind=copy_kind, name=name,
                        bytes=g.size_to_bytes(row.get("size"), self._unit(t, "size")), device=device,
                        context=context, stream=stream, src_kind=_blank(row.get("src_kind")),
                        dst_kind=_blank(row.get("dst_kind")), **common)

    def _summary_row(self, n: int, row: dict, t: _Table) -> None:
        section = (row.get("type") or "").strip() or t.section or "GPU activities"
        t.section = section
        name = (row.get("name") or "").strip()
        if not name:
            raise ValueError("no name")
        if section.startswith("API"):
            category, kind = "api", None
        elif section.startswith("GPU"):
            category, kind = g.activity_kind(name)
        else:
            category, kind = "other", None
        tu = {c: self._unit(t, c) for c in ("time", "avg", "min", "max")}
        pct = row.get("time_pct")
        pct = float(pct.strip().rstrip("%")) if pct and pct.strip() not in ("", "-") else None
        times = {c: checked_time(g.time_to_ns(row.get(c), tu[c]), f"{c} time") for c in tu}
        self.reports.add(row_no=n, report="nvprof_summary", category=category, name=name, kind=kind,
                         count=g.parse_int(row.get("calls")), total_ns=times["time"],
                         avg_ns=float(times["avg"]) if times["avg"] is not None else None,
                         min_ns=times["min"], max_ns=times["max"], time_pct=pct)

    def _metric_row(self, n: int, row: dict, t: _Table) -> None:
        avg = row.get("avg") if row.get("avg") is not None else row.get("total")
        shape, value, unit = g.metric_value(avg or "")
        mn = g.metric_value(row.get("min") or "")[1]
        mx = g.metric_value(row.get("max") or "")[1]
        metric = (row.get("metric") or "").strip()
        if not metric:
            raise ValueError("no metric name")
        self.metrics.add(row_no=n, tool="nvprof", kernel=row.get("kernel"), device=row.get("device"),
                         metric=metric, description=row.get("description"), unit=unit,
                         invocations=g.parse_int(row.get("invocations")), value=value, min_value=mn,
                         max_value=mx, value_text=(avg or "").strip(), value_shape=shape)


def _blank(v: str | None) -> str | None:
    v = (v or "").strip()
    return None if v in ("", "-") else v


def _looks_like_header(cells: list[str]) -> bool:
    return g.table_kind(g.canonical_header(cells)) is not None
