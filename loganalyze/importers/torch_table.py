"""PyTorch ``key_averages().table()`` text, alone or inside a longer log -> ``profiler_tables``
(tool ``torch_key_averages``, one row per operator row; several tables per file are
numbered by ``table_no``).

The grammar is ``grammars.torch_table``.  Everything outside the tables, the separators,
headers, stack-trace continuation lines and the ``Self CPU time total`` footers are
non-data lines; rows whose cells do not read go to ``skipped_lines``.
"""
from __future__ import annotations

import re

from ..grammars import torch_table as g
from .base import IngestContext
from .text import read_lines
from .profiler_rows import insert_profiler_rows

_HEADER_RE = re.compile(r"^\s*Name\s{2,}.*(?:# of Calls|Number of Calls)")


class TorchTableImporter:
    format = "torch_table"

    def sniff(self, head: bytes, name: str) -> int:
        text = head.decode("utf-8", "replace")
        lines = text.split("\n")
        for i in range(1, len(lines) - 1):
            if _HEADER_RE.match(lines[i]) and g.SEPARATOR_RE.match(lines[i - 1].rstrip("\r")) \
                    and g.SEPARATOR_RE.match(lines[i + 1].rstrip("\r")):
                return 85
        return 0

    def ingest(self, ctx: IngestContext) -> None:
        lines, total = read_lines(ctx)
        rows = []
        dialects = set()
        table_no = 0
        i, n = 0, len(lines)
        while i < n - 2:
            sep = lines[i][1]
            if not (g.SEPARATOR_RE.match(sep) and g.SEPARATOR_RE.match(lines[i + 2][1])):
                i += 1
                continue
            spans = g.column_spans(sep)
            headers = g.cut(lines[i + 1][1], spans)
            if not g.is_header(headers):
                i += 1
                continue
            table_no += 1
            dialects.add("torch>=1.8" if "# of Calls" in headers else "torch<=1.7")
            section = self._title(lines, i)
            j = i + 3
            while j < n and not g.SEPARATOR_RE.match(lines[j][1]):
                line_no, text = lines[j]
                cells = g.cut(text, spans)
                if not text.strip() or not cells[0]:
                    j += 1  # blank or stack-trace continuation
                    continue
                row = g.parse_row(cells, headers)
                if isinstance(row, str):
                    ctx.skip(line_no, row, text)
                else:
                    rows.append(self._row(row, line_no, text, table_no, section))
                j += 1
            i = j + 1
        insert_profiler_rows(ctx, rows)
        ctx.finish(total, len(rows), what="PyTorch key_averages() table row")
        ctx.source["dialect"] = ", ".join(sorted(dialects)) or None

    @staticmethod
    def _title(lines, i) -> str | None:
        """The ``header=`` text printed above the table (after a line of '=')."""
        for k in range(i - 1, max(i - 4, -1), -1):
            text = lines[k][1]
            if re.fullmatch(r"=+\s*", text) and k + 1 < i:
                return lines[k + 1][1].strip() or None
            if not text.strip():
                break
        return None

    @staticmethod
    def _row(row: g.Row, line_no: int, text: str, table_no: int, section) -> dict:
        v = row.values
        return {
            "line_no": line_no, "tool": "torch_key_averages", "table_no": table_no, "section": section,
            "name": row.name, "name_truncated": row.truncated, "is_counter": False, "unit": "us",
            "calls": row.calls, "total_ns": v.get("total"), "self_ns": v.get("self"), "avg_ns": v.get("avg"),
            "gpu_self_ns": v.get("gpu_self"), "gpu_total_ns": v.get("gpu_total"), "gpu_avg_ns": v.get("gpu_avg"),
            "cells": row.cells, "line": text,
        }
