"""The segments of a oneDNN verbose log (``onednn_segments``): one per run of the library in
the file, as its header shows them.

A segment starts at each version info line (``onednn_verbose,info,oneDNN v3.2.0 ...``) and
ends before the next; the lines before the first, if any, are segment 0.  A segment's ISA
is that of its last ISA line (one that names none included), else the version line's own
(v0.18 writes it there); its runtime is that of its last CPU runtime line; its templates
are those of its template lines, in order.

The info lines' texts are read once per distinct shape (:func:`_info_parts`); the lines
themselves are only numbers here (line, shape), placed in their segments by numpy: a log of
many short runs has a header every few lines (1.4 M info lines in 256 MiB: read line by line
in Python, 5 s and 0.5 GB; docs/benchmarks.md, "Twenty-sixth session").
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..grammars import onednn_verbose as g
from .arrow_arrays import arrow_array, numbers_of, numpy_array
from .base import IngestContext, arrow_table, insert_arrow
from .gpu_common import lookup_tables

#: the parts an info line plays in its segment
VERSION, ISA, RUNTIME, TEMPLATE = range(4)


def insert_segments(ctx: IngestContext, shapes: str) -> None:
    """The ``onednn_segments`` rows of the file being ingested, and the ``sources`` fields
    that sum them up (library_version, isa, runtime, segments); ``shapes``: a table of the
    file's shape ids (``shape_id``)."""
    con, sid = ctx.con, ctx.source_id
    ids, parts, texts, isas = _info_parts(con.execute(
        f"""SELECT shape_id, info_kind, detail, coalesce(nullif(component, ''), 'primitive')
            FROM onednn_shapes
            WHERE op_class = 'info' AND shape_id IN (SELECT shape_id FROM {shapes})
            ORDER BY shape_id""").fetchall())
    with lookup_tables(con, _onednn_info={"shape_id": ("UBIGINT", ids)}):
        # (through Arrow: neither numpy's masked arrays, which fetchnumpy gives, nor pandas
        # are loaded for a small log)
        lines = arrow_table(con.sql(f"""SELECT e.line_no, e.shape_id FROM onednn_events e
                                        WHERE e.source_id = {int(sid)} AND e.shape_id IN (SELECT shape_id FROM _onednn_info)
                                        ORDER BY e.line_no"""))
    rows, picks = _segments(numbers_of(lines.column("line_no")),
                            np.searchsorted(np.array(ids, dtype=np.uint64), numbers_of(lines.column("shape_id"))),
                            np.array(parts, dtype=np.int8), arrow_array(texts, pa.string()),
                            arrow_array(isas, pa.string()), int(ctx.source["lines_total"]))
    rows = rows.append_column("source_id", numpy_array(np.full(rows.num_rows, sid, dtype=np.int32)))
    insert_arrow(con, "onednn_segments", rows)
    # what sources says of them: each non-empty version, ISA and runtime once, in the order
    # they first come, and how many segments have a version
    ctx.source["library_version"] = "; ".join(_seen(texts, picks["library_version"])) or None
    ctx.source["isa"] = "; ".join(_seen(isas, picks["isa"])) or None
    ctx.source["runtime"] = "; ".join(_seen(texts, picks["runtime"])) or None
    versions = picks["library_version"]
    named = np.array([bool(t) for t in texts], dtype=bool)[versions[versions >= 0]]
    ctx.source["segments"] = int(np.count_nonzero(named)) or 1


def _seen(texts: list, index: np.ndarray) -> list[str]:
    """The non-empty ``texts`` that ``index`` (per segment; -1: none) picks, each once, in
    the order they first come."""
    first = np.full(len(texts), len(index), dtype=np.int64)
    where = np.flatnonzero(index >= 0)
    np.minimum.at(first, index[where], where)  # (numpy's set functions would load numpy.ma)
    return list(dict.fromkeys(texts[k] for k in np.argsort(first, kind="stable")
                              if first[k] < len(index) and texts[k]))


def _info_parts(shapes: list[tuple]) -> tuple[list, list, list, list]:
    """For the info shapes ``(shape_id, info_kind, detail, component)`` (ascending ids) that
    play a part in a segment: their ids, parts, texts (the version, the runtime, the
    template) and ISAs (of a version or ISA line)."""
    ids, parts, texts, isas = [], [], [], []
    for shape_id, info_kind, detail, component in shapes:
        if info_kind == "version":
            version = g.info_version(detail)
            part, text, isa = VERSION, version[0] if version else None, g.info_isa(detail)
        elif info_kind == "isa":
            part, text, isa = ISA, None, g.info_isa(detail)
        elif info_kind == "runtime" and detail.startswith("cpu,"):
            part, text, isa = RUNTIME, detail[len("cpu,runtime:"):], None
        elif info_kind == "template":
            part, text, isa = TEMPLATE, f"{component}:{detail}", None
        else:
            continue
        ids.append(shape_id)
        parts.append(part)
        texts.append(text)
        isas.append(isa)
    return ids, parts, texts, isas


def _segments(line_no: np.ndarray, shape: np.ndarray, parts: np.ndarray, texts: pa.Array, isas: pa.Array,
              lines_total: int) -> tuple[pa.Table, dict[str, np.ndarray]]:
    """The segments of a file of ``lines_total`` lines whose info lines are ``line_no``
    (ascending), each of the shape ``shape`` (an index into ``parts``, ``texts`` and
    ``isas``, from :func:`_info_parts`), and the shape each segment's version, ISA and
    runtime come from (-1: none)."""
    part = parts[shape]
    is_version = part == VERSION
    segment_of = np.cumsum(is_version)  # the segment of each info line (0 before the first version)
    starts = line_no[is_version]
    zero = not (len(starts) and starts[0] == 1)  # lines before the first version line
    segments = np.arange(0 if zero else 1, len(starts) + 1)
    first = np.concatenate([[1], starts]) if zero else starts
    last = np.append(first[1:] - 1, lines_total)

    def last_shape(lines: np.ndarray) -> np.ndarray:
        """Per segment, the shape of its last line among ``lines`` (places in order; -1 for none)."""
        out = np.full(len(starts) + 1, -1, dtype=np.int32)
        if len(lines):
            seg = segment_of[lines]
            ends = lines[np.append(seg[1:] != seg[:-1], True)]
            out[segment_of[ends]] = shape[ends]
        return out[segments]

    picks = {"library_version": last_shape(np.flatnonzero(is_version)),
             "isa": last_shape(np.flatnonzero(is_version | (part == ISA))),
             "runtime": last_shape(np.flatnonzero(part == RUNTIME))}
    templates = np.flatnonzero(part == TEMPLATE)
    offsets = np.append(np.searchsorted(segment_of[templates], segments, side="left"), len(templates))
    return pa.table({
        "segment": numpy_array(segments.astype(np.int32)),
        "first_line": numpy_array(first.astype(np.int64)),
        "last_line": numpy_array(last.astype(np.int64)),
        "library_version": _picked(texts, picks["library_version"]),
        "isa": _picked(isas, picks["isa"]),
        "runtime": _picked(texts, picks["runtime"]),
        "templates": pa.Array.from_buffers(pa.list_(pa.dictionary(pa.int32(), pa.string())), len(segments),
                                           [None, pa.py_buffer(offsets.astype(np.int32))],
                                           children=[_picked(texts, shape[templates].astype(np.int32))]),
    }), picks


def _picked(texts: pa.Array, index: np.ndarray) -> pa.Array:
    """``texts[index]`` (null where ``index`` is -1), as a dictionary array over ``texts``
    (``take`` and ``from_arrays`` would load ``pyarrow.compute``: 45 ms of a small log's ingest)."""
    index = numpy_array(index, mask=index < 0)
    return pa.DictionaryArray.from_buffers(pa.dictionary(pa.int32(), pa.string()), len(index), index.buffers(),
                                           texts, null_count=index.null_count)
