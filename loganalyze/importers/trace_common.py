"""What the trace-family importers share: reading bytes, loading events, spans and tables.

- :class:`ByteSource` gives the decompressed bytes of a file and hashes the file bytes on
  the way; unlike ``InputFile.chunks`` it keeps what a cut-off gzip stream did hold.
- :class:`Workspace` is a private schema in an in-memory database attached to the store,
  worked on through a second connection, so that a statement failing on odd input never
  aborts the store's transaction; finished rows are copied into the store at the end.
- :func:`load_events` reads the elements of a trace-event array into the workspace table
  ``_ev`` (text fields converted: exact ns times, ids from args, role, problems): DuckDB's
  ``read_json`` reads the event array, cut exactly from ``[`` to ``]`` by :class:`Stage`;
  what DuckDB cannot read goes through the exact Python reader
  (:func:`grammars.trace_event.iter_events`).
- :class:`SpanEngine` turns ``_ev`` into ``trace_events`` and its companions: B/E and async
  matching, nesting (depth, parent, self time), flows, kernel -> launch -> operator
  attribution, counters, and the rows of the shared GPU tables.  The CNTK detail importer
  feeds it too.
- :func:`insert_arrow`, :func:`read_text_lines` and :func:`insert_profiler_rows` serve the
  aggregate-table importers (MXNet, PyTorch, CNTK).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import zlib
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pyarrow as pa

from ..grammars import trace_event as te
from ..inputs import InputError, InputFile
from .base import IngestContext, RowBuffer, arrow_types, insert_arrow
from .text import text_lines

READ_BLOCK = 4 << 20
#: bytes held back at the end of the stream to find where the event array ends
TAIL_WINDOW = 4 << 20
#: largest JSON element DuckDB is asked to read
MAX_OBJECT_BYTES = 1 << 28
STREAM_BATCH = 50_000


# =========================================================================== bytes
def find_prefix(file: InputFile) -> te.Prefix:
    """Where the event array starts (reads more of the head while it cannot tell)."""
    limit = 1 << 16
    while True:
        head, complete = file.head_and_complete(limit)
        try:
            prefix = te.scan_prefix(head, complete)
        except te.ContainerError as exc:
            if file.damage and not head:
                raise InputError(f"{file.path}: {file.damage}") from None
            raise InputError(f"{file.path}: {exc}") from None
        if prefix is not None:
            return prefix
        if complete or limit >= 256 << 20:
            raise InputError(f"{file.path}: no trace-event array found in the first {limit >> 20} MiB")
        limit *= 8


_CAT_RE = __import__("re").compile(rb'"cat"\s*:\s*"((?:[^"\\]|\\.)*)"')


def head_categories(file: InputFile, prefix: te.Prefix, limit: int = 4 << 20) -> list[str]:
    """The categories named in the first MiBs of the event array (to choose the flavour
    before the events are read; the full set is checked afterwards)."""
    parts, n = [], 0
    gen = file.chunks(min(limit, READ_BLOCK), offset=prefix.events_at, hash_bytes=False)
    for chunk in gen:
        parts.append(chunk)
        n += len(chunk)
        if n >= limit:
            break
    gen.close()
    data = b"".join(parts)[:limit]
    return sorted({m.group(1).decode("utf-8", "replace") for m in _CAT_RE.finditer(data)})


# =========================================================================== staging
@dataclass
class StageResult:
    tail: te.Tail | None = None
    error: BaseException | None = None
    written: int = 0


class Stage:
    """Hands DuckDB the event array cut from ``[`` to ``]`` (a ``]`` is added when the file
    was cut off).

    - Uncompressed files: the end is found by reading the last bytes, and the array is
      copied into a temp file inside the kernel (``copy_file_range``) while the file's
      sha256 is computed on a helper thread; DuckDB then parses the copy in parallel.
    - gzip files: a writer thread decompresses into a FIFO that DuckDB reads while the
      bytes are produced, holding back the last few MiB until the end is known (a temp file
      when FIFOs are not available, or with ``LOGANALYZE_TRACE_STAGING=file``).
    """

    def __init__(self, file: InputFile, prefix: te.Prefix, progress, directory: str):
        self.file = file
        self.prefix = prefix
        self.progress = progress
        self.result = StageResult()
        self.path = os.path.join(directory, "events.json")
        mode = os.environ.get("LOGANALYZE_TRACE_STAGING", "auto")
        self.copy = file.compression is None and mode in ("auto", "copy")
        self.fifo = not self.copy and mode in ("auto", "fifo") and hasattr(os, "mkfifo")
        self._thread: threading.Thread | None = None
        if self.fifo:
            try:
                os.mkfifo(self.path)
            except OSError:
                self.fifo = False

    def start(self) -> None:
        if self.copy:
            self._copy()
        elif self.fifo:
            self._thread = threading.Thread(target=self._run, name="loganalyze-trace-stage", daemon=True)
            self._thread.start()
        else:
            self._run()

    def _copy(self) -> None:
        file = self.file
        if not file.has_sha256:
            self._thread = threading.Thread(target=self._hash, name="loganalyze-trace-hash", daemon=True)
            self._thread.start()
        prefix = self.prefix
        try:
            with open(file.local_path, "rb") as src:
                size = os.fstat(src.fileno()).st_size
                tail_at = max(prefix.events_at, size - TAIL_WINDOW)
                src.seek(tail_at)
                tail = te.scan_tail(src.read(), tail_at, prefix.container, prefix.events_at)
                self.result.tail = tail
                if tail.status not in ("complete", "truncated"):
                    return
                with open(self.path, "wb") as out:
                    _copy_range(src, out, prefix.events_at, tail.events_end - prefix.events_at)
                    out.write(b"\n]")
                    self.result.written = tail.events_end - prefix.events_at
        except OSError as exc:
            self.result.error = InputError(f"{file.path}: cannot read: {exc.strerror or exc}")

    def _hash(self) -> None:
        h = hashlib.sha256()
        try:
            with open(self.file.local_path, "rb") as f:
                while block := f.read(READ_BLOCK):
                    h.update(block)
            self.file.sha256 = h.hexdigest()
        except OSError as exc:
            self.result.error = InputError(f"{self.file.path}: cannot read: {exc.strerror or exc}")

    def _run(self) -> None:
        try:
            with open(self.path, "wb") as out:
                self._write(out)
        except BrokenPipeError:
            pass
        except BaseException as exc:  # reported by finish()
            self.result.error = exc

    def _write(self, out) -> None:
        prefix = self.prefix
        held = bytearray()
        held_at = prefix.events_at  # absolute offset of held[0]
        for chunk in self.file.chunks(READ_BLOCK, offset=prefix.events_at, progress=self.progress):
            held += chunk
            if len(held) > 2 * TAIL_WINDOW:
                cut = len(held) - TAIL_WINDOW
                out.write(held[:cut])
                self.result.written += cut
                del held[:cut]
                held_at += cut
        tail = te.scan_tail(bytes(held), held_at, prefix.container, prefix.events_at)
        self.result.tail = tail
        if tail.status in ("complete", "truncated"):
            keep = tail.events_end - held_at
            out.write(held[:keep])
            self.result.written += keep
        out.write(b"\n]")

    def finish(self) -> StageResult:
        """Wait for the helper thread; when DuckDB stopped reading a FIFO early, drain it."""
        if self._thread is not None:
            while self.fifo and self._thread.is_alive():
                try:
                    fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
                except OSError:
                    break
                try:
                    while self._thread.is_alive():
                        try:
                            if not os.read(fd, 1 << 20):
                                self._thread.join(0.01)
                        except BlockingIOError:
                            self._thread.join(0.01)
                finally:
                    os.close(fd)
            self._thread.join()
        return self.result

    def cleanup(self) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass


def _copy_range(src, out, offset: int, count: int) -> None:
    """``count`` bytes of ``src`` from ``offset`` to the end of ``out``, in the kernel when it can."""
    done = 0
    try:
        while done < count:
            n = os.copy_file_range(src.fileno(), out.fileno(), count - done, offset + done)
            if n == 0:
                break
            done += n
        out.seek(0, os.SEEK_END)
        if done == count:
            return
    except (AttributeError, OSError):
        pass
    src.seek(offset + done)
    out.seek(0, os.SEEK_END)
    left = count - done
    while left > 0:
        block = src.read(min(READ_BLOCK, left))
        if not block:
            break
        out.write(block)
        left -= len(block)


# =========================================================================== workspace
class Workspace:
    """A private schema in an in-memory database attached to the store's DuckDB instance,
    where one file is loaded and processed through a second connection (a cursor).

    DuckDB aborts a whole transaction when one statement fails, so the statement that may
    fail on odd input (``read_json``) must not run in the caller's transaction; it runs on
    the cursor, in its own autocommit transactions.  When every workspace table is ready,
    :meth:`publish` copies the finished rows into the store's tables inside the caller's
    transaction (its snapshot of the workspace starts at that first read, so it sees them).
    """

    DATABASE = "loganalyze_ws"

    def __init__(self, ctx: IngestContext):
        import uuid

        self.ctx = ctx
        self.dir = tempfile.mkdtemp(prefix="loganalyze-trace-", dir=os.environ.get("LOGANALYZE_TMPDIR"))
        self.con = ctx.con.cursor()
        self.con.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {self.DATABASE}")
        # schemas left behind by files whose transaction was rolled back
        for (schema,) in self.con.execute(
                f"SELECT schema_name FROM duckdb_schemas() WHERE database_name = '{self.DATABASE}' "
                "AND schema_name LIKE 'file_%'").fetchall():
            self.con.execute(f"DROP SCHEMA IF EXISTS {self.DATABASE}.{schema} CASCADE")
        self.schema = f"file_{uuid.uuid4().hex[:12]}"
        self.qualified = f"{self.DATABASE}.{self.schema}"
        self.con.execute(f"CREATE SCHEMA {self.qualified}")
        self.con.execute(f"USE {self.qualified}")
        self._pending: list[tuple[str, str]] = []

    def transfer(self, select_sql: str, table: str) -> None:
        """Queue ``INSERT INTO table <select_sql>`` for :meth:`publish`; ``{ws}.name`` in the
        SQL names a workspace table."""
        self._pending.append((table, select_sql))

    def publish(self) -> None:
        main = self.ctx.con
        for table, sql in self._pending:
            main.execute(f"INSERT INTO {table} BY NAME {sql.format(ws=self.qualified)}")
        self._pending.clear()

    def close(self) -> None:
        try:
            self.con.execute(f"DROP SCHEMA IF EXISTS {self.qualified} CASCADE")
            self.con.close()
        except Exception:  # noqa: BLE001 - cleanup must not hide the real error
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# =========================================================================== loading
@dataclass
class LoadResult:
    reader: str  # duckdb | stream
    complete: bool
    trailing_metadata: dict = field(default_factory=dict)
    trailing_keys: list = field(default_factory=list)
    #: the element cut off at the end: (event_no, reason, text)
    cut_event: tuple | None = None


def _raw_columns_sql() -> str:
    return "{" + ", ".join(f"{c}: '{t}'" for c, t in te.EVENT_COLUMNS.items()) + "}"


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def ev_select_sql(source_sql: str, flavour: str) -> str:
    """The SELECT that makes ``_ev`` (one row per element read: exact ns times, ids from
    args, role, and the reason a row cannot be used) from ``source_sql``, a relation with
    the columns ``r``, ``event_no`` and EVENT_COLUMNS as text."""
    return f"""
        WITH v AS (
            SELECT r, event_no, ph, cat, name, pid, tid,
                   coalesce(id, CAST(id2 AS VARCHAR)) AS id, bp, s AS scope,
                   ts AS ts_text, dur AS dur_text,
                   {_ns_sql('ts')} AS ts_ns,
                   CASE WHEN ph = 'X' THEN {_ns_sql('dur')} END AS dur_ns,
                   json_extract_string(args, ['$.correlation', '$."External id"']) AS ids,
                   args
            FROM ({source_sql})
        )
        SELECT * EXCLUDE (ids), try_cast(ids[1] AS BIGINT) AS correlation, try_cast(ids[2] AS BIGINT) AS external_id,
            {te.role_sql(flavour)} AS role,
            CASE
                WHEN ph IS NULL OR ph = '' THEN 'missing ph'
                WHEN ts_ns IS NULL AND NOT (ph = 'M' AND ts_text IS NULL) THEN {_time_problem_sql('ts_text', 'ts_ns', 'ts')}
                WHEN ph = 'X' AND dur_ns IS NULL THEN {_time_problem_sql('dur_text', 'dur_ns', 'dur')}
                WHEN ph = 'X' AND dur_ns < 0 THEN 'negative dur (' || dur_text || ')'
            END AS problem
        FROM v"""


def load_events(ctx: IngestContext, ws: Workspace, prefix: te.Prefix, flavour: str,
                force_stream: bool = False) -> LoadResult:
    """Fill ``_ev`` in the workspace (see :func:`ev_select_sql`) with the elements of the
    event array, reading them with DuckDB when it can and with the exact reader otherwise;
    elements that cannot be read are reported through ``ctx.skip``."""
    con = ws.con
    con.execute("DROP TABLE IF EXISTS _ev")
    if not force_stream and os.environ.get("LOGANALYZE_TRACE_READER") != "stream":
        res = _load_duckdb(ctx, ws, prefix, flavour)
        if res is not None:
            return res
        con.execute("DROP TABLE IF EXISTS _ev")
    return _load_stream(ctx, ws, prefix, flavour)


def _load_duckdb(ctx: IngestContext, ws: Workspace, prefix: te.Prefix,
                 flavour: str) -> LoadResult | None:
    con = ws.con
    stage = Stage(ctx.file, prefix, ctx.progress, ws.dir)
    try:
        stage.start()
        ok = True
        try:
            src = f"""SELECT ordinality - 1 AS r, ordinality - 1 AS event_no, * EXCLUDE (ordinality)
                      FROM read_json({_quote(stage.path)}, format = 'array', columns = {_raw_columns_sql()},
                                     maximum_object_size = {MAX_OBJECT_BYTES}, compression = 'none') WITH ORDINALITY"""
            con.execute(f"CREATE TABLE _ev AS {ev_select_sql(src, flavour)}")
        except Exception:  # duckdb.Error: not readable by DuckDB -> exact reader
            ok = False
        result = stage.finish()
    finally:
        stage.cleanup()
    if result.error is not None:
        if isinstance(result.error, InputError):
            raise result.error
        return None
    tail = result.tail
    if not ok or tail is None or tail.status not in ("complete", "truncated"):
        return None
    n = con.execute("SELECT count(*) FROM _ev").fetchall()[0][0]
    res = LoadResult("duckdb", tail.status == "complete", tail.metadata, tail.keys)
    if tail.status == "truncated" and tail.incomplete_bytes:
        res.cut_event = (n, "truncated: the file ends inside this event", tail.incomplete_text)
    if ctx.file.damage:
        res.complete = False
    return res


def _load_stream(ctx: IngestContext, ws: Workspace, prefix: te.Prefix,
                 flavour: str) -> LoadResult:
    con = ws.con
    cols = list(te.EVENT_COLUMNS)
    con.execute(
        "CREATE TABLE _raw (r BIGINT, event_no BIGINT, "
        + ", ".join(f"{c} {t}" for c, t in te.EVENT_COLUMNS.items()) + ")"
    )
    sres = te.StreamResult()
    batch: dict[str, list] = {c: [] for c in ["r", "event_no"] + cols}
    res = LoadResult("stream", True)
    done = [0]

    def flush():
        if not batch["event_no"]:
            return
        tbl = _string_table(batch, cols)
        insert_arrow(con, "_raw", tbl)
        done[0] += len(batch["r"])
        for v in batch.values():
            v.clear()

    for ev in te.iter_events(ctx.file.chunks(READ_BLOCK, offset=prefix.events_at, progress=ctx.progress),
                             prefix.container, sres):
        if ev.values is None:
            if ev.problem.startswith("truncated"):
                res.cut_event = (ev.event_no, ev.problem, ev.text)
            else:
                ctx.skip(ev.event_no, ev.problem, ev.text)
            continue
        batch["r"].append(len(batch["r"]) + done[0])
        batch["event_no"].append(ev.event_no)
        for c in cols:
            batch[c].append(ev.values[c])
        if len(batch["event_no"]) >= STREAM_BATCH:
            flush()
    flush()
    res.complete = sres.status == "complete" and not ctx.file.damage
    res.trailing_metadata = sres.trailing_metadata
    res.trailing_keys = sres.trailing_keys
    if sres.status == "garbage_after":
        ctx.warnings.append(f"{ctx.file.path}: data after the end of the trace object was ignored")
    build_ev_from_raw(con, flavour)
    return res


def build_ev_from_raw(con, flavour: str) -> None:
    """``_ev`` from a ``_raw`` table filled by a reader (then dropped)."""
    con.execute(f"CREATE TABLE _ev AS {ev_select_sql('SELECT * FROM _raw', flavour)}")
    con.execute("DROP TABLE _raw")


def _clean(s):
    if s is None:
        return None
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _string_table(batch: dict, cols: list) -> pa.Table:
    arrays = {"r": pa.array(batch["r"], pa.int64()), "event_no": pa.array(batch["event_no"], pa.int64())}
    for c in cols:
        try:
            arrays[c] = pa.array(batch[c], pa.string())
        except (pa.ArrowInvalid, UnicodeEncodeError):
            arrays[c] = pa.array([_clean(v) for v in batch[c]], pa.string())
    return pa.table(arrays)


# =========================================================================== spans
def _ns_sql(col: str) -> str:
    """Microseconds text -> integer ns, exactly (integers without a decimal detour)."""
    return (f"CASE WHEN {col} IS NULL THEN NULL "
            f"WHEN contains({col}, '.') OR contains({col}, 'e') OR contains({col}, 'E') "
            f"THEN try_cast(round(try_cast({col} AS DECIMAL(38,10)) * 1000) AS BIGINT) "
            f"ELSE try_cast(try_cast({col} AS HUGEINT) * 1000 AS BIGINT) END")


def _time_problem_sql(col: str, ns: str, what: str) -> str:
    return (f"CASE WHEN {col} IS NULL THEN 'missing {what}' "
            f"WHEN isnan(try_cast({col} AS DOUBLE)) OR isinf(try_cast({col} AS DOUBLE)) "
            f"THEN '{what} is not a finite number (' || {col} || ')' "
            f"ELSE '{what} is not a number in range (' || left({col}, 40) || ')' END")


@dataclass
class SpanStats:
    events: int = 0
    parsed: int = 0
    skipped: int = 0
    unmatched_e: int = 0
    unclosed_b: int = 0
    async_unmatched_e: int = 0
    async_unclosed_b: int = 0
    improper_nesting: int = 0
    duplicates: int = 0
    negative_durations: int = 0
    categories: list = field(default_factory=list)


#: roles as small integers for the numpy steps
ROLE_CODES = {"op": 1, "launch": 2, "kernel": 3, "memcpy": 4, "memset": 5}


class NeedsExactReader(Exception):
    """Fractional times too large for DuckDB's double-based number reading."""


class SpanEngine:
    """``_ev`` (see :func:`ev_select_sql`) -> ``trace_events`` and companions.

    ``keys`` (top-level keys of the file) lets the flavour be re-checked against the
    categories actually seen; None keeps ``flavour`` as given."""

    def __init__(self, ctx: IngestContext, ws: Workspace, flavour: str, check_precision: bool,
                 keys: list | None = None):
        self.ctx = ctx
        self.keys = keys
        self.ws = ws
        self.con = ws.con
        self.main = ctx.con
        self.sid = ctx.source_id
        self.flavour = flavour
        self.check_precision = check_precision
        self.stats = SpanStats()

    # ------------------------------------------------------------------ main
    def run(self) -> SpanStats:
        con = self.con
        self._check_ev()
        m = con.execute("SELECT count(*) FROM _ev").fetchall()[0][0]
        self.m = m
        self._report_problems()
        self._find_duplicates()
        ev_no = self._col("SELECT event_no FROM _ev ORDER BY r", np.int64)
        self.event_no = ev_no
        skip = np.zeros(m, dtype=bool)
        problem_r = self._col("SELECT r FROM _ev WHERE problem IS NOT NULL", np.int64)
        skip[problem_r] = True
        dur = np.full(m, np.iinfo(np.int64).min, dtype=np.int64)  # min = unknown
        end_r = np.full(m, -1, dtype=np.int64)
        async_op = np.zeros(m, dtype=bool)
        self._match_begin_end(dur, end_r, skip)
        self._match_async(dur, end_r, skip, async_op)
        spans = self._spans(dur, async_op)
        bound = self._bind_flows(spans)
        launch_r, op_r, launch_gpu = self._gpu_links(spans, bound)
        parent, depth, self_ns, gpu_self, gpu_total = self._sweep(spans, launch_gpu, launch_r, op_r)
        self._insert(skip, dur, end_r, async_op, parent, depth, self_ns, gpu_self, gpu_total, launch_r, op_r, bound)
        self._derived()
        self.ws.publish()
        st = self.stats
        st.parsed = self.main.execute("SELECT count(*) FROM trace_events WHERE source_id = ?", [self.sid]).fetchall()[0][0]
        return st

    def _col(self, sql: str, dtype, params=None) -> np.ndarray:
        arr = self.con.execute(sql, params or []).fetchnumpy()
        col = next(iter(arr.values()))
        if hasattr(col, "filled"):
            col = col.filled(-1)
        return np.asarray(col, dtype=dtype)

    # ------------------------------------------------------------------ _ev
    def _check_ev(self) -> None:
        """The role rule used at load time assumed a flavour; if the categories seen say
        otherwise, the roles are recomputed.  Fractional times beyond double precision
        (DuckDB path only) need the exact reader."""
        con = self.con
        cats = [r[0] for r in con.execute("SELECT DISTINCT cat FROM _ev WHERE cat IS NOT NULL LIMIT 1000").fetchall()]
        self.stats.categories = sorted(cats)
        if self.keys is not None:
            flavour = te.detect_flavour(self.keys, cats)
            if flavour != self.flavour:
                self.flavour = flavour
                con.execute(f"UPDATE _ev SET role = {te.role_sql(flavour)} WHERE ph IN ('X', 'B')")
        if self.check_precision:
            lim = te.EXACT_FRACTIONAL_US_LIMIT
            bad = con.execute(
                f"""SELECT count(*) FROM _ev WHERE
                    ((contains(ts_text, '.') OR contains(ts_text, 'e') OR contains(ts_text, 'E'))
                      AND abs(try_cast(ts_text AS DOUBLE)) >= {lim})
                 OR ((contains(dur_text, '.') OR contains(dur_text, 'e') OR contains(dur_text, 'E'))
                      AND abs(try_cast(dur_text AS DOUBLE)) >= {lim})"""
            ).fetchall()[0][0]
            if bad:
                raise NeedsExactReader()

    def _report_problems(self) -> None:
        rows = self.con.execute(
            """SELECT event_no, problem, ph, name, cat, ts_text, dur_text, pid, tid FROM _ev
               WHERE problem IS NOT NULL ORDER BY event_no"""
        ).fetchall()
        for event_no, problem, ph, name, cat, ts, dur, pid, tid in rows:
            if problem.startswith("negative dur"):
                self.stats.negative_durations += 1
            self.ctx.skip(event_no, problem, _event_text(ph, name, cat, ts, dur, pid, tid))

    def _find_duplicates(self) -> None:
        con = self.con
        n, distinct = con.execute(
            """SELECT count(*), count(DISTINCT hash(name, cat, pid, tid, ts_ns, dur_ns, args))
               FROM _ev WHERE ph = 'X' AND problem IS NULL"""
        ).fetchall()[0]
        if n == distinct:
            return
        rows = con.execute(
            """WITH x AS (
                   SELECT r, event_no, ph, name, cat, ts_text, dur_text, pid, tid,
                          min(event_no) OVER (PARTITION BY name, cat, pid, tid, ts_ns, dur_ns, CAST(args AS VARCHAR)) AS first
                   FROM _ev WHERE ph = 'X' AND problem IS NULL)
               SELECT r, event_no, first, ph, name, cat, ts_text, dur_text, pid, tid FROM x
               WHERE event_no <> first ORDER BY event_no"""
        ).fetchall()
        if not rows:
            return
        self.stats.duplicates = len(rows)
        for r, event_no, first, ph, name, cat, ts, dur, pid, tid in rows:
            self.ctx.skip(event_no, f"duplicate of event {first}", _event_text(ph, name, cat, ts, dur, pid, tid))
        tbl = pa.table({"r": pa.array([r[0] for r in rows], pa.int64()),
                        "p": pa.array([f"duplicate of event {r[2]}" for r in rows], pa.string())})
        con.register("_dups", tbl)
        con.execute("UPDATE _ev SET problem = _dups.p FROM _dups WHERE _ev.r = _dups.r")
        con.unregister("_dups")

    # ------------------------------------------------------------------ matching
    def _match_begin_end(self, dur, end_r, skip) -> None:
        rows = self.con.execute(
            """SELECT r, ph, pid, tid, name, ts_ns, event_no, cat FROM _ev
               WHERE ph IN ('B', 'E') AND problem IS NULL ORDER BY r"""
        ).fetchall()
        stacks: dict = {}
        for r, ph, pid, tid, name, ts, event_no, cat in rows:
            key = (pid, tid)
            st = stacks.get(key)
            if ph == "B":
                if st is None:
                    st = stacks[key] = []
                st.append((name, r, ts))
                continue
            k = _innermost(st, name)
            if k < 0:
                self.stats.unmatched_e += 1
                skip[r] = True
                self.ctx.skip(event_no, f"unmatched E: no open B named {name!r} on pid {pid} tid {tid}",
                              _event_text("E", name, cat, ts and te.ns_to_us_text(ts), None, pid, tid))
                continue
            bname, br, bts = st.pop(k)
            if ts < bts:
                self.stats.negative_durations += 1
                skip[r] = True
                skip[br] = True
                self.ctx.skip(event_no, f"E before its B (event {self.event_no[br]}): negative duration",
                              _event_text("E", name, cat, te.ns_to_us_text(ts), None, pid, tid))
                self.ctx.skip(int(self.event_no[br]), f"B ends before it begins (E is event {event_no})",
                              _event_text("B", bname, cat, te.ns_to_us_text(bts), None, pid, tid))
                continue
            dur[br] = ts - bts
            end_r[br] = r
        self.stats.unclosed_b = sum(len(s) for s in stacks.values())

    def _match_async(self, dur, end_r, skip, async_op) -> None:
        rows = self.con.execute(
            """SELECT r, ph, pid, cat, id, name, ts_ns, event_no, tid FROM _ev
               WHERE ph IN ('b', 'e', 'S', 'F') AND problem IS NULL ORDER BY r"""
        ).fetchall()
        if not rows:
            return
        stacks: dict = {}
        for r, ph, pid, cat, id_, name, ts, event_no, tid in rows:
            key = (pid, cat, id_)
            st = stacks.get(key)
            if ph in te.ASYNC_BEGIN:
                if st is None:
                    st = stacks[key] = []
                st.append((name, r, ts))
                continue
            k = _innermost(st, name)
            if k < 0:
                self.stats.async_unmatched_e += 1
                skip[r] = True
                self.ctx.skip(event_no, f"unmatched async end: no open begin for id {id_} cat {cat!r} name {name!r}",
                              _event_text(ph, name, cat, te.ns_to_us_text(ts), None, pid, tid))
                continue
            bname, br, bts = st.pop(k)
            if ts < bts:
                self.stats.negative_durations += 1
                skip[r] = True
                skip[br] = True
                self.ctx.skip(event_no, "async end before its begin: negative duration",
                              _event_text(ph, name, cat, te.ns_to_us_text(ts), None, pid, tid))
                self.ctx.skip(int(self.event_no[br]), "async begin after its end",
                              _event_text("b", bname, cat, te.ns_to_us_text(bts), None, pid, tid))
                continue
            dur[br] = ts - bts
            end_r[br] = r
        self.stats.async_unclosed_b = sum(len(s) for s in stacks.values())
        # MXNet custom-operator tasks: operators when they have no synchronous recording
        cats = te.ASYNC_OP_CATEGORIES
        cand = self.con.execute(
            f"""SELECT r, name FROM _ev WHERE ph IN ('b', 'S') AND problem IS NULL
                AND cat IN ({te._sql_list(cats)})"""
        ).fetchall()
        if cand:
            sync = {r[0] for r in self.con.execute(
                "SELECT DISTINCT name FROM _ev WHERE role = 'op' AND problem IS NULL").fetchall()}
            for r, name in cand:
                if name not in sync and dur[r] != np.iinfo(np.int64).min and not skip[r]:
                    async_op[r] = True

    # ------------------------------------------------------------------ spans
    def _spans(self, dur, async_op) -> dict:
        """Every span (X, matched B, async operators), sorted by thread, start, longer
        first, file order; with the arrays the later steps need."""
        con = self.con
        con.execute("DROP TABLE IF EXISTS _thr")
        con.execute(
            """CREATE TABLE _thr AS SELECT row_number() OVER (ORDER BY pid, tid) - 1 AS code, pid, tid
               FROM (SELECT DISTINCT pid, tid FROM _ev WHERE ph IN ('X', 'B', 'b', 'S'))""")
        d = con.execute(
            f"""SELECT e.r, t.code AS thr, e.ts_ns, coalesce(e.dur_ns, 0) AS dur_ns, e.ph = 'X' AS is_x,
                      e.ph IN ('b', 'S') AS is_async,
                      CASE e.role {' '.join(f"WHEN '{k}' THEN {v}" for k, v in ROLE_CODES.items())} ELSE 0 END AS role
               FROM _ev e
               JOIN _thr t ON e.pid IS NOT DISTINCT FROM t.pid AND e.tid IS NOT DISTINCT FROM t.tid
               WHERE e.ph IN ('X', 'B', 'b', 'S') AND e.problem IS NULL"""
        ).fetchnumpy()
        r = np.asarray(d["r"], dtype=np.int64)
        thr = np.asarray(d["thr"], dtype=np.int64)
        ts = np.asarray(d["ts_ns"], dtype=np.int64)
        xdur = np.asarray(d["dur_ns"], dtype=np.int64)
        is_x = np.asarray(d["is_x"], dtype=bool)
        is_async = np.asarray(d["is_async"], dtype=bool)
        role = np.asarray(d["role"], dtype=np.int8)
        # B and async durations come from matching
        sd = np.where(is_x, xdur, dur[r])
        unknown = sd == np.iinfo(np.int64).min
        keep = ~unknown & (~is_async | async_op[r])
        r, thr, ts, sd, role = r[keep], thr[keep], ts[keep], sd[keep], role[keep]
        is_op = (role == ROLE_CODES["op"]) | async_op[r]
        order = np.lexsort((r, -sd, ts, thr))
        self.n_threads = con.execute("SELECT count(*) FROM _thr").fetchall()[0][0]
        return {
            "r": r[order], "thr": thr[order], "ts": ts[order], "dur": sd[order],
            "end": (ts + sd)[order], "is_op": is_op[order], "role": role[order],
        }

    def _bind_flows(self, spans) -> np.ndarray:
        """bound[r] = rowid of the slice each flow event binds to (-1: none)."""
        bound = np.full(self.m, -1, dtype=np.int64)
        d = self.con.execute(
            """SELECT e.r, coalesce(t.code, -1) AS thr, e.ts_ns, e.ph = 'f' AND e.bp IS DISTINCT FROM 'e' AS nxt
               FROM _ev e LEFT JOIN _thr t ON e.pid IS NOT DISTINCT FROM t.pid AND e.tid IS NOT DISTINCT FROM t.tid
               WHERE e.ph IN ('s', 't', 'f') AND e.problem IS NULL"""
        ).fetchnumpy()
        if len(d["r"]) == 0:
            return bound
        fr = np.asarray(d["r"], dtype=np.int64)
        fthr = np.asarray(d["thr"], dtype=np.int64)
        fts = np.asarray(d["ts_ns"], dtype=np.int64)
        next_slice = np.asarray(d["nxt"], dtype=bool)
        sthr, sts, send, sr = spans["thr"], spans["ts"], spans["end"], spans["r"]
        if len(sr) == 0:
            return bound
        bounds = np.searchsorted(sthr, np.arange(self.n_threads + 1))
        for code in np.unique(fthr):
            if code < 0:
                continue
            a, b = bounds[code], bounds[code + 1]
            if a == b:
                continue
            sel = np.nonzero(fthr == code)[0]
            q = fts[sel]
            seg_ts, seg_end = sts[a:b], send[a:b]
            # enclosing slice: the last one starting at or before q that is still open at q
            # (sorted longer first, so among equal starts the last is the innermost)
            idx = np.searchsorted(seg_ts, q, side="right") - 1
            nxt = next_slice[sel]
            ok = (idx >= 0) & ~nxt
            ok[ok] = seg_end[idx[ok]] >= q[ok]
            bound[fr[sel[ok]]] = sr[a + idx[ok]]
            for k in np.nonzero(~ok)[0].tolist():
                qq = int(q[k])
                if nxt[k]:
                    j = int(np.searchsorted(seg_ts, qq, side="left"))
                    if j < len(seg_ts):
                        bound[fr[sel[k]]] = sr[a + j]
                    continue
                i = int(idx[k]) - 1
                steps = 0
                while i >= 0 and steps < 64:
                    if seg_end[i] >= qq:
                        bound[fr[sel[k]]] = sr[a + i]
                        break
                    i -= 1
                    steps += 1
        return bound

    def _gpu_links(self, spans, bound):
        """launch_r[g], op_r[g] for device events; launch_gpu[r] = device ns per launch."""
        m = self.m
        launch_r = np.full(m, -1, dtype=np.int64)
        op_r = np.full(m, -1, dtype=np.int64)
        launch_gpu = np.zeros(m, dtype=np.int64)
        role, sr, sdur = spans["role"], spans["r"], spans["dur"]
        gpu = np.isin(role, (ROLE_CODES["kernel"], ROLE_CODES["memcpy"], ROLE_CODES["memset"]))
        if not gpu.any():
            return launch_r, op_r, launch_gpu
        g_r = sr[gpu]
        g_dur = sdur[gpu]
        corr = self._col("SELECT coalesce(correlation, -1) FROM _ev ORDER BY r", np.int64)
        ext = self._col("SELECT coalesce(external_id, -1) FROM _ev ORDER BY r", np.int64)
        # 1. correlation id -> host launch call (the first in file order)
        l_r = np.sort(sr[role == ROLE_CODES["launch"]])
        l_corr = corr[l_r]
        has = l_corr >= 0
        l_r, l_corr = l_r[has], l_corr[has]
        if len(l_r):
            uc, first = np.unique(l_corr, return_index=True)
            gc = corr[g_r]
            pos = np.searchsorted(uc, gc)
            pos_ok = (pos < len(uc)) & (gc >= 0)
            pos_ok[pos_ok] = uc[pos[pos_ok]] == gc[pos_ok]
            launch_r[g_r[pos_ok]] = l_r[first[pos[pos_ok]]]
        # 2. flows: the flow ending on the device event starts on a launch call
        missing = g_r[launch_r[g_r] < 0]
        if len(missing) and (bound >= 0).any():
            rows = self.con.execute(
                """SELECT r, ph, cat, id FROM _ev WHERE ph IN ('s', 'f') AND problem IS NULL ORDER BY r"""
            ).fetchall()
            starts = {}
            for r, ph, cat, id_ in rows:
                if ph == "s" and bound[r] >= 0:
                    starts.setdefault((cat, id_), bound[r])
            miss = set(missing.tolist())
            is_launch = np.zeros(m, dtype=bool)
            is_launch[sr[role == ROLE_CODES["launch"]]] = True
            for r, ph, cat, id_ in rows:
                if ph == "f" and bound[r] in miss:
                    s = starts.get((cat, id_))
                    if s is not None and is_launch[s]:
                        launch_r[bound[r]] = s
        # 3. External id -> the operator with that id (when no launch call is known)
        missing = g_r[launch_r[g_r] < 0]
        if len(missing):
            o_r = np.sort(sr[role == ROLE_CODES["op"]])
            o_ext = ext[o_r]
            keep = o_ext >= 0
            o_r, o_ext = o_r[keep], o_ext[keep]
            if len(o_r):
                ue, first = np.unique(o_ext, return_index=True)
                ge = ext[missing]
                pos = np.searchsorted(ue, ge)
                ok = (pos < len(ue)) & (ge >= 0)
                ok[ok] = ue[pos[ok]] == ge[ok]
                op_r[missing[ok]] = o_r[first[pos[ok]]]
        has_launch = launch_r[g_r] >= 0
        np.add.at(launch_gpu, launch_r[g_r[has_launch]], g_dur[has_launch])
        self._gpu_r, self._gpu_dur = g_r, g_dur
        return launch_r, op_r, launch_gpu

    def _sweep(self, spans, launch_gpu, launch_r, op_r):
        """Nesting per thread: depth, parent operator, self time, device time.

        The rule is the stack sweep of the corpus README: spans sorted by thread, start,
        longer first, file order; an operator's parent is the innermost operator still open
        at its start (``end > start``); the parent of any other span is found the same way
        (launch calls get their operator from it).  Vectorised: a span's parent is the first
        of (the operator before it in that order, its parent, ...) that is still open; the
        pointers are walked up all at once until none moves (as many rounds as the nesting
        is deep), which gives exactly the stack's answer, improper nesting included.
        """
        m = self.m
        parent = np.full(m, -1, dtype=np.int64)
        depth = np.full(m, -1, dtype=np.int32)
        child = np.zeros(m, dtype=np.int64)
        gpu_self = np.zeros(m, dtype=np.int64)
        thr, is_op = spans["thr"], spans["is_op"]
        # only threads that have operators are swept (GPU streams are not)
        op_threads = np.unique(thr[is_op])
        sel = np.isin(thr, op_threads)
        t_thr = thr[sel]
        t_ts = spans["ts"][sel]
        t_end = spans["end"][sel]
        t_dur = spans["dur"][sel]
        t_op = is_op[sel]
        t_r = spans["r"][sel]
        n = len(t_r)
        improper = 0
        if n:
            pos = np.arange(n, dtype=np.int64)
            last_op = np.maximum.accumulate(np.where(t_op, pos, -1))
            prev = np.empty(n, dtype=np.int64)
            prev[0] = -1
            prev[1:] = last_op[:-1]
            ok = prev >= 0
            ok[ok] = t_thr[prev[ok]] == t_thr[ok]
            par = np.where(ok, prev, -1)
            while True:
                has = np.nonzero(par >= 0)[0]
                closed = has[t_end[par[has]] <= t_ts[has]]
                if not len(closed):
                    break
                par[closed] = par[par[closed]]
            dep = np.zeros(n, dtype=np.int32)
            has = np.nonzero(par >= 0)[0]
            while len(has):
                new = dep[par[has]] + 1
                moved = new != dep[has]
                if not moved.any():
                    break
                dep[has] = new
            ops = np.nonzero(t_op & (par >= 0))[0]
            np.add.at(child, t_r[par[ops]], t_dur[ops])
            improper = int((t_end[ops] > t_end[par[ops]]).sum())
            lg = launch_gpu[t_r]
            calls = np.nonzero(~t_op & (par >= 0) & (lg > 0))[0]
            np.add.at(gpu_self, t_r[par[calls]], lg[calls])
            parent[t_r] = np.where(par >= 0, t_r[np.maximum(par, 0)], -1)
            depth[t_r] = dep
        self.stats.improper_nesting = improper
        # device events: their operator is the launch call's parent (unless External id found one)
        if hasattr(self, "_gpu_r"):
            g = self._gpu_r
            lr = launch_r[g]
            via_launch = lr >= 0
            op_r[g[via_launch]] = parent[lr[via_launch]]
            ext_only = ~via_launch & (op_r[g] >= 0)
            np.add.at(gpu_self, op_r[g[ext_only]], self._gpu_dur[ext_only])
        # inclusive device time: children into parents, deepest first
        all_r = spans["r"]
        op_rows = all_r[spans["is_op"]]
        gpu_total = gpu_self.copy()
        if len(op_rows):
            d = depth[op_rows]
            for level in range(int(d.max()), 0, -1):
                rows = op_rows[d == level]
                rows = rows[parent[rows] >= 0]
                np.add.at(gpu_total, parent[rows], gpu_total[rows])
        self_ns = np.zeros(m, dtype=np.int64)
        dur_all = np.zeros(m, dtype=np.int64)
        dur_all[all_r] = spans["dur"]
        self_ns[op_rows] = dur_all[op_rows] - child[op_rows]
        self._op_rows = op_rows
        return parent, depth, self_ns, gpu_self, gpu_total

    # ------------------------------------------------------------------ insert
    def _insert(self, skip, dur, end_r, async_op, parent, depth, self_ns, gpu_self, gpu_total,
                launch_r, op_r, bound) -> None:
        m = self.m
        ev = self.event_no
        unknown = np.iinfo(np.int64).min

        def ev_of(rr):
            out = np.where(rr >= 0, ev[np.clip(rr, 0, max(m - 1, 0))], 0)
            return pa.array(out, pa.int64(), mask=rr < 0)

        is_op = np.zeros(m, dtype=bool)
        is_op[self._op_rows] = True
        has_depth = depth >= 0
        res = pa.table({
            "x_r": pa.array(np.arange(m, dtype=np.int64)),  # the row number r of _ev
            "x_skip": pa.array(skip),
            "x_dur": pa.array(dur, pa.int64(), mask=dur == unknown),
            "x_end_event": ev_of(end_r),
            "x_async_op": pa.array(async_op),
            "x_parent": ev_of(parent),
            "x_depth": pa.array(np.where(has_depth, depth, 0), pa.int32(), mask=~has_depth),
            "x_self": pa.array(self_ns, pa.int64(), mask=~is_op),
            "x_gpu_self": pa.array(gpu_self, pa.int64(), mask=~is_op),
            "x_gpu_total": pa.array(gpu_total, pa.int64(), mask=~is_op),
            "x_launch": ev_of(launch_r),
            "x_op": ev_of(op_r),
            "x_bound": ev_of(bound),
        })
        con = self.con
        con.register("_res_in", res)
        try:
            con.execute("CREATE OR REPLACE TABLE _res AS SELECT * FROM _res_in")
        finally:
            con.unregister("_res_in")
        # a view (not a copy) the store reads once per table.  Rows are matched by position
        # when the scan order of _ev is its row number r (checked), else joined on r.
        positional = not con.execute("SELECT count(*) FROM _ev e POSITIONAL JOIN _res x "
                                     "WHERE e.r IS DISTINCT FROM x.x_r").fetchall()[0][0]
        join = "POSITIONAL JOIN {q}._res x" if positional else "JOIN {q}._res x ON e.r = x.x_r"
        q = self.ws.qualified
        con.execute(
            f"""CREATE OR REPLACE VIEW _evx AS
            SELECT CAST({int(self.sid)} AS INTEGER) AS source_id, e.event_no, e.ph,
                   CASE WHEN x.x_async_op THEN 'op' ELSE e.role END AS role, e.cat, e.name, e.pid, e.tid,
                   e.ts_ns, coalesce(e.dur_ns, x.x_dur) AS dur_ns, e.ts_ns + coalesce(e.dur_ns, x.x_dur) AS end_ns,
                   x.x_depth AS depth, x.x_parent AS parent, x.x_self AS self_ns, x.x_end_event AS end_event,
                   e.id, e.bp, e.scope, e.correlation, e.external_id, x.x_launch AS launch_event,
                   x.x_op AS op_event, x.x_gpu_self AS gpu_self_ns, x.x_gpu_total AS gpu_total_ns, e.args,
                   x.x_bound AS bound_event
            FROM {q}._ev e {join.format(q=q)}
            WHERE e.problem IS NULL AND NOT x.x_skip"""
        )
        self.ws.transfer("SELECT * EXCLUDE (bound_event) FROM {ws}._evx", "trace_events")

    def _derived(self) -> None:
        """Counters, flows and the shared GPU tables (columns as the Nsight/nvprof readers
        fill them, ns), all from the finished events."""
        con = self.con
        ws = self.ws
        ws.transfer(
            """SELECT e.source_id, e.event_no, e.name, e.cat, e.pid, e.tid, e.id, e.ts_ns, j.key AS series,
                      try_cast(j.value AS DOUBLE) AS value,
                      CASE WHEN j.type = 'VARCHAR' THEN json_extract_string(j.value, '$')
                           ELSE CAST(j.value AS VARCHAR) END AS value_text
               FROM {ws}._evx e, json_each(e.args) j
               WHERE e.ph = 'C' AND e.args IS NOT NULL""",
            "trace_counters",
        )
        ws.transfer(
            """SELECT any_value(source_id) AS source_id, cat, id, any_value(name) AS name,
                      arg_min(event_no, ts_ns) FILTER (WHERE ph = 's') AS start_event,
                      arg_max(event_no, ts_ns) FILTER (WHERE ph = 'f') AS end_event,
                      count(*) FILTER (WHERE ph = 't') AS steps,
                      min(ts_ns) FILTER (WHERE ph = 's') AS start_ts_ns, max(ts_ns) FILTER (WHERE ph = 'f') AS end_ts_ns,
                      arg_min(bound_event, ts_ns) FILTER (WHERE ph = 's') AS from_event,
                      arg_max(bound_event, ts_ns) FILTER (WHERE ph = 'f') AS to_event
               FROM {ws}._evx WHERE ph IN ('s', 't', 'f') GROUP BY cat, id""",
            "trace_flows",
        )
        names = [r[0] for r in con.execute("SELECT DISTINCT name FROM _evx WHERE role = 'kernel'").fetchall()]
        con.register("_kshort_in", pa.table({"kname": pa.array(names, pa.string()),
                                             "kshort": pa.array([te.kernel_short_name(n) for n in names], pa.string())}))
        con.execute("CREATE TABLE _kshort AS SELECT * FROM _kshort_in")
        con.unregister("_kshort_in")
        ws.transfer(
            """SELECT e.source_id, e.row_no, e.name, e.name AS demangled, k.kshort AS short_name,
                      e.start_ns, e.end_ns, e.duration_ns,
                      try_cast(v[1] AS INTEGER) AS device, try_cast(v[2] AS BIGINT) AS context,
                      try_cast(v[3] AS BIGINT) AS stream,
                      try_cast(v[4] AS INTEGER) AS grid_x, try_cast(v[5] AS INTEGER) AS grid_y,
                      try_cast(v[6] AS INTEGER) AS grid_z, try_cast(v[7] AS INTEGER) AS block_x,
                      try_cast(v[8] AS INTEGER) AS block_y, try_cast(v[9] AS INTEGER) AS block_z,
                      try_cast(v[10] AS INTEGER) AS registers,
                      e.correlation_id, try_cast(e.pid AS BIGINT) AS pid,
                      try_cast(e.tid AS BIGINT) AS tid, 'trace_events' AS origin
               FROM (SELECT source_id, event_no AS row_no, name, ts_ns AS start_ns, end_ns, dur_ns AS duration_ns,
                            correlation AS correlation_id, pid, tid,
                            json_extract_string(args, ['$.device', '$.context', '$.stream', '$.grid[0]', '$.grid[1]',
                                '$.grid[2]', '$.block[0]', '$.block[1]', '$.block[2]',
                                '$."registers per thread"']) AS v
                     FROM {ws}._evx WHERE role = 'kernel') e
               LEFT JOIN {ws}._kshort k ON k.kname = e.name""",
            "gpu_kernels",
        )
        ws.transfer(
            """SELECT source_id, event_no AS row_no, CASE WHEN role = 'memcpy' THEN 'memcpy' ELSE 'memset' END AS op,
                      CASE WHEN role = 'memcpy' THEN nullif(regexp_extract(name, """ + _quote(te.MEMCPY_KIND_PATTERN)
            + """, 1), '') END AS kind,
                      name, try_cast(json_extract_string(args, '$.bytes') AS BIGINT) AS bytes,
                      ts_ns AS start_ns, end_ns, dur_ns AS duration_ns,
                      try_cast(json_extract_string(args, '$.device') AS INTEGER) AS device,
                      try_cast(json_extract_string(args, '$.context') AS BIGINT) AS context,
                      try_cast(json_extract_string(args, '$.stream') AS BIGINT) AS stream,
                      correlation AS correlation_id, try_cast(pid AS BIGINT) AS pid, try_cast(tid AS BIGINT) AS tid,
                      'trace_events' AS origin
               FROM {ws}._evx WHERE role IN ('memcpy', 'memset')""",
            "gpu_memops",
        )
        ws.transfer(
            """SELECT source_id, event_no AS row_no,
                      CASE WHEN ends_with(cat, '_driver') THEN 'driver' ELSE 'runtime' END AS api,
                      name, regexp_replace(name, '_v[0-9]+$', '') AS base_name, ts_ns AS start_ns, end_ns,
                      dur_ns AS duration_ns, correlation AS correlation_id,
                      try_cast(pid AS BIGINT) AS pid, try_cast(tid AS BIGINT) AS tid,
                      try_cast(json_extract_string(args, '$.cbid') AS INTEGER) AS cbid, 'trace_events' AS origin
               FROM {ws}._evx WHERE role = 'launch'""",
            "gpu_api_calls",
        )
        con.execute("DROP TABLE IF EXISTS _thr")


#: the trace_files counters taken from :class:`SpanStats`
TRACE_FILE_COUNTS = ("unmatched_e", "unclosed_b", "async_unmatched_e", "async_unclosed_b", "improper_nesting",
                     "duplicates", "negative_durations")


def insert_trace_file(ctx: IngestContext, stats: SpanStats, **fields) -> None:
    """The ``trace_files`` row of one source (fields by column name; counts from ``stats``)."""
    row = RowBuffer(ctx, "trace_files", list(fields) + list(TRACE_FILE_COUNTS))
    row.add(**fields, **{name: getattr(stats, name) for name in TRACE_FILE_COUNTS})
    row.flush()


def _innermost(stack, name) -> int:
    """Index of the innermost open begin named ``name`` in ``stack`` (of any name when
    ``name`` is None), or -1: an end closes the innermost open begin of its name."""
    if not stack:
        return -1
    if name is None:
        return len(stack) - 1
    for j in range(len(stack) - 1, -1, -1):
        if stack[j][0] == name:
            return j
    return -1


def _event_text(ph, name, cat, ts, dur, pid, tid) -> str:
    parts = [f'"ph": {_js(ph)}']
    if name is not None:
        parts.append(f'"name": {_js(name)}')
    if cat is not None:
        parts.append(f'"cat": {_js(cat)}')
    if ts is not None:
        parts.append(f'"ts": {ts}')
    if dur is not None:
        parts.append(f'"dur": {dur}')
    if pid is not None:
        parts.append(f'"pid": {pid if str(pid).lstrip("-").isdigit() else _js(pid)}')
    if tid is not None:
        parts.append(f'"tid": {tid if str(tid).lstrip("-").isdigit() else _js(tid)}')
    return "{" + ", ".join(parts) + "}"


def _js(v) -> str:
    import json

    return json.dumps(v, ensure_ascii=False)


# =========================================================================== text tables
def insert_profiler_rows(ctx: IngestContext, rows: list[dict]) -> None:
    """Rows of ``profiler_tables`` (dicts keyed by column; missing keys are NULL)."""
    buf = RowBuffer(ctx, "profiler_tables", [c for c in arrow_types(ctx.con, "profiler_tables") if c != "source_id"])
    buf.extend(rows)
    buf.flush()
