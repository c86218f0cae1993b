"""Where the time went, per framework operator: trace-event files (Kineto, MXNet, any
Chrome JSON trace, CNTK detail files) and, as the ``optable`` family, the aggregate tables
the frameworks print (MXNet ``dumps()``, PyTorch ``key_averages().table()``, CNTK summary).

``summary(con, ["op"])`` returns one row per operator name: count, inclusive total, self
time (duration minus direct child operators on the same thread), average, min, max, share
of all self time, and the device time of the kernels, copies and memsets each operator
launched (``gpu_self_us``: launched by the operator itself; ``gpu_total_us``: by it or any
operator nested in it).  Other keys: ``category``, ``thread``, ``process``, ``shape``
(Kineto ``Input Dims``), ``dtype`` (``Input type``), ``source``, ``run``; ``step`` alone (or
with ``source``/``run``) gives one row per PyTorch ``ProfilerStep#N``: wall time, CPU operator
time, GPU kernel time, GPU busy time and GPU idle share; with operator keys (``step,op``) it
is one more grouping key of the operator summary.
"""
from __future__ import annotations

from .filters import source_filter

FAMILY = "trace"
DEFAULT_BY = "op"

#: --by key -> SQL expression over the trace_ops view
KEYS = {
    "op": "name",
    "category": "coalesce(cat, '')",
    "thread": "pid || '/' || tid || coalesce(' (' || thread_name || ')', '')",
    "process": "pid || coalesce(' (' || process_name || ')', '')",
    "shape": "coalesce(input_dims, '')",
    "dtype": "coalesce(input_types, '')",
    "step": "coalesce(step, '')",
    "source": "source_name",
    "run": "coalesce(run_label, '')",
}

#: columns of the default (not --wide) table output
STAT_COLUMNS = ["count", "total_us", "self_us", "avg_us", "min_us", "max_us", "share_pct", "cum_share_pct",
                "gpu_self_us", "gpu_total_us"]


def has_data(con) -> bool:
    return con.execute("SELECT EXISTS (SELECT 1 FROM trace_events WHERE role = 'op')").fetchall()[0][0]


def _error(msg: str):
    from .errors import QueryError

    return QueryError(msg)


def summary(con, by: list[str], run: str | None = None, top: int | None = None,
            source_ids: list[int] | None = None, **options):
    bad = [k for k in by if k not in KEYS]
    if bad:
        raise _error(f"unknown --by key(s) for traces: {', '.join(bad)}; choose from {', '.join(KEYS)}")
    if "step" in by and all(k in STEP_KEYS for k in by):
        return _by_step(con, by, run, top, source_ids)
    where, params = source_filter(run, source_ids)
    keysel = ", ".join(f"{KEYS[k]} AS {k}" for k in by)
    group = ", ".join(by)
    extra = ", string_agg(DISTINCT cat, ',' ORDER BY cat) AS category" if "op" in by and "category" not in by else ""
    sql = f"""
    WITH g AS (
        SELECT {keysel},
               count(*) AS count,
               sum(dur_ns) AS total_ns, sum(self_ns) AS self_ns,
               min(dur_ns) AS min_ns, max(dur_ns) AS max_ns,
               sum(gpu_self_ns) AS gpu_self_ns, sum(gpu_total_ns) AS gpu_total_ns{extra}
        FROM trace_ops
        {'WHERE ' + ' AND '.join(where) if where else ''}
        GROUP BY {group}
    )
    SELECT *,
           total_ns / 1000.0 AS total_us, self_ns / 1000.0 AS self_us,
           total_ns / 1000.0 / count AS avg_us, min_ns / 1000.0 AS min_us, max_ns / 1000.0 AS max_us,
           CASE WHEN sum(self_ns) OVER () > 0 THEN 100.0 * self_ns / sum(self_ns) OVER () ELSE 0 END AS share_pct,
           CASE WHEN sum(self_ns) OVER () > 0 THEN 100.0 * sum(self_ns) OVER (
                ORDER BY self_ns DESC, total_ns DESC, {group} ROWS UNBOUNDED PRECEDING) / sum(self_ns) OVER ()
                ELSE 0 END AS cum_share_pct,
           gpu_self_ns / 1000.0 AS gpu_self_us, gpu_total_ns / 1000.0 AS gpu_total_us
    FROM g
    ORDER BY self_ns DESC, total_ns DESC, {group}
    {f'LIMIT {int(top)}' if top else ''}
    """
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    order = list(by) + (["category"] if extra else []) + STAT_COLUMNS
    idx = [names.index(c) for c in order]
    return order, [tuple(r[i] for i in idx) for r in rows]


#: keys that may go with ``step`` in the per-step table; any other key makes ``step`` an
#: ordinary grouping key of the operator summary
STEP_KEYS = ("step", "source", "run")
STEP_COLUMNS = ["steps", "wall_us", "ops", "cpu_op_us", "gpu_kernels", "gpu_kernel_us", "gpu_busy_us",
                "gpu_idle_pct"]
#: columns of the default (not --wide) table output
COMPACT = ["category", "count", "total_us", "self_us", "avg_us", "share_pct", "gpu_total_us"] + STEP_COLUMNS


def _by_step(con, by, run, top, source_ids):
    """One row per profiler step (``ProfilerStep#N``, summed over files and occurrences):
    its wall time, the CPU time of the operators inside it (their self time, the step's own
    annotation left out), the device time of the kernels launched during it (by the launch
    call's time; a kernel without a launch record by its own start), the time the GPU was
    busy with any launched work (kernels, copies, sets; overlaps counted once) and the share
    of the step's wall time the GPU was idle."""
    where, params = source_filter(run, source_ids, "src.")
    others = [k for k in by if k != "step"]
    other_sql = {"source": "src.name", "run": "coalesce(src.run_label, '')"}
    keysel = "".join(f", {other_sql[k]} AS {k}" for k in others)
    group = ", ".join(["step"] + others)
    sql = f"""
    WITH st AS (
        SELECT t.source_id, t.pid, t.step, t.ts_ns, t.end_ns, t.dur_ns{keysel}
        FROM trace_steps t JOIN sources src USING (source_id)
        {'WHERE ' + ' AND '.join(where) if where else ''}
    ), ops AS (
        SELECT source_id, step, count(*) AS ops, sum(self_ns) AS cpu_ns
        FROM trace_ops WHERE step IS NOT NULL AND name <> step GROUP BY ALL
    ), dev AS (
        SELECT g.source_id, g.kind, g.ts_ns, g.end_ns, g.dur_ns, coalesce(l.ts_ns, g.ts_ns) AS at, l.pid AS lpid
        FROM trace_gpu g LEFT JOIN trace_events l ON l.source_id = g.source_id AND l.event_no = g.launch_event
        WHERE g.dur_ns IS NOT NULL
    ), ds AS (
        SELECT st.source_id, st.step, d.kind, d.ts_ns, d.end_ns, d.dur_ns,
               max(d.end_ns) OVER (PARTITION BY st.source_id, st.step ORDER BY d.ts_ns, d.end_ns
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
        FROM dev d JOIN st ON d.source_id = st.source_id AND d.at >= st.ts_ns AND d.at < st.end_ns
                          AND (d.lpid IS NULL OR d.lpid = st.pid)
    ), islands AS (
        SELECT *, sum(CASE WHEN ts_ns > prev_end THEN 1 ELSE 0 END) OVER (
                      PARTITION BY source_id, step ORDER BY ts_ns, end_ns ROWS UNBOUNDED PRECEDING) AS island
        FROM ds
    ), busy AS (
        SELECT source_id, step, sum(hi - lo) AS busy_ns FROM (
            SELECT source_id, step, island, min(ts_ns) AS lo, max(end_ns) AS hi FROM islands GROUP BY ALL)
        GROUP BY ALL
    ), kern AS (
        SELECT source_id, step, count(*) AS n, sum(dur_ns) AS kernel_ns FROM ds WHERE kind = 'kernel' GROUP BY ALL
    ), per_file AS (
        SELECT st.source_id, st.step{''.join(f', any_value(st.{k}) AS {k}' for k in others)},
               count(*) AS steps, sum(st.dur_ns) AS wall_ns, min(st.ts_ns) AS first_ts
        FROM st GROUP BY st.source_id, st.step
    ), g AS (
        SELECT p.step{''.join(f', p.{k}' for k in others)}, sum(p.steps) AS steps, sum(p.wall_ns) AS wall_ns,
               min(p.first_ts) AS first_ts, coalesce(sum(o.ops), 0) AS ops, coalesce(sum(o.cpu_ns), 0) AS cpu_ns,
               coalesce(sum(k.n), 0) AS gpu_kernels, coalesce(sum(k.kernel_ns), 0) AS kernel_ns,
               coalesce(sum(b.busy_ns), 0) AS busy_ns
        FROM per_file p
        LEFT JOIN ops o ON o.source_id = p.source_id AND o.step = p.step
        LEFT JOIN kern k ON k.source_id = p.source_id AND k.step = p.step
        LEFT JOIN busy b ON b.source_id = p.source_id AND b.step = p.step
        GROUP BY {', '.join('p.' + k for k in ['step'] + others)}
    )
    SELECT *, wall_ns / 1000.0 AS wall_us, cpu_ns / 1000.0 AS cpu_op_us, kernel_ns / 1000.0 AS gpu_kernel_us,
           busy_ns / 1000.0 AS gpu_busy_us,
           CASE WHEN wall_ns > 0 THEN greatest(0.0, 100.0 * (wall_ns - busy_ns) / wall_ns) END AS gpu_idle_pct
    FROM g
    ORDER BY first_ts, {group}
    {f'LIMIT {int(top)}' if top else ''}
    """
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    order = ["step"] + others + STEP_COLUMNS
    idx = [names.index(c) for c in order]
    return order, [tuple(r[i] for i in idx) for r in rows]


# =========================================================================== tables
class _TableFamily:
    """The aggregate tables the frameworks print (``profiler_tables``), as a summary family.

    Counter rows (memory, MXNet C API counters) are left out.  ``total_us`` is the table's
    inclusive time (MXNet Time, PyTorch CPU total, CNTK Total); ``self_us`` is PyTorch's
    Self CPU (empty for MXNet and CNTK, which do not print one).
    """

    FAMILY = "optable"
    DEFAULT_BY = "op"
    COMPACT = ["count", "total_us", "self_us", "avg_us", "share_pct", "gpu_total_us"]
    KEYS = {
        "op": "t.name",
        "section": "coalesce(t.section, '')",
        "tool": "t.tool",
        "rank": "coalesce(CAST(t.rank AS VARCHAR), '')",
        "source": "s.name",
        "run": "coalesce(s.run_label, '')",
    }

    def has_data(self, con) -> bool:
        return con.execute("SELECT EXISTS (SELECT 1 FROM profiler_tables WHERE NOT is_counter)").fetchall()[0][0]

    def summary(self, con, by: list[str], run: str | None = None, top: int | None = None,
                source_ids: list[int] | None = None, **options):
        bad = [k for k in by if k not in self.KEYS]
        if bad:
            raise _error(f"unknown --by key(s) for framework tables: {', '.join(bad)}; "
                         f"choose from {', '.join(self.KEYS)}")
        where, params = source_filter(run, source_ids, "s.")
        where.insert(0, "NOT t.is_counter")
        keysel = ", ".join(f"{self.KEYS[k]} AS {k}" for k in by)
        group = ", ".join(by)
        sql = f"""
        WITH g AS (
            SELECT {keysel}, sum(t.calls) AS count, sum(t.total_ns) AS total_ns, sum(t.self_ns) AS self_ns,
                   min(t.min_ns) AS min_ns, max(t.max_ns) AS max_ns,
                   sum(t.gpu_self_ns) AS gpu_self_ns, sum(t.gpu_total_ns) AS gpu_total_ns
            FROM profiler_tables t JOIN sources s USING (source_id)
            WHERE {' AND '.join(where)}
            GROUP BY {group}
        )
        SELECT *, total_ns / 1000.0 AS total_us, self_ns / 1000.0 AS self_us,
               total_ns / 1000.0 / nullif(count, 0) AS avg_us, min_ns / 1000.0 AS min_us, max_ns / 1000.0 AS max_us,
               CASE WHEN sum(coalesce(self_ns, total_ns)) OVER () > 0
                    THEN 100.0 * coalesce(self_ns, total_ns) / sum(coalesce(self_ns, total_ns)) OVER () ELSE 0 END
                    AS share_pct,
               CASE WHEN sum(coalesce(self_ns, total_ns)) OVER () > 0 THEN 100.0 * sum(coalesce(self_ns, total_ns))
                    OVER (ORDER BY coalesce(self_ns, total_ns) DESC NULLS LAST, {group} ROWS UNBOUNDED PRECEDING)
                    / sum(coalesce(self_ns, total_ns)) OVER () ELSE 0 END AS cum_share_pct,
               gpu_self_ns / 1000.0 AS gpu_self_us, gpu_total_ns / 1000.0 AS gpu_total_us
        FROM g
        ORDER BY coalesce(self_ns, total_ns) DESC NULLS LAST, total_ns DESC NULLS LAST, {group}
        {f'LIMIT {int(top)}' if top else ''}
        """
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
        order = list(by) + STAT_COLUMNS
        idx = [names.index(c) for c in order]
        return order, [tuple(r[i] for i in idx) for r in rows]


TABLES = _TableFamily()
