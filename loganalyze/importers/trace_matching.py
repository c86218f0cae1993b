"""The first steps of the span engine on ``_ev``: problems and duplicates reported, B/E pairs
matched per thread and async begin/end pairs per (pid, cat, id), each end closing the
innermost open begin of its name."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ..grammars import trace_event as te
from .arrow_arrays import numpy_array
from .base import create_arrow_table, dropped_after, numpy_columns
from .trace_load import ordered_rows, update_events


#: the fields of the begins and ends :meth:`MatchingSteps._pair_up` matches, as it takes them
EVENT_FIELDS = "r, ph, name, ts_ns, event_no, cat, pid, tid, id"

#: the phases matched in pairs: begin/end per thread, and async begin/end
BEGIN_END_PHASES = ("B", "E")
ASYNC_PHASES = ("b", "e", "S", "F")
PAIRED_PHASES = BEGIN_END_PHASES + ASYNC_PHASES


@dataclass
class SpanStats:
    events: int = 0
    parsed: int = 0
    skipped: int = 0
    unmatched_e: int = 0
    unclosed_b: int = 0
    async_unmatched_e: int = 0
    async_unclosed_b: int = 0
    improper_nesting: int = 0
    duplicates: int = 0
    negative_durations: int = 0
    categories: list = field(default_factory=list)


class MatchingSteps:
    """Mixed into :class:`~loganalyze.importers.trace_spans.SpanEngine` (uses its ``con``,
    ``ctx``, ``stats`` and ``event_no``)."""

    def _report_problems(self) -> None:
        for event_no, problem, ph, name, cat, ts, dur, pid, tid in ordered_rows(
                self.con, "event_no, problem, ph, name, cat, ts_text, dur_text, pid, tid", "problem IS NOT NULL"):
            if problem.startswith("negative dur"):
                self.stats.negative_durations += 1
            self.ctx.skip(event_no, problem, _event_text(ph, name, cat, ts, dur, pid, tid))

    def _find_duplicates(self, candidates: np.ndarray) -> np.ndarray:
        """Report and mark (``problem``) the complete events that repeat an earlier one (same
        name, category, thread, times and args); returns their rows.  Only ``candidates``
        (rows, from :func:`duplicate_candidates`) can be duplicates: most traces have none."""
        con = self.con
        none = np.zeros(0, dtype=np.int64)
        if not len(candidates):
            return none
        create_arrow_table(con, "_dup_rows", pa.table({"r": numpy_array(np.asarray(candidates, dtype=np.int64))}))
        among = "ph = 'X' AND problem IS NULL AND r IN (SELECT r FROM _dup_rows)"
        with dropped_after(con, "_dup_rows"):
            # events that differ without their args differ: args (long JSON text) are hashed
            # only when some events are alike without them
            alike = "name, cat, pid, tid, ts_ns, dur_ns"
            for fields in (alike, alike + ", args"):
                n, distinct = con.execute(
                    f"SELECT count(*), count(DISTINCT hash({fields})) FROM _ev WHERE {among}").fetchall()[0]
                if n == distinct:
                    return none
            # the duplicates stay in DuckDB; Python reads them a batch at a time to report them
            # (a trace of duplicated events held them all as Python tuples: 2x the file's size)
            con.execute(
                f"""CREATE OR REPLACE TABLE _dups AS
                   WITH x AS (
                       SELECT r, event_no, ph, name, cat, ts_text, dur_text, ts_ns, dur_ns, pid, tid,
                              min(event_no) OVER (PARTITION BY name, cat, pid, tid, ts_ns, dur_ns, CAST(args AS VARCHAR)) AS first
                       FROM _ev WHERE {among})
                   SELECT * FROM x WHERE event_no <> first""")
        self.stats.duplicates = con.execute("SELECT count(*) FROM _dups").fetchall()[0][0]
        rows = none
        if self.stats.duplicates:
            for event_no, first, ph, name, cat, ts, dur, ts_ns, dur_ns, pid, tid in ordered_rows(
                    con, "event_no, first, ph, name, cat, ts_text, dur_text, ts_ns, dur_ns, pid, tid", "true",
                    table="_dups", rows=self.m):
                # (the texts of rows without a problem are not kept: their times from their ns)
                ts = te.ns_to_us_text(ts_ns) if ts is None and ts_ns is not None else ts
                dur = te.ns_to_us_text(dur_ns) if dur is None and dur_ns is not None else dur
                self.ctx.skip(event_no, f"duplicate of event {first}", _event_text(ph, name, cat, ts, dur, pid, tid))
            update_events(con, lambda t, row: f"""UPDATE {t} SET problem = 'duplicate of event ' || _dups.first
                                                  FROM _dups WHERE {row} = _dups.r""")
            rows = np.asarray(numpy_columns(con, "SELECT r FROM _dups")["r"], dtype=np.int64)
        con.execute("DROP TABLE _dups")
        return rows

    # ------------------------------------------------------------------ matching
    def _match_begin_end(self, dur, end_r, skip) -> None:
        rows = ordered_rows(self.con, EVENT_FIELDS, f"ph IN ({te.sql_list(BEGIN_END_PHASES)}) AND problem IS NULL")
        self.stats.unmatched_e, self.stats.unclosed_b = self._pair_up(rows, False, dur, end_r, skip)

    def _match_async(self, dur, end_r, skip, async_op) -> None:
        rows = ordered_rows(self.con, EVENT_FIELDS, f"ph IN ({te.sql_list(ASYNC_PHASES)}) AND problem IS NULL")
        self.stats.async_unmatched_e, self.stats.async_unclosed_b = self._pair_up(rows, True, dur, end_r, skip)
        # MXNet custom-operator tasks: operators when they have no synchronous recording
        cats = te.ASYNC_OP_CATEGORIES
        cand = self.con.execute(
            f"""SELECT r, name FROM _ev WHERE ph IN ('b', 'S') AND problem IS NULL
                AND cat IN ({te.sql_list(cats)})"""
        ).fetchall()
        if cand:
            sync = {r[0] for r in self.con.execute(
                "SELECT DISTINCT name FROM _ev WHERE role = 'op' AND problem IS NULL").fetchall()}
            for r, name in cand:
                if name not in sync and dur[r] != np.iinfo(np.int64).min and not skip[r]:
                    async_op[r] = True


    def _pair_up(self, rows, is_async: bool, dur, end_r, skip) -> tuple[int, int]:
        """Match begins and ends (B/E per thread, or async per pid, cat and id): each end
        closes the innermost open begin of its name.  Sets ``dur`` and ``end_r`` of each
        matched begin, skips unmatched ends and negative pairs; returns (unmatched ends,
        begins left open)."""
        begins = te.ASYNC_BEGIN if is_async else ("B",)
        open_begins: dict = {}
        unmatched = 0
        for r, ph, name, ts, event_no, cat, pid, tid, id_ in rows:
            key = (pid, cat, id_) if is_async else (pid, tid)
            if ph in begins:
                st = open_begins.get(key)
                if st is None:
                    st = open_begins[key] = OpenBegins()
                st.push(name, r, ts)
                continue
            st = open_begins.get(key)
            found = st.pop_innermost(name) if st is not None else None
            if found is None:
                unmatched += 1
                skip[r] = True
                reason = (f"unmatched async end: no open begin for id {id_} cat {cat!r} name {name!r}" if is_async
                          else f"unmatched E: no open B named {name!r} on pid {pid} tid {tid}")
                self.ctx.skip(event_no, reason, _event_text(ph, name, cat, te.ns_to_us_text(ts), None, pid, tid))
                continue
            bname, br, bts = found
            if ts < bts:
                self.stats.negative_durations += 1
                skip[r] = True
                skip[br] = True
                begin_no = int(self._event_no_of(br))
                if is_async:
                    end_reason, begin_reason = "async end before its begin: negative duration", "async begin after its end"
                else:
                    end_reason = f"E before its B (event {begin_no}): negative duration"
                    begin_reason = f"B ends before it begins (E is event {event_no})"
                self.ctx.skip(event_no, end_reason, _event_text(ph, name, cat, te.ns_to_us_text(ts), None, pid, tid))
                self.ctx.skip(begin_no, begin_reason,
                              _event_text("b" if is_async else "B", bname, cat, te.ns_to_us_text(bts), None, pid, tid))
                continue
            dur[br] = ts - bts
            end_r[br] = r
        return unmatched, sum(st.open for st in open_begins.values())

class OpenBegins:
    """The begins still open on one thread (or async id), in the order they were opened.

    An end closes the innermost open begin of its name (of any name when it has none): a
    stack per name and one of every begin, with closed entries dropped when they come to the
    top, make each end O(1) amortised however the ends are ordered (first-in-first-out,
    unmatched, deep nesting).  An entry closed through one stack is dropped from the other as
    soon as it is on top there too, so that what is kept is about what is open (a 300 MB
    trace of nested B/E pairs kept every begin it had seen: 2.4x the file's size)."""

    __slots__ = ("every", "by_name", "closed", "open")

    def __init__(self):
        self.every: list = []  # (name, r, ts), in the order opened
        self.by_name: dict = {}  # name -> its entries of ``every``, in the same order
        self.closed: set = set()  # r of the entries closed through one stack, still in the other
        self.open = 0

    def push(self, name, r: int, ts: int) -> None:
        """A begin is opened."""
        entry = (name, r, ts)
        self.every.append(entry)
        self.by_name.setdefault(name, []).append(entry)
        self.open += 1

    def pop_innermost(self, name) -> tuple | None:
        """Close and return the innermost open begin named ``name`` (of any name when
        ``name`` is None): (name, r, ts), or None when there is none."""
        stack = self.every if name is None else self.by_name.get(name)
        if not stack:
            return None
        self._drop_closed(stack)
        if not stack:
            return None
        entry = stack.pop()
        self.closed.add(entry[1])
        self.open -= 1
        # the entry is still in the other stack: dropped there if it is on top
        self._drop_closed(self.by_name[entry[0]] if name is None else self.every)
        return entry

    def _drop_closed(self, stack: list) -> None:
        """Drop the closed entries on top of ``stack`` (then in no stack: forgotten)."""
        closed = self.closed
        while stack and stack[-1][1] in closed:
            closed.discard(stack.pop()[1])


def duplicate_candidates(spans: dict) -> np.ndarray:
    """The rows of the spans (:meth:`~.trace_nesting.NestingSteps._spans`: sorted by
    thread, start, longer first) that share their thread, start and end with a neighbour in
    that order: every complete event that repeats another is one of them (the two are in
    one run of equal thread, start and duration)."""
    thr, ts, end = spans["thr"], spans["ts"], spans["end"]
    same = (thr[1:] == thr[:-1]) & (ts[1:] == ts[:-1]) & (end[1:] == end[:-1])
    if not same.any():
        return np.zeros(0, dtype=np.int64)
    near = np.zeros(len(thr), dtype=bool)
    near[1:] = same
    near[:-1] |= same
    return np.sort(spans["r"][near])


def _event_text(ph, name, cat, ts, dur, pid, tid) -> str:
    """A skipped event shown as JSON text: the fields it had (times as written; a duplicate's
    as its ns in us, the texts of events without a problem not being kept)."""
    fields = {"ph": (ph, _js), "name": (name, _js), "cat": (cat, _js), "ts": (ts, str), "dur": (dur, str),
              "pid": (pid, _id_text), "tid": (tid, _id_text)}
    return "{" + ", ".join(f'"{k}": {show(v)}' for k, (v, show) in fields.items()
                           if v is not None or k == "ph") + "}"


def _id_text(v) -> str:
    return str(v) if str(v).lstrip("-").isdigit() else _js(v)


#: ``json.dumps(v, ensure_ascii=False)`` without making an encoder at each call (a trace of
#: 1.7 M duplicated events spent 9 of its 28 s there)
_js = json.JSONEncoder(ensure_ascii=False).encode
