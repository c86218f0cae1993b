"""The span steps of the span engine: every span sorted per thread, flow events bound to
their slices, device events linked to their launch call and operator, and the nesting sweep
(depth, parent, self time, device time)."""
from __future__ import annotations

import numpy as np

#: roles as small integers for the numpy steps
ROLE_CODES = {"op": 1, "launch": 2, "kernel": 3, "memcpy": 4, "memset": 5}


class NestingSteps:
    """Mixed into :class:`~loganalyze.importers.trace_spans.SpanEngine` (uses its ``con``,
    ``m``, ``stats`` and ``_col``)."""

    def _spans(self, dur, async_op) -> dict:
        """Every span (X, matched B, async operators), sorted by thread, start, longer
        first, file order; with the arrays the later steps need."""
        con = self.con
        con.execute("DROP TABLE IF EXISTS _thr")
        con.execute(
            """CREATE TABLE _thr AS SELECT row_number() OVER (ORDER BY pid, tid) - 1 AS code, pid, tid
               FROM (SELECT DISTINCT pid, tid FROM _ev WHERE ph IN ('X', 'B', 'b', 'S'))""")
        d = con.execute(
            f"""SELECT e.r, t.code AS thr, e.ts_ns, coalesce(e.dur_ns, 0) AS dur_ns, e.ph = 'X' AS is_x,
                      e.ph IN ('b', 'S') AS is_async,
                      CASE e.role {' '.join(f"WHEN '{k}' THEN {v}" for k, v in ROLE_CODES.items())} ELSE 0 END AS role
               FROM _ev e
               JOIN _thr t ON e.pid IS NOT DISTINCT FROM t.pid AND e.tid IS NOT DISTINCT FROM t.tid
               WHERE e.ph IN ('X', 'B', 'b', 'S') AND e.problem IS NULL"""
        ).fetchnumpy()
        r = np.asarray(d["r"], dtype=np.int64)
        thr = np.asarray(d["thr"], dtype=np.int64)
        ts = np.asarray(d["ts_ns"], dtype=np.int64)
        xdur = np.asarray(d["dur_ns"], dtype=np.int64)
        is_x = np.asarray(d["is_x"], dtype=bool)
        is_async = np.asarray(d["is_async"], dtype=bool)
        role = np.asarray(d["role"], dtype=np.int8)
        # B and async durations come from matching
        sd = np.where(is_x, xdur, dur[r])
        unknown = sd == np.iinfo(np.int64).min
        keep = ~unknown & (~is_async | async_op[r])
        r, thr, ts, sd, role = r[keep], thr[keep], ts[keep], sd[keep], role[keep]
        is_op = (role == ROLE_CODES["op"]) | async_op[r]
        order = np.lexsort((r, -sd, ts, thr))
        self.n_threads = con.execute("SELECT count(*) FROM _thr").fetchall()[0][0]
        return {
            "r": r[order], "thr": thr[order], "ts": ts[order], "dur": sd[order],
            "end": (ts + sd)[order], "is_op": is_op[order], "role": role[order],
        }

    def _bind_flows(self, spans) -> np.ndarray:
        """bound[r] = rowid of the slice each flow event binds to (-1: none)."""
        bound = np.full(self.m, -1, dtype=np.int64)
        d = self.con.execute(
            """SELECT e.r, coalesce(t.code, -1) AS thr, e.ts_ns, e.ph = 'f' AND e.bp IS DISTINCT FROM 'e' AS nxt
               FROM _ev e LEFT JOIN _thr t ON e.pid IS NOT DISTINCT FROM t.pid AND e.tid IS NOT DISTINCT FROM t.tid
               WHERE e.ph IN ('s', 't', 'f') AND e.problem IS NULL"""
        ).fetchnumpy()
        if len(d["r"]) == 0:
            return bound
        fr = np.asarray(d["r"], dtype=np.int64)
        fthr = np.asarray(d["thr"], dtype=np.int64)
        fts = np.asarray(d["ts_ns"], dtype=np.int64)
        next_slice = np.asarray(d["nxt"], dtype=bool)
        sthr, sts, send, sr = spans["thr"], spans["ts"], spans["end"], spans["r"]
        if len(sr) == 0:
            return bound
        bounds = np.searchsorted(sthr, np.arange(self.n_threads + 1))
        for code in np.unique(fthr):
            if code < 0:
                continue
            a, b = bounds[code], bounds[code + 1]
            if a == b:
                continue
            sel = np.nonzero(fthr == code)[0]
            q = fts[sel]
            seg_ts, seg_end = sts[a:b], send[a:b]
            # enclosing slice: the last one starting at or before q that is still open at q
            # (sorted longer first, so among equal starts the last is the innermost)
            idx = np.searchsorted(seg_ts, q, side="right") - 1
            nxt = next_slice[sel]
            ok = (idx >= 0) & ~nxt
            ok[ok] = seg_end[idx[ok]] >= q[ok]
            bound[fr[sel[ok]]] = sr[a + idx[ok]]
            for k in np.nonzero(~ok)[0].tolist():
                qq = int(q[k])
                if nxt[k]:
                    j = int(np.searchsorted(seg_ts, qq, side="left"))
                    if j < len(seg_ts):
                        bound[fr[sel[k]]] = sr[a + j]
                    continue
                i = int(idx[k]) - 1
                steps = 0
                while i >= 0 and steps < 64:
                    if seg_end[i] >= qq:
                        bound[fr[sel[k]]] = sr[a + i]
                        break
                    i -= 1
                    steps += 1
        return bound

    def _gpu_links(self, spans, bound):
        """launch_r[g], op_r[g] for device events; launch_gpu[r] = device ns per launch."""
        m = self.m
        launch_r = np.full(m, -1, dtype=np.int64)
        op_r = np.full(m, -1, dtype=np.int64)
        launch_gpu = np.zeros(m, dtype=np.int64)
        role, sr, sdur = spans["role"], spans["r"], spans["dur"]
        gpu = np.isin(role, (ROLE_CODES["kernel"], ROLE_CODES["memcpy"], ROLE_CODES["memset"]))
        if not gpu.any():
            return launch_r, op_r, launch_gpu
        g_r = sr[gpu]
        g_dur = sdur[gpu]
        corr = self._col("SELECT coalesce(correlation, -1) FROM _ev ORDER BY r", np.int64)
        ext = self._col("SELECT coalesce(external_id, -1) FROM _ev ORDER BY r", np.int64)
        # 1. correlation id -> host launch call (the first in file order)
        l_r = np.sort(sr[role == ROLE_CODES["launch"]])
        found, rows = _first_with_id(l_r, corr[l_r], corr[g_r])
        launch_r[g_r[found]] = rows
        # 2. flows: the flow ending on the device event starts on a launch call
        missing = g_r[launch_r[g_r] < 0]
        if len(missing) and (bound >= 0).any():
            rows = self.con.execute(
                """SELECT r, ph, cat, id FROM _ev WHERE ph IN ('s', 'f') AND problem IS NULL ORDER BY r"""
            ).fetchall()
            starts = {}
            for r, ph, cat, id_ in rows:
                if ph == "s" and bound[r] >= 0:
                    starts.setdefault((cat, id_), bound[r])
            miss = set(missing.tolist())
            is_launch = np.zeros(m, dtype=bool)
            is_launch[sr[role == ROLE_CODES["launch"]]] = True
            for r, ph, cat, id_ in rows:
                if ph == "f" and bound[r] in miss:
                    s = starts.get((cat, id_))
                    if s is not None and is_launch[s]:
                        launch_r[bound[r]] = s
        # 3. External id -> the operator with that id (when no launch call is known)
        missing = g_r[launch_r[g_r] < 0]
        if len(missing):
            o_r = np.sort(sr[role == ROLE_CODES["op"]])
            found, rows = _first_with_id(o_r, ext[o_r], ext[missing])
            op_r[missing[found]] = rows
        has_launch = launch_r[g_r] >= 0
        np.add.at(launch_gpu, launch_r[g_r[has_launch]], g_dur[has_launch])
        self._gpu_r, self._gpu_dur = g_r, g_dur
        return launch_r, op_r, launch_gpu

    def _sweep(self, spans, launch_gpu, launch_r, op_r):
        """Nesting per thread: depth, parent operator, self time, device time.

        The rule is the stack sweep of the corpus README: spans sorted by thread, start,
        longer first, file order; an operator's parent is the innermost operator still open
        at its start (``end > start``); the parent of any other span is found the same way
        (launch calls get their operator from it).  Vectorised: a span's parent is the first
        of (the operator before it in that order, its parent, ...) that is still open; the
        pointers are walked up all at once until none moves (as many rounds as the nesting
        is deep), which gives exactly the stack's answer, improper nesting included.
        """
        m = self.m
        parent = np.full(m, -1, dtype=np.int64)
        depth = np.full(m, -1, dtype=np.int32)
        child = np.zeros(m, dtype=np.int64)
        gpu_self = np.zeros(m, dtype=np.int64)
        thr, is_op = spans["thr"], spans["is_op"]
        # only threads that have operators are swept (GPU streams are not)
        op_threads = np.unique(thr[is_op])
        sel = np.isin(thr, op_threads)
        t_thr = thr[sel]
        t_ts = spans["ts"][sel]
        t_end = spans["end"][sel]
        t_dur = spans["dur"][sel]
        t_op = is_op[sel]
        t_r = spans["r"][sel]
        n = len(t_r)
        improper = 0
        if n:
            pos = np.arange(n, dtype=np.int64)
            last_op = np.maximum.accumulate(np.where(t_op, pos, -1))
            prev = np.empty(n, dtype=np.int64)
            prev[0] = -1
            prev[1:] = last_op[:-1]
            ok = prev >= 0
            ok[ok] = t_thr[prev[ok]] == t_thr[ok]
            par = np.where(ok, prev, -1)
            while True:
                has = np.nonzero(par >= 0)[0]
                closed = has[t_end[par[has]] <= t_ts[has]]
                if not len(closed):
                    break
                par[closed] = par[par[closed]]
            dep = np.zeros(n, dtype=np.int32)
            has = np.nonzero(par >= 0)[0]
            while len(has):
                new = dep[par[has]] + 1
                moved = new != dep[has]
                if not moved.any():
                    break
                dep[has] = new
            ops = np.nonzero(t_op & (par >= 0))[0]
            np.add.at(child, t_r[par[ops]], t_dur[ops])
            improper = int((t_end[ops] > t_end[par[ops]]).sum())
            lg = launch_gpu[t_r]
            calls = np.nonzero(~t_op & (par >= 0) & (lg > 0))[0]
            np.add.at(gpu_self, t_r[par[calls]], lg[calls])
            parent[t_r] = np.where(par >= 0, t_r[np.maximum(par, 0)], -1)
            depth[t_r] = dep
        self.stats.improper_nesting = improper
        # device events: their operator is the launch call's parent (unless External id found one)
        if hasattr(self, "_gpu_r"):
            g = self._gpu_r
            lr = launch_r[g]
            via_launch = lr >= 0
            op_r[g[via_launch]] = parent[lr[via_launch]]
            ext_only = ~via_launch & (op_r[g] >= 0)
            np.add.at(gpu_self, op_r[g[ext_only]], self._gpu_dur[ext_only])
        # inclusive device time: children into parents, deepest first
        all_r = spans["r"]
        op_rows = all_r[spans["is_op"]]
        gpu_total = gpu_self.copy()
        if len(op_rows):
            d = depth[op_rows]
            for level in range(int(d.max()), 0, -1):
                rows = op_rows[d == level]
                rows = rows[parent[rows] >= 0]
                np.add.at(gpu_total, parent[rows], gpu_total[rows])
        self_ns = np.zeros(m, dtype=np.int64)
        dur_all = np.zeros(m, dtype=np.int64)
        dur_all[all_r] = spans["dur"]
        self_ns[op_rows] = dur_all[op_rows] - child[op_rows]
        self._op_rows = op_rows
        return parent, depth, self_ns, gpu_self, gpu_total


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
