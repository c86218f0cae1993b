"""NVTX ranges from a profile database into ``nvtx_ranges``, with the operators they name.

Both SQLite importers (Nsight Systems, nvprof) stage their ranges and marks in a temporary
table ``_nvtx`` (source_id, row_no, text, kind, start_ns, end_ns, duration_ns, pid, tid,
global_tid, domain_id, category) and finish with :func:`insert_nvtx_ranges`: nesting depth
and parent from the push/pop order per thread, the operator, sequence id, direction,
shapes and cost from the range name (:func:`nvtx_op_table`).
"""
from __future__ import annotations

import numpy as np

from ..grammars.pyprof import nvtx_seq_template, parse_marker, parse_nvtx_name
from ..op_costs import cost_from_pyprof_marker, op_cost
from .gpu_common import Arrays, Values, lookup_tables


#: the largest sequence number stored (``nvtx_ranges.seq`` is a BIGINT): a name with a larger
#: one is not taken for an operator's name (PyTorch counts them in 64 bits)
MAX_SEQ = 2**63 - 1


def nvtx_op_table(texts: list[str]) -> tuple[Arrays, Values]:
    """(names, kinds) for the NVTX range names ``texts`` that name an operator: PyTorch
    emit_nvtx names, and PyProf's argument markers (``{'mod': ..., 'op': ..., 'args': [...]}``);
    other names, and names with a sequence number past :data:`MAX_SEQ`, are left out.

    ``names`` (:data:`~.gpu_common.Arrays`): text, kind (a row of ``kinds``) and seq (-1:
    none); ``kinds`` (:data:`~.gpu_common.Values`): kind, op, direction, shapes, flops, bytes.
    Names that differ only in their sequence number are one kind, parsed once
    (:func:`~loganalyze.grammars.pyprof.nvtx_seq_template`); each (op, shapes) is costed once."""
    kind_of: dict[str, int] = {}  # a kind's text (the name, its sequence number written 0) -> kind, -1: no op
    kinds: list[tuple] = []
    costs: dict[tuple, tuple] = {}
    names: list[str] = []
    name_kinds: list[int] = []
    seqs: list[int] = []
    for t in texts:
        template = None if t.startswith("{'") else nvtx_seq_template(t)
        key, seq = template if template else (t, -1)
        kind = kind_of.get(key)
        if kind is None:
            row = _op_row(key, costs)
            kind = kind_of[key] = -1 if row is None else len(kinds)
            if row is not None:
                kinds.append(row)
        if kind >= 0 and seq <= MAX_SEQ:
            names.append(t)
            name_kinds.append(kind)
            seqs.append(seq)
    columns = {"op": "VARCHAR", "direction": "VARCHAR", "shapes": "VARCHAR", "flops": "DOUBLE", "bytes": "DOUBLE"}
    kind_values: Values = {"kind": ("BIGINT", list(range(len(kinds))))}
    kind_values.update({name: (sql_type, [r[i] for r in kinds]) for i, (name, sql_type) in enumerate(columns.items())})
    return ({"text": np.array(names, dtype=object), "kind": np.array(name_kinds, dtype=np.int64),
             "seq": np.array(seqs, dtype=np.int64)}, kind_values)


def _op_row(text: str, costs: dict) -> tuple | None:
    """(op, direction, shapes, flops, bytes) of one range name, None when it names no operator."""
    if text.startswith("{'"):
        m = parse_marker(text)
        if not (m and m.get("op")):
            return None
        flops, nbytes, shapes = cost_from_pyprof_marker(m.get("op"), m)
        return str(m["op"]), None, shapes, _float(flops), _float(nbytes)
    p = parse_nvtx_name(text)
    if p is None or p.direction is None:
        return None
    flops, nbytes = None, None
    if p.shapes and p.direction == "fwd":
        key = (p.op, p.shapes)
        if key not in costs:
            costs[key] = op_cost(p.op, p.shapes)
        flops, nbytes = costs[key]
    return p.op, p.direction, p.shapes_text, _float(flops), _float(nbytes)


def _float(x) -> float | None:
    return None if x is None else float(x)


def insert_nvtx_ranges(con, domains: dict, op_kinds: tuple[str, ...] | None = ("push_pop", "start_end")) -> None:
    """``_nvtx`` into ``nvtx_ranges``; ``domains`` maps domain ids to names; the op fields
    come from the names of the rows of ``op_kinds`` (None: every row)."""
    where = f"kind IN ({', '.join(repr(k) for k in op_kinds)}) AND " if op_kinds else ""
    texts = [r[0] for r in con.execute(f"SELECT DISTINCT text FROM _nvtx WHERE {where}text IS NOT NULL").fetchall()]
    names, kinds = nvtx_op_table(texts)
    dom = {"domain_id": ("BIGINT", [int(k) for k in domains if k is not None]),
           "domain": ("VARCHAR", [v for k, v in domains.items() if k is not None])}
    with lookup_tables(con, _op_names=names, _op_kinds=kinds, _domains=dom):
        con.execute(NVTX_INSERT_SQL)


#: ranges and marks from the staging table ``_nvtx``: push/pop depth by a running count of
#: starts and ends per thread (an end at time t closes before a start at t opens), the
#: parent by an ASOF join one level up, the op fields from the parsed names.
NVTX_INSERT_SQL = """
INSERT INTO nvtx_ranges BY NAME
WITH r AS (
    SELECT * FROM _nvtx WHERE kind IN ('push_pop', 'start_end', 'mark')
), ev AS (
    SELECT row_no, global_tid, start_ns AS t, 1 AS d, 1 AS ord, end_ns AS other FROM r WHERE kind = 'push_pop'
    UNION ALL
    SELECT row_no, global_tid, end_ns AS t, -1 AS d, CASE WHEN end_ns = start_ns THEN 2 ELSE 0 END AS ord,
           start_ns AS other
    FROM r WHERE kind = 'push_pop' AND end_ns IS NOT NULL
), lv AS (
    SELECT row_no, d, sum(d) OVER (PARTITION BY global_tid ORDER BY t, ord, other DESC, row_no
                                   ROWS UNBOUNDED PRECEDING) AS level
    FROM ev
), depths AS (
    SELECT r.*, lv.level - 1 AS lvl FROM r LEFT JOIN lv ON lv.row_no = r.row_no AND lv.d = 1
), pp AS (
    SELECT row_no, global_tid, start_ns, lvl FROM depths WHERE kind = 'push_pop'
), parents AS (
    SELECT c.row_no, p.row_no AS parent_row
    FROM pp c ASOF JOIN pp p
      ON p.global_tid = c.global_tid AND p.lvl = c.lvl - 1 AND c.start_ns >= p.start_ns
    WHERE c.lvl > 0
)
SELECT d.source_id, d.row_no, d.text, dm.domain, d.kind AS event_type, d.start_ns, d.end_ns,
       d.duration_ns, d.pid, d.tid, d.global_tid, CASE WHEN d.kind = 'push_pop' THEN d.lvl END AS depth,
       d.domain_id, d.category, pa.parent_row, o.op, o.seq, o.direction, o.shapes, o.flops, o.bytes
FROM depths d
LEFT JOIN parents pa ON pa.row_no = d.row_no
LEFT JOIN (SELECT CAST(n.text AS VARCHAR) AS text, nullif(n.seq, -1) AS seq, k.op, k.direction, k.shapes,
                  k.flops, k.bytes
           FROM _op_names n JOIN _op_kinds k ON k.kind = n.kind) o ON o.text = d.text
LEFT JOIN _domains dm ON dm.domain_id = d.domain_id AND d.domain_id <> 0
"""
