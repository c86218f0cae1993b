"""Where the time went, per framework operator: trace-event files (Kineto, MXNet, any
Chrome JSON trace, CNTK detail files) and, as the ``optable`` family, the aggregate tables
the frameworks print (MXNet ``dumps()``, PyTorch ``key_averages().table()``, CNTK summary).

``summary(con, ["op"])`` returns one row per operator name: count, inclusive total, self
time (duration minus direct child operators on the same thread), average, min, max, share
of all self time, and the device time of the kernels, copies and memsets each operator
launched (``gpu_self_us``: launched by the operator itself; ``gpu_total_us``: by it or any
operator nested in it).  Other keys: ``category``, ``thread``, ``process``, ``shape``
(Kineto ``Input Dims``), ``dtype`` (``Input type``), ``source``, ``run``; ``step`` gives
one row per PyTorch ``ProfilerStep#N`` with the step's wall time as ``total_us``.
"""
from __future__ import annotations

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
COMPACT = ["category", "count", "total_us", "self_us", "avg_us", "share_pct", "gpu_total_us"]
STAT_COLUMNS = ["count", "total_us", "self_us", "avg_us", "min_us", "max_us", "share_pct", "cum_share_pct",
                "gpu_self_us", "gpu_total_us"]


def has_data(con) -> bool:
    return con.execute("SELECT EXISTS (SELECT 1 FROM trace_events WHERE role = 'op')").fetchall()[0][0]


def _error(msg: str):
    from . import QueryError

    return QueryError(msg)


def _where(run, source_ids, prefix: str = "") -> tuple[list[str], list]:
    where, params = [], []
    if run is not None:
        where.append(f"{prefix}run_label = ?")
        params.append(run)
    if source_ids:
        where.append(f"{prefix}source_id IN ({', '.join(str(int(s)) for s in source_ids)})")
    return where, params


def summary(con, by: list[str], run: str | None = None, top: int | None = None,
            source_ids: list[int] | None = None, **options):
    bad = [k for k in by if k not in KEYS]
    if bad:
        raise _error(f"unknown --by key(s) for traces: {', '.join(bad)}; choose from {', '.join(KEYS)}")
    if "step" in by:
        return _by_step(con, by, run, top, source_ids)
    where, params = _where(run, source_ids)
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


def _by_step(con, by, run, top, source_ids):
    """One row per profiler step: its wall time, and what the operators inside it did."""
    where, params = _where(run, source_ids, "o.")
    others = [k for k in by if k != "step"]
    keysel = "".join(f", {KEYS[k].replace('run_label', 'o.run_label')} AS {k}" for k in others)
    group = ", ".join(["step"] + others)
    sql = f"""
    WITH o AS (SELECT * FROM trace_ops WHERE step IS NOT NULL),
    s AS (SELECT source_id, step, count(*) AS n_steps, sum(dur_ns) AS wall_ns, min(ts_ns) AS first_ts
          FROM trace_steps GROUP BY ALL),
    g AS (
        SELECT o.step{keysel}, any_value(o.source_id) AS source_id,
               count(*) FILTER (WHERE o.name <> o.step) AS count,
               sum(o.self_ns) AS self_ns,
               sum(o.gpu_self_ns) AS gpu_self_ns,
               min(o.dur_ns) FILTER (WHERE o.name <> o.step) AS min_ns,
               max(o.dur_ns) FILTER (WHERE o.name <> o.step) AS max_ns,
               sum(o.dur_ns) FILTER (WHERE o.name <> o.step) AS ops_ns
        FROM o {'WHERE ' + ' AND '.join(where) if where else ''}
        GROUP BY {group}
    ), w AS (
        SELECT g.*, (SELECT sum(wall_ns) FROM s WHERE s.step = g.step) AS total_ns,
               (SELECT min(first_ts) FROM s WHERE s.step = g.step) AS first_ts
        FROM g
    )
    SELECT *,
           total_ns / 1000.0 AS total_us, self_ns / 1000.0 AS self_us,
           ops_ns / 1000.0 / nullif(count, 0) AS avg_us, min_ns / 1000.0 AS min_us, max_ns / 1000.0 AS max_us,
           CASE WHEN sum(total_ns) OVER () > 0 THEN 100.0 * total_ns / sum(total_ns) OVER () ELSE 0 END AS share_pct,
           CASE WHEN sum(total_ns) OVER () > 0 THEN 100.0 * sum(total_ns) OVER (
                ORDER BY first_ts, {group} ROWS UNBOUNDED PRECEDING) / sum(total_ns) OVER () ELSE 0 END
                AS cum_share_pct,
           gpu_self_ns / 1000.0 AS gpu_self_us, gpu_self_ns / 1000.0 AS gpu_total_us
    FROM w
    ORDER BY first_ts, {group}
    {f'LIMIT {int(top)}' if top else ''}
    """
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    order = ["step"] + others + STAT_COLUMNS
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
        where, params = ["NOT t.is_counter"], []
        if run is not None:
            where.append("s.run_label = ?")
            params.append(run)
        if source_ids:
            where.append(f"t.source_id IN ({', '.join(str(int(x)) for x in source_ids)})")
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
