"""The per-line cut of oneDNN verbose lines, vectorised in polars (multi-threaded Rust).

A verbose line is ``<pre>[,<ts>],<body...>,<tail>`` where ``pre`` is the marker with its
optional version token, ``ts`` the optional timestamp and ``tail`` the last field (a time on
profiling lines).  The *key* of a line is the line without its timestamp and tail: lines
with one key share one shape, which the pyparsing grammar reads once.

Everything here is a whole-column operation; no Python code and no regex capture runs per
line (captures cost ~0.4 µs a line; a capture-free match runs on a DFA at memory speed):

- the leading fields: three anchored ``contains`` tests (the grammar's
  ``LEADING_CUT_PATTERN``, alternative by alternative, in its leftmost-first order) and the
  lengths of the first three comma-separated fields;
- the last comma: ``find`` of ``,[^,]*$`` (a reverse search from the end);
- the pieces: byte slices of the line's binary view (``str.slice`` counts characters,
  ``find`` bytes);
- times: polars parses the tails that are plain decimal numbers (both libraries round
  correctly, so they agree there); any other tail goes to DuckDB's ``try_cast``, once per
  distinct text, so what counts as a number stays DuckDB's rule;
- shape ids: DuckDB's ``hash(key)`` (what earlier versions stored, so databases stay
  compatible), computed once per distinct key of the batch and joined back on polars' own
  hash of the key's two pieces.

The result is exactly what the former SQL cut gave (tests/test_onednn_speed.py compares
the two on hostile lines).
"""
from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa

from ..grammars import onednn_verbose as g

_MARKERS = "(?:" + "|".join(g.MARKERS) + ")"
# The grammar's leading pattern, cut into its alternatives; ``\d`` is ASCII as in RE2 (the
# engine of the former SQL cut).
_TS = g.TIMESTAMP_PATTERN.replace(r"\d", "[0-9]")
_VT = g.VERSION_TOKEN_PATTERN.replace(r"\d", "[0-9]")
_AFTER = r"(?:,|\r?\n$)"
_V_TS = f"^{_MARKERS},{_VT},{_TS}{_AFTER}"
_V = f"^{_MARKERS},{_VT}{_AFTER}"
_TS_ONLY = f"^{_MARKERS},{_TS}{_AFTER}"
#: a tail polars parses to the same double as DuckDB's cast (others go to DuckDB)
_PLAIN_NUMBER = r"^[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?$"
_HASH_SEED = 0x6F6E65646E6E  # any fixed seed: polars' hash only groups a batch's lines

#: columns of :func:`cut_lines`
CUT_COLUMNS = ["line_no", "pre", "rest", "ts_ms", "tail", "time_ms", "key_hash"]


def _is_verbose(line: pl.Expr) -> pl.Expr:
    """``marker,`` at the start, or a line that is only a marker (the former SQL filter)."""
    starts = [line.str.starts_with(m + ",") for m in g.MARKERS]
    alone = line.is_in([m + end for m in g.MARKERS for end in ("\n", "\r\n")])
    return pl.any_horizontal(*starts, alone)


def cut_lines(con: duckdb.DuckDBPyConnection, table: pa.Table) -> pl.DataFrame:
    """The verbose lines of a line batch (``line_no``, ``line`` with its line end), cut.

    Columns: ``line_no``; ``pre`` and ``rest`` (binary: the key is ``pre || rest``);
    ``ts_ms`` (the timestamp, or null); ``tail`` (the last field's text, or null when the
    line has no field after its leading ones); ``time_ms`` (``tail`` as a finite number, as
    DuckDB's ``try_cast`` reads it, or null); ``key_hash`` (polars' hash of the key, to
    group lines by key).
    """
    frame = pl.from_arrow(table)
    line = pl.col("line")
    verbose = frame.lazy().filter(_is_verbose(line)).select("line_no", body=line)
    # the first three fields; a last one keeps the line end, which only a version token or
    # a timestamp (no \r or \n in either) is read without
    fields = pl.col("body").str.splitn(",", 4)
    f1 = fields.struct.field("field_0").str.strip_chars_end("\r\n").str.len_bytes().cast(pl.Int64)
    f2 = fields.struct.field("field_1").str.strip_chars_end("\r\n")
    f3 = fields.struct.field("field_2").str.strip_chars_end("\r\n")
    cut = (
        verbose.with_columns(
            has_v=pl.col("body").str.contains(_V),  # (every _V_TS line matches _V)
            has_ts_v=pl.col("body").str.contains(_V_TS),
            has_ts_bare=pl.col("body").str.contains(_TS_ONLY),
            f1=f1, f2=f2, f3=f3,
            last_comma=pl.col("body").str.find(",[^,]*$").cast(pl.Int64),
            raw=pl.col("body").cast(pl.Binary),
            end=pl.col("body").str.len_bytes().cast(pl.Int64)
            - pl.when(pl.col("body").str.ends_with("\r\n")).then(2).otherwise(1),
        )
        .with_columns(
            ts=pl.when("has_v").then(pl.when("has_ts_v").then("f3"))
            .otherwise(pl.when("has_ts_bare").then("f2")),
            pre_len=pl.when("has_v").then(pl.col("f1") + 1 + pl.col("f2").str.len_bytes().cast(pl.Int64))
            .otherwise("f1"),
        )
        .with_columns(at=pl.col("pre_len") + (pl.col("ts").str.len_bytes().cast(pl.Int64) + 1).fill_null(0))
        .with_columns(has_tail=pl.col("last_comma").fill_null(-1) >= pl.col("at"))
        .select(
            "line_no",
            pre=pl.col("raw").bin.slice(0, pl.col("pre_len")),
            rest=pl.when("has_tail").then(pl.col("raw").bin.slice(pl.col("at"), pl.col("last_comma") - pl.col("at")))
            .otherwise(pl.lit(b"", pl.Binary)),
            ts_ms=pl.col("ts").cast(pl.Float64),
            tail=pl.when("has_tail")
            .then(pl.col("raw").bin.slice(pl.col("last_comma") + 1, pl.col("end") - pl.col("last_comma") - 1))
            .cast(pl.String),
        )
        .with_columns(key_hash=pl.struct("pre", "rest").hash(_HASH_SEED))
        .with_columns(
            plain=pl.col("tail").str.contains(_PLAIN_NUMBER),
        )
        .with_columns(
            time_ms=pl.when("plain").then(pl.col("tail").cast(pl.Float64, strict=False)),
        )
        .collect()
    )
    odd = cut.lazy().filter(pl.col("tail").is_not_null() & ~pl.col("plain")).select("tail").unique().collect()
    if odd.height:
        odd_arrow = odd.to_arrow()  # noqa: F841 - read by the SQL below
        read = pl.from_arrow(con.sql("SELECT tail, try_cast(tail AS DOUBLE) AS odd_ms FROM odd_arrow").to_arrow_table())
        cut = cut.join(read, on="tail", how="left", maintain_order="left").with_columns(
            time_ms=pl.coalesce("time_ms", "odd_ms")
        )
    finite = pl.when(pl.col("time_ms").is_finite()).then("time_ms")
    return cut.select("line_no", "pre", "rest", "ts_ms", "tail", finite.alias("time_ms"), "key_hash")


def key_text() -> pl.Expr:
    """The key of each line of a cut (``pre || rest``) as text, named ``key``."""
    return pl.concat_str(pl.col("pre").cast(pl.String), pl.col("rest").cast(pl.String)).alias("key")


def keys_of(cuts: pl.DataFrame) -> pl.DataFrame:
    """One row per distinct key of ``cuts``: ``key_hash``, ``key`` (text), and whether any
    of its lines has no time (``untimed``)."""
    return (
        cuts.lazy()
        .group_by("key_hash")
        .agg(pl.col("pre").first(), pl.col("rest").first(), pl.col("time_ms").is_null().any().alias("untimed"))
        .select("key_hash", key_text(), "untimed")
        .collect()
    )


def with_shape_ids(con: duckdb.DuckDBPyConnection, keys: pl.DataFrame) -> pl.DataFrame:
    """``keys`` (from :func:`keys_of`) with ``shape_id``: DuckDB's ``hash(key)``."""
    keys_arrow = keys.select("key_hash", "key").to_arrow()  # noqa: F841 - read by the SQL below
    ids = pl.from_arrow(con.sql("SELECT key_hash, hash(key) AS shape_id FROM keys_arrow").to_arrow_table())
    return keys.join(ids, on="key_hash", how="left")


def with_events(cuts: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """``cuts`` with each line's ``shape_id`` (``keys`` from :func:`with_shape_ids`)."""
    return cuts.join(keys.select("key_hash", "shape_id"), on="key_hash", how="left", maintain_order="left")


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
