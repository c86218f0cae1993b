"""The span engine: ``_ev`` (see :func:`~loganalyze.importers.trace_load.ev_select_sql`) ->
``trace_events`` and companions, in steps kept in their own modules: matching
(:mod:`.trace_matching`), nesting (:mod:`.trace_nesting`) and the tables written
(:mod:`.trace_tables`).  The trace JSON and CNTK detail importers feed it.
"""
from __future__ import annotations

import numpy as np

from ..grammars import trace_event as te
from ..memory_limit import give_back_free_heap
from .base import IngestContext, numpy_columns
from .trace_load import event_parts, update_events
from .trace_matching import PAIRED_PHASES, MatchingSteps, SpanStats, duplicate_candidates
from .trace_nesting import NestingSteps
from .trace_tables import SomeRows, TableSteps
from .trace_workspace import Workspace


def row_index_type(rows: int) -> type:
    """The numpy type of the span engine's arrays of row numbers for ``rows`` rows: 32-bit
    below 2^31 rows (half the memory of 64-bit: these arrays are most of the engine's)."""
    return np.int32 if rows < np.iinfo(np.int32).max else np.int64


#: at most this many possible duplicates are checked while the spans are held (more: the
#: spans are made again after the check, which then has the memory)
SPANS_KEPT_FOR_CANDIDATES = 1 << 16


class NeedsExactReader(Exception):
    """Fractional times too large for DuckDB's double-based number reading."""


class SpanEngine(MatchingSteps, NestingSteps, TableSteps):
    """``_ev`` (see :func:`ev_select_sql`) -> ``trace_events`` and companions.

    ``keys`` (top-level keys of the file) lets the flavour be re-checked against the
    categories actually seen; None keeps ``flavour`` as given."""

    def __init__(self, ctx: IngestContext, ws: Workspace, flavour: str, check_precision: bool,
                 keys: list | None = None):
        self.ctx = ctx
        self.keys = keys
        self.ws = ws
        self.con = ws.con
        self.main = ctx.con
        self.sid = ctx.source_id
        self.flavour = flavour
        self.check_precision = check_precision
        self.stats = SpanStats()

    # ------------------------------------------------------------------ main
    def run(self) -> SpanStats:
        self._build()
        self.ws.publish()
        st = self.stats
        st.parsed = self.main.execute("SELECT count(*) FROM trace_events WHERE source_id = ?", [self.sid]).fetchall()[0][0]
        return st

    def _build(self) -> None:
        """Every workspace table the store's rows come from; the per-event arrays live only
        inside this call (they are gone before the rows are copied into the store)."""
        con = self.con
        self._check_ev()
        m = con.execute("SELECT count(*) FROM _ev").fetchall()[0][0]
        self.m = m
        self._report_problems()
        self.idx = row_index_type(m)
        self.event_no = self._event_numbers()
        skip = np.zeros(m, dtype=bool)
        problems = numpy_columns(self.con, "SELECT r FROM _ev WHERE problem IS NOT NULL")["r"]
        skip[np.asarray(problems, dtype=np.int64)] = True
        async_op = np.zeros(m, dtype=bool)
        dur = end_r = None  # the durations and ends of begin/end pairs (Kineto writes none)
        if con.execute(f"SELECT count(*) FROM _ev WHERE ph IN ({te.sql_list(PAIRED_PHASES)}) "
                       "AND problem IS NULL").fetchall()[0][0]:
            dur = np.full(m, np.iinfo(np.int64).min, dtype=np.int64)  # min = unknown
            end_r = np.full(m, -1, dtype=self.idx)
            self._match_begin_end(dur, end_r, skip)
            self._match_async(dur, end_r, skip, async_op)
        # before each step that builds arrays after reading _ev: the blocks read so far (and
        # those the load wrote) stay in DuckDB's memory as a cache, and the arrays need the
        # room more (the sweep reads nothing: nothing to release before the insert)
        self.ws.release_memory()
        spans = self._spans(dur, async_op)
        candidates = duplicate_candidates(spans)
        if len(candidates) > SPANS_KEPT_FOR_CANDIDATES:  # the check's memory before the spans'
            spans = None
        duplicates = self._find_duplicates(candidates)
        del candidates
        if len(duplicates) or spans is None:  # (rare) the spans again, without duplicates
            skip[duplicates] = True
            spans = None
            self.ws.release_memory()
            spans = self._spans(dur, async_op)
        del duplicates
        bound = self._bind_flows(spans)
        self.ws.release_memory()
        launch_g, op_g = self._gpu_links(spans, bound)
        bound = SomeRows.of(bound)
        self.ws.release_memory()
        parent, depth, self_ns, gpu_self, gpu_total = self._sweep(spans, launch_g, op_g)
        arrays = dict(skip=skip, dur=dur, end_r=end_r, async_op=async_op, parent=parent, depth=depth,
                      self_ns=self_ns, gpu_self=gpu_self, gpu_total=gpu_total, bound=bound,
                      launch_r=SomeRows.of_pairs(self._gpu_r, launch_g), op_r=SomeRows.of_pairs(self._gpu_r, op_g))
        del spans, skip, dur, end_r, async_op, parent, depth, self_ns, gpu_self, gpu_total
        del launch_g, op_g, bound
        # the sweep's arrays are gone; the C heap's free middle goes back before DuckDB
        # writes the computed columns with memory of its own
        give_back_free_heap()
        self._insert(arrays)
        for name in ("event_no", "_gpu_r", "_gpu_dur", "_op_rows"):
            self.__dict__.pop(name, None)
        self._derived()

    def _event_numbers(self) -> np.ndarray | None:
        """The event number of each row (indexed by ``r``), or None when every row's event
        number is its row number (what DuckDB's reader gives, its parts numbering both by
        row id: the array is not kept)."""
        if not any(part.numbered for part in event_parts(self.con)):
            return None
        differ = self.con.execute("SELECT count(*) FROM _ev WHERE event_no <> r").fetchall()[0][0]
        if not differ:
            return None
        out = self._by_row("event_no")
        return out.astype(np.int32) if self.m and int(out.max()) < np.iinfo(np.int32).max else out

    def _event_no_of(self, rows):
        """The event numbers of the rows ``rows`` (an array of ``r``, or one ``r``)."""
        return rows if self.event_no is None else self.event_no[rows]

    def _by_row(self, column: str) -> np.ndarray:
        """An int64 column of ``_ev`` as an array indexed by the row number ``r`` (-1 where it
        is NULL): placed by ``r``, not sorted by it (``_ev`` may be a view over parts, whose
        ORDER BY r is a sort)."""
        out = np.full(self.m, -1, dtype=np.int64)
        d = numpy_columns(self.con, f"SELECT r, {column} AS v FROM _ev WHERE {column} IS NOT NULL")
        out[np.asarray(d["r"], dtype=np.int64)] = np.asarray(d["v"], dtype=np.int64)
        return out

    # ------------------------------------------------------------------ _ev
    def _check_ev(self) -> None:
        """The role rule used at load time assumed a flavour; if the categories seen say
        otherwise, the roles are recomputed.  Fractional times beyond double precision
        (DuckDB path only) need the exact reader."""
        con = self.con
        cats = [r[0] for r in con.execute("SELECT DISTINCT cat FROM _ev WHERE cat IS NOT NULL LIMIT 1000").fetchall()]
        self.stats.categories = sorted(cats)
        if self.keys is not None:
            flavour = te.detect_flavour(self.keys, cats)
            if flavour != self.flavour:
                self.flavour = flavour
                role = te.role_sql(flavour)
                update_events(con, lambda t, _row: f"UPDATE {t} SET role = {role} WHERE ph IN ('X', 'B')")
        if self.check_precision:
            lim = te.EXACT_FRACTIONAL_US_LIMIT
            bad = con.execute(
                f"""SELECT count(*) FROM _ev WHERE
                    ({te.is_fractional_sql('ts_text')} AND abs(try_cast(ts_text AS DOUBLE)) >= {lim})
                 OR ({te.is_fractional_sql('dur_text')} AND abs(try_cast(dur_text AS DOUBLE)) >= {lim})"""
            ).fetchall()[0][0]
            if bad:
                raise NeedsExactReader()
