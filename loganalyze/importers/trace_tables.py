"""The last steps of the span engine: ``trace_events`` and what is derived from it
(``trace_counters``, ``trace_flows``, and the shared GPU tables ``gpu_kernels``,
``gpu_memops``, ``gpu_api_calls``), and the ``trace_files`` row of a source."""
from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from ..grammars import trace_event as te
from ..grammars.cuda_api import base_api_name_sql
from .arrow_arrays import arrow_array, numpy_array
from .base import IngestContext, RowBuffer, create_arrow_table, sql_string, write_parquet
from .trace_load import event_parts
from .trace_matching import SpanStats


#: the computed columns the sweep gives per operator (not per row)
OP_COLUMNS = ("self_ns", "gpu_self", "gpu_total")


class SomeRows:
    """A row number for some rows of ``_ev`` only (-1 for the others), held as those rows
    (ascending) and their values: the device events' launch calls and operators, and the
    slices flow events bind to, are a few of the rows each, and whole-row arrays of them
    beside the sweep's own were the span engine's peak memory (docs/benchmarks.md,
    "Twenty-fourth session")."""

    def __init__(self, rows: np.ndarray, values: np.ndarray):
        """``rows`` ascending, each with its value (>= 0)."""
        self.rows, self.values = rows, values

    @classmethod
    def of_pairs(cls, rows: np.ndarray, values: np.ndarray) -> "SomeRows":
        """From rows in any order and their values (-1: none)."""
        has = values >= 0
        rows, values = rows[has], values[has]
        order = np.argsort(rows, kind="stable")
        return cls(rows[order], values[order])

    @classmethod
    def of(cls, dense: np.ndarray) -> "SomeRows":
        """From a whole-row array (-1: none)."""
        rows = np.flatnonzero(dense >= 0)
        return cls(rows.astype(dense.dtype), dense[rows])

    def __len__(self) -> int:
        return len(self.rows)

    def window(self, offset: int, n: int) -> np.ndarray:
        """The values of the rows ``offset`` to ``offset + n`` (-1 where none)."""
        a, b = np.searchsorted(self.rows, (offset, offset + n))
        out = np.full(n, -1, dtype=self.values.dtype)
        out[self.rows[a:b] - offset] = self.values[a:b]
        return out


#: rows of computed columns made at once (:meth:`TableSteps._write_computed`)
COMPUTED_BATCH = 1 << 18


class TableSteps:
    """Mixed into :class:`~loganalyze.importers.trace_spans.SpanEngine` (uses its ``con``,
    ``ws``, ``sid``, ``m``, ``event_no``, ``_op_rows`` and the nesting results)."""

    def _insert(self, arrays: dict) -> None:
        """The computed columns of the rows of each table ``_ev`` is made of (a Parquet file
        each: :meth:`_write_computed`) and the views over both that the store's rows come
        from: ``_evx`` (``trace_events``) and ``_flow_events`` (:meth:`_derived`).
        ``arrays``: skip, dur, end_r, async_op, parent, depth (one entry per row); launch_r,
        op_r, bound (:class:`SomeRows`); self_ns, gpu_self, gpu_total (one per operator, in
        the order of ``_op_rows``)."""
        con = self.con
        # the operators by row, their values with them
        by_row = np.argsort(self._op_rows)  # (no two alike)
        ops = self._op_rows[by_row]
        per_op = {key: arrays.pop(key)[by_row] for key in OP_COLUMNS}
        del by_row
        # a column no row has (no begin/end pairs, no flow bound to a slice) is NULL in the
        # SELECT, not a column of NULLs; without pairs, the rows skipped are those with a
        # problem (duplicates included), and no row is an asynchronous operator
        if not len(arrays["bound"]):
            arrays["bound"] = None
        if arrays["dur"] is None:
            arrays["skip"] = arrays["async_op"] = None
        x = {name: default if arrays[key] is None else f"x.{name}"
             for name, key, default in (("x_dur", "dur", "CAST(NULL AS BIGINT)"),
                                        ("x_end_event", "end_r", "CAST(NULL AS BIGINT)"),
                                        ("x_bound", "bound", "CAST(NULL AS BIGINT)"),
                                        ("x_skip", "skip", "FALSE"), ("x_async_op", "async_op", "FALSE"))}
        # each table _ev is made of next to its rows of the computed columns (POSITIONAL
        # JOIN: both in r order; DuckDB reads a join's two sides on one thread each), the
        # parts one after another (UNION ALL).  With insertion order not kept
        # (Workspace.publish) DuckDB reads the parts on their own threads: a hash join on r
        # took 1.3-1.6 CPU-s more on a 500 MB trace.  A row out of step stops the copy.
        # Rows are stored as the threads finish: readers order by event_no.
        q = self.ws.qualified
        parts = event_parts(con)
        files = self._write_computed(arrays, ops, per_op, parts)
        arrays.clear()

        def rows(columns: str, where: str = "TRUE") -> str:  # {event_no}: the event number
            return " UNION ALL ".join(
                f"""SELECT {columns.format(event_no=part.event_sql('e'))}
                    FROM {q}.{part.table} e POSITIONAL JOIN read_parquet({sql_string(path)}) x
                    WHERE e.problem IS NULL AND {where}
                      AND CASE WHEN {part.row_sql('e')} = x.x_r THEN NOT {x['x_skip']} ELSE error('trace rows out of step') END"""
                for part, path in zip(parts, files))

        con.execute("CREATE OR REPLACE VIEW _evx AS " + rows(
            f"""CAST({int(self.sid)} AS INTEGER) AS source_id, {{event_no}} AS event_no, e.ph,
                CASE WHEN {x['x_async_op']} THEN 'op' ELSE e.role END AS role, e.cat, e.name, e.pid, e.tid,
                e.ts_ns, coalesce(e.dur_ns, {x['x_dur']}) AS dur_ns,
                e.ts_ns + coalesce(e.dur_ns, {x['x_dur']}) AS end_ns,
                x.x_depth AS depth, x.x_parent AS parent, x.x_self AS self_ns, {x['x_end_event']} AS end_event,
                e.id, e.bp, e.scope, e.correlation, e.external_id, x.x_launch AS launch_event,
                x.x_op AS op_event, x.x_gpu_self AS gpu_self_ns, x.x_gpu_total AS gpu_total_ns, e.args"""))
        self.ws.transfer("SELECT * FROM {ws}._evx", "trace_events")
        # the flow events (no later step skips one) with the slice each binds to, and their
        # order key: by time, then event number (one HUGEINT, ts_ns * 2^63 + event_no; flow
        # events always have a time)
        con.execute("CREATE OR REPLACE VIEW _flow_events AS " + rows(
            f"""{{event_no}} AS event_no, e.ph, e.cat, e.id, e.name, e.ts_ns, {x['x_bound']} AS bound_event,
                e.ts_ns::HUGEINT * 9223372036854775808 + ({{event_no}}) AS k""",
            "e.ph IN ('s', 't', 'f')"))

    def _write_computed(self, arrays: dict, ops: np.ndarray, per_op: dict, parts: list) -> list[str]:
        """The computed columns of the rows of each part of ``_ev`` (``parts``:
        :class:`~.trace_load.EventPart`), written by DuckDB into a Parquet file of the workspace's folder
        a part at a time, made :data:`COMPUTED_BATCH` rows at a time as DuckDB reads them
        (the Arrow columns of a whole part are never held at once: 94 MB for 1.7 M rows);
        returns the files' paths.  The copy into the store reads them beside the parts
        (DuckDB holds a file's rows in memory, under its limit, for the POSITIONAL JOIN).
        Storing them as workspace tables instead took 0.37 CPU-s a part of 1.7 M short
        events, the Parquet files 0.16 (docs/benchmarks.md)."""
        paths = []
        for k, part in enumerate(parts):
            offset, n = part.offset, part.rows

            def batches(first: int, last: int):
                for lo in range(first, last, COMPUTED_BATCH):
                    hi = min(lo + COMPUTED_BATCH, last)
                    a, b = np.searchsorted(ops, (lo, hi))
                    yield from self._computed_columns(arrays, lo, hi - lo, ops[a:b] - lo,
                                                      {key: v[a:b] for key, v in per_op.items()}).to_batches()
            head = self._computed_columns(arrays, offset, 0, ops[:0], {key: v[:0] for key, v in per_op.items()})
            paths.append(os.path.join(self.ws.dir, f"computed{k}.parquet"))
            write_parquet(self.con, paths[-1], pa.RecordBatchReader.from_batches(head.schema, batches(offset, offset + n)))
        return paths

    def _computed_columns(self, arrays: dict, offset: int, n: int, ops: np.ndarray, per_op: dict) -> pa.Table:
        """The computed columns of the rows ``offset`` to ``offset + n`` of ``_ev``.  ``ops``:
        the operators among them (places from ``offset``, ascending), ``per_op``: their
        values of :data:`OP_COLUMNS`."""
        m = self.m
        part = slice(offset, offset + n)

        def ev_of(key):  # event numbers as 32-bit integers where they fit (the INSERT widens them)
            if arrays[key] is None:
                return None
            rr = arrays[key].window(offset, n) if isinstance(arrays[key], SomeRows) else arrays[key][part]
            out = np.where(rr >= 0, self._event_no_of(np.clip(rr, 0, max(m - 1, 0))), 0)
            return numpy_array(out, mask=rr < 0)

        not_op = np.ones(n, dtype=bool)
        not_op[ops] = False

        def op_column(key):  # an operator's value in its row, NULL elsewhere
            out = np.zeros(n, dtype=np.int64)
            out[ops] = per_op[key]
            return numpy_array(out, pa.int64(), mask=not_op)

        depth = arrays["depth"][part]
        has_depth = depth >= 0
        dur = None if arrays["dur"] is None else arrays["dur"][part]
        columns = {
            "x_r": numpy_array(np.arange(offset, offset + n, dtype=self.idx)),  # the row number r of _ev
            "x_skip": None if arrays["skip"] is None else numpy_array(arrays["skip"][part]),
            "x_dur": None if dur is None else numpy_array(dur, pa.int64(), mask=dur == np.iinfo(np.int64).min),
            "x_end_event": ev_of("end_r"),
            "x_async_op": None if arrays["async_op"] is None else numpy_array(arrays["async_op"][part]),
            "x_parent": ev_of("parent"),
            "x_depth": numpy_array(np.where(has_depth, depth, 0), pa.int32(), mask=~has_depth),
            "x_self": op_column("self_ns"),
            "x_gpu_self": op_column("gpu_self"),
            "x_gpu_total": op_column("gpu_total"),
            "x_launch": ev_of("launch_r"),
            "x_op": ev_of("op_r"),
            "x_bound": ev_of("bound"),  # the slice a flow event binds to
        }
        return pa.table({name: array for name, array in columns.items() if array is not None})

    def _derived(self) -> None:
        """Counters, flows and the shared GPU tables (columns as the Nsight/nvprof readers
        fill them, ns).  Flows from ``_flow_events`` (:meth:`_insert`: the flow events with
        the slice each binds to); the others from the finished events: the rows of
        this file already copied into ``trace_events`` (``{stored}``: a filtered scan)."""
        con = self.con
        ws = self.ws
        stored = f"(SELECT * FROM trace_events WHERE source_id = {int(self.sid)})"
        ws.transfer(
            """SELECT e.source_id, e.event_no, e.name, e.cat, e.pid, e.tid, e.id, e.ts_ns, j.key AS series,
                      try_cast(j.value AS DOUBLE) AS value,
                      CASE WHEN j.type = 'VARCHAR' THEN json_extract_string(j.value, '$')
                           ELSE CAST(j.value AS VARCHAR) END AS value_text
               FROM {stored} e, json_each(e.args) j
               WHERE e.ph = 'C' AND e.args IS NOT NULL""",
            "trace_counters", stored=stored,
        )
        # flows: their events' aggregate (:meth:`_insert`'s view).  Events at the same time:
        # the first in the file starts a flow, the last ends it
        ws.transfer(
            f"""SELECT CAST({int(self.sid)} AS INTEGER) AS source_id, cat, id, arg_min(name, event_no) AS name,
                       arg_min(event_no, k) FILTER (WHERE ph = 's') AS start_event,
                       arg_max(event_no, k) FILTER (WHERE ph = 'f') AS end_event,
                       count(*) FILTER (WHERE ph = 't') AS steps,
                       min(ts_ns) FILTER (WHERE ph = 's') AS start_ts_ns, max(ts_ns) FILTER (WHERE ph = 'f') AS end_ts_ns,
                       arg_min(bound_event, k) FILTER (WHERE ph = 's') AS from_event,
                       arg_max(bound_event, k) FILTER (WHERE ph = 'f') AS to_event
                FROM {{ws}}._flow_events
                GROUP BY cat, id""",
            "trace_flows")
        # a lookup table: the names of rows skipped later do no harm (no join needed)
        names = [r[0] for r in con.execute("SELECT DISTINCT name FROM _ev WHERE role = 'kernel'").fetchall()]
        create_arrow_table(con, "_kshort", pa.table({
            "kname": arrow_array(names, pa.string()),
            "kshort": arrow_array([te.kernel_short_name(n) for n in names], pa.string())}))
        ws.transfer(
            """SELECT e.source_id, e.row_no, e.name, e.name AS demangled, k.kshort AS short_name,
                      e.start_ns, e.end_ns, e.duration_ns,
                      try_cast(v[1] AS INTEGER) AS device, try_cast(v[2] AS BIGINT) AS context,
                      try_cast(v[3] AS BIGINT) AS stream,
                      try_cast(v[4] AS INTEGER) AS grid_x, try_cast(v[5] AS INTEGER) AS grid_y,
                      try_cast(v[6] AS INTEGER) AS grid_z, try_cast(v[7] AS INTEGER) AS block_x,
                      try_cast(v[8] AS INTEGER) AS block_y, try_cast(v[9] AS INTEGER) AS block_z,
                      try_cast(v[10] AS INTEGER) AS registers,
                      e.correlation_id, try_cast(e.pid AS BIGINT) AS pid,
                      try_cast(e.tid AS BIGINT) AS tid, 'trace_events' AS origin
               FROM (SELECT source_id, event_no AS row_no, name, ts_ns AS start_ns, end_ns, dur_ns AS duration_ns,
                            correlation AS correlation_id, pid, tid,
                            json_extract_string(args, ['$.device', '$.context', '$.stream', '$.grid[0]', '$.grid[1]',
                                '$.grid[2]', '$.block[0]', '$.block[1]', '$.block[2]',
                                '$."registers per thread"']) AS v
                     FROM {stored} WHERE role = 'kernel') e
               LEFT JOIN {ws}._kshort k ON k.kname = e.name""",
            "gpu_kernels", stored=stored,
        )
        ws.transfer(
            """SELECT source_id, event_no AS row_no, CASE WHEN role = 'memcpy' THEN 'memcpy' ELSE 'memset' END AS op,
                      CASE WHEN role = 'memcpy' THEN nullif(regexp_extract(name, """ + sql_string(te.MEMCPY_KIND_PATTERN)
            + """, 1), '') END AS kind,
                      name, try_cast(json_extract_string(args, '$.bytes') AS BIGINT) AS bytes,
                      ts_ns AS start_ns, end_ns, dur_ns AS duration_ns,
                      try_cast(json_extract_string(args, '$.device') AS INTEGER) AS device,
                      try_cast(json_extract_string(args, '$.context') AS BIGINT) AS context,
                      try_cast(json_extract_string(args, '$.stream') AS BIGINT) AS stream,
                      correlation AS correlation_id, try_cast(pid AS BIGINT) AS pid, try_cast(tid AS BIGINT) AS tid,
                      'trace_events' AS origin
               FROM {stored} WHERE role IN ('memcpy', 'memset')""",
            "gpu_memops", stored=stored,
        )
        ws.transfer(
            """SELECT source_id, event_no AS row_no,
                      CASE WHEN ends_with(cat, '_driver') THEN 'driver' ELSE 'runtime' END AS api,
                      name, """ + base_api_name_sql("name") + """ AS base_name, ts_ns AS start_ns, end_ns,
                      dur_ns AS duration_ns, correlation AS correlation_id,
                      try_cast(pid AS BIGINT) AS pid, try_cast(tid AS BIGINT) AS tid,
                      try_cast(json_extract_string(args, '$.cbid') AS INTEGER) AS cbid, 'trace_events' AS origin
               FROM {stored} WHERE role = 'launch'""",
            "gpu_api_calls", stored=stored,
        )
        con.execute("DROP TABLE IF EXISTS _thr")


#: the trace_files counters taken from :class:`SpanStats`
TRACE_FILE_COUNTS = ("unmatched_e", "unclosed_b", "async_unmatched_e", "async_unclosed_b", "improper_nesting",
                     "duplicates", "negative_durations")


def insert_trace_file(ctx: IngestContext, stats: SpanStats, **fields) -> None:
    """The ``trace_files`` row of one source (fields by column name; counts from ``stats``)."""
    row = RowBuffer(ctx, "trace_files", list(fields) + list(TRACE_FILE_COUNTS))
    row.add(**fields, **{name: getattr(stats, name) for name in TRACE_FILE_COUNTS})
    row.flush()
