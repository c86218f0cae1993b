"""MXNet ``profiler.dumps()`` aggregate tables (text, MXNet <= 1.5 and >= 1.6 layouts, and
the JSON form) -> ``profiler_tables`` (tool ``mxnet_dumps``, one row per table row).

The grammar is ``grammars.mxnet_table``.  Text outside the tables (the preamble, blank
lines, other output of a CI log) counts as non-data lines; a row that cannot be split into
its name and numbers goes to ``skipped_lines``.
"""
from __future__ import annotations

import re
from decimal import Decimal

from ..grammars import mxnet_table as g
from ..inputs import InputError
from .base import IngestContext
from .text import read_lines
from .profiler_rows import insert_profiler_rows

LABELS = {v: k for k, v in g.COLUMN_KEYS.items()}


class MXNetTableImporter:
    format = "mxnet_table"

    def sniff(self, head: bytes, name: str) -> int:
        if g.looks_like_json_dump(head):
            return 96
        text = head.decode("utf-8", "replace")
        if re.search(r"^Profile Statistics[.:]\s*$", text, re.M) and re.search(r"^={3,}\s*$", text, re.M):
            return 95
        return 0

    def ingest(self, ctx: IngestContext) -> None:
        lines, total = read_lines(ctx)
        first = next((t for _, t in lines if t.strip()), "")
        if first.lstrip().startswith("{"):
            rows, dialect = self._json(ctx, lines), "json"
        else:
            rows, dialect = self._text(ctx, lines)
        insert_profiler_rows(ctx, rows)
        ctx.finish(total, len(rows), what="MXNet aggregate table row")
        ctx.source["dialect"] = dialect

    # ------------------------------------------------------------------ text
    def _text(self, ctx, lines):
        rows = []
        dialects = set()
        table_no = 0
        seen_section = False
        i, n = 0, len(lines)
        while i < n:
            line_no, text = lines[i]
            if g.PREAMBLE_RE.match(text):
                dialects.add("mxnet<=1.5" if text.rstrip().endswith(".") else "mxnet>=1.6")
                table_no += 1
                seen_section = False
                i += 1
                continue
            if text.strip() and i + 1 < n and g.RULE_RE.match(lines[i + 1][1]) and not g.RULE_RE.match(text):
                section = text.strip()
                if table_no == 0 or (seen_section and section in self._sections_of(rows, table_no)):
                    table_no += 1
                seen_section = True
                i = self._section(ctx, lines, i, section, table_no, rows, dialects)
                continue
            i += 1
        if not dialects:
            dialects.add("mxnet")
        return rows, ", ".join(sorted(dialects))

    @staticmethod
    def _sections_of(rows, table_no):
        return {r["section"] for r in rows if r["table_no"] == table_no}

    def _section(self, ctx, lines, i, section, table_no, rows, dialects) -> int:
        n = len(lines)
        j = i + 2  # after the title and the rule
        if j >= n:
            return j
        columns = g.parse_header(lines[j][1])
        if columns is None:
            ctx.skip(lines[j][0], "malformed: expected the table header (Name  Total Count ...)", lines[j][1])
            return j + 1
        if "min_use_kb" in columns:
            dialects.add("mxnet>=1.6")
        j += 1
        if j < n and g.DASHES_RE.match(lines[j][1]):
            j += 1
        while j < n:
            line_no, text = lines[j]
            if not text.strip():
                return j + 1
            if j + 1 < n and g.RULE_RE.match(lines[j + 1][1]) or g.PREAMBLE_RE.match(text):
                return j  # the next section starts without a blank line
            row = g.parse_row(text, columns, section)
            if isinstance(row, str):
                ctx.skip(line_no, row, text)
            else:
                rows.append(self._row(row, section, table_no, line_no, text, columns))
            j += 1
        return j

    @staticmethod
    def _row(row: g.Row, section, table_no, line_no, text, columns) -> dict:
        v = row.values
        memory = "min_use_kb" in columns
        out = {
            "line_no": line_no, "tool": "mxnet_dumps", "table_no": table_no, "section": section,
            "name": row.name, "name_truncated": False, "is_counter": row.counter,
            "calls": int(v["total_count"]),
            "cells": {"Name": row.name, **{LABELS[c]: v[c] for c in columns}},
            "line": text,
        }
        if memory:
            out.update(unit="kB", value_min=_f(v.get("min_use_kb")), value_max=_f(v.get("max_use_kb")),
                       value_avg=_f(v.get("avg_use_kb")))
        else:
            out.update(unit="counter" if row.counter else "ms", value_total=_f(v.get("time_ms")),
                       value_min=_f(v.get("min_time_ms")), value_max=_f(v.get("max_time_ms")),
                       value_avg=_f(v.get("avg_time_ms")))
            if not row.counter:
                out.update(total_ns=g.ms_to_ns(v.get("time_ms")), min_ns=g.ms_to_ns(v.get("min_time_ms")),
                           max_ns=g.ms_to_ns(v.get("max_time_ms")), avg_ns=g.ms_to_ns(v.get("avg_time_ms")))
        return out

    # ------------------------------------------------------------------ json
    def _json(self, ctx, lines):
        text = "\n".join(t for _, t in lines)
        try:
            doc = g.parse_json_dump(text)
        except ValueError as exc:
            raise InputError(f"{ctx.file.path}: MXNet JSON statistics are not valid JSON ({exc})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("Time", {}), dict):
            raise InputError(f"{ctx.file.path}: not MXNet dumps(format='json') output")
        where = self._json_lines(lines)
        rows = []
        for group in ("Time", "Memory"):
            domains = doc.get(group) or {}
            if not isinstance(domains, dict):
                continue
            for section, names in domains.items():
                if not isinstance(names, dict):
                    continue
                for name, vals in names.items():
                    if not isinstance(vals, dict):
                        continue
                    line_no = where.get((group, section, name), 0)
                    memory = group == "Memory"
                    counter = memory or g.is_counter(name, section)
                    cells = {"Name": name, **{k: _text(x) for k, x in vals.items()}}
                    row = {
                        "line_no": line_no, "tool": "mxnet_dumps", "table_no": 1, "section": section,
                        "name": name, "name_truncated": False, "is_counter": counter,
                        "calls": int(vals["Count"]) if "Count" in vals else None,
                        "cells": cells, "line": None,
                        "unit": "kB" if memory else ("counter" if counter else "ms"),
                        "value_total": _f(vals.get("Total")), "value_min": _f(vals.get("Min")),
                        "value_max": _f(vals.get("Max")), "value_avg": _f(vals.get("Avg")),
                    }
                    if not counter:
                        row.update(total_ns=g.ms_to_ns(_text(vals.get("Total"))),
                                   min_ns=g.ms_to_ns(_text(vals.get("Min"))),
                                   max_ns=g.ms_to_ns(_text(vals.get("Max"))),
                                   avg_ns=g.ms_to_ns(_text(vals.get("Avg"))))
                    rows.append(row)
        if not rows:
            raise InputError(f"{ctx.file.path}: MXNet JSON statistics hold no rows")
        return rows

    @staticmethod
    def _json_lines(lines) -> dict:
        """(group, domain, name) -> line number of the ``"name": {`` line."""
        out, path, depth = {}, [], 0
        key_re = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*:\s*\{')
        for line_no, text in lines:
            m = key_re.match(text)
            if m:
                key = m.group(1)
                path = path[:max(depth - 1, 0)] + [key]
                if len(path) == 3:
                    out[tuple(path)] = line_no
            depth += text.count("{") - text.count("}")
        return out


def _f(v) -> float | None:
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _text(v) -> str | None:
    if v is None:
        return None
    if isinstance(v, Decimal):
        return format(v, "f") if v.is_finite() else str(v)
    return str(v)
