"""Where did the time go, per oneDNN primitive: create and exec joined per group.

``summary(con, by=["kind"])`` returns column names and rows, sorted by exec time.
Groups are any of :data:`KEYS`, like verbose_converter's ``-k``.
"""
from __future__ import annotations

from .filters import source_filter

FAMILY = "onednn"
DEFAULT_BY = "kind"

#: SQL for each key over shapes ``s`` and sources ``src``
KEY_SQL = {
    "kind": "s.kind", "impl": "s.impl", "prop": "s.prop_kind", "shape": "s.problem", "engine": "s.engine",
    "alg": "s.alg", "dtype": "s.dtype", "mds": "s.mds", "attrs": "s.attrs", "aux": "s.aux",
    "source": "src.name", "run": "src.run_label",
}

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
COMPACT = ["exec_count", "exec_ms", "exec_avg_ms", "share_pct", "cum_share_pct",
           "create_count", "create_ms", "cache_hits", "cache_misses"]

#: every column that identifies one primitive, for reproducers
PRIMITIVE_KEYS = ["engine", "kind", "impl", "prop", "mds", "attrs", "aux", "shape"]


def has_data(con) -> bool:
    return con.execute("SELECT EXISTS (SELECT 1 FROM onednn_events)").fetchone()[0]


def _id_list(ids) -> str:
    return ", ".join(str(int(i)) for i in ids) or "NULL"


def _per_shape_sql(con, chosen: list[int]) -> str:
    """Counts and exact totals per file and shape: from ``onednn_shape_totals`` (written at
    ingest), and from the events for files without totals (databases made before it).

    The files without totals are listed as constants, so that the event scan reads only their
    row groups (none in a current database): the cost does not grow with the events stored."""
    has_totals = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'onednn_shape_totals' "
                             "AND database_name = current_database()").fetchall()[0][0]
    with_totals = set()
    if has_totals:
        with_totals = {r[0] for r in con.execute(
            f"SELECT DISTINCT source_id FROM onednn_shape_totals WHERE source_id IN ({_id_list(chosen)})").fetchall()}
    without = [i for i in chosen if i not in with_totals]
    parts = []
    if with_totals:
        parts.append("SELECT source_id, shape_id, n, n_timed, total_ms AS total, min_ms AS lo, max_ms AS hi "
                     f"FROM onednn_shape_totals WHERE source_id IN ({_id_list(sorted(with_totals))})")
    if without or not parts:
        parts.append("SELECT source_id, shape_id, count(*) AS n, count(time_ms) AS n_timed, "
                     "sum(time_ms::DECIMAL(38,18)) AS total, min(time_ms) AS lo, max(time_ms) AS hi "
                     f"FROM onednn_events WHERE source_id IN ({_id_list(without)}) GROUP BY ALL")
    return " UNION ALL ".join(parts)


def summary(con, by: list[str], run: str | None = None, top: int | None = None,
            source_ids: list[int] | None = None, wide: bool = True, **options):
    """``wide=False`` leaves the exact median (the one statistic that needs every event) out."""
    keysel = ", ".join(f"coalesce({KEY_SQL[k]}, '') AS {k}" for k in by)
    group = ", ".join(by)
    src_filter, params = source_filter(run, source_ids)
    chosen = [r[0] for r in con.execute(
        f"SELECT source_id FROM sources {'WHERE ' + ' AND '.join(src_filter) if src_filter else ''}", params
    ).fetchall()]
    sources_sql = _id_list(chosen)
    shape_filter = (
        "coalesce(nullif(s.component, ''), 'primitive') = 'primitive' "
        "AND s.op_class IN ('exec','create','create_nested','check','dispatch')"
    )
    # The (millions of) events are aggregated per shape at ingest; here the (hundreds of)
    # shapes per group.  Only the median needs the events of each group again.
    median = (f"""SELECT {keysel}, median(e.time_ms) AS exec_median_ms
        FROM onednn_events e JOIN onednn_shapes s USING (shape_id) JOIN sources src USING (source_id)
        WHERE e.source_id IN ({sources_sql}) AND s.op_class = 'exec' AND {shape_filter}
        GROUP BY {group}""" if wide else f"SELECT {keysel}, NULL::DOUBLE AS exec_median_ms FROM "
              f"onednn_shapes s, sources src WHERE false")
    sql = f"""
    WITH per_shape AS ({_per_shape_sql(con, chosen)}), g AS (
        SELECT {keysel},
            coalesce(sum(n_timed) FILTER (WHERE s.op_class = 'exec'), 0) AS exec_count,
            coalesce(sum(total) FILTER (WHERE s.op_class = 'exec'), 0) AS exec_ms,
            min(lo) FILTER (WHERE s.op_class = 'exec') AS exec_min_ms,
            max(hi) FILTER (WHERE s.op_class = 'exec') AS exec_max_ms,
            coalesce(sum(n - n_timed) FILTER (WHERE s.op_class = 'exec'), 0) AS exec_untimed,
            coalesce(sum(n_timed) FILTER (WHERE s.op_class = 'create'), 0) AS create_count,
            coalesce(sum(total) FILTER (WHERE s.op_class = 'create'), 0) AS create_ms,
            coalesce(sum(n) FILTER (WHERE s.op_class = 'create' AND s.operation LIKE 'create:%cache_hit'), 0) AS cache_hits,
            coalesce(sum(n) FILTER (WHERE s.op_class = 'create' AND s.operation = 'create:cache_miss'), 0) AS cache_misses,
            coalesce(sum(n_timed) FILTER (WHERE s.op_class = 'create_nested'), 0) AS create_nested_count,
            coalesce(sum(total) FILTER (WHERE s.op_class = 'create_nested'), 0) AS create_nested_ms,
            coalesce(sum(n) FILTER (WHERE s.op_class = 'check'), 0) AS check_count,
            coalesce(sum(n) FILTER (WHERE s.op_class = 'dispatch'), 0) AS dispatch_count
        FROM per_shape p JOIN onednn_shapes s USING (shape_id) JOIN sources src USING (source_id)
        WHERE {shape_filter}
        GROUP BY {group}
    ), med AS ({median})
    SELECT g.* REPLACE (exec_ms::DOUBLE AS exec_ms, create_ms::DOUBLE AS create_ms,
                        create_nested_ms::DOUBLE AS create_nested_ms), med.exec_median_ms,
        CASE WHEN exec_count > 0 THEN (exec_ms / exec_count)::DOUBLE END AS exec_avg_ms,
        CASE WHEN sum(g.exec_ms) OVER () > 0 THEN (100 * g.exec_ms / sum(g.exec_ms) OVER ())::DOUBLE ELSE 0 END
            AS share_pct,
        CASE WHEN sum(g.exec_ms) OVER () > 0 THEN (100 * sum(g.exec_ms) OVER (
            ORDER BY g.exec_ms DESC, g.create_ms DESC, {', '.join('g.' + k for k in by)} ROWS UNBOUNDED PRECEDING)
            / sum(g.exec_ms) OVER ())::DOUBLE ELSE 0 END AS cum_share_pct
    FROM g LEFT JOIN med USING ({group})
    ORDER BY g.exec_ms DESC, g.create_ms DESC, {', '.join('g.' + k for k in by)}
    {f'LIMIT {int(top)}' if top else ''}
    """
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    order = by + [
        "exec_count", "exec_ms", "exec_avg_ms", "exec_median_ms", "exec_min_ms", "exec_max_ms",
        "share_pct", "cum_share_pct", "create_count", "create_ms", "cache_hits", "cache_misses",
        "exec_untimed", "create_nested_count", "create_nested_ms", "check_count", "dispatch_count",
    ]
    idx = [names.index(c) for c in order]
    return order, [tuple(r[i] for i in idx) for r in rows]
