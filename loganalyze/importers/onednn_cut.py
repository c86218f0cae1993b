"""The per-line cut of oneDNN verbose lines: one compiled pass for the positions, polars per key.

A verbose line is ``<pre>[,<ts>],<body...>,<tail>`` where ``pre`` is the marker with its
optional version token, ``ts`` the optional timestamp and ``tail`` the last field (a time on
profiling lines).  The *key* of a line is the line without its timestamp and tail: lines
with one key share one shape, which the pyparsing grammar reads once.

No Python code, no regex and no string function runs per line:

- the pieces (``pre``, ``rest``, ``tail``, ``ts``): :func:`.onednn_positions.find_pieces`
  finds them in one compiled pass over each line's first and last bytes (the batch's
  buffer and line offsets, as :mod:`loganalyze.lines` cut them) and writes them as Arrow
  *binary views* into the buffer (no byte is copied);
- the times: the same pass reads the timestamps and the tails that are plain decimals
  (``<digits>[.<digits>][e<digits>]``, signed exponent allowed) to the correctly rounded
  double where it can prove it (:data:`.onednn_positions.TS_READ`, ``TIME_READ``), polars
  reads the text of the others (every correct reader rounds the same, so they agree
  with DuckDB there); any other tail goes to DuckDB's ``try_cast``, once per distinct
  text, so what counts as a number stays DuckDB's rule;
- polars hashes the key's two pieces (to group a batch's lines by key);
- shape ids: DuckDB's ``hash(key)`` (what earlier versions stored, so databases stay
  compatible), computed once per distinct key of the file (the importer keeps them).

:func:`cut_batch` needs no database: the importer runs it on worker threads, two batches
at once (the compiled pass and polars let go of the GIL).

The result is exactly what the former SQL cut gave (tests/test_onednn_speed.py compares
the two on hostile lines, random lines and a generated log).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from . import onednn_positions as positions
from .arrow_arrays import numpy_array

if TYPE_CHECKING:
    from ..lines import LineBatch

_HASH_SEED = 0x6F6E65646E6E  # any fixed seed: polars' hash only groups a batch's lines

#: columns of :func:`cut_lines`
CUT_COLUMNS = ["line_no", "pre", "rest", "ts_ms", "tail", "time_ms", "key_hash"]


def cut_lines(con: duckdb.DuckDBPyConnection, lines: LineBatch | pa.Table) -> pl.DataFrame:
    """The verbose lines of a line batch (a :class:`~loganalyze.lines.LineBatch`, or a table
    of ``line_no`` and ``line`` with its line end), cut: :func:`cut_batch`, then
    :func:`settle_times`."""
    return settle_times(con, cut_batch(lines))


def cut_batch(lines: LineBatch | pa.Table) -> pl.DataFrame:
    """The verbose lines of a line batch, cut, their times read where they are plain decimal
    numbers (no database: this runs on worker threads, several batches at once).

    Columns: ``line_no``; ``pre`` and ``rest`` (binary: the key is ``pre || rest``);
    ``ts_ms`` (the timestamp, or null); ``tail`` (the last field, binary, or null when the
    line has no field after its leading ones; :func:`tail_text` is its text); ``time_ms``
    (``tail`` when it is a plain decimal number and finite, else null); ``key_hash`` (polars' hash of the key, to group lines by
    key); ``odd`` (a tail that is not a plain decimal: :func:`settle_times` reads it).
    """
    buffer, offsets, line_nos = _buffers(lines)
    rows, views, flags, values = positions.find_pieces(buffer, offsets)
    line_no = rows + line_nos if isinstance(line_nos, int) else line_nos[rows]
    if len(rows) == 0:
        return pl.DataFrame(schema={"line_no": pl.Int64, "pre": pl.Binary, "rest": pl.Binary, "ts_ms": pl.Float64,
                                    "tail": pl.Binary, "time_ms": pl.Float64, "key_hash": pl.UInt64,
                                    "odd": pl.Boolean})
    has_ts, plain = (flags & positions.HAS_TS) != 0, (flags & positions.PLAIN) != 0
    # the numpy columns through Arrow: polars' own numpy constructor imports numpy.ma (60 ms)
    numbers = pl.from_arrow(pa.table({
        "line_no": numpy_array(line_no),
        "ts": numpy_array(_numbers(buffer, views[positions.TS], values[0], has_ts, (flags & positions.TS_READ) != 0)),
        "time": numpy_array(_numbers(buffer, views[positions.TAIL], values[1], plain,
                                     (flags & positions.TIME_READ) != 0)),
        "has_ts": numpy_array(has_ts), "has_tail": numpy_array((flags & positions.HAS_TAIL) != 0),
        "plain": numpy_array(plain),
    }))
    frame = pl.DataFrame([*numbers.get_columns(), _views(buffer, views[positions.PRE]).alias("pre"),
                          _views(buffer, views[positions.REST]).alias("rest"),
                          _views(buffer, views[positions.TAIL]).alias("tail")])
    cut = frame.lazy().select(
        "line_no", "pre", "rest",
        ts_ms=pl.when("has_ts").then("ts"),
        tail=pl.when("has_tail").then("tail"),
        time_ms=pl.when("plain").then(_finite(pl.col("time"))),
        key_hash=pl.col("rest").hash(_HASH_SEED).xor(pl.col("pre").hash(_HASH_SEED + 1)),
        odd=pl.col("has_tail") & ~pl.col("plain"),
    ).collect()
    return cut


def _numbers(buffer: pa.Buffer, views: np.ndarray, values: np.ndarray, wanted: np.ndarray,
             read: np.ndarray) -> np.ndarray:
    """The numbers of the pieces ``views`` where ``wanted`` (decimals): ``values`` where the
    compiled pass ``read`` them, polars' reading of the text for the others (long mantissas,
    far exponents: a few lines, if any); anything where not ``wanted``."""
    rest = np.flatnonzero(wanted & ~read)
    if len(rest):
        values = values.copy()
        values[rest] = _views(buffer, views[rest]).cast(pl.String).cast(pl.Float64).to_numpy()
    return values


def _finite(time: pl.Expr) -> pl.Expr:
    """``time`` where it is a finite number, else null (an infinite or NaN time is no time)."""
    return pl.when(time.is_finite()).then(time)


def settle_times(con: duckdb.DuckDBPyConnection, cut: pl.DataFrame) -> pl.DataFrame:
    """A cut (from :func:`cut_batch`) with the times of its other tails read by DuckDB's
    ``try_cast``, once per distinct text (finite ones only): the columns of
    :data:`CUT_COLUMNS`, and ``shape_id`` where ``cut`` has it."""
    columns = [*CUT_COLUMNS, *(["shape_id"] if "shape_id" in cut.columns else [])]
    if not cut["odd"].any():
        return cut.select(columns)
    # the few odd lines only (a header's): their times put in place, not a join of the batch
    rows = cut.select(pl.arg_where("odd")).to_series()
    odd = cut.select(pl.col("tail").gather(rows))
    odd_arrow = odd.unique().with_columns(text=tail_text()).to_arrow()  # noqa: F841 - read by the SQL below
    read = pl.from_arrow(con.sql("SELECT tail, try_cast(text AS DOUBLE) AS odd_ms FROM odd_arrow").to_arrow_table())
    times = odd.join(read, on="tail", how="left", maintain_order="left").select(_finite(pl.col("odd_ms")))
    return cut.with_columns(time_ms=cut["time_ms"].clone().scatter(rows, times.to_series())).select(columns)


def _buffers(lines: LineBatch | pa.Table) -> tuple[pa.Buffer, np.ndarray, np.ndarray | int]:
    """The bytes, the line offsets (one past each line's "\\n") and the line numbers of a
    batch (for a LineBatch, that of its first line: the others follow it)."""
    if not isinstance(lines, pa.Table):
        return lines.data, lines.offsets, lines.first_line
    text = lines.column("line").combine_chunks().cast(pa.large_binary())
    _, offsets, data = text.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[text.offset:text.offset + len(text) + 1]
    return data if data is not None else pa.py_buffer(b""), offsets, lines.column("line_no").to_numpy()


def _views(buffer: pa.Buffer, views: np.ndarray) -> pl.Series:
    """A polars binary column of Arrow binary ``views`` (16 bytes a value, from
    :func:`.onednn_positions.find_pieces`) into ``buffer``."""
    views = np.ascontiguousarray(views)
    array = pa.Array.from_buffers(pa.binary_view(), len(views), [None, pa.py_buffer(views), buffer])
    # through a table: polars' Series(pa.Array) imports pyarrow.compute (24 ms holding the
    # GIL, on the way of the first batches)
    return pl.from_arrow(pa.Table.from_arrays([array], names=["views"])).to_series()


def tail_text() -> pl.Expr:
    """The last field of each line of a cut as text (a line's end is ASCII after a comma,
    and its bytes were checked as UTF-8 when the line was cut out)."""
    return pl.col("tail").cast(pl.String)


def key_text() -> pl.Expr:
    """The key of each line of a cut (``pre || rest``) as text, named ``key``."""
    return pl.concat_str(pl.col("pre").cast(pl.String), pl.col("rest").cast(pl.String)).alias("key")


def keys_of(cuts: pl.DataFrame) -> pl.DataFrame:
    """One row per distinct key of ``cuts``: ``key_hash`` and ``key`` (text)."""
    return (
        cuts.lazy()
        .group_by("key_hash")
        .agg(pl.col("pre").first(), pl.col("rest").first())
        .select("key_hash", key_text())
        .collect()
    )


def with_shape_ids(con: duckdb.DuckDBPyConnection, keys: pl.DataFrame) -> pl.DataFrame:
    """``keys`` (from :func:`keys_of`) with ``shape_id``: DuckDB's ``hash(key)``."""
    keys_arrow = keys.select("key_hash", "key").to_arrow()  # noqa: F841 - read by the SQL below
    ids = pl.from_arrow(con.sql("SELECT key_hash, hash(key) AS shape_id FROM keys_arrow").to_arrow_table())
    return keys.join(ids, on="key_hash", how="left")


#: a hash index's bucket (:class:`_Buckets`) holding more of the hashes than this (hashes
#: that share their top bits, which a 64-bit hash of distinct keys does not make) sends the
#: index's lookups to the binary search
_BUCKET_MOST = 64


class _Buckets:
    """The sorted hashes of a :class:`ShapeIds` (and their ids) found through their top
    bits: ``starts[b]`` is the first place of the hashes whose top bits are ``b`` (one to
    two buckets a hash).  A lookup reads a bucket's start and its first hash, the few that
    share a bucket the next ones.  numpy's binary search mispredicts a branch on about
    every other of its steps: a batch's 65 k lookups among 46 k hashes took 7 ms, through
    the buckets 4 ms (a log of dynamic batch sizes: docs/benchmarks.md, "Thirty-third
    session")."""

    def __init__(self, hashes: np.ndarray, ids: np.ndarray):
        self.hashes, self.ids = hashes, ids
        bits = min(int(len(hashes)).bit_length(), 24)
        self.shift = np.uint64(64 - bits)
        counts = np.bincount((hashes >> self.shift).astype(np.intp), minlength=1 << bits)
        self.starts = np.zeros(len(counts) + 1, dtype=np.int32 if len(hashes) < 2 ** 31 else np.int64)
        np.cumsum(counts, out=self.starts[1:])
        self.usable = len(hashes) > 0 and int(counts.max()) <= _BUCKET_MOST

    def find(self, hashes: np.ndarray) -> np.ndarray:
        """The place of each of ``hashes`` among this index's (-1 where it is not one)."""
        bucket = (hashes >> self.shift).astype(np.intp)
        first, end = self.starts[bucket], self.starts[bucket + 1]
        place = np.full(len(hashes), -1, dtype=np.int64)
        todo = np.flatnonzero(first < end)  # the hashes of non-empty buckets, looked at in turn
        step = 0
        while len(todo):
            at = first[todo] + step
            hit = self.hashes[at] == hashes[todo]
            place[todo[hit]] = at[hit]
            todo = todo[~hit & (at + 1 < end[todo])]
            step += 1
        return place


class ShapeIds:
    """Shape ids by polars' hash of their key (``key_hash``): in the order they were added
    (:attr:`added`, a frame: the ids a worker had not seen are those after its count), and
    sorted by hash for :meth:`of_keys`.  Never changed in place: :meth:`with_added` makes the
    next (a worker thread keeps the one it read).  A polars ``replace_strict`` against every
    id of a file built a hash table of them and sorted them each time (twice a batch, ~28 ms
    at 562 k ids: a log of dynamic batch sizes); the sorted arrays grow by an insert.

    :meth:`of_keys` finds most hashes through an index (:class:`_Buckets`) of the sorted
    hashes of an earlier set, shared by the sets made from it until they hold half as
    many more (a log of dynamic batch sizes adds ids every batch, and an index costs as much to
    make as a batch's lookups); the others by binary search."""

    def __init__(self, added: pl.DataFrame | None = None, hashes: np.ndarray | None = None,
                 ids: np.ndarray | None = None, buckets: _Buckets | None = None):
        self.added = pl.DataFrame(schema={"key_hash": pl.UInt64, "shape_id": pl.UInt64}) if added is None else added
        self._hashes = np.zeros(0, np.uint64) if hashes is None else hashes
        self._ids = np.zeros(0, np.uint64) if ids is None else ids
        self._buckets = buckets

    def __len__(self) -> int:
        return self.added.height

    def with_added(self, keys: pl.DataFrame) -> "ShapeIds":
        """These ids and those of ``keys`` (``key_hash``, ``shape_id``; hashes not here)."""
        keys = keys.select(pl.col("key_hash", "shape_id").cast(pl.UInt64))
        hashes = keys["key_hash"].to_numpy()
        order = np.argsort(hashes, kind="stable")
        at = np.searchsorted(self._hashes, hashes[order])
        return ShapeIds(pl.concat([self.added, keys]), np.insert(self._hashes, at, hashes[order]),
                        np.insert(self._ids, at, keys["shape_id"].to_numpy()[order]), self._buckets)

    def _index(self) -> _Buckets:
        """The index :meth:`of_keys` looks in first: the one shared, or one of these hashes
        when it has fallen half its size behind (made on the worker thread that asks first)."""
        buckets = self._buckets
        if buckets is None or len(self._hashes) - len(buckets.hashes) > len(buckets.hashes) // 2:
            self._buckets = buckets = _Buckets(self._hashes, self._ids)
        return buckets

    def of_keys(self, key_hash: pl.Series) -> pl.Series:
        """The shape id of each of the hashes ``key_hash`` (null where none is here)."""
        hashes = key_hash.to_numpy()
        ids, known = np.zeros(len(hashes), np.uint64), np.zeros(len(hashes), bool)
        if len(self._hashes):
            ids, known = self._find(hashes, ids, known)
        # (a table: polars takes an Arrow array through pyarrow.compute, and numpy through
        # numpy.ma, which a small log's ingest does not import)
        found = numpy_array(ids, mask=~known)
        return pl.from_arrow(pa.table({"shape_id": found}))["shape_id"]

    def _find(self, hashes: np.ndarray, ids: np.ndarray, known: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ids of ``hashes`` and whether each is here (``ids``, ``known``: none found yet)."""
        n = len(self._hashes)
        buckets = self._index()
        if buckets.usable:
            place = buckets.find(hashes)
            ids, known = buckets.ids[np.maximum(place, 0)], place >= 0
            if len(buckets.hashes) == n:
                return ids, known
        rest = np.flatnonzero(~known)  # added since the index was made, or no usable index
        at = np.minimum(np.searchsorted(self._hashes, hashes[rest]), n - 1)
        hit = self._hashes[at] == hashes[rest]
        ids[rest[hit]], known[rest[hit]] = self._ids[at[hit]], True
        return ids, known


def with_events(cuts: pl.DataFrame, keys: ShapeIds) -> pl.DataFrame:
    """``cuts`` with each line's ``shape_id`` (null for a key not in ``keys``; a line that
    has one already keeps it, and only the others are looked up)."""
    if "shape_id" not in cuts.columns:
        return cuts.with_columns(shape_id=pl.lit(keys.of_keys(cuts["key_hash"])))
    missing = cuts["shape_id"].is_null()
    if not missing.any():
        return cuts
    found = keys.of_keys(cuts["key_hash"].filter(missing))
    return cuts.with_columns(shape_id=cuts["shape_id"].clone().scatter(missing.arg_true(), found))


def line_hash() -> pl.Expr:
    """polars' hash of a cut line's key and last field (to group the lines keyed whole)."""
    return pl.col("key_hash").xor(pl.col("tail").hash(_HASH_SEED + 2))


def whole_texts(con: duckdb.DuckDBPyConnection, rows: pl.DataFrame) -> pl.DataFrame:
    """For cut lines keyed on their whole text (their last field is not a time), with
    their ``line_hash`` (:func:`line_hash`), one row per distinct key and last field, in the
    order they first come: ``line_hash``, ``whole`` (the line without its timestamp) and
    ``whole_id``.
    Whole-line shapes hash in their own namespace (``hash(whole, 'whole')``): the whole
    text of one line can equal the cut key of another (``X,Y`` whole vs ``X,Y,<time>``
    cut).  Made once per distinct line, not per line: a log of many short runs repeats a
    few header lines (the dnnl v1.3 corpus log repeated to 1 GiB: 6.5 M such lines)."""
    texts = (
        rows.lazy()
        .unique("line_hash", keep="first", maintain_order=True)
        .select("line_hash", pl.when(pl.col("tail").is_null()).then(key_text())
                .otherwise(pl.concat_str(key_text(), pl.lit(","), tail_text())).alias("whole"),
                first=pl.int_range(pl.len()))
        .collect()
        .to_arrow()
    )  # noqa: F841 - read by the SQL below
    return pl.from_arrow(con.sql("""SELECT line_hash, whole, hash(whole, 'whole') AS whole_id FROM texts
                                    ORDER BY first""").to_arrow_table())


def event_rows(events: pl.DataFrame) -> pa.Table:
    """The ``onednn_events`` columns of ``events`` (from :func:`with_events`) but
    ``source_id``, which :func:`events_insert` adds."""
    return events.select("line_no", "shape_id", "ts_ms", "time_ms").to_arrow()


def events_insert(source_id: int) -> str:
    """The SELECT that inserts :func:`event_rows` (``_arrow``) into ``onednn_events`` for
    the file ``source_id``: a constant DuckDB does not read from Arrow, row by row."""
    return f"SELECT {int(source_id)}::INTEGER AS source_id, * FROM _arrow"
