"""The per-line cut of oneDNN verbose lines: numpy over the batch's bytes, polars per key.

A verbose line is ``<pre>[,<ts>],<body...>,<tail>`` where ``pre`` is the marker with its
optional version token, ``ts`` the optional timestamp and ``tail`` the last field (a time on
profiling lines).  The *key* of a line is the line without its timestamp and tail: lines
with one key share one shape, which the pyparsing grammar reads once.

No Python code, no regex and no string function runs per line.  The cut works on the
positions of bytes in the batch's buffer (``LineBatch.data`` and ``offsets``, as
:mod:`loganalyze.lines` cut them):

- which lines are verbose: their first 16 bytes, read in place as two 8-byte words,
  against the markers;
- commas: one pass over the bytes finds them all; each line's first three and its last
  are found by binary search of its start and end among them;
- the leading fields (the grammar's ``LEADING_CUT_PATTERN``: ``marker[,v<digits>][,<digits>.<digits>]``
  followed by a comma or the line end): the first bytes of the second and third fields are
  read as 8-byte words and checked as digit and dot masks; a field longer than that is
  checked by Python's ``re`` (one line in millions, if any);
- the pieces (``pre``, ``rest``, ``tail``, ``ts``): Arrow *binary views* into the batch's
  buffer, built from their positions (no byte is copied); polars hashes the key's two
  pieces (to group a batch's lines by key) and parses the times;
- times: polars parses the tails that are plain decimals (``<digits>[.<digits>][e<digits>]``,
  signed exponent allowed: both libraries round correctly, so they agree there); any other
  tail goes to DuckDB's ``try_cast``, once per distinct text, so what counts as a number
  stays DuckDB's rule;
- shape ids: DuckDB's ``hash(key)`` (what earlier versions stored, so databases stay
  compatible), computed once per distinct key of the file (the importer keeps them).

:func:`cut_batch` needs no database: the importer runs it on worker threads, two batches
at once (numpy and polars let go of the GIL).

The result is exactly what the former SQL cut gave (tests/test_onednn_speed.py compares
the two on hostile lines, random lines and a generated log).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from ..grammars import onednn_verbose as g

if TYPE_CHECKING:
    from ..lines import LineBatch

_HASH_SEED = 0x6F6E65646E6E  # any fixed seed: polars' hash only groups a batch's lines
#: bytes of a line's start compared with the markers
_HEAD = 16
#: most bytes of a leading field or a tail checked by digit masks (a longer one: by ``re``)
_FIELD = 24
_COMMA, _NL, _CR, _DOT = ord(","), ord("\n"), ord("\r"), ord(".")
# the grammar's leading pieces, for fields too long for the masks; ``\d`` is ASCII as in RE2
# (the engine of the former SQL cut)
_VT_RE = re.compile(g.VERSION_TOKEN_PATTERN.replace(r"\d", "[0-9]").encode())
_TS_RE = re.compile(g.TIMESTAMP_PATTERN.replace(r"\d", "[0-9]").encode())
_PLAIN_RE = re.compile(rb"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")

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
    ``ts_ms`` (the timestamp, or null); ``tail`` (the last field's text, or null when the
    line has no field after its leading ones); ``time_ms`` (``tail`` when it is a plain
    decimal number, else null); ``key_hash`` (polars' hash of the key, to group lines by
    key); ``odd`` (a tail that is not a plain decimal: :func:`settle_times` reads it).
    """
    buffer, offsets, line_nos = _buffers(lines)
    data = np.frombuffer(buffer, dtype=np.uint8) if buffer.size else np.zeros(0, np.uint8)
    starts, ends = offsets[:-1], offsets[1:] - 1  # ends: each line's "\n"
    head = _words(data, starts, 2)
    verbose = np.flatnonzero(_is_verbose(head, ends - starts + 1))
    if len(verbose) == 0:
        return pl.DataFrame(schema={"line_no": pl.Int64, "pre": pl.Binary, "rest": pl.Binary, "ts_ms": pl.Float64,
                                    "tail": pl.String, "time_ms": pl.Float64, "key_hash": pl.UInt64,
                                    "odd": pl.Boolean})
    s, e, head = starts[verbose], ends[verbose], head[verbose]
    commas = np.flatnonzero(data[offsets[0]:offsets[-1]] == _COMMA) + offsets[0]
    padded = np.concatenate([commas, np.full(3, offsets[-1], np.int64)])  # (past the batch: never read)
    first, past = np.searchsorted(commas, s), np.searchsorted(commas, e)
    count = past - first
    c1, c2, c3 = padded[first], padded[first + 1], padded[first + 2]
    last = padded[np.maximum(past - 1, 0)]
    crlf = (e > s) & (data[np.maximum(e - 1, 0)] == _CR)
    eol = e - crlf  # where the text before the line end ends
    f1_end = np.where(count >= 1, c1, eol)
    f2_end = np.where(count >= 2, c2, eol)
    f3_end = np.where(count >= 3, c3, eol)
    field1 = count >= 1
    has_v, _ = _fullmatch(data, c1 + 1, f2_end, _VT_RE, _is_version_token, field1, 1)
    field2 = has_v & (count >= 2)
    ts_on_v, ts_words = _fullmatch(data, c2 + 1, f3_end, _TS_RE, _is_timestamp, field2, 3, digit_first=True)
    bare = field1 & ~has_v
    ts_bare = np.zeros(len(s), dtype=bool)
    if bare.any():  # (older logs: a timestamp without a version token)
        ts_bare, bare_words = _fullmatch(data, c1 + 1, f2_end, _TS_RE, _is_timestamp, bare, 3, digit_first=True)
        ts_words = np.where(ts_bare[:, None], bare_words, ts_words)
    has_ts = ts_on_v | ts_bare
    pre_end = np.where(has_v, f2_end, f1_end)
    ts_start = np.where(ts_on_v, c2 + 1, c1 + 1)
    ts_end = np.where(ts_on_v, f3_end, f2_end)
    at = np.where(has_ts, ts_end, pre_end)
    has_tail = (count >= 1) & (last >= at)
    tail_start = np.where(has_tail, last + 1, s)
    tail_len = np.where(has_tail, eol - last - 1, 0)
    plain, tail_words = _fullmatch(data, tail_start, tail_start + tail_len, _PLAIN_RE, _is_plain_number,
                                   has_tail, 2)
    rest_start = np.where(has_tail, at, s)
    frame = pl.DataFrame({
        "line_no": line_nos[verbose],
        "pre": _views(buffer, s, pre_end - s, head),
        "rest": _views(buffer, rest_start, np.where(has_tail, last - at, 0), _words(data, rest_start, 2)),
        "ts": _views(buffer, ts_start, np.where(has_ts, ts_end - ts_start, 0), ts_words),
        "tail": _views(buffer, tail_start, tail_len, tail_words),
        "has_ts": has_ts, "has_tail": has_tail, "plain": plain,
    })
    cut = frame.lazy().select(
        "line_no", "pre", "rest",
        ts_ms=pl.when("has_ts").then(pl.col("ts").cast(pl.String).cast(pl.Float64)),
        tail=pl.when("has_tail").then(pl.col("tail").cast(pl.String)),
        time_ms=pl.when("plain").then(pl.col("tail").cast(pl.String).cast(pl.Float64)),
        key_hash=pl.col("rest").hash(_HASH_SEED).xor(pl.col("pre").hash(_HASH_SEED + 1)),
        odd=pl.col("has_tail") & ~pl.col("plain"),
    ).collect()
    return cut


def settle_times(con: duckdb.DuckDBPyConnection, cut: pl.DataFrame) -> pl.DataFrame:
    """A cut (from :func:`cut_batch`) with the times of its other tails read by DuckDB's
    ``try_cast``, once per distinct text, and only finite times kept: the columns of
    :data:`CUT_COLUMNS`."""
    odd = cut.lazy().filter("odd").select("tail").unique().collect() if cut["odd"].any() else None
    if odd is not None and odd.height:
        odd_arrow = odd.to_arrow()  # noqa: F841 - read by the SQL below
        read = pl.from_arrow(con.sql("SELECT tail, try_cast(tail AS DOUBLE) AS odd_ms FROM odd_arrow").to_arrow_table())
        cut = cut.join(read, on="tail", how="left", maintain_order="left").with_columns(
            time_ms=pl.coalesce("time_ms", "odd_ms")
        )
    finite = pl.when(pl.col("time_ms").is_finite()).then("time_ms")
    return cut.select("line_no", "pre", "rest", "ts_ms", "tail", finite.alias("time_ms"), "key_hash")


def _buffers(lines: LineBatch | pa.Table) -> tuple[pa.Buffer, np.ndarray, np.ndarray]:
    """The bytes, the line offsets (one past each line's "\\n") and the line numbers of a batch."""
    if not isinstance(lines, pa.Table):
        return lines.data, lines.offsets, np.arange(lines.first_line, lines.first_line + lines.count, dtype=np.int64)
    text = lines.column("line").combine_chunks().cast(pa.large_binary())
    _, offsets, data = text.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[text.offset:text.offset + len(text) + 1]
    return data if data is not None else pa.py_buffer(b""), offsets, lines.column("line_no").to_numpy()


def _words(data: np.ndarray, starts: np.ndarray, count: int) -> np.ndarray:
    """The ``8 * count`` bytes from each of ``starts``, as ``count`` little-endian 8-byte
    words a row (read in place, unaligned; zeros past the end of ``data``)."""
    last = len(data) - 8
    out = np.zeros((len(starts), count), dtype="<u8")
    if last >= 0:
        words = np.ndarray(shape=(last + 1,), dtype="<u8", buffer=data, strides=(1,))
        for k in range(count):
            out[:, k] = words[np.minimum(starts + 8 * k, last)]
    for i in np.flatnonzero(starts + 8 * count > last + 8):  # the few rows reaching the end
        piece = data[max(starts[i], 0):starts[i] + 8 * count].tobytes().ljust(8 * count, b"\0")
        out[i] = np.frombuffer(piece, dtype="<u8")
    return out


def _is_verbose(head: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``marker,`` at the start, or a line that is only a marker and its line end (``head``:
    the first two words of each line)."""
    verbose = np.zeros(len(head), dtype=bool)
    for marker in g.MARKERS:
        for tail, length in ((",", None), ("\n", len(marker) + 1), ("\r\n", len(marker) + 2)):
            want, mask = _prefix_words(marker + tail)
            found = ((head[:, 0] & mask[0]) == want[0]) & ((head[:, 1] & mask[1]) == want[1])
            verbose |= found if length is None else found & (lengths == length)
    return verbose


def _prefix_words(prefix: str) -> tuple[np.ndarray, np.ndarray]:
    """``prefix`` (at most 16 bytes) as two little-endian 8-byte words, and the masks of its bytes."""
    raw = prefix.encode()
    want = np.frombuffer(raw.ljust(_HEAD, b"\0"), dtype="<u8")
    mask = np.frombuffer((b"\xff" * len(raw)).ljust(_HEAD, b"\0"), dtype="<u8")
    return want, mask


def _fullmatch(data: np.ndarray, start: np.ndarray, end: np.ndarray, pattern: re.Pattern, check,
               where: np.ndarray, count: int, digit_first: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Whether each field ``data[start:end]`` (for the rows of ``where``) is all ``pattern``
    (``check`` on its first ``count`` words, ``pattern`` for a longer field), and those words
    (zeros for the other rows).  ``digit_first``: only fields starting with a digit can match
    (the others are not read further)."""
    if digit_first:
        first = data[np.clip(start, 0, max(len(data) - 1, 0))] if len(data) else np.zeros(len(start), np.uint8)
        where = where & (first >= ord("0")) & (first <= ord("9"))
    rows = np.flatnonzero(where)
    if len(rows) * 10 >= len(start) * 9:  # (nearly) every row: no subset to cut and scatter
        rows = np.arange(len(start))
        start, end = np.where(where, start, 0), np.where(where, end, 0)
    length = (end - start)[rows]
    result = np.zeros(len(start), dtype=bool)
    if len(rows) == len(start):
        words = _words(data, start, count)
        read = words
    else:
        words = np.zeros((len(start), count), dtype="<u8")
        if len(rows) == 0:
            return result, words
        read = _words(data, start[rows], count)
        words[rows] = read
    short = length <= 8 * count
    result[rows] = short & check(read.view(np.uint8), np.minimum(length, 8 * count), count)
    for i in rows[~short]:
        result[i] = pattern.fullmatch(data[start[i]:end[i]].tobytes()) is not None
    return result & where, words


_POS = np.arange(_FIELD)
#: per field length (0 to _FIELD): a 1 in each byte inside the field, as 8-byte words
_INSIDE = (_POS[None, :] < np.arange(_FIELD + 1)[:, None]).astype(np.uint8).view("<u8")
_FIRST = np.frombuffer(b"\x01".ljust(8, b"\0"), dtype="<u8")[0]
_BYTE_SUM = np.uint64(0x0101010101010101)


def _classes(field: np.ndarray, length: np.ndarray, count: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For fields of at most ``8 * count`` bytes: which of their bytes are inside the field,
    ASCII digits and dots, as ``count`` 8-byte words of one 0/1 byte per field byte."""
    inside = _INSIDE[length, :count]
    digit = ((field >= ord("0")) & (field <= ord("9"))).view(np.uint8).view("<u8") & inside
    dot = (field == _DOT).view(np.uint8).view("<u8") & inside
    return inside, digit, dot


def _all_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ok = a[:, 0] == b[:, 0]
    for w in range(1, a.shape[1]):
        ok &= a[:, w] == b[:, w]
    return ok


def _count(flags: np.ndarray) -> np.ndarray:
    """How many of a field's bytes are flagged (0/1 bytes in 8-byte words)."""
    total = (flags[:, 0] * _BYTE_SUM) >> np.uint64(56)
    for w in range(1, flags.shape[1]):
        total += (flags[:, w] * _BYTE_SUM) >> np.uint64(56)
    return total


def _is_version_token(field: np.ndarray, length: np.ndarray, count: int) -> np.ndarray:
    """``v<digits>``."""
    inside, digit, _ = _classes(field, length, count)
    digit[:, 0] |= _FIRST & inside[:, 0]
    return (length >= 2) & (field[:, 0] == ord("v")) & _all_equal(digit, inside)


def _is_timestamp(field: np.ndarray, length: np.ndarray, count: int) -> np.ndarray:
    """``<digits>.[<digits>]``."""
    inside, digit, dot = _classes(field, length, count)
    return (length >= 2) & (digit[:, 0] & 1 == 1) & _all_equal(digit | dot, inside) & (_count(dot) == 1)


def _is_plain_number(field: np.ndarray, length: np.ndarray, count: int) -> np.ndarray:
    """``<digits>[.[<digits>]][(e|E)[+|-]<digits>]``."""
    inside, digit, dot = _classes(field, length, count)
    expo = ((field == ord("e")) | (field == ord("E"))).view(np.uint8).view("<u8") & inside
    sign = ((field == ord("+")) | (field == ord("-"))).view(np.uint8).view("<u8") & inside
    dots, expos, signs = _count(dot), _count(expo), _count(sign)
    plain = ((length >= 1) & (digit[:, 0] & 1 == 1) & _all_equal(digit | dot | expo | sign, inside)
             & (dots <= 1) & (expos <= 1) & (signs <= expos))
    rows = np.flatnonzero(plain & (expos == 1))
    if len(rows):  # the order: a dot before the e, a sign right after it, a digit at the end
        f, n = field[rows], length[rows]
        e_at = np.argmax((f == ord("e")) | (f == ord("E")), axis=1)
        dot_at = np.where(dots[rows] == 1, np.argmax(f == _DOT, axis=1), -1)
        sign_at = np.where(signs[rows] == 1, np.argmax((f == ord("+")) | (f == ord("-")), axis=1), e_at + 1)
        last = f[np.arange(len(rows)), n - 1]
        plain[rows] = ((dot_at < e_at) & (sign_at == e_at + 1) & (last >= ord("0")) & (last <= ord("9"))
                       & (n - 1 > e_at + (signs[rows] == 1)))
    return plain


#: per length 0 to 8: a mask of that many low bytes of an 8-byte word
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _views(buffer: pa.Buffer, start: np.ndarray, length: np.ndarray, words: np.ndarray) -> pl.Series:
    """``data[start:start + length]`` for every row, as a polars binary column whose values
    point into ``buffer`` (Arrow binary views: 16 bytes a value, the value itself when it
    has at most 12 bytes, else its first 4 bytes and its offset); ``words``: at least the
    first two words from each ``start`` (:func:`_words`)."""
    n = len(start)
    length = length.astype(np.uint64)
    head = words[:, 0] & _LOW_BYTES[np.minimum(length, 8)]
    more = words[:, 1] & _LOW_BYTES[np.clip(length, 8, 12) - 8]  # bytes 8 to 11
    views = np.empty((n, 2), dtype="<u8")
    views[:, 0] = length | (head << np.uint64(32))
    views[:, 1] = np.where(length <= 12, (head >> np.uint64(32)) | (more << np.uint64(32)),
                           start.astype(np.uint64) << np.uint64(32))  # buffer 0, offset
    array = pa.Array.from_buffers(pa.binary_view(), n, [None, pa.py_buffer(views), buffer])
    return pl.Series(array)


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


def with_events(cuts: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """``cuts`` with each line's ``shape_id`` (``keys`` from :func:`with_shape_ids`)."""
    return cuts.with_columns(shape_id=pl.col("key_hash").replace_strict(
        keys["key_hash"], keys["shape_id"], default=None, return_dtype=pl.UInt64))


def whole_lines(con: duckdb.DuckDBPyConnection, rows: pl.DataFrame) -> pl.DataFrame:
    """For cut lines keyed on their whole text (their last field is not a time):
    ``line_no``, ``whole`` (the line without its timestamp) and ``whole_id``.  Whole-line
    shapes hash in their own namespace (``hash(whole, 'whole')``): the whole text of one
    line can equal the cut key of another (``X,Y`` whole vs ``X,Y,<time>`` cut)."""
    whole = rows.select(
        "line_no",
        pl.when(pl.col("tail").is_null()).then(key_text())
        .otherwise(pl.concat_str(key_text(), pl.lit(","), "tail")).alias("whole"),
    ).to_arrow()  # noqa: F841 - read by the SQL below
    return pl.from_arrow(con.sql("SELECT line_no, whole, hash(whole, 'whole') AS whole_id FROM whole").to_arrow_table())


def event_rows(events: pl.DataFrame, source_id: int) -> pa.Table:
    """The ``onednn_events`` columns of ``events`` (from :func:`with_events`)."""
    return events.select(
        pl.lit(source_id, pl.Int32).alias("source_id"), "line_no", "shape_id", "ts_ms", "time_ms"
    ).to_arrow()
