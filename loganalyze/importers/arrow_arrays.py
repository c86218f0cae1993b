"""Arrow arrays from Python lists and numpy arrays, without ``pa.array``.

``pa.array`` first asks whether its input is a pandas object, and to ask it imports pandas:
0.3-0.4 s, once per process, in the middle of an ingest that never uses pandas (a third of
a small file's whole ingest; ~3% of a 500 MB trace's, on one core while the other waits).
The builders here give the same arrays from pyarrow's own pieces (``Array.from_buffers``:
its ``from_arrays`` constructors import ``pyarrow.compute`` for a null mask, 57 ms with what it
pulls in):

- :func:`numpy_array`: a 1-D numpy array of numbers or booleans, with an optional null
  mask; the numbers are not copied.
- :func:`arrow_array`: a list of Python values for a column of a given Arrow type, from
  values of exactly the column's kind (``int`` for integers, ``str`` for text, ...: one
  check, :func:`_check_kinds`, for both builders).  Flat columns are built by polars when
  an importer has loaded it (lists of :data:`POLARS_FIRST_VALUES` or more; its first column
  imports ``pyarrow.compute``, ~25 ms), else by numpy (lists of up to
  :data:`NUMPY_MAX_VALUES`); nested ones (maps, lists, structs) are put together from flat
  children, the rows of a list column that are one object (a tuple a grammar cached) made
  once.  Anything else (other types, other values) goes to ``pa.array`` itself, which also
  gives its errors; so do long lists without polars.
"""
from __future__ import annotations

import sys
from functools import partial
from itertools import chain

import numpy as np
import pyarrow as pa

#: numpy dtypes of the flat Arrow types :func:`arrow_array` builds with numpy
_NUMPY_DTYPES = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
    pa.float32(): np.float32, pa.float64(): np.float64,
}


def numpy_array(values: np.ndarray, arrow_type: pa.DataType | None = None,
                mask: np.ndarray | None = None) -> pa.Array:
    """``pa.array(values, arrow_type, mask=mask)`` for a 1-D numpy array of fixed-width
    numbers or booleans: the numbers are shared with ``values``, not copied (a different
    ``arrow_type`` is reached by a cast, as ``pa.array`` does)."""
    values = np.ascontiguousarray(values)
    if values.ndim != 1:
        raise ValueError("numpy_array takes a 1-D array")
    if mask is not None and len(mask) != len(values):
        raise ValueError("the mask and the values differ in length")
    if values.dtype == np.bool_:
        own, data = pa.bool_(), pa.py_buffer(np.packbits(values, bitorder="little"))
    else:
        own, data = pa.from_numpy_dtype(values.dtype), pa.py_buffer(values)
    out = _from_buffers(own, len(values), mask, data)
    return out if arrow_type is None or arrow_type == own else out.cast(arrow_type)


def numbers_of(column: pa.ChunkedArray) -> np.ndarray:
    """The values of ``column`` (fixed-width numbers, no nulls) as one numpy array, read
    from its buffers: pyarrow's own ``to_numpy`` imports pandas (a third of a second) in a
    process that has not loaded it."""
    if column.null_count:
        raise ValueError("numbers_of takes a column without nulls")
    dtype = _NUMPY_DTYPES[column.type]
    parts = [np.frombuffer(c.buffers()[1], dtype=dtype)[c.offset:c.offset + len(c)] for c in column.chunks]
    return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype)


#: the longest list :func:`arrow_array` builds with numpy: its Python loops cost ~0.13 us a
#: value more than ``pa.array`` (100 k strings and 100 k integers: 32 against 6 ms), so a
#: long list is worth the one import of pandas
NUMPY_MAX_VALUES = 20_000
#: the shortest list built by polars before numpy once an importer has loaded polars (16 k
#: strings: 17 against 143 ns a value; 500: 70 against 112), and the shortest list column
#: whose rows that are one object are made once and taken again: both import
#: ``pyarrow.compute`` (~25 ms), which a small file's ingest does not pay for
POLARS_FIRST_VALUES = 4096


def arrow_array(values: list, arrow_type: pa.DataType) -> pa.Array:
    """``pa.array(values, arrow_type)`` (see the module's docstring for how)."""
    pl = sys.modules.get("polars")
    builders = [_flat_by_numpy] if len(values) <= NUMPY_MAX_VALUES else []
    errors = (TypeError, ValueError, OverflowError, AttributeError, UnicodeError, pa.ArrowException)
    if pl is not None:
        by_polars = partial(_flat_by_polars, pl)
        builders.insert(0 if len(values) >= POLARS_FIRST_VALUES else len(builders), by_polars)
        errors += (pl.exceptions.PolarsError,)
    for flat in builders:
        try:
            return _assemble(flat, values, arrow_type)
        except errors:
            pass
    return pa.array(values, arrow_type)


def _assemble(flat, values: list, arrow_type: pa.DataType) -> pa.Array:
    """Nested columns put together by pyarrow from children built by ``flat``."""
    if pa.types.is_map(arrow_type):  # (key, value) pairs or dicts, as pa.array takes them
        # keys and values straight from each dict, not as one (key, value) tuple an item:
        # a log with many distinct shapes made ~100 k lists and 1.5 M tuples per insert of
        # its shapes, and the garbage collector went through them (docs/benchmarks.md)
        maps = [v if v is None or isinstance(v, dict) else list(v) for v in values]
        present = [v for v in maps if v is not None]
        offsets = pa.py_buffer(np.concatenate([np.zeros(1, np.int32), np.cumsum(
            [0 if v is None else len(v) for v in maps], dtype=np.int64).astype(np.int32)]))
        keys = list(chain.from_iterable(v.keys() if isinstance(v, dict) else (k for k, _ in v) for v in present))
        vals = list(chain.from_iterable(v.values() if isinstance(v, dict) else (x for _, x in v) for v in present))
        fields = [arrow_type.key_field, arrow_type.item_field]
        entries = _from_buffers(pa.struct(fields), len(keys), None, children=[
            _assemble(flat, keys, arrow_type.key_type), _assemble(flat, vals, arrow_type.item_type)])
        return _from_buffers(arrow_type, len(values), _is_none(values), offsets, children=[entries])
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        large = pa.types.is_large_list(arrow_type)
        shared = False
        if len(values) >= POLARS_FIRST_VALUES:  # (shorter lists: no scan for shared rows)
            distinct, which = _distinct_objects(values)
            shared = len(distinct) < np.count_nonzero(which >= 0)
        offsets, items = _list_parts(distinct if shared else values, large=large)
        children = _assemble(flat, items, arrow_type.value_type)
        if shared:
            offsets, children = _taken_again(np.frombuffer(offsets, np.int64 if large else np.int32), which, children)
        return _from_buffers(arrow_type, len(values), _is_none(values), offsets, children=[children])
    if pa.types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        children = [
            _assemble(flat, [None if v is None else (v.get(f.name) if isinstance(v, dict) else v[i])
                             for v in values], f.type)
            for i, f in enumerate(fields)
        ]
        return _from_buffers(arrow_type, len(values), _is_none(values), children=children)
    return flat(values, arrow_type)


def _distinct_objects(values: list) -> tuple[list, np.ndarray]:
    """The values that are not None, each object once (a tuple a grammar cached, shared by
    many rows, is one object: its items are made into Arrow once), and for each value its
    place among them (-1 for None)."""
    places: dict[int, int] = {}
    distinct: list = []
    which = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if v is None:
            which[i] = -1
            continue
        j = places.get(id(v))
        if j is None:
            j = places[id(v)] = len(distinct)
            distinct.append(v)
        which[i] = j
    return distinct, which


def _taken_again(offsets: np.ndarray, which: np.ndarray, items: pa.Array) -> tuple[pa.Buffer, pa.Array]:
    """The offsets and items of a list column whose value ``k`` is the distinct value
    ``which[k]`` (-1: None) of a column with ``offsets`` and ``items``."""
    present = which >= 0
    lengths = np.where(present, np.diff(offsets)[np.maximum(which, 0)], 0)
    out = np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths, dtype=np.int64)])
    starts = offsets[:-1][which[present]] - out[:-1][present]
    index = np.repeat(starts, lengths[present]) + np.arange(out[-1], dtype=np.int64)
    return pa.py_buffer(out.astype(offsets.dtype)), items.take(numpy_array(index))


def _list_parts(values: list, large: bool = False) -> tuple[pa.Buffer, list]:
    """The offsets buffer and the items one after another of a list column."""
    offsets, items = [0], []
    for v in values:
        if v is not None:
            items.extend(v)
        offsets.append(len(items))
    return pa.py_buffer(np.array(offsets, dtype=np.int64 if large else np.int32)), items


def _is_none(values: list) -> np.ndarray:
    return np.fromiter((v is None for v in values), dtype=bool, count=len(values))


def _flat_by_polars(pl, values: list, arrow_type: pa.DataType) -> pa.Array:
    """As :func:`_flat_by_numpy`, by polars (whose own conversion takes a ``bool`` for a
    number, or an integer a float cannot hold)."""
    _check_kinds(values, arrow_type)
    dtype = pl.from_arrow(pa.nulls(0, arrow_type)).dtype
    return pl.Series(values, dtype=dtype, strict=True).to_arrow().cast(arrow_type)


def _check_kinds(values: list, arrow_type: pa.DataType) -> None:
    """TypeError or OverflowError where ``pa.array`` refuses ``values`` as ``arrow_type`` and
    a builder would not: values not of exactly their column's Python kind (``bool`` is not a
    number, nor a number text), integers beyond a HUGEINT or a float's exact range."""
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        _require(values, (str,))
    elif pa.types.is_decimal128(arrow_type) and arrow_type.scale == 0:  # HUGEINT columns
        _require(values, (int,))
        if any(v is not None and abs(v) >= 10 ** arrow_type.precision for v in values):
            raise OverflowError("an integer beyond the decimal's precision")  # pa.array says so
    elif pa.types.is_boolean(arrow_type):
        _require(values, (bool,))
    elif pa.types.is_floating(arrow_type):
        _require(values, (int, float))
        exact = 2 ** (24 if arrow_type == pa.float32() else 53)  # the largest exact integers
        if any(type(v) is int and abs(v) > exact for v in values):
            raise OverflowError("an integer the float type cannot hold exactly")  # pa.array says so
    else:
        _require(values, (int,))


def _flat_by_numpy(values: list, arrow_type: pa.DataType) -> pa.Array:
    """Numbers, booleans and text from values of exactly their Python kind (``bool`` is not
    taken for a number, nor a number for text), None as null; TypeError for anything else."""
    _check_kinds(values, arrow_type)
    mask = _is_none(values)
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        data = [b"" if v is None else v.encode() for v in values]
        ends = np.cumsum([len(b) for b in data], dtype=np.int64)
        offsets = np.concatenate([np.zeros(1, np.int64), ends])
        if not pa.types.is_large_string(arrow_type):
            if len(values) and ends[-1] >= 2 ** 31:
                raise OverflowError("too much text for a string array")
            offsets = offsets.astype(np.int32)
        return _from_buffers(arrow_type, len(values), mask, pa.py_buffer(offsets), pa.py_buffer(b"".join(data)))
    if pa.types.is_decimal128(arrow_type) and arrow_type.scale == 0:  # HUGEINT columns
        data = b"".join((v or 0).to_bytes(16, "little", signed=True) for v in values)
        return _from_buffers(arrow_type, len(values), mask, pa.py_buffer(data))
    if pa.types.is_boolean(arrow_type):
        return numpy_array(np.array([v is True for v in values], dtype=bool), mask=mask)
    dtype = _NUMPY_DTYPES.get(arrow_type)
    if dtype is None:
        raise TypeError(f"no numpy builder for {arrow_type}")
    with np.errstate(over="ignore"):  # a double beyond float32 becomes inf, as pa.array makes it
        data = np.array([0 if v is None else v for v in values], dtype=dtype)
    return numpy_array(data, mask=mask)


def _from_buffers(arrow_type: pa.DataType, length: int, mask: np.ndarray | None, *buffers,
                  children: list | None = None) -> pa.Array:
    """An array of ``length`` values from its data ``buffers`` (and ``children``, nested
    types), null where ``mask`` is true (no validity bitmap when nothing is null)."""
    nulls = 0 if mask is None else int(np.count_nonzero(mask))
    validity = pa.py_buffer(np.packbits(~np.asarray(mask, dtype=bool), bitorder="little")) if nulls else None
    return pa.Array.from_buffers(arrow_type, length, [validity, *buffers], null_count=nulls, children=children)


def _require(values: list, kinds: tuple[type, ...]) -> None:
    for v in values:
        if v is not None and type(v) not in kinds:
            raise TypeError(f"{type(v).__name__} in a column of {kinds[0].__name__}")
