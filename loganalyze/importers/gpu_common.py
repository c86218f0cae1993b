"""What the GPU profile importers share: SQLite access, Arrow hand-off, names, counts.

- :class:`SqliteFile` opens an export read-only (never writing, never locking it for
  others), lists its tables and columns, and streams a SELECT as Arrow record batches:
  with the ADBC SQLite driver when it is installed (C++, about 5x faster), else with the
  standard ``sqlite3`` module in big ``fetchmany`` batches.  DuckDB consumes the stream in
  one INSERT per table; no row goes in one by one.
- :class:`RowBuffer` collects rows parsed from text and inserts them as Arrow tables.
- :func:`name_forms` turns a kernel name into (demangled, short, mangled) with ``cxxfilt``
  (libstdc++'s ``__cxa_demangle``) and :func:`short_name`.
- :func:`text_lines` reads a text input as numbered lines.
"""
from __future__ import annotations

import gzip
import os
import re
import shutil
import sqlite3
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator
from urllib.parse import quote

import pyarrow as pa

from ..inputs import InputError
from .base import IngestContext
from .text import text_lines  # noqa: F401 - re-exported for the text importers

SQLITE_MAGIC = b"SQLite format 3\x00"
ARROW_TYPES = {"INTEGER": pa.int64(), "TEXT": pa.string(), "REAL": pa.float64()}


# =========================================================================== names
@lru_cache(maxsize=1)
def _demangler():
    try:
        import cxxfilt  # ctypes wrapper of libstdc++'s abi::__cxa_demangle

        cxxfilt.demangle("_Z1fv")
        return cxxfilt
    except Exception:  # library or libstdc++ missing: names stay as stored
        return None


@lru_cache(maxsize=65536)
def demangle(name: str | None) -> str | None:
    """The demangled form of an Itanium C++ name (``_Z...``); other names unchanged."""
    if not name or not name.startswith("_Z"):
        return name
    d = _demangler()
    if d is None:
        return name
    try:
        return d.demangle(name)
    except Exception:
        return name


_OPEN = {"(": ")", "<": ">", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _strip_trailing_group(s: str, close: str) -> str | None:
    """``s`` without its last balanced ``(...)``/``<...>`` group (which ends ``s``)."""
    if not s.endswith(close):
        return None
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        ch = s[i]
        if ch in _CLOSE:
            depth += 1
        elif ch in _OPEN:
            depth -= 1
            if depth == 0:
                return s[:i] if ch == _CLOSE[close] else None
    return None


def _top_level_split(s: str, sep: str) -> list[str]:
    parts, depth, cur, i = [], 0, [], 0
    while i < len(s):
        ch = s[i]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        if depth == 0 and s.startswith(sep, i):
            parts.append("".join(cur))
            cur = []
            i += len(sep)
            continue
        cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


@lru_cache(maxsize=65536)
def short_name(name: str | None) -> str | None:
    """The function name without return type, namespaces, template arguments and parameters,
    as Nsight Systems' ``shortName``: ``void ns::foo<int>(float*)`` -> ``foo``."""
    if not name:
        return name
    s = name.strip()
    if s.startswith("[") or "(" not in s and "<" not in s and "::" not in s and " " not in s:
        return s
    for suffix in (" const", " volatile", " &", " &&"):
        if s.endswith(suffix):
            s = s[: -len(suffix)]
    t = _strip_trailing_group(s, ")")
    if t is not None:
        s = t.rstrip()
    while s.endswith(">"):
        t = _strip_trailing_group(s, ">")
        if t is None:
            break
        s = t.rstrip()
    words = _top_level_split(s, " ")
    s = words[-1] if words and words[-1] else s
    parts = _top_level_split(s, "::")
    out = parts[-1] if parts and parts[-1] else s
    return out or name


@lru_cache(maxsize=65536)
def name_forms(name: str | None) -> tuple[str | None, str | None, str | None]:
    """(demangled, short, mangled) of a kernel name as a tool printed or stored it."""
    if name is None:
        return (None, None, None)
    if name.startswith("_Z"):
        d = demangle(name)
        return d, short_name(d), name
    return name, short_name(name), None


_API_VERSION_RE = re.compile(r"_v\d+$")


def base_api_name(name: str | None) -> str | None:
    """``cudaMemcpy_v3020`` -> ``cudaMemcpy`` (the ``_vNNNN`` suffix off)."""
    return _API_VERSION_RE.sub("", name) if name else name


def nvtx_op_table(texts: list[str]) -> pa.Table:
    """text -> op, seq, direction, shapes, flops, bytes for NVTX range names that name an
    operator: PyTorch emit_nvtx names, and PyProf's argument markers
    (``{'mod': ..., 'op': ..., 'args': [...]}``).  Other names are left out (op = text)."""
    from ..grammars.pyprof import parse_marker, parse_nvtx_name
    from ..query.gpu_ops import cost_from_pyprof_marker, op_cost

    rows = []
    for t in texts:
        if t.startswith("{'"):
            m = parse_marker(t)
            if m and m.get("op"):
                flops, nbytes, shapes = cost_from_pyprof_marker(m.get("op"), m)
                rows.append((t, str(m["op"]), None, None, shapes, flops, nbytes))
            continue
        p = parse_nvtx_name(t)
        if p is None or p.direction is None:
            continue
        flops, nbytes = op_cost(p.op, p.shapes) if p.shapes and p.direction == "fwd" else (None, None)
        rows.append((t, p.op, p.seq, p.direction, p.shapes_text, flops, nbytes))
    return pa.table({
        "text": pa.array([r[0] for r in rows], pa.string()), "op": pa.array([r[1] for r in rows], pa.string()),
        "seq": pa.array([r[2] for r in rows], pa.int64()), "direction": pa.array([r[3] for r in rows], pa.string()),
        "shapes": pa.array([r[4] for r in rows], pa.string()),
        "flops": pa.array([r[5] for r in rows], pa.float64()), "bytes": pa.array([r[6] for r in rows], pa.float64()),
    })


# =========================================================================== SQLite
def _adbc():
    if os.environ.get("LOGANALYZE_SQLITE_READER", "").lower() == "stdlib":
        return None
    try:
        import adbc_driver_sqlite.dbapi as adbc

        return adbc
    except Exception:
        return None


class SqliteFile:
    """An SQLite input opened read-only; ``close()`` when done."""

    def __init__(self, ctx: IngestContext):
        self.ctx = ctx
        self.display = ctx.file.path
        self._tmp: str | None = None
        self.stream_error: InputError | None = None
        self._prefetched: dict = {}
        path = ctx.file.path
        if ctx.file.compression == "gzip":
            path = self._gunzip(path)
        if ctx.file.sha256 is None:
            ctx.file.compute_sha256()
        self.path = path
        self.uri = self._uri(path)
        try:
            # check_same_thread=False: DuckDB pulls the Arrow stream from its own threads
            self.con = sqlite3.connect(self.uri, uri=True, timeout=0.5, check_same_thread=False)
            rows = self.con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise InputError(f"{self.display}: not a readable SQLite database ({exc})") from None
        self.tables: dict[str, list[str]] = {}
        for (name,) in rows:
            try:
                self.tables[name] = [r[1] for r in self.con.execute(f'PRAGMA table_info("{name}")')]
            except sqlite3.DatabaseError as exc:
                ctx.warnings.append(f"{self.display}: table {name} cannot be read ({exc})")

    def _gunzip(self, path: str) -> str:
        fd, tmp = tempfile.mkstemp(prefix="loganalyze-", suffix=".sqlite")
        self._tmp = tmp
        try:
            with os.fdopen(fd, "wb") as out, gzip.open(path, "rb") as src:
                shutil.copyfileobj(src, out, 16 << 20)
        except (OSError, EOFError) as exc:
            self.close()
            raise InputError(f"{path}: gzip stream is cut off or corrupt ({exc})") from None
        return tmp

    def _uri(self, path: str) -> str:
        """``immutable=1`` (no locks, no journal look-up) unless a journal or WAL file says
        a writer may be at work: then a plain read-only open that respects its lock."""
        base = "file:" + quote(os.path.abspath(path))
        if not any(os.path.exists(path + s) for s in ("-journal", "-wal")):
            return base + "?mode=ro&immutable=1"
        try:
            probe = sqlite3.connect(base + "?mode=ro", uri=True, timeout=0.5)
            try:
                probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                probe.close()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise InputError(
                    f"{self.display}: database is locked by another process (is it still being written?)"
                ) from None
            return base + "?mode=ro&immutable=1"
        return base + "?mode=ro"

    def close(self) -> None:
        for t, _box in getattr(self, "_prefetched", {}).values():
            t.join()
        con = getattr(self, "con", None)
        if con is not None:
            con.close()
            self.con = None
        if self._tmp and os.path.exists(self._tmp):
            os.remove(self._tmp)
            self._tmp = None

    # ------------------------------------------------------------------ queries
    def has(self, table: str) -> bool:
        return table in self.tables

    def first(self, *tables: str) -> str | None:
        return next((t for t in tables if t in self.tables), None)

    def columns(self, table: str) -> set[str]:
        return set(self.tables.get(table, ()))

    def count(self, table: str) -> int:
        try:
            return self.con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{self.display}: table {table} cannot be read ({exc})") from None

    def fetchall(self, sql: str, params=()) -> list[tuple]:
        try:
            return self.con.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{self.display}: cannot read ({exc})") from None

    def prefetch(self, sql: str, names: list[str], types: list[str]) -> None:
        """Start reading ``sql`` into memory on a helper thread (the ADBC driver reads in C++
        without the GIL, so this overlaps with DuckDB working on another table); a later
        :meth:`reader` of the same SQL takes the result."""
        if _adbc() is None or sql in self._prefetched:
            return
        import threading

        schema = pa.schema([(n, ARROW_TYPES[t]) for n, t in zip(names, types)])
        box: dict = {}

        def run() -> None:
            try:
                with self._reader(sql, schema) as rdr:
                    box["table"] = rdr.read_all()
            except BaseException as exc:  # handed to the reader
                box["error"] = exc

        t = threading.Thread(target=run, daemon=True)
        t.start()
        self._prefetched[sql] = (t, box)

    @contextmanager
    def reader(self, sql: str, names: list[str], types: list[str]) -> Iterator[pa.RecordBatchReader]:
        """The rows of ``sql`` as an Arrow record batch stream (``types``: INTEGER/TEXT/REAL)."""
        schema = pa.schema([(n, ARROW_TYPES[t]) for n, t in zip(names, types)])
        self.stream_error = None
        if sql in self._prefetched:
            t, box = self._prefetched.pop(sql)
            t.join()
            if "error" in box:
                err = box["error"]
                raise err if isinstance(err, InputError) else InputError(
                    f"{self.display}: cannot read ({' '.join(str(err).split())[:300]})")
            yield box["table"].cast(schema)
            return
        try:
            with self._reader(sql, schema) as rdr:
                yield rdr
        except InputError:
            raise
        except Exception as exc:
            # a read error inside the stream reaches us wrapped by DuckDB: say it plainly
            if self.stream_error is not None:
                raise self.stream_error from None
            import duckdb

            if isinstance(exc, duckdb.Error) and ("SQLite" in str(exc) or "stream" in str(exc)):
                raise InputError(f"{self.display}: cannot read ({' '.join(str(exc).split())[:300]})") from None
            raise

    @contextmanager
    def _reader(self, sql: str, schema: pa.Schema) -> Iterator[pa.RecordBatchReader]:
        adbc = _adbc()
        if adbc is not None:
            conn = adbc.connect(self.uri)
            cur = conn.cursor()
            try:
                try:
                    try:
                        cur.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": "65536"})
                    except Exception:  # an older driver: its default batch size
                        pass
                    cur.execute(sql)
                    rdr = cur.fetch_record_batch()
                except Exception as exc:
                    raise InputError(f"{self.display}: cannot read ({' '.join(str(exc).split())})") from None
                # the driver's stream goes to DuckDB as it is (C to C, no Python per batch) when its
                # schema is the one asked for, which the typed dummy row makes the rule
                yield rdr if rdr.schema.equals(schema) else _checked(rdr, schema, self)
            finally:
                cur.close()
                conn.close()
            return
        cur = self.con.cursor()
        try:
            try:
                cur.execute(sql)
            except sqlite3.DatabaseError as exc:
                raise InputError(f"{self.display}: cannot read ({exc})") from None
            yield pa.RecordBatchReader.from_batches(schema, _fetch_batches(cur, schema, self))
        finally:
            cur.close()


def _checked(rdr: pa.RecordBatchReader, schema: pa.Schema, src: "SqliteFile") -> pa.RecordBatchReader:
    """Cast the driver's batches to ``schema`` and turn read errors into one-line InputErrors."""
    def gen():
        while True:
            try:
                batch = rdr.read_next_batch()
            except StopIteration:
                return
            except Exception as exc:
                src.stream_error = InputError(f"{src.display}: cannot read ({' '.join(str(exc).split())})")
                raise src.stream_error from None
            if batch.schema != schema:
                batch = pa.RecordBatch.from_arrays(
                    [c.cast(t.type) for c, t in zip(batch.columns, schema)], schema=schema
                )
            yield batch

    return pa.RecordBatchReader.from_batches(schema, gen())


def _fetch_batches(cur, schema: pa.Schema, src: "SqliteFile", size: int = 100_000):
    while True:
        try:
            rows = cur.fetchmany(size)
        except sqlite3.DatabaseError as exc:
            src.stream_error = InputError(f"{src.display}: cannot read ({exc})")
            raise src.stream_error from None
        if not rows:
            return
        cols = list(zip(*rows))
        yield pa.RecordBatch.from_arrays(
            [pa.array(c, f.type, from_pandas=False) for c, f in zip(cols, schema)], schema=schema
        )


def is_sqlite(head: bytes) -> bool:
    return head.startswith(SQLITE_MAGIC)


# =========================================================================== DuckDB hand-off
def insert_stream(con, reader: pa.RecordBatchReader, sql: str, params: dict | None = None,
                  stage: bool = True) -> None:
    """Run ``sql`` (which reads ``_batch``) over the whole Arrow stream.

    With ``stage`` the stream is first copied into a temporary table ``_batch`` (columnar, one
    pass): DuckDB cannot know a stream's size, and joining the stream itself to the name
    tables made it build its hash tables on the big side."""
    _stream = reader  # noqa: F841 -- reached by DuckDB's replacement scan (register() would keep it until COMMIT)
    if not stage:
        con.execute(sql.replace("_batch", "_stream"), params or {})
        return
    con.execute("CREATE OR REPLACE TEMP TABLE _batch AS SELECT * FROM _stream WHERE _d = 0")
    try:
        con.execute(sql, params or {})
    finally:
        con.execute("DROP TABLE IF EXISTS _batch")


class RowBuffer:
    """Rows parsed from text, inserted into ``table`` as Arrow tables of ``limit`` rows."""

    def __init__(self, con, table: str, types: dict[str, pa.DataType], source_id: int, limit: int = 100_000):
        self.con, self.table, self.types, self.source_id, self.limit = con, table, types, source_id, limit
        self.cols: dict[str, list] = {c: [] for c in types}
        self.count = 0
        self.total = 0

    def add(self, **values) -> None:
        for c, lst in self.cols.items():
            lst.append(values.get(c))
        self.count += 1
        if self.count >= self.limit:
            self.flush()

    def flush(self) -> None:
        if not self.count:
            return
        arrays = {c: pa.array(v, self.types[c]) for c, v in self.cols.items()}
        arrays["source_id"] = pa.array([self.source_id] * self.count, pa.int32())
        _rows = pa.table(arrays)  # noqa: F841 -- replacement scan, freed after the INSERT
        self.con.execute(f"INSERT INTO {self.table} BY NAME SELECT * FROM _rows")
        self.total += self.count
        self.cols = {c: [] for c in self.types}
        self.count = 0


def put_meta(ctx: IngestContext, items: dict) -> None:
    """Key/value facts about a source (tool version, session start, ...) in gpu_source_meta."""
    rows = [(k, None if v is None else str(v)) for k, v in items.items() if v is not None]
    if not rows:
        return
    tbl = pa.table({
        "source_id": pa.array([ctx.source_id] * len(rows), pa.int32()),
        "key": pa.array([r[0] for r in rows], pa.string()),
        "value": pa.array([r[1] for r in rows], pa.string()),
    })
    ctx.con.register("_meta", tbl)
    try:
        ctx.con.execute("INSERT INTO gpu_source_meta SELECT * FROM _meta")
    finally:
        ctx.con.unregister("_meta")


def no_data_error(ctx: IngestContext, what: str, hint: str = "") -> InputError:
    """The one-line error for a file with nothing usable, naming the first skipped line."""
    ctx.flush_skipped()
    first = ctx.con.execute(
        "SELECT line_no, reason FROM skipped_lines WHERE source_id = ? ORDER BY line_no LIMIT 1", [ctx.source_id]
    ).fetchall()
    why = f" (line {first[0][0]}: {first[0][1]})" if first else (f" ({hint})" if hint else "")
    return InputError(f"{ctx.file.path}: no {what} could be read{why}")


def set_counts(ctx: IngestContext, total: int, parsed: int, non_data: int, skipped: int | None = None) -> None:
    skipped = ctx.skipped_count if skipped is None else skipped
    ctx.source.update(lines_total=total, lines_parsed=parsed, lines_non_verbose=non_data, lines_skipped=skipped)


# =========================================================================== text inputs
def first_lines(head: bytes, limit: int = 200) -> list[str]:
    """Up to ``limit`` decoded lines of a sniffed head (the last, maybe cut, line dropped
    when the head is longer than it)."""
    text = head.decode("utf-8", "replace")
    lines = text.splitlines()
    if len(head) >= (64 << 10) and lines:
        lines = lines[:-1]
    return lines[:limit]
