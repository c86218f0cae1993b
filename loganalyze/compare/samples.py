"""Per-call time samples per item, for every family a run can be compared on.

One row per call (an exec of a oneDNN primitive, a GPU kernel launch, an operator call in
a trace, an NVTX range) with its time in integer nanoseconds, so that every sum over them
is exact and independent of row order.  Columns of :func:`load`:

``family``   onednn | kernel | op | nvtx
``item``     what is compared: the oneDNN ``--by`` keys (joined with `` | ``), the kernel
             name as stored, the operator name, the NVTX range text
``stratum``  the finest identity of the call inside its item (oneDNN: the full primitive;
             kernels: name, grid and block; operators: name and input shapes; NVTX: text);
             the significance test compares calls with the baseline calls of their stratum
``run``      the run label ('' for files ingested without one)
``seq``      the call's position among the calls of its stratum in its run (1, 2, ...; files
             ordered by name and content hash, calls by line, start time or event number):
             the significance test pairs the k-th baseline call with the k-th candidate call
``ns``       the call's time: oneDNN exec time (ms, rounded to the nearest ns), kernel, NVTX
             and operator duration (inclusive: an operator's time is read from its own
             event, never derived from how events nest, so clock jitter in one event
             cannot move the time of another)
"""
from __future__ import annotations

from ..query.onednn_summary import KEY_SQL

#: families in report order, with the words reports use for them
FAMILIES = {"onednn": "oneDNN primitive", "kernel": "GPU kernel", "op": "operator", "nvtx": "NVTX range"}
DEFAULT_BY = ("kind",)
ITEM_SEPARATOR = " | "
COLUMNS = ["family", "item", "stratum", "run", "ns", "seq"]


class SampleError(ValueError):
    """Bad ``--by`` keys or families; worth one line to the user."""


def parse_by(by: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """``"kind,impl"`` or ``["kind", "impl"]`` -> ``("kind", "impl")``; checks the keys."""
    if by is None:
        return DEFAULT_BY
    keys = tuple(k.strip() for k in (by.replace(" ", ",").split(",") if isinstance(by, str) else by) if k.strip())
    bad = [k for k in keys if k not in KEY_SQL or k == "run"]
    if bad or not keys:
        choices = ", ".join(k for k in KEY_SQL if k != "run")
        raise SampleError(f"unknown --by key(s) {', '.join(bad) or '(none)'} for oneDNN items; choose from {choices}")
    return keys


def parse_families(families: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """``"onednn,kernel"`` -> ``("onednn", "kernel")`` in report order; None -> every family."""
    if families is None:
        return tuple(FAMILIES)
    names = families.replace(" ", ",").split(",") if isinstance(families, str) else list(families)
    names = [n.strip() for n in names if n.strip()]
    bad = [n for n in names if n not in FAMILIES]
    if bad or not names:
        raise SampleError(f"unknown --family {', '.join(bad) or '(none)'}; choose from {', '.join(FAMILIES)}")
    return tuple(f for f in FAMILIES if f in names)


def _onednn_sql(by: tuple[str, ...]) -> str:
    item = f" || '{ITEM_SEPARATOR}' || ".join(f"coalesce({KEY_SQL[k]}, '')" for k in by)
    return f"""
    SELECT 'onednn' AS family, {item} AS item, s.shape_id::VARCHAR AS stratum,
           coalesce(src.run_label, '') AS run, round(e.time_ms * 1e6)::BIGINT AS ns,
           src.name AS o_file, src.sha256 AS o_hash, e.line_no AS o_pos, 0::BIGINT AS o_tie
    FROM onednn_events e JOIN onednn_shapes s USING (shape_id) JOIN sources src USING (source_id)
    WHERE s.op_class = 'exec' AND coalesce(nullif(s.component, ''), 'primitive') = 'primitive'
      AND e.time_ms IS NOT NULL AND isfinite(e.time_ms) AND {{runs}}"""


KERNEL_SQL = """
    SELECT 'kernel' AS family, k.name AS item,
           k.name || '|' || coalesce(k.grid_x || 'x' || k.grid_y || 'x' || k.grid_z, '')
                  || '|' || coalesce(k.block_x || 'x' || k.block_y || 'x' || k.block_z, '') AS stratum,
           coalesce(src.run_label, '') AS run, k.duration_ns AS ns,
           src.name AS o_file, src.sha256 AS o_hash, k.start_ns AS o_pos, k.row_no AS o_tie
    FROM gpu_kernels k JOIN sources src USING (source_id)
    WHERE k.duration_ns IS NOT NULL AND k.name IS NOT NULL AND {runs}"""

OP_SQL = """
    SELECT 'op' AS family, e.name AS item,
           e.name || '|' || coalesce(CAST(json_extract(e.args, '$."Input Dims"') AS VARCHAR), '') AS stratum,
           coalesce(src.run_label, '') AS run, e.dur_ns AS ns,
           src.name AS o_file, src.sha256 AS o_hash, e.ts_ns AS o_pos, e.event_no AS o_tie
    FROM trace_events e JOIN sources src USING (source_id)
    WHERE e.role = 'op' AND e.dur_ns IS NOT NULL AND e.name IS NOT NULL AND {runs}"""

NVTX_SQL = """
    SELECT 'nvtx' AS family, n.text AS item, n.text AS stratum,
           coalesce(src.run_label, '') AS run, n.duration_ns AS ns,
           src.name AS o_file, src.sha256 AS o_hash, n.start_ns AS o_pos, n.row_no AS o_tie
    FROM nvtx_ranges n JOIN sources src USING (source_id)
    WHERE n.event_type IN ('push_pop', 'start_end') AND n.duration_ns IS NOT NULL AND n.text IS NOT NULL
      AND {runs}"""


def samples_sql(family: str, by: tuple[str, ...] = DEFAULT_BY) -> str:
    """The SELECT giving :data:`COLUMNS` but ``seq`` for one family, plus the order columns
    ``o_file, o_hash, o_pos, o_tie`` ``seq`` is numbered by; ``{runs}`` is left for the run filter."""
    if family == "onednn":
        return _onednn_sql(by)
    return {"kernel": KERNEL_SQL, "op": OP_SQL, "nvtx": NVTX_SQL}[family]


def load(con, by: str | list[str] | tuple[str, ...] | None = None, families=None, runs: list[str] | None = None):
    """Every call of the chosen families (all by default) in the runs named (all by default).

    Returns a pandas DataFrame with :data:`COLUMNS` (strings as categoricals), in no particular
    row order: everything computed from it (exact integer sums, medians, sorted ratios) does
    not depend on the order.
    """
    import pandas as pd

    from ..importers.base import arrow_table

    keys = parse_by(by)
    run_filter = "true" if runs is None else "coalesce(src.run_label, '') IN (SELECT unnest(?::VARCHAR[]))"
    parts, params = [], []
    for family in parse_families(families):
        parts.append(samples_sql(family, keys).format(runs=run_filter))
        if runs is not None:
            params.append(list(runs))
    # dictionary-encoded strings: millions of calls share a few thousand item names
    sql = f"""SELECT family, item, stratum, run, ns,
                     row_number() OVER (PARTITION BY run, item, stratum ORDER BY o_file, o_hash, o_pos, o_tie) AS seq
              FROM ({" UNION ALL ".join(parts)})"""
    rel = con.sql(sql, params=params or None)
    table = arrow_table(rel)
    frame = table.to_pandas(strings_to_categorical=True)
    if frame.empty:
        frame = pd.DataFrame({c: pd.Series(dtype="int64" if c in ("ns", "seq") else "object") for c in COLUMNS})
    frame["ns"] = frame["ns"].astype("int64")
    frame["seq"] = frame["seq"].astype("int64")
    frame["family"] = pd.Categorical(frame["family"].astype(str), categories=list(FAMILIES), ordered=True)
    return frame
