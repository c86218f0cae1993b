"""NVIDIA PyProf output: ``pyprof.parse`` records and ``pyprof.prof`` tables.

- parse output: one Python dict literal per kernel per line, read with ``ast.literal_eval``
  (:func:`loganalyze.grammars.pyprof.parse_dict_line`); ``kDuration`` is ns.
- prof output: ``--csv`` (every field quoted, ``Params``/``Grid`` hold commas), columnated
  (fixed width, cut at the header's column starts) or space separated; columns found by
  header (:data:`loganalyze.grammars.pyprof.PROF_HEADERS`); ``Sil(ns)`` is the kernel time.

Each kernel goes to gpu_kernels (no start/end: PyProf keeps durations only) and its operator
to gpu_kernel_ops: the op, direction, sequence id, layer, call stack and shapes PyProf found,
with FLOPs and bytes (from PyProf's own columns, or computed from its argument markers).
Consecutive kernels of the same op call share ``instance``; ``flops``/``bytes`` are per
kernel (PyProf's columns) or the op call's, on its first kernel (computed from markers).
"""
from __future__ import annotations

import math
import re

from ..grammars import pyprof as g
from ..names import name_forms
from ..op_costs import cost_from_pyprof_marker
from .base import IngestContext
from .gpu_common import checked_time, first_lines, table_rows
from .text import csv_cells, feed_lines, header_cells

DIMS_RE = re.compile(r"-?\d+")


class PyProfImporter:
    format = "pyprof"

    def sniff(self, head: bytes, name: str) -> int:
        lines = [l for l in first_lines(head, 50) if l.strip()]
        if not lines:
            return 0
        if g.DICT_LINE_RE.match(lines[0]):
            return 90
        if _prof_header(lines[0]) is not None:
            return 80
        return 0

    def ingest(self, ctx: IngestContext) -> None:
        _PyProf(ctx).run()


def _prof_header(line: str) -> tuple[str, list[str], list[int]] | None:
    """(mode, columns, column starts) of a prof header line."""
    s = line.rstrip()
    if s.lstrip().startswith('"'):
        cols = g.prof_header(header_cells(s.strip()))
        return ("csv", cols, []) if cols else None
    words = [(m.group(0), m.start()) for m in re.finditer(r"\S+", s)]
    cols = g.prof_header([w for w, _ in words])
    return ("text", cols, [p for _, p in words]) if cols else None


def _join(v) -> str | None:
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v) if v else None
    return str(v)


def _dims(v) -> tuple:
    if isinstance(v, (list, tuple)):
        vals = [int(x) for x in v][:3]
    else:
        vals = [int(x) for x in DIMS_RE.findall(str(v or ""))][:3]
    return tuple(vals + [None] * (3 - len(vals)))  # type: ignore[return-value]


def _num(v) -> float | None:
    if v is None:
        return None
    s = str(v).strip().replace(",", "")
    if s in ("", "-", "na", "NA"):
        return None
    try:
        return float(s)
    except ValueError:
        return None


class _PyProf:
    def __init__(self, ctx: IngestContext):
        self.ctx = ctx
        self.kernels = table_rows(ctx, "gpu_kernels")
        self.ops = table_rows(ctx, "gpu_kernel_ops")
        self.header: tuple[str, list[str], list[int]] | None = None
        self.parsed = self.other = 0
        self.instance = 0
        self.last_key = None
        self.last_call = None
        self.mode: str | None = None

    def run(self) -> None:
        ctx = self.ctx
        total = feed_lines(ctx, self.line, (self.kernels, self.ops))
        ctx.finish(total, self.parsed, self.other, what="PyProf record",
                   hint="no pyprof.parse record or pyprof.prof header")
        ctx.source["dialect"] = {"dict": "pyprof.parse records", "prof-csv": "pyprof.prof --csv",
                                 "prof-text": "pyprof.prof columnated"}.get(self.mode, self.mode)

    def line(self, n: int, line: str) -> None:
        """One input line: blank, the header that sets the mode, or a record/row."""
        if not line.strip():
            self.other += 1
            return
        if self.mode is None:
            if g.DICT_LINE_RE.match(line):
                self.mode = "dict"
            else:
                self.header = _prof_header(line)
                self.other += 1
                if self.header is not None:
                    self.mode = "prof-" + self.header[0]
                return
        try:
            if self.mode == "dict":
                self._record(n, g.parse_dict_line(line))
            else:
                self._prof_row(n, line, self.header)
        except (ValueError, ArithmeticError) as exc:
            self.ctx.skip(n, f"unreadable PyProf {'record' if self.mode == 'dict' else 'row'}: {exc}", line)
            return
        self.parsed += 1

    def _next_instance(self, key) -> int:
        if key != self.last_key:
            self.instance += 1
            self.last_key = key
        return self.instance

    # ------------------------------------------------------------------ parse records
    def _record(self, n: int, rec: dict) -> None:
        long_name = rec.get("kLongName") or rec.get("kShortName")
        dur = rec.get("kDuration")
        if not isinstance(dur, (int, float)) or isinstance(dur, bool):
            raise ValueError("kDuration is not a number")
        checked_time(dur, "kDuration")
        d, s, mg = name_forms(str(long_name))
        gx, gy, gz = _dims(rec.get("grid"))
        bx, by, bz = _dims(rec.get("block"))
        self.kernels.add(row_no=n, name=str(long_name), demangled=d, short_name=rec.get("kShortName") or s,
                         mangled=mg, duration_ns=int(dur), device=rec.get("device"), stream=rec.get("stream"),
                         grid_x=gx, grid_y=gy, grid_z=gz, block_x=bx, block_y=by, block_z=bz, tid=rec.get("tid"),
                         origin="pyprof.parse")
        ops = rec.get("op") or []
        op = "/".join(str(o) for o in ops) if isinstance(ops, (list, tuple)) else str(ops)
        markers = [g.parse_marker(m) for m in (rec.get("marker") or []) if isinstance(m, str)]
        marker = next((m for m in markers if m and m.get("op")), None)
        flops = nbytes = shapes = None
        if marker is not None:
            flops, nbytes, shapes = cost_from_pyprof_marker(op or marker.get("op"), marker)
        seq = rec.get("seqId")
        seq0 = seq[0] if isinstance(seq, (list, tuple)) and seq else (seq if isinstance(seq, int) else None)
        direction = g.DIRECTIONS.get(str(rec.get("dir")), rec.get("dir"))
        key = (_join(seq), op, direction, str(rec.get("marker")), rec.get("tid"))
        call = (op, direction, str(rec.get("marker")), rec.get("tid"))
        if call == self.last_call:  # one Python call (one marker): its FLOPs and bytes go with its first kernel
            flops = nbytes = None
        self.last_call = call
        self.ops.add(row_no=n, op=op or None, module=_join(rec.get("mod")), direction=direction, seq=seq0,
                     alt_seq=_join(rec.get("altSeqId")), layer=_join(rec.get("layer")), trace=_join(rec.get("trace")),
                     params=None, shapes=shapes, sub=rec.get("subSeqId") if isinstance(rec.get("subSeqId"), int) else None,
                     tc=None, flops=flops, bytes=nbytes, instance=self._next_instance(key))

    # ------------------------------------------------------------------ prof rows
    def _prof_row(self, n: int, line: str, header) -> None:
        mode, cols, starts = header
        if mode == "csv":
            cells = csv_cells(line.strip())
        else:
            cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line) + 1])] \
                if len(line.split()) != len(cols) else line.split()
        if len(cells) != len(cols):
            raise ValueError(f"{len(cells)} fields, the header has {len(cols)}")
        row = dict(zip(cols, cells))
        kernel = (row.get("kernel") or row.get("kernel_lname") or "").strip()
        sil = _num(row.get("sil"))
        if not kernel or sil is None:
            raise ValueError("no kernel name or Sil(ns)")
        checked_time(sil, "Sil(ns)")
        d, s, mg = name_forms(kernel)
        gx, gy, gz = _dims(row.get("grid"))
        bx, by, bz = _dims(row.get("block"))
        self.kernels.add(row_no=n, name=kernel, demangled=d, short_name=s, mangled=mg, duration_ns=int(sil),
                         device=_int(row.get("device")), stream=_int(row.get("stream")), grid_x=gx, grid_y=gy,
                         grid_z=gz, block_x=bx, block_y=by, block_z=bz, tid=_int(row.get("tid")),
                         origin="pyprof.prof")
        seq = row.get("seq")
        direction = g.DIRECTIONS.get((row.get("dir") or "").strip(), _blank(row.get("dir")))
        op = _blank(row.get("op"))
        key = (seq, op, direction, row.get("params"), row.get("tid"), row.get("sub"))
        self.ops.add(row_no=n, op=op, module=_blank(row.get("mod")), direction=direction,
                     seq=_int((seq or "").split(",")[0]), alt_seq=_blank(row.get("altseq")),
                     layer=_blank(row.get("layer")), trace=_blank(row.get("trace")), params=_blank(row.get("params")),
                     shapes=None, sub=_int(row.get("sub")), tc=_blank(row.get("tc")), flops=_num(row.get("flops")),
                     bytes=_num(row.get("bytes")), instance=self._next_instance(key))


def _blank(v) -> str | None:
    v = (v or "").strip()
    return None if v in ("", "-", "na") else v


def _int(v) -> int | None:
    x = _num(v)
    return int(x) if x is not None and math.isfinite(x) else None
