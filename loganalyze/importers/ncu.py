"""Nsight Compute CSV (``ncu --csv``), details page and raw page.

Every (kernel launch, metric) pair becomes a gpu_metrics row; every launch also becomes a
gpu_kernels row whose duration is its ``gpu__time_duration.sum`` / ``Duration`` metric when
the report has one (ncu replays kernels, so these are profiled durations).  ``==PROF==``
lines and the raw page's units row are "other" lines.  Grammar: :mod:`loganalyze.grammars.ncu`.
"""
from __future__ import annotations

from ..grammars import ncu as g
from ..grammars.units import to_ns_or_none
from ..names import name_forms
from .base import IngestContext
from .gpu_common import checked_time, first_lines, table_rows
from .text import csv_cells, feed_lines


class NcuCsvImporter:
    format = "ncu_csv"

    def sniff(self, head: bytes, name: str) -> int:
        lines = first_lines(head, 200)
        if any(g.PROF_RE.match(l) for l in lines[:50]) and any(l.startswith('"ID","Process ID"') for l in lines):
            return 88
        if any(l.startswith('"ID","Process ID"') for l in lines[:20]):
            return 85
        if any(l.startswith("==PROF==") for l in lines[:20]):
            return 70
        return 0

    def ingest(self, ctx: IngestContext) -> None:
        _Ncu(ctx).run()


def _int(v) -> int | None:
    x = g.number(v)
    return None if x is None else int(x)


def _durations(row: dict, page: str | None) -> list[tuple[str, str | None]]:
    """(metric, value text) of the kernel-duration metrics a row holds."""
    if page == "details":
        return [(row["metric"], row.get("value"))] if row.get("metric") in g.DURATION_METRICS else []
    return [(c, row[c]) for c in g.DURATION_METRICS if c in row]


class _Ncu:
    def __init__(self, ctx: IngestContext):
        self.ctx = ctx
        self.metrics = table_rows(ctx, "gpu_metrics")
        self.cols: list[str] | None = None
        self.page: str | None = None
        self.units: dict[str, str] = {}
        self.awaiting_units = False
        self.launches: dict[int, dict] = {}
        self.parsed = self.other = 0

    def run(self) -> None:
        ctx = self.ctx
        total = feed_lines(ctx, self.line, (self.metrics,))
        self._kernels()
        ctx.finish(total, self.parsed, self.other, what="Nsight Compute row",
                   hint="no header starting \"ID\",\"Process ID\",...")
        ctx.source["dialect"] = f"ncu --csv ({self.page} page)"

    def line(self, n: int, line: str) -> None:
        if not line.strip() or g.PROF_RE.match(line):
            self.other += 1
            return
        try:
            cells = csv_cells(line)
        except ValueError as exc:
            if self.cols is None:
                self.other += 1  # output before the table
            else:
                self.ctx.skip(n, f"malformed row: {exc}", line)
            return
        if self.cols is None or (cells and cells[0] == "ID" and len(cells) > 3):
            cols = g.canonical_header(cells)
            page = g.page_kind(cols)
            if page:
                self.cols, self.page, self.units = cols, page, {}
                self.awaiting_units = page == "raw"
                self.other += 1
                return
            if self.cols is None:
                self.other += 1  # output before the table
                return
        if len(cells) != len(self.cols):
            self.ctx.skip(n, f"{len(cells)} fields, the header has {len(self.cols)}", line)
            return
        row = dict(zip(self.cols, cells))
        if self.awaiting_units:
            self.awaiting_units = False
            if not row.get("id", "").strip():
                self.units = {c: v.strip() for c, v in row.items() if v.strip()}
                self.other += 1
                return
        try:
            for metric, text in _durations(row, self.page):
                checked_time(g.number(text), metric)
        except ValueError as exc:
            self.ctx.skip(n, str(exc), line)
            return
        launch = _int(row.get("id"))
        if launch is None:
            self.ctx.skip(n, "ID is not a number", line)
            return
        info = self.launches.setdefault(launch, {"row_no": n, "kernel": row.get("kernel"), "pid": _int(row.get("pid")),
                                                  "device": row.get("device"), "context": _int(row.get("context")),
                                                  "stream": _int(row.get("stream")), "grid": row.get("grid"),
                                                  "block": row.get("block"), "duration": None})
        ident = dict(row_no=n, tool="ncu", kernel=row.get("kernel"), launch_id=launch, device=row.get("device"),
                     context=_int(row.get("context")), stream=_int(row.get("stream")),
                     grid=g.parse_dims(row.get("grid")), block=g.parse_dims(row.get("block")))
        if self.page == "details":
            self._metric(info, ident, row.get("section"), row.get("metric"), row.get("unit"), row.get("value"))
        else:
            for c, v in row.items():
                if c in g.IDENTITY or c in g.HEADER.values():
                    continue
                self._metric(info, ident, None, c, self.units.get(c), v)
        self.parsed += 1

    def _metric(self, info, ident, section, metric, unit, text) -> None:
        value = g.number(text)
        shape = "number" if value is not None else ("text" if (text or "").strip() else None)
        self.metrics.add(section=section, metric=metric, unit=(unit or "").strip() or None, value=value,
                         value_text=text, value_shape=shape, **ident)
        if metric in g.DURATION_METRICS and value is not None and info["duration"] is None:
            info["duration"] = to_ns_or_none(g.number_text(text), (unit or "nsecond").strip())

    def _kernels(self) -> None:
        buf = table_rows(self.ctx, "gpu_kernels")
        for launch, k in sorted(self.launches.items()):
            name = k["kernel"] or f"kernel {launch}"
            d, s, mg = name_forms(name)
            gx, gy, gz = (list(map(int, (g.parse_dims(k["grid"]) or "").split("x"))) + [None] * 3)[:3] \
                if g.parse_dims(k["grid"]) else (None, None, None)
            bx, by, bz = (list(map(int, (g.parse_dims(k["block"]) or "").split("x"))) + [None] * 3)[:3] \
                if g.parse_dims(k["block"]) else (None, None, None)
            buf.add(row_no=k["row_no"], name=name, demangled=d, short_name=s, mangled=mg, duration_ns=k["duration"],
                    device=_int(k["device"]), context=k["context"], stream=k["stream"], grid_x=gx, grid_y=gy,
                    grid_z=gz, block_x=bx, block_y=by, block_z=bz, correlation_id=launch, pid=k["pid"],
                    origin=f"ncu {self.page}")
        buf.flush()
