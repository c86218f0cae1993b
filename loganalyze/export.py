"""Timeline export: what the database holds, as one trace-event JSON file for Perfetto UI
or chrome://tracing.

- Trace files (``trace_events``): every event as it was read; B/E pairs become one ``X``
  event, unclosed B stay ``B``; async, flow, counter, instant and metadata events are kept
  with their ids and args.  Times are written from integer ns as exact microseconds.
- oneDNN verbose logs with timestamps (``ONEDNN_VERBOSE_TIMESTAMP=1``; the stamp is the
  start of the call): each timed exec/create line becomes an ``X`` event named by the
  primitive kind, category ``onednn_exec``/``onednn_create``/``onednn_create_nested``,
  with the implementation, shapes and line number in ``args``.  These logs have no other
  timeline viewer.

Every file gets its own process (pids are renumbered when several files are exported, and
the process name says which file it came from), so files never overlap in the viewer.
"""
from __future__ import annotations

import gzip
import io
import json
import sys
from dataclasses import dataclass, field

from .grammars.trace_event import ns_to_us_text

BATCH = 50_000
INT64 = 2 ** 63


@dataclass
class ExportStats:
    sources: list = field(default_factory=list)
    events: int = 0
    onednn_events: int = 0


def _num_or_str(v: str | None):
    """pid/tid text -> the JSON value (integers as numbers when they fit in int64)."""
    if v is None:
        return None
    t = v.strip()
    if t.lstrip("-").isdigit() and -INT64 <= int(t) < INT64:
        return int(t)
    return v


def _has_table(con, name: str) -> bool:
    return bool(con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND database_name = current_database()",
        [name]).fetchall()[0][0] or con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE view_name = ? AND database_name = current_database()",
        [name]).fetchall()[0][0])


class ExportError(Exception):
    """Nothing to export, or the output cannot be written (one line for the user)."""


def plan_sources(con, source_ids: list[int] | None = None, run: str | None = None,
                 onednn: bool = True) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The trace files and timestamped oneDNN logs an export would write: (id, name) pairs."""
    from .query.filters import source_filter

    where, params = source_filter(run, source_ids, "s.")
    cond = (" AND " + " AND ".join(where)) if where else ""
    trace_sources = con.execute(
        f"""SELECT s.source_id, s.name FROM sources s
            WHERE EXISTS (SELECT 1 FROM trace_events e WHERE e.source_id = s.source_id){cond}
            ORDER BY s.source_id""", params).fetchall()
    dnn_sources = []
    if onednn and _has_table(con, "onednn_events"):
        dnn_sources = con.execute(
            f"""SELECT s.source_id, s.name FROM sources s
                WHERE EXISTS (SELECT 1 FROM onednn_events e WHERE e.source_id = s.source_id AND e.ts_ms IS NOT NULL
                              AND e.time_ms IS NOT NULL){cond}
                ORDER BY s.source_id""", params).fetchall()
    return trace_sources, dnn_sources


def write_chrome_trace(con, path: str, source_ids: list[int] | None = None, run: str | None = None,
                       onednn: bool = True, filtered: bool = False, progress=None) -> ExportStats:
    """Export to ``path`` ('-': stdout; '.gz': compressed) through a temporary file renamed
    into place at the end, so that a failed or empty export leaves no file behind.
    ``progress(total_events)``, when given, returns a callback taking the events written."""
    import os
    import tempfile

    from .inputs import remove_file

    plan = plan_sources(con, source_ids, run, onednn)
    if not plan[0] and not plan[1]:
        raise ExportError("nothing to export: no trace events or timestamped oneDNN verbose lines"
                          + (" for the chosen sources" if filtered else ""))
    report = progress(count_events(con, plan)) if progress else None
    if path == "-":
        with _NoClose(sys.stdout) as out:
            return export_chrome_trace(con, out, plan=plan, progress=report)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".loganalyze-export-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ExportError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as raw:
            stream = gzip.GzipFile(fileobj=raw, mode="wb") if path.endswith(".gz") else raw
            with io.TextIOWrapper(stream, encoding="utf-8") as out:
                stats = export_chrome_trace(con, out, plan=plan, progress=report)
        os.replace(tmp, path)
    except OSError as exc:
        remove_file(tmp)
        raise ExportError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        remove_file(tmp)
        raise
    return stats


def count_events(con, plan) -> int:
    """How many events an export of ``plan`` writes at most (for a progress bar)."""
    trace_ids = [sid for sid, _ in plan[0]] or [-1]
    dnn_ids = [sid for sid, _ in plan[1]] or [-1]
    return con.execute(
        f"""SELECT (SELECT count(*) FROM trace_events WHERE source_id IN ({', '.join(map(str, trace_ids))}))
                 + (SELECT count(*) FROM onednn_events WHERE source_id IN ({', '.join(map(str, dnn_ids))}))"""
    ).fetchall()[0][0]


def export_chrome_trace(con, out, source_ids: list[int] | None = None, run: str | None = None,
                        onednn: bool = True, plan=None, progress=None) -> ExportStats:
    """Write the trace to ``out`` (a text stream).  Returns what was written.  ``progress``,
    when given, is called with the number of events written so far."""
    stats = ExportStats()
    trace_sources, dnn_sources = plan or plan_sources(con, source_ids, run, onednn)
    several = len(trace_sources) + len(dnn_sources) > 1
    out.write('{"traceEvents": [\n')
    first = [True]
    written = [0]

    def emit(ev: dict) -> None:
        """One event; values of type :class:`Raw` are written as they are (exact numbers)."""
        parts = []
        for k, v in ev.items():
            text = v.text if isinstance(v, Raw) else json.dumps(v, ensure_ascii=False, separators=(",", ":"))
            parts.append(f"{json.dumps(k)}:{text}")
        out.write(("" if first[0] else ",\n") + "{" + ",".join(parts) + "}")
        first[0] = False
        written[0] += 1
        if progress is not None and written[0] % 10_000 == 0:
            progress(written[0])

    next_pid = [1]
    for sid, name in trace_sources:
        stats.sources.append({"source_id": sid, "name": name, "kind": "trace"})
        stats.events += _export_trace_source(con, sid, name, several, next_pid, emit)
    for sid, name in dnn_sources:
        stats.sources.append({"source_id": sid, "name": name, "kind": "onednn_verbose"})
        stats.onednn_events += _export_onednn_source(con, sid, name, next_pid, emit)
    out.write('\n],\n"displayTimeUnit": "ms",\n')
    out.write('"otherData": ' + json.dumps({"exported_by": "loganalyze", "sources": stats.sources}) + "\n}\n")
    return stats


def _export_trace_source(con, sid: int, name: str, several: bool, next_pid: list, emit) -> int:
    pid_map: dict = {}

    def pid_of(pid):
        if not several:
            return _num_or_str(pid)
        if pid not in pid_map:
            pid_map[pid] = next_pid[0]
            next_pid[0] += 1
        return pid_map[pid]

    n = 0
    if several:
        # name every process after its file (and keep its own name)
        procs = dict(con.execute("SELECT pid, name FROM trace_process_names WHERE source_id = ?", [sid]).fetchall())
        for (pid,) in con.execute("SELECT DISTINCT pid FROM trace_events WHERE source_id = ? ORDER BY pid",
                                  [sid]).fetchall():
            label = f"{name}: {procs[pid]}" if procs.get(pid) else f"{name}: pid {pid}"
            emit({"ph": "M", "name": "process_name", "pid": pid_of(pid), "tid": 0, "args": {"name": label}})
    cur = con.execute(
        """SELECT ph, name, cat, pid, tid, ts_ns, dur_ns, id, bp, scope, CAST(args AS VARCHAR), end_event
           FROM trace_events WHERE source_id = ? AND ph <> 'E' ORDER BY event_no""", [sid])
    while True:
        rows = cur.fetchmany(BATCH)
        if not rows:
            break
        for ph, ename, cat, pid, tid, ts, dur, id_, bp, scope, args, end_event in rows:
            if several and ph == "M" and ename == "process_name":
                continue
            ev: dict = {"ph": ph}
            if ph == "B" and dur is not None:
                ev["ph"] = "X"
            if ename is not None:
                ev["name"] = ename
            if cat is not None:
                ev["cat"] = cat
            if ts is not None:
                ev["ts"] = _us(ts)
            if ev["ph"] == "X" and dur is not None:
                ev["dur"] = _us(dur)
            if pid is not None:
                ev["pid"] = pid_of(pid)
            if tid is not None:
                ev["tid"] = _num_or_str(tid)
            if id_ is not None:
                ev["id"] = _num_or_str(id_) if not id_.startswith("{") else id_
            if bp is not None:
                ev["bp"] = bp
            if scope is not None:
                ev["s"] = scope
            if args is not None:
                ev["args"] = Raw(args)
            emit(ev)
            n += 1
    return n


class Raw:
    """JSON text written as it is (a number with exactly these digits, or a JSON value)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _us(ns: int) -> Raw:
    return Raw(ns_to_us_text(int(ns)))


def _export_onednn_source(con, sid: int, name: str, next_pid: list, emit) -> int:
    pid = next_pid[0]
    next_pid[0] += 1
    emit({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": f"oneDNN verbose: {name}"}})
    emit({"ph": "M", "name": "thread_name", "pid": pid, "tid": 0, "args": {"name": "primitives"}})
    cur = con.execute(
        """SELECT line_no, ts_ms, time_ms, op_class, operation, kind, engine, impl, prop_kind, mds, attrs, aux,
                  problem, component
           FROM onednn WHERE source_id = ? AND ts_ms IS NOT NULL AND time_ms IS NOT NULL
                AND op_class IN ('exec', 'create', 'create_nested', 'graph_exec', 'graph_compile')
           ORDER BY line_no""", [sid])
    n = 0
    while True:
        rows = cur.fetchmany(BATCH)
        if not rows:
            break
        for (line_no, ts_ms, time_ms, op_class, operation, kind, engine, impl, prop, mds, attrs, aux, problem,
             component) in rows:
            args = {k: v for k, v in (("operation", operation), ("engine", engine), ("impl", impl),
                                      ("prop_kind", prop), ("mds", mds), ("attrs", attrs), ("aux", aux),
                                      ("problem", problem), ("component", component), ("line_no", line_no))
                    if v not in (None, "")}
            emit({"ph": "X", "cat": f"onednn_{op_class}", "name": kind or operation, "pid": pid, "tid": 0,
                  "ts": Raw(f"{ts_ms * 1000:.3f}"), "dur": Raw(f"{time_ms * 1000:.3f}"), "args": args})
            n += 1
    return n


class _NoClose:
    def __init__(self, stream):
        self.stream = stream

    def write(self, s):
        return self.stream.write(s)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stream.flush()

    def close(self):
        self.stream.flush()
