"""Where the GPU time went: per kernel, copy kind, API call, NVTX range and operator.

``summary(con, ["kernel"])`` gives the columns users know from ``nsys stats
cuda_gpu_kern_sum`` (count, total, avg, median, min, max, stddev in ns, share of time),
one row per kernel name; ``grid``/``block``/``device``/``stream``/``source``/``run``
split it further.  ``memcpy``, ``api``, ``nvtx`` and ``op`` are the other main keys.

Per-instance rows (gpu_kernels, gpu_memops, gpu_api_calls, nvtx_ranges) and report rows
(gpu_report_rows: nvprof ``--print-summary``, ``nsys stats`` summaries) are combined: a
source that has instances is counted from them, a report-only source from its report.
Medians and standard deviations of combined groups come from the instances when there is
only one part, and are recomputed from sums of squares (stddev) or left empty (median)
when parts must be merged.
"""
from __future__ import annotations

from ..grammars.cuda_api import base_api_name_sql
from ..memory_limit import lowered_memory_limit as _memory_limit
from .filters import source_filter


FAMILY = "gpu"
DEFAULT_BY = "kernel"

MAIN_KEYS = ("kernel", "memcpy", "api", "nvtx", "op")
KEYS = {
    "kernel": "kernel", "grid": "grid", "block": "block", "memcpy": "memcpy", "api": "api", "nvtx": "nvtx",
    "op": "op", "shapes": "shapes", "device": "device", "stream": "stream", "domain": "domain",
    "source": "source", "run": "run",
}
ALLOWED = {
    "kernel": {"grid", "block", "device", "stream", "source", "run"},
    "memcpy": {"device", "stream", "source", "run"},
    "api": {"source", "run"},
    "nvtx": {"domain", "source", "run"},
    "op": {"shapes", "source", "run"},
}
NAMES = ("raw", "demangled", "short", "mangled")
STAT_COLS = ["count", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", "stddev_ns", "time_pct"]


def has_data(con) -> bool:
    return con.execute(
        """SELECT EXISTS (SELECT 1 FROM gpu_kernels) OR EXISTS (SELECT 1 FROM gpu_memops)
                  OR EXISTS (SELECT 1 FROM gpu_api_calls) OR EXISTS (SELECT 1 FROM nvtx_ranges)
                  OR EXISTS (SELECT 1 FROM gpu_report_rows)"""
    ).fetchall()[0][0]


def _error(msg: str):
    from .errors import QueryError

    return QueryError(msg)


def summary(con, by: list[str], run: str | None = None, top: int | None = None, names: str | None = None,
            source_ids: list[int] | None = None, **options):
    main = [k for k in by if k in MAIN_KEYS]
    if len(main) != 1:
        raise _error(
            "GPU summaries need exactly one of --by kernel, memcpy, api, nvtx, op "
            "(optionally with grid, block, device, stream, shapes, domain, source, run)"
        )
    key = main[0]
    extra = [k for k in by if k != key]
    bad = [k for k in extra if k not in ALLOWED[key]]
    if bad:
        raise _error(f"--by {key} cannot be split by {', '.join(bad)}; use {', '.join(sorted(ALLOWED[key]))}")
    if names is not None and names not in NAMES:
        raise _error(f"unknown --names {names!r}; choose from {', '.join(NAMES)}")
    conds, params = source_filter(run, source_ids, "s.")
    where = " AND ".join(["TRUE"] + conds)
    fn = {"kernel": _kernels, "memcpy": _memcpy, "api": _api, "nvtx": _nvtx, "op": _ops}[key]
    if key != "op":
        return fn(con, extra, where, params, top, names)
    with _memory_limit(con, OP_MEMORY_LIMIT):
        return fn(con, extra, where, params, top, names)


#: the attribution's ASOF joins and sorts spill to disk past this (measured: 2M kernels peak
#: at 1.9 GB without a limit; docs/benchmarks.md)
OP_MEMORY_LIMIT = "1.5GB"


# --------------------------------------------------------------------------- shared SQL
def _stats_sql(keys: list[str], inst_sql: str, rep_sql: str | None) -> str:
    """Merge instance and report aggregates (columns: keys, n, total, mn, mx, med, sd, ss, av)."""
    k = ", ".join(keys)
    parts = inst_sql if rep_sql is None else f"{inst_sql}\nUNION ALL\n{rep_sql}"
    return f"""
    WITH parts AS ({parts}),
    g AS (
        SELECT {k}, sum(n)::BIGINT AS count, sum(total)::BIGINT AS total_ns,
               CASE WHEN count(*) = 1 THEN any_value(av) ELSE sum(total)::DOUBLE / nullif(sum(n), 0) END AS avg_ns,
               CASE WHEN count(*) = 1 THEN any_value(med) END AS median_ns,
               min(mn)::BIGINT AS min_ns, max(mx)::BIGINT AS max_ns,
               CASE WHEN count(*) = 1 THEN any_value(sd)
                    WHEN sum(n) > 1 AND count(ss) = count(*)
                    THEN sqrt(greatest(sum(ss) - sum(total)::DOUBLE * sum(total) / sum(n), 0) / (sum(n) - 1))
               END AS stddev_ns
        FROM parts GROUP BY {k}
    )
    SELECT *, CASE WHEN sum(total_ns) OVER () > 0 THEN 100.0 * total_ns / sum(total_ns) OVER () END AS time_pct
    FROM g
    """


def _inst_agg(dur: str = "duration_ns") -> str:
    return (f"count({dur}) AS n, sum({dur}) AS total, min({dur}) AS mn, max({dur}) AS mx, "
            f"median({dur})::DOUBLE AS med, stddev_samp({dur}) AS sd, sum({dur}::DOUBLE * {dur}) AS ss, "
            f"avg({dur}) AS av")


REP_AGG = ("sum(r.count) AS n, sum(r.total_ns) AS total, min(r.min_ns) AS mn, max(r.max_ns) AS mx, "
           "CASE WHEN count(*) = 1 THEN any_value(r.median_ns) END AS med, "
           "CASE WHEN count(*) = 1 THEN any_value(r.stddev_ns) END AS sd, "
           "CASE WHEN count(r.stddev_ns) = count(*) THEN sum(r.stddev_ns * r.stddev_ns * (r.count - 1) "
           "+ r.total_ns::DOUBLE * r.total_ns / nullif(r.count, 0)) END AS ss, "
           "CASE WHEN count(*) = 1 THEN any_value(r.avg_ns) "
           "ELSE sum(r.total_ns)::DOUBLE / nullif(sum(r.count), 0) END AS av")

COMMON = {"source": "s.name", "run": "s.run_label"}


def _run(con, sql: str, params: list, order: list[str], top: int | None):
    sql = f"SELECT * FROM ({sql}) ORDER BY total_ns DESC NULLS LAST, {', '.join(order)} " + (
        f"LIMIT {int(top)}" if top else "")
    cur = con.execute(sql, params)
    return [d[0] for d in cur.description], cur.fetchall()


def _reorder(cols, rows, order):
    idx = [cols.index(c) for c in order]
    return order, [tuple(r[i] for i in idx) for r in rows]


def _register_name_map(con, names: list[str], mode: str) -> None:
    """A temporary table of report kernel names in the asked form (empty for raw names: the
    summary then imports neither the demangler nor Arrow)."""
    con.execute("CREATE OR REPLACE TEMP TABLE _report_names (name VARCHAR, shown VARCHAR)")
    if mode == "raw" or not names:
        return
    from ..names import name_forms

    pairs = []
    for n in names:
        d, s, m = name_forms(n)
        pairs.append((n, {"demangled": d, "short": s, "mangled": m}.get(mode) or n))
    con.executemany("INSERT INTO _report_names VALUES (?, ?)", pairs)


# --------------------------------------------------------------------------- kernels
def _kernels(con, extra, where, params, top, names):
    names = names or "raw"
    name_expr = {"raw": "k.name", "demangled": "coalesce(k.demangled, k.name)",
                 "short": "coalesce(k.short_name, k.name)", "mangled": "coalesce(k.mangled, k.name)"}[names]
    inst_keys = {"kernel": name_expr,
                 "grid": "CASE WHEN k.grid_x IS NOT NULL THEN k.grid_x || 'x' || k.grid_y || 'x' || k.grid_z END",
                 "block": "CASE WHEN k.block_x IS NOT NULL THEN k.block_x || 'x' || k.block_y || 'x' || k.block_z END",
                 "device": "k.device::VARCHAR", "stream": "k.stream::VARCHAR", **COMMON}
    rep_keys = {"kernel": "coalesce(nm.shown, r.name)", "grid": "r.grid", "block": "r.block",
                "device": "NULL::VARCHAR", "stream": "NULL::VARCHAR", **COMMON}
    keys = ["kernel"] + extra
    rep_names = [r[0] for r in con.execute(
        "SELECT DISTINCT name FROM gpu_report_rows WHERE category = 'kernel' AND name IS NOT NULL").fetchall()]
    _register_name_map(con, rep_names, names)
    try:
        inst = (f"SELECT {', '.join(f'{inst_keys[x]} AS {x}' for x in keys)}, {_inst_agg()} "
                f"FROM gpu_kernels k JOIN sources s USING (source_id) WHERE {where} GROUP BY ALL")
        rep = (f"SELECT {', '.join(f'{rep_keys[x]} AS {x}' for x in keys)}, {REP_AGG} "
               f"FROM gpu_report_rows r JOIN sources s USING (source_id) "
               f"LEFT JOIN _report_names nm ON nm.name = r.name "
               f"WHERE r.category = 'kernel' AND {where} "
               f"AND r.source_id NOT IN (SELECT DISTINCT source_id FROM gpu_kernels) GROUP BY ALL")
        cols, rows = _run(con, _stats_sql(keys, inst, rep), params + params, keys, top)
    finally:
        con.execute("DROP TABLE IF EXISTS _report_names")
    return _reorder(cols, rows, keys + STAT_COLS)


# --------------------------------------------------------------------------- copies and sets
def _memcpy(con, extra, where, params, top, names):
    keys = ["memcpy"] + extra
    label = "CASE WHEN m.op = 'memset' THEN '[CUDA memset]' ELSE '[CUDA memcpy ' || coalesce(m.kind, '?') || ']' END"
    inst_keys = {"memcpy": label, "device": "m.device::VARCHAR", "stream": "m.stream::VARCHAR", **COMMON}
    rep_label = ("CASE WHEN r.category = 'memset' THEN '[CUDA memset]' "
                 "ELSE coalesce('[CUDA memcpy ' || r.kind || ']', r.name) END")
    rep_keys = {"memcpy": rep_label, "device": "NULL::VARCHAR", "stream": "NULL::VARCHAR", **COMMON}
    inst = (f"SELECT {', '.join(f'{inst_keys[x]} AS {x}' for x in keys)}, {_inst_agg()}, "
            f"sum(m.bytes) AS bytes FROM gpu_memops m JOIN sources s USING (source_id) WHERE {where} GROUP BY ALL")
    rep = (f"SELECT {', '.join(f'{rep_keys[x]} AS {x}' for x in keys)}, {REP_AGG}, sum(r.total_bytes) AS bytes "
           f"FROM gpu_report_rows r JOIN sources s USING (source_id) "
           f"WHERE r.category IN ('memcpy', 'memset') AND {where} "
           f"AND r.source_id NOT IN (SELECT DISTINCT source_id FROM gpu_memops) GROUP BY ALL")
    sql = _stats_sql(keys, inst, rep).replace(
        "min(mn)::BIGINT AS min_ns,", "min(mn)::BIGINT AS min_ns, sum(bytes)::DOUBLE AS bytes,")
    sql = f"""SELECT *, bytes / nullif(count, 0) AS avg_bytes,
                     CASE WHEN total_ns > 0 THEN bytes / total_ns END AS gb_per_s FROM ({sql})"""
    cols, rows = _run(con, sql, params + params, keys, top)
    return _reorder(cols, rows, keys + STAT_COLS + ["bytes", "avg_bytes", "gb_per_s"])


# --------------------------------------------------------------------------- API calls
def _api(con, extra, where, params, top, names):
    keys = ["api"] + extra
    col = "a.name" if names in ("raw", "mangled") else "coalesce(a.base_name, a.name)"
    inst_keys = {"api": col, **COMMON}
    rep_col = "r.name" if names in ("raw", "mangled") else base_api_name_sql("r.name")
    rep_keys = {"api": rep_col, **COMMON}
    inst = (f"SELECT {', '.join(f'{inst_keys[x]} AS {x}' for x in keys)}, "
            f"string_agg(DISTINCT a.api, ',' ORDER BY a.api) AS type, {_inst_agg()} "
            f"FROM gpu_api_calls a JOIN sources s USING (source_id) "
            f"WHERE a.api IN ('runtime', 'driver') AND {where} GROUP BY ALL")
    rep = (f"SELECT {', '.join(f'{rep_keys[x]} AS {x}' for x in keys)}, NULL AS type, {REP_AGG} "
           f"FROM gpu_report_rows r JOIN sources s USING (source_id) WHERE r.category = 'api' AND {where} "
           f"AND r.source_id NOT IN (SELECT DISTINCT source_id FROM gpu_api_calls) GROUP BY ALL")
    sql = _stats_sql(keys, inst, rep).replace(
        "SELECT " + ", ".join(keys) + ", sum(n)", "SELECT " + ", ".join(keys) + ", string_agg(DISTINCT type, ',' ORDER BY type) AS type, sum(n)", 1)
    cols, rows = _run(con, sql, params + params, keys, top)
    return _reorder(cols, rows, keys + ["type"] + STAT_COLS)


# --------------------------------------------------------------------------- NVTX ranges
def _nvtx(con, extra, where, params, top, names):
    keys = ["nvtx"] + extra
    inst_keys = {"nvtx": "n.text", "domain": "n.domain", **COMMON}
    rep_keys = {"nvtx": "r.name", "domain": "NULL::VARCHAR", **COMMON}
    inst = (f"SELECT {', '.join(f'{inst_keys[x]} AS {x}' for x in keys)}, "
            f"string_agg(DISTINCT n.event_type, ',' ORDER BY n.event_type) AS style, {_inst_agg()} "
            f"FROM nvtx_ranges n JOIN sources s USING (source_id) "
            f"WHERE n.event_type IN ('push_pop', 'start_end') AND {where} GROUP BY ALL")
    rep = (f"SELECT {', '.join(f'{rep_keys[x]} AS {x}' for x in keys)}, string_agg(DISTINCT r.style, ',' ORDER BY r.style) AS style, "
           f"{REP_AGG} FROM gpu_report_rows r JOIN sources s USING (source_id) WHERE r.category = 'nvtx' AND {where} "
           f"AND r.source_id NOT IN (SELECT DISTINCT source_id FROM nvtx_ranges) GROUP BY ALL")
    sql = _stats_sql(keys, inst, rep).replace(
        "SELECT " + ", ".join(keys) + ", sum(n)", "SELECT " + ", ".join(keys) + ", string_agg(DISTINCT style, ',' ORDER BY style) AS style, sum(n)", 1)
    cols, rows = _run(con, sql, params + params, keys, top)
    return _reorder(cols, rows, keys + ["style"] + STAT_COLS)


# --------------------------------------------------------------------------- operators
UNATTRIBUTED = "(no enclosing NVTX range)"


def _ops(con, extra, where, params, top, names):
    """GPU time per operator: kernels attributed by NVTX (gpu_activity_nvtx) or by the input
    itself (gpu_kernel_ops).  ``count`` counts kernels, ``calls`` operator calls (ranges or
    PyProf op instances) that launched at least one kernel; FLOPs and bytes are summed once
    per call; ``fwd_op`` names the forward operator a backward one pairs with (same seq)."""
    keys = ["op"] + extra
    key_expr = {"op": f"coalesce(op, '{UNATTRIBUTED}')", "shapes": "shapes", **COMMON}
    ksel = ", ".join(f"{key_expr[x]} AS {x}" for x in keys)
    kjoin, pjoin = (" AND ".join(f"k.{x} IS NOT DISTINCT FROM {t}.{x}" for x in keys) for t in ("c", "p"))
    sql = f"""
    WITH att AS (
        SELECT a.source_id, 'nvtx' AS via, a.range_row AS inst, a.op, a.direction, a.seq, a.shapes,
               a.op_flops AS flops, a.op_bytes AS bytes, a.name AS kernel, a.duration_ns
        FROM gpu_activity_nvtx a
        WHERE a.kind = 'kernel' AND a.source_id NOT IN (SELECT DISTINCT source_id FROM gpu_kernel_ops)
        UNION ALL
        SELECT k.source_id, 'input', o.instance, o.op, o.direction, o.seq, o.shapes, o.flops, o.bytes,
               k.name, k.duration_ns
        FROM gpu_kernel_ops o JOIN gpu_kernels k ON k.source_id = o.source_id AND k.row_no = o.row_no
    ), per_kernel AS (  -- kernel statistics per group
        SELECT {ksel}, count(*)::BIGINT AS count, sum(duration_ns)::BIGINT AS gpu_total_ns,
               min(duration_ns)::BIGINT AS gpu_min_ns, max(duration_ns)::BIGINT AS gpu_max_ns,
               count(DISTINCT kernel) AS kernels
        FROM att JOIN sources s USING (source_id) WHERE {where} GROUP BY ALL
    ), fwd AS (  -- the forward op of each seq: the outermost, then the first in the file
        SELECT source_id, seq, arg_min(coalesce(op, text), [depth, row_no]) FILTER (WHERE depth IS NOT NULL) AS fwd_op
        FROM nvtx_ranges WHERE direction = 'fwd' AND seq IS NOT NULL GROUP BY ALL
    ), calls AS (  -- one row per operator call (NVTX range or PyProf op instance)
        SELECT source_id, via, inst, any_value(op) AS op, any_value(direction) AS direction,
               any_value(seq) AS seq, any_value(shapes) AS shapes,
               CASE WHEN via = 'nvtx' THEN any_value(flops) ELSE sum(flops) END AS flops,
               CASE WHEN via = 'nvtx' THEN any_value(bytes) ELSE sum(bytes) END AS bytes,
               sum(duration_ns) AS t
        FROM att WHERE inst IS NOT NULL GROUP BY source_id, via, inst
    ), grouped AS (  -- each call with its group's keys and, for a backward one, the forward op of its seq
        SELECT {ksel}, c.direction, c.flops, c.bytes, c.t, f.fwd_op
        FROM calls c JOIN sources s USING (source_id)
        LEFT JOIN fwd f ON f.source_id = c.source_id AND f.seq = c.seq AND c.direction = 'bwd'
        WHERE {where}
    ), per_call AS (
        SELECT {', '.join(keys)}, string_agg(DISTINCT direction, ',' ORDER BY direction) AS direction,
               count(*) AS calls, sum(flops) AS flops, sum(bytes) AS bytes,
               sum(t) FILTER (WHERE flops IS NOT NULL) AS t_flops,
               sum(t) FILTER (WHERE bytes IS NOT NULL) AS t_bytes,
               sum(t) AS t_calls
        FROM grouped GROUP BY ALL
    ), fwd_votes AS (  -- the forward op each backward call pairs with (same seq), counted per group
        SELECT {', '.join(keys)}, fwd_op, count(*) AS n FROM grouped WHERE fwd_op IS NOT NULL GROUP BY ALL
    ), fwd_pick AS (  -- the most frequent (ties: the first by name, so that reports do not change)
        SELECT {', '.join(keys)}, first(fwd_op ORDER BY n DESC, fwd_op) AS fwd_op FROM fwd_votes GROUP BY ALL
    )
    SELECT k.*, c.direction, coalesce(c.calls, 0) AS calls, c.t_calls::DOUBLE / nullif(c.calls, 0) AS gpu_avg_ns,
           c.flops, c.bytes, c.flops / nullif(c.t_flops, 0) AS gflops_per_s, c.bytes / nullif(c.t_bytes, 0) AS gb_per_s,
           p.fwd_op,
           CASE WHEN sum(k.gpu_total_ns) OVER () > 0 THEN 100.0 * k.gpu_total_ns / sum(k.gpu_total_ns) OVER () END
               AS time_pct
    FROM per_kernel k LEFT JOIN per_call c ON {kjoin} LEFT JOIN fwd_pick p ON {pjoin}
    ORDER BY k.gpu_total_ns DESC NULLS LAST, {', '.join('k.' + x for x in keys)}
    {f'LIMIT {int(top)}' if top else ''}
    """
    cur = con.execute(sql, params + params)
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    order = keys + ["direction", "calls", "count", "gpu_total_ns", "gpu_avg_ns", "gpu_min_ns", "gpu_max_ns",
                    "time_pct", "kernels", "flops", "bytes", "gflops_per_s", "gb_per_s", "fwd_op"]
    return _reorder(cols, rows, order)
