"""The Arrow builders that stand in for ``pa.array`` (importers/arrow_arrays.py): the same
arrays, or an error where ``pa.array`` gives one (``arrow_array`` then asks ``pa.array``,
whose error the caller sees)."""
from __future__ import annotations

from functools import partial

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from loganalyze.importers import arrow_arrays as aa

FLAT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32(), pa.uint64(),
              pa.float32(), pa.float64(), pa.bool_(), pa.string(), pa.large_string(), pa.decimal128(38, 0)]
NESTED_TYPES = [pa.list_(pa.string()), pa.map_(pa.string(), pa.string()),
                pa.struct([("a", pa.int64()), ("b", pa.string())])]
#: what the importers hand over: Python numbers, text, booleans and None, some of them odd
VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2 ** 130, max_value=2 ** 130),
    st.sampled_from([2 ** 24, 2 ** 24 + 1, 2 ** 53, 2 ** 53 + 1, -2 ** 63, 2 ** 64 - 1, 10 ** 38, 10 ** 38 - 1]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6), st.just("\ud800"),
)


#: the builders arrow_array tries before pa.array: numpy, and polars once an importer has loaded it
BUILDERS = [aa._flat_by_numpy, partial(aa._flat_by_polars, pl)]


def _same(values, arrow_type, built: bool = False):
    """Each builder gives pa.array's array, or raises where pa.array raises (``built``:
    values each builder must take, of exactly their column's kinds)."""
    try:
        want = pa.array(values, arrow_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError, UnicodeError):
        want = None
    for flat in BUILDERS:
        try:
            got = aa._assemble(flat, values, arrow_type)
        except (TypeError, ValueError, OverflowError, UnicodeError, pa.ArrowException, pl.exceptions.PolarsError):
            assert not built, f"{values!r} as {arrow_type}: {flat} refuses them"
            continue  # arrow_array asks the next builder, then pa.array
        assert want is not None, f"{values!r} as {arrow_type}: pa.array refuses them ({flat})"
        got.validate(full=True)
        assert got.type == want.type and (got.equals(want) or _equal_with_nan(got, want)), (
            values, arrow_type, got, want, flat)


def _equal_with_nan(a: pa.Array, b: pa.Array) -> bool:
    """The same values, a NaN equal to a NaN (Arrow's ``equals`` holds NaN unequal to itself)."""
    def same(x, y):
        return x == y or (isinstance(x, float) and isinstance(y, float) and x != x and y != y)
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a.to_pylist(), b.to_pylist()))


@pytest.mark.filterwarnings("error")
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FLAT_TYPES), st.lists(VALUE, max_size=8))
@example(pa.float32(), [1e300, -1e300, 3.5])  # beyond float32: inf, as pa.array, no warning
@example(pa.float32(), [float("nan")])  # found by hypothesis: NaN is the same value, not equal to itself
@example(pa.float32(), [2 ** 24 + 1])
@example(pa.float32(), [2 ** 24, -2 ** 24])
@example(pa.float64(), [2 ** 53 + 1, 1.5])
@example(pa.int64(), [True])
@example(pa.string(), ["a", None, "é", ""])
@example(pa.decimal128(38, 0), [10 ** 38, None])
@example(pa.uint64(), [2 ** 64 - 1, -1])
def test_flat_columns_match_pa_array(arrow_type, values):
    _same(values, arrow_type)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FLAT_TYPES), st.lists(st.one_of(st.none(), st.integers(-2 ** 70, 2 ** 70)), max_size=8))
def test_integer_columns_match_pa_array(arrow_type, values):
    _same(values, arrow_type)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.one_of(st.none(), st.text(max_size=3)), max_size=3)), max_size=5))
def test_list_columns_match_pa_array(values):
    _same(values, NESTED_TYPES[0], built=True)


_ROWS = [("x", None), (), ("y",), ("x", "y", "z")]
_MD_ROWS = [tuple({"a": x, "b": x} for x in row) for row in _ROWS]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(range(len(_ROWS))), st.lists(st.text(max_size=2), max_size=2)),
                max_size=12))
def test_list_columns_of_shared_values_match_pa_array(picks):
    """Rows that are one object (a cached tuple: made into Arrow once, taken again by index,
    in lists of POLARS_FIRST_VALUES or more: here in any list) beside rows of their own and
    None."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aa, "POLARS_FIRST_VALUES", 0)
        _same([_ROWS[p] if isinstance(p, int) else p for p in picks], NESTED_TYPES[0], built=True)
        md = pa.list_(pa.struct([("a", pa.string()), ("b", pa.string())]))
        _same([_MD_ROWS[p] if isinstance(p, int) else p and [{"a": x} for x in p] for p in picks], md, built=True)


def test_map_and_struct_columns_match_pa_array():
    _same([{"k": "v", "x": None}, None, {}], NESTED_TYPES[1])
    _same([[("k", "v")], None], NESTED_TYPES[1])
    _same([{"a": 1, "b": "x"}, None, {"a": None}], NESTED_TYPES[2])
    _same([(2, "y"), None], NESTED_TYPES[2])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([np.int8, np.int32, np.int64, np.uint64, np.float64, np.bool_]),
       st.lists(st.tuples(st.integers(0, 100), st.booleans()), max_size=70), st.booleans())
def test_numpy_arrays_match_pa_array(dtype, rows, with_mask):
    values = np.array([v for v, _ in rows], dtype=dtype)
    mask = np.array([m for _, m in rows], dtype=bool) if with_mask else None
    got = aa.numpy_array(values, mask=mask)
    got.validate(full=True)
    assert got.equals(pa.array(values, mask=mask))
    want = pa.array(values, pa.int64(), mask=mask) if dtype != np.bool_ else None
    if want is not None and dtype != np.float64:
        assert aa.numpy_array(values, pa.int64(), mask=mask).equals(want)


def test_numpy_arrays_of_a_slice_and_of_two_dimensions():
    values = np.arange(10, dtype=np.int64)[::3]  # not contiguous: copied first
    assert aa.numpy_array(values).to_pylist() == [0, 3, 6, 9]
    with pytest.raises(ValueError):
        aa.numpy_array(np.zeros((2, 2)))


def test_arrow_array_falls_back_to_pa_array_and_its_error():
    assert aa.arrow_array([1.0, 2], pa.int64()).to_pylist() == [1, 2]  # a float pa.array takes
    with pytest.raises(pa.ArrowTypeError):
        aa.arrow_array(["a", 1], pa.string())


def test_numbers_of_reads_every_chunk_and_slice_without_pandas():
    import subprocess
    import sys

    column = pa.chunked_array([pa.array(np.arange(10, dtype=np.int64)).slice(3, 4), pa.array([7, 8], pa.int64())])
    assert aa.numbers_of(column).tolist() == [3, 4, 5, 6, 7, 8]
    assert aa.numbers_of(pa.chunked_array([], pa.uint64())).dtype == np.uint64
    with pytest.raises(ValueError):
        aa.numbers_of(pa.chunked_array([pa.array([1, None], pa.int64())]))
    code = ("import sys, numpy as np, pyarrow as pa; from loganalyze.importers.arrow_arrays import numbers_of, "
            "numpy_array; numbers_of(pa.chunked_array([numpy_array(np.arange(3))])); print('pandas' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


def test_list_rows_taken_again_without_pandas():
    """A long list column whose rows are one object (a grammar's cached tuple: made into
    Arrow once, taken again by index) imports no pandas: its index goes to Arrow as a numpy
    array (``pa.array`` would import pandas, 0.3 s, once per process)."""
    import subprocess
    import sys

    code = ("import sys, polars, pyarrow as pa; from loganalyze.importers.arrow_arrays import arrow_array, "
            "POLARS_FIRST_VALUES as n; md = ({'a': 'x'}, {'a': 'y'}); "
            "t = pa.list_(pa.struct([('a', pa.string())])); "
            "col = arrow_array([md] * n + [None, ({'a': 'z'},)], t); "
            "assert col.to_pylist() == [list(md)] * n + [None, [{'a': 'z'}]]; print('pandas' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
