"""oneDNN / DNNL / MKL-DNN verbose logs.

How a file goes in (see docs/benchmarks.md for what each step costs):

1. ``lines.iter_line_batches`` cuts the bytes into numbered lines (numpy, no Python loop).
2. One SQL statement per batch keeps the verbose lines, cuts each into
   ``key`` (the line without its timestamp and last field), ``ts`` and ``tail`` (the last
   field), and inserts ``(line_no, hash(key), ts, tail as a number)`` into ``onednn_events``.
3. Keys never seen before are read once by the pyparsing grammar
   (``loganalyze.grammars.onednn_verbose.parse_shape``) into a row of ``onednn_shapes``.
   When the grammar says the tail is not a time (info lines, diagnostics, untimed or
   truncated lines) those few lines are keyed again on the whole line and parsed again.
4. Truncated and malformed lines leave ``onednn_events`` for ``skipped_lines``, with the
   grammar's reason.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..grammars import onednn_verbose as g
from ..inputs import InputError
from ..lines import LineStats, iter_line_batches, prefetch
from .base import IngestContext, RowBuffer, insert_arrow, sql_string

# The verbose filter and the cut into key / timestamp / tail, on the Arrow batch ``_arrow``;
# markers and the leading pattern come from the grammar.  ``line`` ends with "\n" or
# "\r\n".  Positions are in characters, as substr counts them.
_IS_VERBOSE_SQL = " OR ".join(
    [f"starts_with(line, {sql_string(m + ',')})" for m in g.MARKERS]
    + ["line IN (" + ", ".join(sql_string(m + end) for end in ("\n", "\r\n") for m in g.MARKERS) + ")"]
)
CUT_SQL = f"""
WITH v AS (
    SELECT line_no, line,
           regexp_extract(line, {sql_string(g.LEADING_CUT_PATTERN)}, ['pre', 'ts']) AS m
    FROM _arrow
    WHERE {_IS_VERBOSE_SQL}
), p AS (
    SELECT line_no, line, m.pre AS pre, m.ts AS ts,
           length(m.pre) + length(m.ts) + 1 AS body_at,
           length(line) - instr(reverse(line), ',') + 1 AS lastc,  -- length + 1 if no comma
           CASE WHEN ends_with(line, chr(13) || chr(10)) THEN 2 ELSE 1 END AS eol
    FROM v
)
SELECT line_no,
       CASE WHEN lastc >= body_at AND lastc <= length(line) THEN pre || substr(line, body_at, lastc - body_at)
            ELSE pre END AS key,
       CASE WHEN ts <> '' THEN substr(ts, 2) END AS ts,
       CASE WHEN lastc >= body_at AND lastc <= length(line) THEN substr(line, lastc + 1, length(line) - lastc - eol)
            END AS tail
FROM p
"""

#: the ``onednn_events`` rows of a line batch (``{sid}``: the source id)
EVENTS_SELECT = f"""
SELECT {{sid}} AS source_id, line_no, hash(key) AS shape_id, try_cast(ts AS DOUBLE) AS ts_ms, time_ms
FROM (SELECT *, try_cast(tail AS DOUBLE) AS t, CASE WHEN isfinite(t) THEN t END AS time_ms FROM ({CUT_SQL}))
"""

SHAPE_COLUMNS = [
    "shape_id", "key", "marker", "version_token", "component", "operation", "op_class", "layout",
    "engine", "kind", "impl", "prop_kind", "mds", "attrs", "aux", "problem", "alg", "dtype",
    "dims", "md_list", "info_kind", "detail", "timed",
]

SEGMENT_COLUMNS = ["segment", "first_line", "last_line", "library_version", "isa", "runtime", "templates"]


class OneDNNVerboseImporter:
    format = "onednn_verbose"

    def __init__(self) -> None:
        #: why a whole-line shape is truncated or malformed, by its id
        self.bad_reason: dict[int, str] = {}

    def sniff(self, head: bytes, name: str) -> int:
        for line in head.split(b"\n")[:-1] if b"\n" in head else [head]:
            if g.starts_with_marker(line, comma=True):
                return 90
        return 0

    def ingest(self, ctx: IngestContext) -> None:
        con = ctx.con
        sid = ctx.source_id
        # shape_id -> "ok" (a complete timed shape), "rekey" (read the line whole) or a status
        known: dict[int, str] = {}
        for shape_id, timed in con.execute("SELECT shape_id, timed FROM onednn_shapes").fetchall():
            known[shape_id] = "ok" if timed else "whole"
        rekey_ids: set[int] = set()
        stats = LineStats()
        # each line batch goes in through insert_arrow (see base.py: no register() inside the
        # transaction, which would keep every batch in memory until COMMIT)
        events_select = EVENTS_SELECT.replace("{sid}", str(int(sid)))
        for lines in prefetch(iter_line_batches(ctx.file, stats, ctx.progress)):
            for line_no, reason, text in lines.rejected:
                if g.starts_with_marker(text):
                    ctx.skip(line_no, reason, text)
            insert_arrow(con, "onednn_events", lines.table, events_select)
            lo, hi = lines.first_line, lines.first_line + lines.count - 1
            # the distinct shapes of this batch, and whether any line of each has no time
            rows = con.execute(
                """SELECT shape_id, bool_or(time_ms IS NULL) FROM onednn_events
                   WHERE source_id = $sid AND line_no BETWEEN $lo AND $hi GROUP BY shape_id""",
                {"sid": sid, "lo": lo, "hi": hi},
            ).fetchall()
            ids = {r[0] for r in rows}
            new = [i for i in ids if i not in known]
            if new:
                self._parse_new_keys(ctx, lines.table, new, known, rekey_ids, lo, hi)
            if any(untimed and known.get(h) == "ok" for h, untimed in rows):
                self._skip_bad_times(ctx, lines.table, known, lo, hi)
            here = ids & rekey_ids
            if here:
                self._rekey(ctx, lines.table, here, known, lo, hi)
        ctx.flush_skipped()
        if stats.lines == 0:
            raise InputError(f"{ctx.file.path}: empty file")
        parsed = con.execute("SELECT count(*) FROM onednn_events WHERE source_id = ?", [sid]).fetchone()[0]
        verbose = parsed + ctx.skipped_count
        if verbose == 0:
            raise InputError(
                f"{ctx.file.path}: not a oneDNN verbose log (no line starts with "
                "onednn_verbose, dnnl_verbose or mkldnn_verbose)"
            )
        ctx.finish(stats.lines, parsed, what="verbose line", none_is_error=False)
        ctx.source.update(crlf_lines=stats.crlf, ends_with_newline=stats.ends_with_newline)
        self._describe_source(ctx)

    # ------------------------------------------------------------------ shapes
    @staticmethod
    def _rows_of(ctx: IngestContext, table: pa.Table, shape_ids, lo: int, hi: int) -> pa.Table:
        """The lines of ``table`` whose events have one of ``shape_ids`` (few lines)."""
        ids = pa.table({"h": pa.array(sorted(shape_ids), pa.uint64())})  # noqa: F841
        line_nos = ctx.con.execute(
            """SELECT line_no FROM onednn_events WHERE source_id = $sid AND line_no BETWEEN $lo AND $hi
               AND shape_id IN (SELECT h FROM ids)""",
            {"sid": ctx.source_id, "lo": lo, "hi": hi},
        ).fetchall()
        value_set = pa.array([r[0] for r in line_nos], pa.int64())
        return table.filter(pc.is_in(table.column("line_no"), value_set=value_set))

    def _parse_new_keys(self, ctx, table, new_ids, known, rekey_ids, lo, hi) -> None:
        _arrow = self._rows_of(ctx, table, new_ids, lo, hi)  # noqa: F841 - read by CUT_SQL
        rows = ctx.con.execute(f"SELECT hash(key) AS h, any_value(key) FROM ({CUT_SQL}) GROUP BY ALL").fetchall()
        shapes = []
        for h, key in rows:
            shape = g.parse_shape(key)
            if shape.tail_is_time:
                known[h] = "ok"
                shapes.append((h, shape))
            else:
                known[h] = "rekey"
                rekey_ids.add(h)
        self._insert_shapes(ctx.con, shapes)

    def _skip_bad_times(self, ctx: IngestContext, table, known, lo, hi) -> None:
        """Complete profiling lines whose last field is not a number are malformed."""
        con = ctx.con
        rows = con.execute(
            """SELECT line_no, shape_id FROM onednn_events
               WHERE source_id = $sid AND line_no BETWEEN $lo AND $hi AND time_ms IS NULL""",
            {"sid": ctx.source_id, "lo": lo, "hi": hi},
        ).fetchall()
        bad = [line_no for line_no, h in rows if known.get(h) == "ok"]
        if not bad:
            return
        bad_lines = pa.array(bad, pa.int64())
        _arrow = table.filter(pc.is_in(table.column("line_no"), value_set=bad_lines))  # noqa: F841 - read by CUT_SQL
        texts = con.execute(
            f"SELECT line_no, key || ',' || coalesce(tail, '') FROM ({CUT_SQL}) ORDER BY line_no"
        ).fetchall()
        badt = pa.table({"line_no": bad_lines})  # noqa: F841
        con.execute(
            "DELETE FROM onednn_events WHERE source_id = $sid AND line_no IN (SELECT line_no FROM badt)",
            {"sid": ctx.source_id},
        )
        for line_no, text in texts:
            ctx.skip(line_no, f"malformed: time field {text.rsplit(',', 1)[-1]!r} is not a number", text)

    def _rekey(self, ctx: IngestContext, table, ids, known, lo, hi) -> None:
        """Lines whose last field is not a time: key them on the whole line."""
        con = ctx.con
        _arrow = self._rows_of(ctx, table, ids, lo, hi)  # noqa: F841 - read by CUT_SQL
        con.execute(
            f"""CREATE OR REPLACE TEMP TABLE _rk AS
            SELECT line_no, CASE WHEN tail IS NULL THEN key ELSE key || ',' || tail END AS whole
            FROM ({CUT_SQL})"""
        )
        con.execute("ALTER TABLE _rk ADD COLUMN h2 UBIGINT")
        # whole-line shapes hash in their own namespace: the whole text of one line can equal
        # the cut key of another (``X,Y`` whole vs ``X,Y,<time>`` cut)
        con.execute("UPDATE _rk SET h2 = hash(whole, 'whole')")
        rows = con.execute("SELECT h2, any_value(whole) FROM _rk GROUP BY h2").fetchall()
        shapes = []
        for h2, whole in rows:
            if h2 in known:
                continue
            shape = g.parse_shape(whole, whole=True)
            if shape.status == "ok":
                known[h2] = "whole"
                shapes.append((h2, shape))
            else:
                known[h2] = "bad"
                self.bad_reason[h2] = shape.reason
        self._insert_shapes(con, shapes)
        con.execute(
            """UPDATE onednn_events SET shape_id = _rk.h2, time_ms = NULL FROM _rk
               WHERE onednn_events.source_id = $sid AND onednn_events.line_no = _rk.line_no""",
            {"sid": ctx.source_id},
        )
        bad = sorted(h for h, _ in rows if known[h] == "bad")
        if bad:
            bad_ids = pa.table({"h": pa.array(bad, pa.uint64())})  # noqa: F841
            skipped = con.execute(
                "SELECT line_no, h2, whole FROM _rk WHERE h2 IN (SELECT h FROM bad_ids) ORDER BY line_no"
            ).fetchall()
            con.execute(
                """DELETE FROM onednn_events WHERE source_id = $sid
                   AND line_no IN (SELECT line_no FROM _rk WHERE h2 IN (SELECT h FROM bad_ids))""",
                {"sid": ctx.source_id},
            )
            for line_no, h2, whole in skipped:
                ctx.skip(line_no, self.bad_reason[h2], whole)

    @staticmethod
    def _insert_shapes(con, shapes) -> None:
        if not shapes:
            return
        # (a shape already stored, e.g. on a hash collision, is left as it is)
        rows = RowBuffer(con, "onednn_shapes", SHAPE_COLUMNS,
                         select="SELECT * FROM _arrow WHERE shape_id NOT IN (SELECT shape_id FROM onednn_shapes)")
        for h, s in shapes:
            row = {c: getattr(s, c) for c in SHAPE_COLUMNS[1:] if c not in ("dims", "timed")}
            rows.add(**row, shape_id=h, dims=list(s.dims.items()), timed=s.tail_is_time)
        rows.flush()

    # ------------------------------------------------------------------ source description
    def _describe_source(self, ctx: IngestContext) -> None:
        con, sid = ctx.con, ctx.source_id
        info = con.execute(
            """SELECT e.line_no, s.info_kind, s.detail, coalesce(nullif(s.component, ''), 'primitive')
               FROM onednn_events e JOIN onednn_shapes s USING (shape_id)
               WHERE e.source_id = ? AND s.op_class = 'info' ORDER BY e.line_no""",
            [sid],
        ).fetchall()
        segments: list[dict] = []
        current = {"segment": 0, "first_line": 1, "library_version": None, "isa": None, "runtime": None, "templates": []}
        for line_no, info_kind, detail, component in info:
            if info_kind == "version":
                if current["segment"] > 0 or current["first_line"] < line_no:
                    current["last_line"] = line_no - 1
                    segments.append(current)
                current = {
                    "segment": len(segments) + 1 if segments or current["first_line"] < line_no else 1,
                    "first_line": line_no, "library_version": g.info_version(detail)[0],
                    "isa": g.info_isa(detail), "runtime": None, "templates": [],
                }
            elif info_kind == "isa":
                current["isa"] = g.info_isa(detail)
            elif info_kind == "runtime" and detail.startswith("cpu,"):
                current["runtime"] = detail[len("cpu,runtime:"):]
            elif info_kind == "template":
                current["templates"].append(f"{component}:{detail}")
        current["last_line"] = ctx.source["lines_total"]
        segments.append(current)
        # renumber: 0 only for lines before the first header
        if segments[0]["library_version"] is None and len(segments) > 1 and segments[0]["segment"] == 0:
            pass
        for i, seg in enumerate(segments):
            seg["segment"] = i if segments[0]["library_version"] is None else i + 1
        rows = RowBuffer(ctx, "onednn_segments", SEGMENT_COLUMNS)
        rows.extend({c: seg[c] for c in SEGMENT_COLUMNS} for seg in segments)
        rows.flush()
        versions = [s["library_version"] for s in segments if s["library_version"]]
        isas = [s["isa"] for s in segments if s["isa"]]
        runtimes = [s["runtime"] for s in segments if s["runtime"]]
        ctx.source["library_version"] = "; ".join(dict.fromkeys(versions)) or None
        ctx.source["isa"] = "; ".join(dict.fromkeys(isas)) or None
        ctx.source["runtime"] = "; ".join(dict.fromkeys(runtimes)) or None
        ctx.source["segments"] = len([s for s in segments if s["library_version"]]) or 1
        ctx.source["dialect"] = self._dialect(con, sid)
        kinds = con.execute(
            """SELECT count(*) FILTER (WHERE s.op_class IN ('exec', 'create', 'create_nested'))
               FROM onednn_events e JOIN onednn_shapes s USING (shape_id) WHERE e.source_id = ?""",
            [sid],
        ).fetchone()[0]
        if kinds == 0:
            ctx.warnings.append(
                f"{ctx.file.path}: no primitive exec/create lines (only headers or diagnostics)"
            )

    @staticmethod
    def _dialect(con, sid) -> str:
        """Generations seen, from the profiling lines (from every line when there are none)."""
        rows = con.execute(
            """SELECT s.marker, s.version_token, s.component <> '' AS has_component, s.layout,
                      bool_or(e.ts_ms IS NOT NULL) AS ts, count(*), s.layout <> '' AS profiling
               FROM onednn_events e JOIN onednn_shapes s USING (shape_id)
               WHERE e.source_id = ? GROUP BY ALL ORDER BY 6 DESC""",
            [sid],
        ).fetchall()
        if any(r[6] for r in rows):
            rows = [r for r in rows if r[6]]
        labels: dict[str, None] = {}
        for marker, vtok, has_comp, layout, ts, _, _ in rows:
            if marker == "mkldnn_verbose":
                label = "mkldnn-v1.0" if layout == "v1.0" else "mkldnn-v0"
            elif marker == "dnnl_verbose":
                label = "dnnl-v1/v2"
            elif vtok:
                label = f"onednn-v3.6+ ({vtok})"
            elif has_comp:
                label = "onednn-v3.2+"
            else:
                label = "onednn-v2.5+"
            labels[label + (" +timestamps" if ts else "")] = None
        merged: dict[str, None] = {}
        for lab in labels:
            base = lab.replace(" +timestamps", "")
            if base + " +timestamps" in labels and lab == base:
                continue
            merged[lab] = None
        return ", ".join(merged)
