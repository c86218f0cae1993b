"""The span steps of the span engine: every span sorted per thread, flow events bound to
their slices, device events linked to their launch call and operator, and the nesting sweep
(depth, parent, self time, device time)."""
from __future__ import annotations

import numpy as np

from .base import numpy_columns

#: how many earlier slices a flow event looks through for one that encloses it
FLOW_LOOKBACK = 64
#: roles as small integers for the numpy steps
ROLE_CODES = {"op": 1, "launch": 2, "kernel": 3, "memcpy": 4, "memset": 5}


class NestingSteps:
    """Mixed into :class:`~loganalyze.importers.trace_spans.SpanEngine` (uses its ``con``,
    ``m``, ``stats`` and ``_by_row``)."""

    def _spans(self, dur, async_op) -> dict:
        """Every span (X, matched B, async operators), sorted by thread, start, longer
        first, file order; with the arrays the later steps need."""
        con = self.con
        con.execute("DROP TABLE IF EXISTS _thr")
        # threads with operators first: the sweep then takes a prefix of the spans (no copy)
        con.execute(
            """CREATE TABLE _thr AS SELECT row_number() OVER (ORDER BY NOT has_op, pid, tid) - 1 AS code, pid, tid
               FROM (SELECT pid, tid, bool_or(role = 'op' AND problem IS NULL) AS has_op FROM _ev
                     WHERE ph IN ('X', 'B', 'b', 'S') GROUP BY pid, tid)""")
        # (read in the types kept: no wider copy of the 2.5 M spans of a 500 MB trace)
        rows = self._row_type_sql()
        d = numpy_columns(
            con, f"""SELECT CAST(e.r AS {rows}) AS r, CAST(t.code AS {rows}) AS thr, e.ts_ns,
                      coalesce(e.dur_ns, 0) AS dur_ns, e.ph = 'X' AS is_x, e.ph IN ('b', 'S') AS is_async,
                      CAST(CASE e.role {' '.join(f"WHEN '{k}' THEN {v}" for k, v in ROLE_CODES.items())} ELSE 0 END
                           AS TINYINT) AS role
               FROM _ev e
               JOIN _thr t ON e.pid IS NOT DISTINCT FROM t.pid AND e.tid IS NOT DISTINCT FROM t.tid
               WHERE e.ph IN ('X', 'B', 'b', 'S') AND e.problem IS NULL""")
        r = np.asarray(d.pop("r"), dtype=self.idx)
        thr = np.asarray(d.pop("thr"), dtype=self.idx)
        ts = np.asarray(d.pop("ts_ns"), dtype=np.int64)
        xdur = np.asarray(d.pop("dur_ns"), dtype=np.int64)
        is_x = np.asarray(d.pop("is_x"), dtype=bool)
        is_async = np.asarray(d.pop("is_async"), dtype=bool)
        role = np.asarray(d.pop("role"), dtype=np.int8)
        del d
        # B and async durations come from matching (no pairs: every span is an X)
        sd = xdur if dur is None else np.where(is_x, xdur, dur[r])
        del xdur, is_x
        keep = (sd != np.iinfo(np.int64).min) & (~is_async | async_op[r])
        del is_async
        if not keep.all():  # (an array at a time: the spans' arrays are most of the memory here)
            r = r[keep]
            thr = thr[keep]
            ts = ts[keep]
            sd = sd[keep]
            role = role[keep]
        del keep
        is_op = (role == ROLE_CODES["op"]) | async_op[r]
        order = span_order(thr, ts, sd, r)
        self.n_threads = con.execute("SELECT count(*) FROM _thr").fetchall()[0][0]
        # in the sweep's order, each array replacing its unordered self in turn
        spans = {"r": r[order]}
        del r
        spans["thr"] = thr[order]
        del thr
        spans["is_op"] = is_op[order]
        del is_op
        spans["role"] = role[order]
        del role
        spans["ts"] = ts[order]
        del ts
        sd = sd[order]
        del order
        spans["end"] = spans["ts"] + sd  # a span's duration is end - ts (exact, even past 2^63)
        return spans

    def _row_type_sql(self) -> str:
        """The SQL type of the row numbers (and thread codes) the engine reads: its index
        type's, so that the arrays read are not a wider copy first."""
        return "INTEGER" if self.idx == np.int32 else "BIGINT"

    def _bind_flows(self, spans) -> np.ndarray:
        """bound[r] = rowid of the slice each flow event binds to (-1: none)."""
        bound = np.full(self.m, -1, dtype=self.idx)
        rows = self._row_type_sql()
        d = numpy_columns(
            self.con, f"""SELECT CAST(e.r AS {rows}) AS r, CAST(coalesce(t.code, -1) AS {rows}) AS thr, e.ts_ns,
                      e.ph = 'f' AND e.bp IS DISTINCT FROM 'e' AS nxt
               FROM _ev e LEFT JOIN _thr t ON e.pid IS NOT DISTINCT FROM t.pid AND e.tid IS NOT DISTINCT FROM t.tid
               WHERE e.ph IN ('s', 't', 'f') AND e.problem IS NULL""")
        if len(d["r"]) == 0:
            return bound
        fr = np.asarray(d["r"], dtype=self.idx)
        fthr = np.asarray(d["thr"], dtype=self.idx)
        fts = np.asarray(d["ts_ns"], dtype=np.int64)
        next_slice = np.asarray(d["nxt"], dtype=bool)
        sthr, sts, send, sr = spans["thr"], spans["ts"], spans["end"], spans["r"]
        if len(sr) == 0:
            return bound
        bounds = np.searchsorted(sthr, np.arange(self.n_threads + 1))
        by_thread = np.argsort(fthr, kind="stable")
        codes, firsts = np.unique(fthr[by_thread], return_index=True)
        lasts = np.append(firsts[1:], len(by_thread))
        for code, fa, fb in zip(codes.tolist(), firsts.tolist(), lasts.tolist()):
            if code < 0:
                continue
            a, b = bounds[code], bounds[code + 1]
            if a == b:
                continue
            sel = by_thread[fa:fb]
            q = fts[sel]
            seg_ts, seg_end = sts[a:b], send[a:b]
            # enclosing slice: the last one starting at or before q that is still open at q
            # (sorted longer first, so among equal starts the last is the innermost)
            idx = np.searchsorted(seg_ts, q, side="right") - 1
            nxt = next_slice[sel]
            ok = (idx >= 0) & ~nxt
            ok[ok] = seg_end[idx[ok]] >= q[ok]
            bound[fr[sel[ok]]] = sr[a + idx[ok]]
            # the others: "next slice" flow ends bind to the first slice starting at or after
            # them; the rest to an enclosing slice among the 64 that start before
            bad = np.nonzero(~ok)[0]
            later = bad[nxt[bad]]
            j = np.searchsorted(seg_ts, q[later], side="left")
            found = j < len(seg_ts)
            bound[fr[sel[later[found]]]] = sr[a + j[found]]
            back = bad[~nxt[bad]]
            i = idx[back] - 1
            for _ in range(FLOW_LOOKBACK):
                live = i >= 0
                if not live.any():
                    break
                back, i = back[live], i[live]
                hit = seg_end[i] >= q[back]
                bound[fr[sel[back[hit]]]] = sr[a + i[hit]]
                back, i = back[~hit], i[~hit] - 1
        return bound

    def _gpu_links(self, spans, bound):
        """The launch call and the operator (rows; -1: none) of each device event, one entry
        per device event (not per row: a few of the rows), in the order of ``_gpu_r``.  The
        device events' rows and durations are kept for the sweep (``_gpu_r``,
        ``_gpu_dur``)."""
        m = self.m
        role, sr = spans["role"], spans["r"]
        gpu = np.isin(role, (ROLE_CODES["kernel"], ROLE_CODES["memcpy"], ROLE_CODES["memset"]))
        g_r = sr[gpu]
        self._gpu_r, self._gpu_dur = g_r, spans["end"][gpu] - spans["ts"][gpu]
        if not len(g_r):
            return np.empty(0, dtype=self.idx), np.empty(0, dtype=self.idx)
        launch_r = np.full(m, -1, dtype=self.idx)
        op_r = np.full(m, -1, dtype=self.idx)
        # 1. correlation id -> host launch call (the first in file order)
        corr = self._by_row("correlation")
        l_r = np.sort(sr[role == ROLE_CODES["launch"]])
        found, rows = _first_with_id(l_r, corr[l_r], corr[g_r])
        del corr  # (the id arrays are one at a time: 8 bytes a row each)
        launch_r[g_r[found]] = rows
        # 2. flows: the flow ending on the device event starts on a launch call
        missing = g_r[launch_r[g_r] < 0]
        if len(missing) and (bound >= 0).any():
            self._launches_by_flow(launch_r, missing, sr[role == ROLE_CODES["launch"]], bound)
        # 3. External id -> the operator with that id (when no launch call is known)
        missing = g_r[launch_r[g_r] < 0]
        if len(missing):
            ext = self._by_row("external_id")
            o_r = np.sort(sr[role == ROLE_CODES["op"]])
            found, rows = _first_with_id(o_r, ext[o_r], ext[missing])
            del ext
            op_r[missing[found]] = rows
        return launch_r[g_r], op_r[g_r]

    def _launches_by_flow(self, launch_r, missing, launches, bound) -> None:
        """``launch_r`` of the device events ``missing`` (rows) from flows: a flow (cat, id)
        whose first start bound to a slice (in file order) is bound to a launch call, and
        one of whose ends is bound to the device event, links the two (the last such end
        in file order decides).  Whole arrays: a trace of 1.5 M such flows held them as
        Python tuples and dicts (1.4 GiB)."""
        con = self.con
        con.execute(
            """CREATE OR REPLACE TABLE _flow_keys AS
               SELECT cat, id, row_number() OVER () AS g
               FROM (SELECT DISTINCT cat, id FROM _ev WHERE ph IN ('s', 'f') AND problem IS NULL)""")
        d = numpy_columns(
            con, """SELECT e.r, e.ph = 's' AS is_s, k.g FROM _ev e
               JOIN _flow_keys k ON e.cat IS NOT DISTINCT FROM k.cat AND e.id IS NOT DISTINCT FROM k.id
               WHERE e.ph IN ('s', 'f') AND e.problem IS NULL""")
        con.execute("DROP TABLE _flow_keys")
        r = np.asarray(d["r"], dtype=np.int64)
        order = np.argsort(r, kind="stable")  # file order
        r = r[order]
        is_s = np.asarray(d["is_s"], dtype=bool)[order]
        g = np.asarray(d["g"], dtype=np.int64)[order]
        del d, order
        b = bound[r]
        # each flow's first start bound to a slice
        starts = np.flatnonzero(is_s & (b >= 0))
        start_g, first = np.unique(g[starts], return_index=True)
        start_b = b[starts[first]]
        # the ends bound to a device event without a launch call, their flow's start a launch call
        is_missing = np.zeros(self.m, dtype=bool)
        is_missing[missing] = True
        is_launch = np.zeros(self.m, dtype=bool)
        is_launch[launches] = True
        ends = np.flatnonzero(~is_s & (b >= 0))
        ends = ends[is_missing[b[ends]]]
        at = np.searchsorted(start_g, g[ends])
        found = at < len(start_g)
        found[found] = start_g[at[found]] == g[ends[found]]
        ends, at = ends[found], at[found]
        to_launch = is_launch[start_b[at]]
        ends, at = ends[to_launch], at[to_launch]
        # the last end (in file order) of each device event decides
        target = b[ends][::-1]
        targets, last = np.unique(target, return_index=True)
        launch_r[targets] = start_b[at[::-1][last]]

    def _sweep(self, spans, launch_g, op_g):
        """Nesting per thread: depth and parent operator of each row; self time, device time
        and inclusive device time of each operator, in the order of ``self._op_rows`` (the
        operators' rows in sweep order: a parent before its children).  ``launch_g``,
        ``op_g``: :meth:`_gpu_links`' answer (``op_g`` is completed here).

        The rule is the stack sweep of the corpus README: spans sorted by thread, start,
        longer first, file order; an operator's parent is the innermost operator still open
        at its start (``end > start``); the parent of any other span is found the same way
        (launch calls get their operator from it).  See :func:`_parents`, :func:`_depths`
        and :func:`_inclusive`: vectorised for ordinary traces, linear on adversarial ones.
        """
        m = self.m
        # the nesting first, then the per-row arrays it fills (not held while it is found)
        nesting = _thread_nesting(spans)
        parent = np.full(m, -1, dtype=self.idx)
        depth = np.full(m, -1, dtype=np.int32)
        is_op = spans["is_op"]
        op_rows = spans["r"][is_op]
        # per operator, not per row: operators are a part of the rows only
        op_index = np.full(m, -1, dtype=self.idx)  # row -> its place in op_rows
        op_index[op_rows] = np.arange(len(op_rows), dtype=self.idx)
        child = np.zeros(len(op_rows), dtype=np.int64)
        self.stats.improper_nesting = _nest_threads(nesting, parent, depth, child, op_index)
        del nesting
        gpu_self = np.zeros(len(op_rows), dtype=np.int64)
        # device events: their operator is the launch call's parent (unless External id found
        # one); its device time is theirs
        via_launch = launch_g >= 0
        op_g[via_launch] = parent[launch_g[via_launch]]
        del via_launch
        has_op = op_g >= 0
        np.add.at(gpu_self, op_index[op_g[has_op]], self._gpu_dur[has_op])
        # inclusive device time: children into parents, deepest first
        op_parent = parent[op_rows]
        op_parent = np.where(op_parent >= 0, op_index[np.maximum(op_parent, 0)], -1)
        del op_index
        gpu_total = _inclusive(op_parent, depth[op_rows], gpu_self)
        del op_parent
        self_ns = spans["end"][is_op] - spans["ts"][is_op] - child
        del child
        self._op_rows = op_rows
        return parent, depth, self_ns, gpu_self, gpu_total


def _thread_nesting(spans: dict) -> tuple | None:
    """The nesting of the spans of the threads that have operators (GPU streams have none):
    their rows, starts, ends and operator flags (views of ``spans`` when those threads come
    first, as :meth:`NestingSteps._spans` numbers them), and each one's parent place and
    depth among them (:func:`_parents`, :func:`_depths`); None when there are none."""
    thr, is_op = spans["thr"], spans["is_op"]
    op_threads = np.unique(thr[is_op])
    if not len(op_threads) or op_threads[-1] == len(op_threads) - 1:
        # the threads numbered first: a prefix of the spans, not copied
        sel = slice(0, int(np.searchsorted(thr, len(op_threads))))
    else:
        sel = np.isin(thr, op_threads)
    t_thr, t_ts, t_end = thr[sel], spans["ts"][sel], spans["end"][sel]
    t_op, t_r = is_op[sel], spans["r"][sel]
    del sel
    if not len(t_r):
        return None
    par = _parents(t_thr, t_ts, t_end, t_op)
    return t_r, t_ts, t_end, t_op, par, _depths(par)


def _nest_threads(nesting: tuple | None, parent: np.ndarray, depth: np.ndarray, child: np.ndarray,
                  op_index: np.ndarray) -> int:
    """From :func:`_thread_nesting`'s answer: fills ``parent`` and ``depth`` of the swept
    spans (indexed by row) and the direct children's time ``child`` of their operators
    (indexed by ``op_index[row]``); returns how many operators end after their parent."""
    if nesting is None:
        return 0
    t_r, t_ts, t_end, t_op, par, dep = nesting
    ops = np.nonzero(t_op & (par >= 0))[0]
    np.add.at(child, op_index[t_r[par[ops]]], t_end[ops] - t_ts[ops])
    improper = int((t_end[ops] > t_end[par[ops]]).sum())
    del ops
    parent[t_r] = np.where(par >= 0, t_r[np.maximum(par, 0)], -1)
    depth[t_r] = dep
    return improper


def span_order(thr: np.ndarray, ts: np.ndarray, dur: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The order of spans by thread, start, longer first, file order: ``np.lexsort((r, -dur,
    ts, thr))``, faster.  Thread and start are packed into one int64 key when the starts'
    range allows (``thr`` holds small codes >= 0), sorted in one pass (nearly sorted input
    is cheap), and only the runs of equal keys are ordered by the last two keys (so that the
    first sort need not be stable: numpy's quicksort, SIMD where the CPU has it, took 0.05
    instead of 0.09-0.11 s for 2.5 M spans)."""
    n = len(ts)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    lo = int(ts.min())
    shift = 62 - int(thr.max()).bit_length()
    if int(thr.min()) < 0 or int(ts.max()) - lo >= 1 << shift:
        return np.lexsort((r, -dur, ts, thr))
    # (thr << shift) | (ts - lo) with two arrays of the spans' size alive, not three
    key = ts - lo
    key |= np.left_shift(thr, shift, dtype=np.int64)
    order = np.argsort(key)
    key = key[order]
    tied = key[1:] == key[:-1]
    del key
    if tied.any():
        in_run = np.zeros(n, dtype=bool)
        in_run[1:] = tied
        in_run[:-1] |= tied
        at = np.flatnonzero(in_run)
        del in_run
        # which run each of those positions is in: a run starts where the key changes
        starts = np.ones(len(at), dtype=bool)
        starts[1:] = ~tied[at[1:] - 1]
        run = np.cumsum(starts)
        sub = order[at]
        order[at] = sub[np.lexsort((r[sub], -dur[sub], run))]
    return order


def _first_with_id(cand_r: np.ndarray, cand_ids: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``ids`` (-1: none), the first candidate row (``cand_r``, ascending) with
    that id: (which ids were found, their rows)."""
    keep = cand_ids >= 0
    cand_r, cand_ids = cand_r[keep], cand_ids[keep]
    if not len(cand_r):
        return np.zeros(len(ids), dtype=bool), np.empty(0, dtype=np.int64)
    unique_ids, first = np.unique(cand_ids, return_index=True)
    pos = np.searchsorted(unique_ids, ids)
    found = (pos < len(unique_ids)) & (ids >= 0)
    found[found] = unique_ids[pos[found]] == ids[found]
    return found, cand_r[first[pos[found]]]


#: rounds of the vectorised parent search before the linear stack sweep takes over
VECTOR_ROUNDS = 32
#: nesting depth up to which inclusive device time is summed level by level (vectorised)
VECTOR_LEVELS = 64


def _parents(thr: np.ndarray, ts: np.ndarray, end: np.ndarray, is_op: np.ndarray) -> np.ndarray:
    """Position of each span's parent (the innermost operator still open at its start on its
    thread), or -1; spans sorted by thread, start, longer first, file order.

    A span's parent is the first of (the operator before it in that order, that operator's
    parent, ...) still open at its start: the pointers of the spans whose candidate is
    closed are moved up all at once, which gives exactly the stack's answer (improper
    nesting included).  Each round is O(spans still moving); when some are still moving
    after :data:`VECTOR_ROUNDS` rounds (a long chain of closed operators), the stack sweep
    itself answers, in one linear pass."""
    n = len(ts)
    pos = np.arange(n, dtype=np.int32 if n < np.iinfo(np.int32).max else np.int64)  # half the memory
    last_op = np.maximum.accumulate(np.where(is_op, pos, -1))
    del pos
    prev = np.empty(n, dtype=last_op.dtype)
    prev[0] = -1
    prev[1:] = last_op[:-1]
    del last_op
    ok = prev >= 0
    ok[ok] = thr[prev[ok]] == thr[ok]
    par = np.where(ok, prev, -1)
    moving = np.nonzero(par >= 0)[0]
    for _ in range(VECTOR_ROUNDS):
        closed = moving[end[par[moving]] <= ts[moving]]
        if not len(closed):
            return par
        par[closed] = par[par[closed]]
        moving = closed[par[closed] >= 0]
    return _stack_parents(thr, ts, end, is_op)


def _stack_parents(thr: np.ndarray, ts: np.ndarray, end: np.ndarray, is_op: np.ndarray) -> np.ndarray:
    """The stack sweep itself (same answer as :func:`_parents`), one pass over the spans."""
    thr_l, ts_l, end_l, op_l = thr.tolist(), ts.tolist(), end.tolist(), is_op.tolist()
    par = [-1] * len(ts_l)
    stack: list[int] = []
    current = None
    for i, t in enumerate(ts_l):
        if thr_l[i] != current:
            current = thr_l[i]
            stack = []
        while stack and end_l[stack[-1]] <= t:
            stack.pop()
        if stack:
            par[i] = stack[-1]
        if op_l[i]:
            stack.append(i)
    return np.asarray(par, dtype=np.int64)


def _depths(par: np.ndarray) -> np.ndarray:
    """Number of ancestors of each span (``par``: parent position or -1), by pointer
    doubling: O(n log depth)."""
    dep = (par >= 0).astype(np.int32)  # edges from each span up to ``up`` (to the root when up < 0)
    up = par.copy()
    moving = np.nonzero(up >= 0)[0]
    while len(moving):
        nxt = up[moving]
        dep[moving] += dep[nxt]
        up[moving] = up[nxt]
        moving = moving[up[moving] >= 0]
    return dep


def _inclusive(parent: np.ndarray, depth: np.ndarray, gpu_self: np.ndarray) -> np.ndarray:
    """Inclusive device time of each operator: its own plus its children's, deepest first.
    Operators in sweep order (a parent before its children); ``parent``: the place of each
    one's parent in that order (-1: none), ``depth``: its depth."""
    total = gpu_self.copy()
    if not len(total):
        return total
    deepest = int(depth.max())
    if deepest <= VECTOR_LEVELS:
        for level in range(deepest, 0, -1):
            ops = np.flatnonzero((depth == level) & (parent >= 0))
            np.add.at(total, parent[ops], total[ops])
        return total
    par_l, tot_l = parent.tolist(), total.tolist()
    for k in range(len(tot_l) - 1, -1, -1):
        p = par_l[k]
        if p >= 0:
            tot_l[p] += tot_l[k]
    return np.asarray(tot_l, dtype=np.int64)
