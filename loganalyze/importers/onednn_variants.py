"""New oneDNN shapes that differ from a shape the file has shown only in their problem
descriptor (the last field of a complete profiling line's key), made as ``onednn_shapes``
rows in columns: every field before the descriptor taken from that shape's row, the
descriptor's dimensions read for all of them at once by polars with the grammar's own
patterns (``named_dims``, ``tensor_shapes``, ``NAMED_DIM``).

A log whose batch size varies from call to call shows such a shape every few lines
(hundreds of thousands in 1 GiB), and ``parse_shape`` with its row of Python values cost
~30 us each on the importer's main thread (docs/benchmarks.md, "Thirty-second session").
The rows are those of :func:`~loganalyze.grammars.onednn_verbose.with_problem`; what the
columns do not cover goes through the grammar as before: a descriptor with characters
outside ASCII (Python's and polars' ``\\d`` follow different Unicode versions), one that
neither pattern matches whole (pyparsing skips whitespace around it), a name given twice
(``parse_problem`` numbers the second), and a key whose fields before the descriptor no
parsed shape has shown.
"""
from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from ..grammars import onednn_verbose as g
from .arrow_arrays import arrow_array, numpy_array

#: the shapes kept to make others from (then it starts again), as the grammar's own cache
KEPT = g.BEFORE_PROBLEM_KEPT
#: the fewest keys made in columns at once: a call costs ~4 ms whatever its size, then ~3 us
#: a key, where the grammar took 20-30 us a key (and the first call imports
#: ``pyarrow.compute``, 40-130 ms), so a usual log's few new keys a batch are parsed as before
AT_LEAST = 1024
#: the columns of a row not taken from the shape it is made from
_OWN = ("shape_id", "key", "problem", "dims", "timed")
#: a whole problem descriptor of each form, as the grammar's regexes match one
_NAMED = "^" + g.named_dims.re.pattern
_TENSORS = "^" + g.tensor_shapes.re.pattern


def split_keys(new: pl.DataFrame) -> pl.DataFrame:
    """``new`` (``key`` among its columns) with ``before`` (the key up to its last comma;
    null without one) and ``problem`` (after it)."""
    key = pl.col("key")
    has_comma = key.str.contains(",", literal=True)
    return new.with_columns(before=pl.when(has_comma).then(key.str.replace(r",[^,]*$", "")),
                            problem=pl.when(has_comma).then(key.str.extract(r",([^,]*)$", 1)))


class Variants:
    """The shapes of a file that others may be made from, by their key without its problem
    descriptor, and the rows made from them.  ``types``: the Arrow types of ``onednn_shapes``'
    columns ``columns``."""

    def __init__(self, columns: list[str], types: dict[str, pa.DataType]):
        self.columns, self.types = columns, types
        self._befores: dict[str, int] = {}
        self._shapes: list[g.Shape] = []
        self._rows: pa.Table | None = None  # the columns of _shapes not made per row
        self._index: pl.DataFrame | None = None  # _befores as columns

    def add(self, shape: g.Shape) -> None:
        """Keep ``shape`` to make others from, if it is a complete profiling line's and no
        shape kept has its key without the descriptor."""
        before = g.key_before_problem(shape)
        if before is None or before in self._befores:
            return
        if len(self._shapes) >= KEPT:
            self._befores.clear()
            self._shapes.clear()
        self._befores[before] = len(self._shapes)
        self._shapes.append(shape)
        self._rows = self._index = None

    def make(self, new: pl.DataFrame) -> tuple[pa.Table | None, pl.DataFrame]:
        """The rows of ``onednn_shapes`` (``columns``, their ``types``) of the keys of ``new``
        (``shape_id``, ``key``, ``before``, ``problem``: :func:`split_keys`) that can be made
        from a shape kept (None when none can, or ``new`` has fewer than :data:`AT_LEAST`
        rows), and the rows of ``new`` left."""
        if not self._befores or new.height < AT_LEAST:
            return None, new
        if self._index is None:
            self._index = pl.DataFrame({"before": list(self._befores),
                                        "template": list(self._befores.values())}, schema_overrides={"template": pl.UInt32})
        new = new.with_row_index("_row")
        problem = pl.col("problem")
        found = new.with_columns(
            template=pl.col("before").replace_strict(self._index["before"], self._index["template"], default=None),
            named=problem.str.contains(_NAMED),
        ).filter(pl.col("template").is_not_null()
                 & (problem.str.len_bytes() == problem.str.len_chars())
                 & (pl.col("named") | problem.str.contains(_TENSORS)))
        entries = _dimensions(found)
        twice = entries.filter(pl.struct("row", "name").is_duplicated())["row"].unique()
        if len(twice):  # (parse_problem numbers a name given twice)
            found = found.filter(~pl.int_range(pl.len()).is_in(twice.implode()))
            entries = _dimensions(found)
        if not found.height:
            return None, new.drop("_row")
        rows = self._made(found, entries)
        return rows, new.filter(~pl.col("_row").is_in(found["_row"].implode())).drop("_row")

    def _made(self, found: pl.DataFrame, entries: pl.DataFrame) -> pa.Table:
        """The rows of ``found`` (:meth:`make`'s, with their ``template``) and their
        dimensions ``entries`` (:func:`_dimensions`)."""
        if self._rows is None:
            self._rows = pa.table({c: arrow_array([getattr(s, c) for s in self._shapes], self.types[c])
                                   for c in self.columns if c not in _OWN})
        taken = self._rows.take(found["template"].to_arrow())
        offsets = np.zeros(found.height + 1, dtype=np.int32)
        np.cumsum(np.bincount(entries["row"].to_numpy(), minlength=found.height), out=offsets[1:])
        dims_type = self.types["dims"]
        dims = pa.MapArray.from_arrays(numpy_array(offsets), entries["name"].to_arrow().cast(dims_type.key_type),
                                       entries["value"].to_arrow().cast(dims_type.item_type)).cast(dims_type)
        own = {"shape_id": found["shape_id"].to_arrow(), "key": found["key"].to_arrow(),
               "problem": found["problem"].to_arrow(), "dims": dims,
               "timed": numpy_array(np.ones(found.height, dtype=bool))}
        return pa.table({c: (own[c].cast(self.types[c]) if c in own else taken.column(c)) for c in self.columns})


def _dimensions(found: pl.DataFrame) -> pl.DataFrame:
    """The dimensions of the problem descriptors of ``found`` (each matched whole by one
    form: ``named``), a row each in order: ``row`` (the place in ``found``), ``name``,
    ``value`` -- as :func:`~loganalyze.grammars.onednn_verbose.parse_problem` gives them,
    names given twice aside."""
    problem = pl.col("problem")
    parts = found.select(
        pl.col("named"),
        part=pl.when(pl.col("named")).then(problem.str.extract_all(g.NAMED_DIM)).otherwise(problem.str.split(":")),
    ).with_row_index("row")
    lengths = parts["part"].list.len().to_numpy()
    place = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    flat = parts.explode("part").with_columns(place=pl.Series(place, dtype=pl.UInt32))
    name = pl.col("part").str.extract(f"^({g.DIM_NAME})", 1)
    return flat.select(
        "row",
        name=pl.when(pl.col("named")).then(name).otherwise(pl.lit("t") + pl.col("place").cast(pl.String)),
        value=pl.when(pl.col("named")).then(pl.col("part").str.slice(name.str.len_chars())).otherwise(pl.col("part")),
    )
