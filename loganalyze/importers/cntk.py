"""CNTK performance profiler files, one pair per MPI rank (grammar: ``grammars.cntk``).

- ``*_summary_<rank>.txt`` -> ``profiler_tables`` (tool ``cntk_summary``): one row per
  event (Epoch, _Minibatch Iteration, __Forward + Backward, ...) with mean, stddev, min, max,
  count and total; throughput events (MB/s) keep their numbers in ``value_*``.
- ``*_detail_<rank>.csv`` -> ``trace_events`` like a trace file (``sources.format`` is
  ``cntk``, dialect ``detail``): each row is a complete span named by its description on
  its thread, with nesting and self time per thread, so ``summary --by op`` works on it.

The rank (the file-name suffix when it is a number) is kept in ``profiler_tables.rank``
and ``trace_files.rank``; detail events use it as their pid.
"""
from __future__ import annotations

from ..grammars import cntk as g
from ..grammars import trace_event as te
from ..inputs import InputError
from .base import IngestContext
from .profiler_rows import insert_profiler_rows
from .text import read_lines
from .trace_load import RawEvents
from .trace_spans import SpanEngine
from .trace_tables import insert_trace_file
from .trace_workspace import Workspace


class CntkImporter:
    format = "cntk"

    def sniff(self, head: bytes, name: str) -> int:
        text = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
        if text.startswith(g.TITLE.encode()):
            return 95
        if text.startswith(g.DETAIL_HEADER.encode()):
            return 95
        return 0

    def ingest(self, ctx: IngestContext) -> None:
        lines, total = read_lines(ctx)
        first = next((t for _, t in lines if t.strip()), "")
        suffix, rank = g.file_rank(ctx.file.name)
        if first.startswith(g.DETAIL_HEADER):
            self._detail(ctx, lines, total, rank, suffix)
        elif first.startswith(g.TITLE):
            self._summary(ctx, lines, total, rank)
        else:
            raise InputError(f"{ctx.file.path}: not a CNTK profiler summary or detail file")

    # ------------------------------------------------------------------ summary
    def _summary(self, ctx, lines, total, rank) -> None:
        rows = []
        section = None
        stamp = None
        has_total = None
        for line_no, text in lines:
            if not text.strip() or text.startswith(g.TITLE):
                continue
            m = g.TIMESTAMP_RE.match(text)
            if m:
                stamp = m.group("ts")
                continue
            if g.HEADER_RE.match(text):
                has_total = "Total" in text
                continue
            row = g.parse_summary_row(text)
            if row is None:
                section = text.strip()  # a separator row: "Main Thread", "Data Reader"
                continue
            if isinstance(row, str):
                ctx.skip(line_no, row, text)
                continue
            out = {
                "line_no": line_no, "tool": "cntk_summary", "table_no": 1, "section": section,
                "name": row.name, "name_truncated": False, "rank": rank, "calls": row.count,
                "cells": {"Description": row.name, **(row.cells or {})}, "line": text,
            }
            if row.kind == "time":
                out.update(is_counter=False, unit="ms", total_ns=row.total_ns, avg_ns=row.mean_ns,
                           min_ns=row.min_ns, max_ns=row.max_ns, stddev_ns=row.stddev_ns)
                out.update(value_total=_ms(row.total_ns), value_avg=_ms(row.mean_ns), value_min=_ms(row.min_ns),
                           value_max=_ms(row.max_ns))
            else:
                out.update(is_counter=True, unit="MBps", value_avg=row.mbps[0], value_min=row.mbps[2],
                           value_max=row.mbps[3], value_total=float(row.total_bytes) if row.total_bytes else None)
            rows.append(out)
        insert_profiler_rows(ctx, rows)
        ctx.finish(total, len(rows), what="CNTK summary event row")
        ctx.source["dialect"] = "summary" + ("" if has_total is not False else " (no Total column)")
        if stamp:
            ctx.source["runtime"] = f"report time {stamp}"

    # ------------------------------------------------------------------ detail
    def _detail(self, ctx, lines, total, rank, suffix) -> None:
        pid = str(rank) if rank is not None else (suffix or "0")
        header_seen = False
        with Workspace(ctx) as ws:
            raw = RawEvents(ws.con)
            for line_no, text in lines:
                if not header_seen and text.startswith(g.DETAIL_HEADER):
                    header_seen = True
                    continue
                if not text.strip():
                    continue
                row = g.parse_detail_row(text)
                if isinstance(row, str):
                    ctx.skip(line_no, row, text)
                    continue
                raw.add(line_no, dict(ph="X", cat="cntk", name=row.name, pid=pid, tid=row.tid,
                                      ts=te.ns_to_us_text(row.begin_ns),
                                      dur=te.ns_to_us_text(row.end_ns - row.begin_ns)))
            raw.finish("cntk")
            stats = SpanEngine(ctx, ws, "cntk", check_precision=False).run()
        parsed = stats.parsed
        insert_trace_file(ctx, stats, container="csv", flavour="cntk", reader="csv", complete=True,
                          rank=rank, events=parsed + ctx.skipped_count)
        ctx.finish(total, parsed, what="CNTK detail event row")
        ctx.source["dialect"] = "detail"


def _ms(ns) -> float | None:
    return None if ns is None else ns / 1e6
