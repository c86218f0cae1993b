"""Nsight Systems SQLite exports (``nsys export --type sqlite``), 2021-2025: the schema mapping.

An export is a SQLite database whose tables change between releases (docs/formats.md,
"Nsight Systems").  Known differences this mapping absorbs:

- metadata in ``EXPORT_META_DATA`` (<= 2023) or ``META_DATA_EXPORT`` (newer);
- ``ENUM_*`` lookup tables only in newer exports (older ones: the codes below);
- ``greenContextId`` in newer kernel and memcpy tables (not read: no table of ours holds it);
- ``CUPTI_ACTIVITY_KIND_RUNTIME.name`` only in older exports (names otherwise by ``nameId``);
- NVTX text inline (``text``) or by id (``textId`` -> ``StringIds``), mixed in one file;
- very old exports name kernels by one ``name`` id instead of demangled/short/mangled ids.

Each logical table is a list of :class:`Col`: the output column, the source columns to try
in order (the first present wins), and the SQLite type it is read as.  The importer builds
its SELECT from the columns the file has (``PRAGMA table_info``), so a column missing from
a release becomes NULL instead of an error.
"""
from __future__ import annotations

from dataclasses import dataclass

#: one of these proves an Nsight Systems export
MARKER_TABLES = ("StringIds", "TARGET_INFO_SESSION_START_TIME", "EXPORT_META_DATA", "META_DATA_EXPORT",
                 "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME")
META_TABLES = ("META_DATA_EXPORT", "EXPORT_META_DATA")
STRING_TABLE = "StringIds"
#: table names whose presence in a file's first bytes (the SQLite schema) shows an export
HEAD_MARKERS = ("StringIds", "NVTX_EVENTS", "TARGET_INFO_", "EXPORT_META_DATA", "META_DATA_EXPORT")
#: the activity tables CUPTI fills (Nsight Systems and nvprof alike)
CUPTI_TABLE_PREFIX = "CUPTI_ACTIVITY_KIND_"


def is_export(tables: set[str]) -> bool:
    """Whether a database with ``tables`` is an Nsight Systems export: string ids and
    CUPTI activity or another export marker table."""
    cupti = any(t.startswith(CUPTI_TABLE_PREFIX) for t in tables)
    return STRING_TABLE in tables and (cupti or bool(tables & set(MARKER_TABLES) - {STRING_TABLE}))


@dataclass(frozen=True)
class Col:
    name: str                 # output column
    sources: tuple[str, ...]  # source columns, first present wins
    type: str = "INTEGER"     # INTEGER, TEXT or REAL


def C(name: str, *sources: str, type: str = "INTEGER") -> Col:
    return Col(name, sources or (name,), type)


KERNEL_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL",)
KERNEL = [
    C("start_ns", "start"), C("end_ns", "end"), C("device", "deviceId"), C("context", "contextId"),
    C("stream", "streamId"), C("correlation_id", "correlationId"),
    C("global_pid", "globalPid"), C("demangled_id", "demangledName", "name"), C("short_id", "shortName"),
    C("mangled_id", "mangledName"), C("registers", "registersPerThread"),
    C("grid_x", "gridX"), C("grid_y", "gridY"), C("grid_z", "gridZ"),
    C("block_x", "blockX"), C("block_y", "blockY"), C("block_z", "blockZ"),
    C("static_smem", "staticSharedMemory"), C("dynamic_smem", "dynamicSharedMemory"),
]

MEMCPY_TABLES = ("CUPTI_ACTIVITY_KIND_MEMCPY",)
MEMCPY = [
    C("start_ns", "start"), C("end_ns", "end"), C("device", "deviceId"), C("context", "contextId"), C("stream", "streamId"),
    C("correlation_id", "correlationId"), C("global_pid", "globalPid"), C("bytes"),
    C("copy_kind", "copyKind"), C("src_kind", "srcKind"), C("dst_kind", "dstKind"),
]

MEMSET_TABLES = ("CUPTI_ACTIVITY_KIND_MEMSET",)
MEMSET = [
    C("start_ns", "start"), C("end_ns", "end"), C("device", "deviceId"), C("context", "contextId"), C("stream", "streamId"),
    C("correlation_id", "correlationId"), C("global_pid", "globalPid"), C("bytes"), C("value"),
]

#: CUDA runtime and driver API calls; ``eventClass`` 0 = runtime, 1 = driver
RUNTIME_TABLES = ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER")
RUNTIME = [
    C("start_ns", "start"), C("end_ns", "end"), C("event_class", "eventClass"), C("global_tid", "globalTid"),
    C("correlation_id", "correlationId"), C("name_id", "nameId"), C("return_value", "returnValue"),
    C("name_text", "name", type="TEXT"),
]
EVENT_CLASS_API = {0: "runtime", 1: "driver"}
#: eventClass 67: a second row for each call whose CUDA backtrace was collected
EVENT_CLASS_NAMES = {0: "CUDA runtime", 1: "CUDA driver", 67: "CUDA backtrace"}

NVTX_TABLES = ("NVTX_EVENTS",)
NVTX = [
    C("start_ns", "start"), C("end_ns", "end"), C("event_type", "eventType"), C("range_id", "rangeId"), C("category"),
    C("color"), C("text", type="TEXT"), C("global_tid", "globalTid"), C("end_global_tid", "endGlobalTid"),
    C("text_id", "textId"), C("domain_id", "domainId"),
]
#: NVTX eventType codes (``ENUM_NSYS_EVENT_TYPE`` in newer exports; fixed since 2020)
NVTX_EVENT_TYPES = {33: "category", 34: "mark", 39: "thread_name", 59: "push_pop", 60: "start_end",
                    75: "domain_create", 76: "domain_destroy"}
#: ENUM_NSYS_EVENT_TYPE names -> our kinds, when the export has the table
NVTX_ENUM_NAMES = {"NvtxCategory": "category", "NvtxMark": "mark", "NvtxThread": "thread_name",
                   "NvtxPushPopRange": "push_pop", "NvtxStartEndRange": "start_end",
                   "NvtxDomainCreate": "domain_create", "NvtxDomainDestroy": "domain_destroy"}
NVTX_RANGE_KINDS = ("push_pop", "start_end", "mark")

GPU_INFO_TABLES = ("TARGET_INFO_GPU", "TARGET_INFO_CUDA_GPU")
GPU_INFO = [C("device", "id", "deviceId", "cuDevice"), C("name", type="TEXT"), C("sm_count", "smCount"),
            C("total_memory", "totalMemory"), C("compute_major", "computeMajor"),
            C("compute_minor", "computeMinor"), C("bus", "busLocation", type="TEXT")]

SESSION_TABLE = "TARGET_INFO_SESSION_START_TIME"
THREAD_NAMES_TABLE = "ThreadNames"

#: CUPTI memcpy kinds (``ENUM_CUDA_MEMCPY_OPER`` in newer exports): code -> (short, nsys label)
COPY_KINDS = {
    0: ("Unknown", "Unknown"), 1: ("HtoD", "Host-to-Device"), 2: ("DtoH", "Device-to-Host"),
    3: ("HtoA", "Host-to-Array"), 4: ("AtoH", "Array-to-Host"), 5: ("AtoA", "Array-to-Array"),
    6: ("AtoD", "Array-to-Device"), 7: ("DtoA", "Device-to-Array"), 8: ("DtoD", "Device-to-Device"),
    9: ("HtoH", "Host-to-Host"), 10: ("PtoP", "Peer-to-Peer"),
    11: ("UVM HtoD", "Unified Host-to-Device"), 12: ("UVM DtoH", "Unified Device-to-Host"),
    13: ("UVM DtoD", "Unified Device-to-Device"),
}


def pid_of(global_id_sql: str) -> str:
    """SQL for the pid packed in a ``globalPid``/``globalTid``."""
    return f"(({global_id_sql} >> 24) & 16777215)"


def tid_of(global_tid_sql: str) -> str:
    return f"({global_tid_sql} & 16777215)"


#: the mapped columns that hold times: a cell that is text or a blob is no time (CAST would read 0)
TIME_COLUMNS = ("start_ns", "end_ns", "ts")


def quote_ident(name: str) -> str:
    """``name`` as an SQL identifier in double quotes (inner quotes doubled)."""
    return '"' + str(name).replace('"', '""') + '"'


def _source(c: Col, present: set[str]) -> tuple[str, bool] | None:
    """(SQL, stored) reading mapped column ``c``: its first source column present, quoted
    (stored True), or the SQL after "=", over columns a table always has (stored False);
    None when the table has none."""
    src = next((s for s in c.sources if s in present or s.startswith("=")), None)
    if src is None:
        return None
    return (src[1:], False) if src.startswith("=") else (quote_ident(src), True)


#: the typed dummy row's value per SQLite type
_DUMMY = {"INTEGER": "0", "TEXT": "''", "REAL": "0.0"}


def select_sql(table: str, cols: list[Col], present: set[str], rowid: str = "rowid",
               where: str | None = None, max_cell: int | None = None) -> tuple[str, list[str]]:
    """A SELECT reading ``cols`` from ``table``, preceded by one typed dummy row.

    The dummy row (``_d = 1``) fixes each column's type for readers that infer types from
    the first rows (a column that starts with NULLs would otherwise be taken for an
    integer).  ``_bad`` names the time columns (:data:`TIME_COLUMNS`) whose cell is text or
    a blob (read as NULL); with ``max_cell`` a cell longer than that many bytes is read as
    NULL and flags its row in ``_big`` (``octet_length`` reads no content: SQLite 3.43+).
    Returns the SQL and the output column names (``row_no`` and ``_d`` first)."""
    first = ["1 AS _d", "0 AS row_no"] + [f"{_DUMMY[c.type]} AS {c.name}" for c in cols] + ["'' AS _bad", "0 AS _big"]
    second = ["0", f"{rowid}"]
    bad, big = [], []
    for c in cols:
        source = _source(c, present)
        if source is None:
            second.append("NULL")
            continue
        expr, stored = source
        value = f"CAST({expr} AS {c.type})"
        if c.name in TIME_COLUMNS:
            value = f"CASE WHEN typeof({expr}) IN ('text', 'blob') THEN NULL ELSE {value} END"
            bad.append(f"CASE WHEN typeof({expr}) IN ('text', 'blob') THEN '{c.name} ' ELSE '' END")
        if max_cell is not None and stored:
            value = f"CASE WHEN octet_length({expr}) > {max_cell} THEN NULL ELSE {value} END"
            big.append(f"octet_length({expr}) > {max_cell}")
        second.append(value)
    second.append(" || ".join(bad) if bad else "''")
    second.append(f"CAST(({' OR '.join(big)}) AS INTEGER)" if big else "0")
    sql = f"SELECT {', '.join(first)} UNION ALL SELECT {', '.join(second)} FROM {quote_ident(table)}"
    if where:
        sql += f" WHERE {where}"
    return sql, ["_d", "row_no"] + [c.name for c in cols] + ["_bad", "_big"]


def plain_select_sql(table: str, cols: list[Col], present: set[str], rowid: str = "rowid",
                     where: str | None = None) -> tuple[str, list[str]]:
    """:func:`select_sql`'s rows without a check per cell, for a table whose rows are all
    small and a reader that fails on a value of another type than the dummy row's: every
    column as it is stored (a time or number that is text, a blob or a real then fails the
    read, and the caller reads the table with :func:`select_sql`; an integer or NULL reads
    as CAST reads it).  The dummy row comes first, with a NULL ``row_no``; there are no
    ``_d``, ``_bad`` and ``_big`` columns (0, '' and 0 for every row read).
    Returns the SQL and the output column names (``row_no`` first)."""
    first = ["NULL AS row_no"] + [f"{_DUMMY[c.type]} AS {c.name}" for c in cols]
    second = [rowid]
    for c in cols:
        source = _source(c, present)
        if source is None:
            second.append("NULL")
        else:
            expr, stored = source
            second.append(expr if stored else f"CAST({expr} AS {c.type})")
    sql = f"SELECT {', '.join(first)} UNION ALL SELECT {', '.join(second)} FROM {quote_ident(table)}"
    if where:
        sql += f" WHERE {where}"
    return sql, ["row_no"] + [c.name for c in cols]


def select_types(cols: list[Col]) -> list[str]:
    """The SQLite types of :func:`select_sql`'s output columns."""
    return ["INTEGER", "INTEGER"] + [c.type for c in cols] + ["TEXT", "INTEGER"]


def time_problem_sql(names: list[str], times: str | None) -> str | None:
    """SQL over a staged :func:`select_sql` result: why a row's times are unusable, or NULL.
    ``times``: "span" (start and end both needed, end not before start), "order" (only an
    end before its start is wrong) or None (no check)."""
    if times is None:
        return None
    whens = ["WHEN _bad <> '' THEN 'unreadable time in ' || trim(_bad) || ' (text or blob, not a number)'"]
    has_span = "start_ns" in names and "end_ns" in names
    if times == "span" and has_span:
        whens.append("WHEN start_ns IS NULL OR end_ns IS NULL THEN 'no start or end time'")
    if has_span:
        whens.append("WHEN end_ns < start_ns THEN 'end before start (negative duration)'")
    return f"CASE {' '.join(whens)} END"
