"""Where did the time go, per oneDNN primitive: create and exec joined per group.

``summary(con, by=["kind"])`` returns column names and rows, sorted by exec time.
Groups are any of :data:`KEYS`, like verbose_converter's ``-k``.
"""
from __future__ import annotations

FAMILY = "onednn"
DEFAULT_BY = "kind"

KEYS = {
    "kind": "kind",
    "impl": "impl",
    "prop": "prop_kind",
    "shape": "problem",
    "engine": "engine",
    "alg": "alg",
    "dtype": "dtype",
    "mds": "mds",
    "attrs": "attrs",
    "aux": "aux",
    "source": "source_name",
    "run": "run_label",
}

#: columns of the default table (``--wide`` shows all)
COMPACT = ["exec_count", "exec_ms", "exec_avg_ms", "exec_median_ms", "share_pct", "cum_share_pct",
           "create_count", "create_ms", "cache_hits", "cache_misses"]

#: every column that identifies one primitive, for reproducers
PRIMITIVE_KEYS = ["engine", "kind", "impl", "prop", "mds", "attrs", "aux", "shape"]


def has_data(con) -> bool:
    return con.execute("SELECT EXISTS (SELECT 1 FROM onednn_events)").fetchone()[0]


def summary(con, by: list[str], run: str | None = None, top: int | None = None,
            source_ids: list[int] | None = None, **options):
    cols = [KEYS[k] for k in by]
    where = ["component = 'primitive'", "op_class IN ('exec','create','create_nested','check','dispatch')"]
    params: list = []
    if run is not None:
        where.append("run_label = ?")
        params.append(run)
    if source_ids:
        where.append(f"source_id IN ({', '.join(str(int(s)) for s in source_ids)})")
    keysel = ", ".join(f"coalesce({c}, '') AS {k}" for c, k in zip(cols, by))
    group = ", ".join(by)
    sql = f"""
    WITH g AS (
        SELECT {keysel},
            count(*) FILTER (WHERE op_class = 'exec' AND time_ms IS NOT NULL) AS exec_count,
            coalesce(fsum(time_ms) FILTER (WHERE op_class = 'exec'), 0) AS exec_ms,
            avg(time_ms) FILTER (WHERE op_class = 'exec') AS exec_avg_ms,
            min(time_ms) FILTER (WHERE op_class = 'exec') AS exec_min_ms,
            max(time_ms) FILTER (WHERE op_class = 'exec') AS exec_max_ms,
            median(time_ms) FILTER (WHERE op_class = 'exec') AS exec_median_ms,
            count(*) FILTER (WHERE op_class = 'exec' AND time_ms IS NULL) AS exec_untimed,
            count(*) FILTER (WHERE op_class = 'create' AND time_ms IS NOT NULL) AS create_count,
            coalesce(fsum(time_ms) FILTER (WHERE op_class = 'create'), 0) AS create_ms,
            count(*) FILTER (WHERE op_class = 'create' AND operation LIKE 'create:%cache_hit') AS cache_hits,
            count(*) FILTER (WHERE op_class = 'create' AND operation = 'create:cache_miss') AS cache_misses,
            count(*) FILTER (WHERE op_class = 'create_nested' AND time_ms IS NOT NULL) AS create_nested_count,
            coalesce(fsum(time_ms) FILTER (WHERE op_class = 'create_nested'), 0) AS create_nested_ms,
            count(*) FILTER (WHERE op_class = 'check') AS check_count,
            count(*) FILTER (WHERE op_class = 'dispatch') AS dispatch_count
        FROM onednn_primitives
        WHERE {' AND '.join(where)}
        GROUP BY {group}
    )
    SELECT *,
        CASE WHEN sum(exec_ms) OVER () > 0 THEN 100.0 * exec_ms / sum(exec_ms) OVER () ELSE 0 END AS share_pct,
        CASE WHEN sum(exec_ms) OVER () > 0 THEN 100.0 * sum(exec_ms) OVER (
            ORDER BY exec_ms DESC, create_ms DESC, {group} ROWS UNBOUNDED PRECEDING) / sum(exec_ms) OVER ()
            ELSE 0 END AS cum_share_pct
    FROM g
    ORDER BY exec_ms DESC, create_ms DESC, {group}
    {f'LIMIT {int(top)}' if top else ''}
    """
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    order = by + [
        "exec_count", "exec_ms", "exec_avg_ms", "exec_median_ms", "exec_min_ms", "exec_max_ms",
        "share_pct", "cum_share_pct", "create_count", "create_ms", "cache_hits", "cache_misses",
        "exec_untimed", "create_nested_count", "create_nested_ms", "check_count", "dispatch_count",
    ]
    idx = [names.index(c) for c in order]
    return order, [tuple(r[i] for i in idx) for r in rows]
