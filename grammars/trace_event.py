"""Trace-event JSON (Chrome / Perfetto "JSON trace"): the container, the events, the flavours.

This module and its two companions are the single source of truth for the format; the importer
(``loganalyze.importers.trace_json``) only moves bytes and runs SQL.  What it knows:

- **Container.** A bare array of events (``[{...}, ...]``, the closing ``]`` may be missing
  when the writer crashed) or an object whose ``traceEvents`` member is that array; every
  other member (``displayTimeUnit``, ``otherData``, ``deviceProperties``, ``distributedInfo``,
  ``baseTimeNanoseconds``, ``schemaVersion``, ...) is metadata: :mod:`.trace_container`.
- **Events.** :data:`EVENT_COLUMNS` are the fields read from every event, as text, so that
  numbers stay exact (``ts``/``dur`` are microseconds, integer or fractional; pids, tids and
  ids may exceed 2^63).  :mod:`.trace_reader` is the exact, tolerant, pure-Python reader used
  when DuckDB's reader cannot take the file.
- **Phases and roles.** :data:`PHASES`; :func:`role_sql` maps phase and category to a role
  (``op``, ``launch``, ``kernel``, ``memcpy``, ...) per flavour (:func:`detect_flavour`:
  ``kineto``, ``mxnet`` or ``generic``).
- **Times.** :func:`us_text_to_ns_sql` is the exact microseconds-text to integer-ns rule.

Sources: the Trace Event Format document; MXNet ``src/profiler/profiler.h`` (B/E operators,
``b``/``e`` tasks, ``Custom Operator`` domain); Kineto ``output_json.cpp`` as seen in PyTorch
traces (categories, ``ac2g`` flows, ``External id``/``correlation``); see docs/formats.md.
"""
from __future__ import annotations

from typing import Iterable

from .cxx_names import short_name
from .units import NS_PER_UNIT

# --------------------------------------------------------------------------- events
#: the fields read from each event, all as text (DuckDB ``read_json`` column types)
EVENT_COLUMNS: dict[str, str] = {
    "ph": "VARCHAR",
    "cat": "VARCHAR",
    "name": "VARCHAR",
    "ts": "VARCHAR",
    "dur": "VARCHAR",
    "pid": "VARCHAR",
    "tid": "VARCHAR",
    "id": "VARCHAR",
    "id2": "JSON",
    "bp": "VARCHAR",
    "s": "VARCHAR",
    "tts": "VARCHAR",
    "tdur": "VARCHAR",
    "args": "JSON",
}

#: phase letter -> what it is (the Trace Event Format plus the legacy async letters)
PHASES = {
    "X": "complete", "B": "begin", "E": "end",
    "b": "async_begin", "e": "async_end", "n": "async_instant",
    "S": "async_begin", "F": "async_end", "T": "async_instant", "p": "async_instant",
    "i": "instant", "I": "instant", "R": "mark", "c": "clock_sync",
    "C": "counter", "M": "metadata",
    "s": "flow_start", "t": "flow_step", "f": "flow_end",
    "N": "object", "O": "object", "D": "object", "P": "sample",
    "V": "memory_dump", "v": "memory_dump", "(": "context", ")": "context",
}
ASYNC_BEGIN = ("b", "S")
ASYNC_END = ("e", "F")
FLOW_PHASES = ("s", "t", "f")

# --------------------------------------------------------------------------- categories
#: framework operators: their durations are the per-operator totals, they nest (self time)
OP_CATEGORIES = ("cpu_op", "user_annotation", "operator", "Operator", "Custom Operator", "Op")
#: host-side calls that launch device work (Kineto: cuda_runtime, cuda_driver; also ROCm,
#: XPU and privateuse1 runtimes, which Kineto names ``<backend>_runtime``/``_driver``)
LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
LAUNCH_SUFFIXES = ("_runtime", "_driver")
#: device activity, by role
GPU_ROLES = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
             "gpu_memset": "memset", "Memset": "memset"}
#: device-side spans that are not work (annotations mirrored on the GPU, syncs)
GPU_OTHER_CATEGORIES = ("gpu_user_annotation", "cuda_sync", "gpu_instant_event", "mtia_ccp_events")
PYTHON_CATEGORIES = ("python_function",)
TRACE_CATEGORIES = ("Trace", "cuda_profiler_range", "overhead")
#: categories that are never operators, whatever the flavour
NON_OP_CATEGORIES = (LAUNCH_CATEGORIES + tuple(GPU_ROLES) + GPU_OTHER_CATEGORIES + PYTHON_CATEGORIES
                     + TRACE_CATEGORIES + ("ac2g", "MXNET_C_API", "Device Storage", "Pool Memory",
                                           "cpu_instant_event", "memory", "Memory"))
#: async (b/e) spans that count as operators: MXNet custom-operator python callbacks
#: (``MyOp::pure_python``) are recorded only as tasks in this domain.  Async spans whose name
#: also has a synchronous (B/E or X) recording are duplicates and do not count.
ASYNC_OP_CATEGORIES = ("Custom Operator",)

KINETO_KEYS = ("schemaVersion", "deviceProperties", "distributedInfo", "baseTimeNanoseconds", "traceName",
               "cupti_version", "cuda_runtime_version", "cuda_driver_version", "record_shapes")
KINETO_CATEGORIES = ("cpu_op", "cuda_runtime", "cuda_driver", "kernel", "python_function", "user_annotation",
                     "gpu_memcpy", "gpu_memset", "Trace", "ac2g", "gpu_user_annotation", "cuda_sync")
MXNET_CATEGORIES = ("operator", "MXNET_C_API", "Device Storage", "Custom Operator", "Pool Memory")

def detect_flavour(top_level_keys: Iterable[str], categories: Iterable[str]) -> str:
    """``kineto``, ``mxnet`` or ``generic`` from the top-level keys and the categories seen."""
    keys = set(top_level_keys)
    cats = set(categories)
    if keys & set(KINETO_KEYS) or len(cats & set(KINETO_CATEGORIES)) >= 1 and not cats & {"operator", "MXNET_C_API"}:
        if keys & set(KINETO_KEYS) or cats & {"cpu_op", "cuda_runtime", "kernel", "python_function"}:
            return "kineto"
    if cats & set(MXNET_CATEGORIES):
        return "mxnet"
    return "generic"


def sql_list(items: Iterable[str]) -> str:
    """``items`` as a list of SQL string literals (for ``IN (...)``)."""
    return ", ".join("'" + i.replace("'", "''") + "'" for i in items)


def role_sql(flavour: str, ph: str = "ph", cat: str = "cat") -> str:
    """SQL expression giving each event's role.

    ``op`` (framework operator: complete or B/E span of an operator category; in other
    flavours (generic traces, CNTK) every complete or B/E span of a category not known to
    be something else),
    ``launch``, ``kernel``, ``memcpy``, ``memset``, ``gpu_other``, ``python``, ``trace``,
    ``span`` (other complete/B spans), ``async``, ``end`` (E), ``async_end``, ``instant``,
    ``counter``, ``metadata``, ``flow``, ``other``.
    """
    gpu_cases = " ".join(f"WHEN {cat} = '{c}' THEN '{r}'" for c, r in GPU_ROLES.items())
    launch = (f"{cat} IN ({sql_list(LAUNCH_CATEGORIES)}) OR "
              + " OR ".join(f"ends_with({cat}, '{s}')" for s in LAUNCH_SUFFIXES))
    if flavour in ("kineto", "mxnet"):
        op_test = f"{cat} IN ({sql_list(OP_CATEGORIES)})"
    else:
        op_test = f"coalesce({cat}, '') NOT IN ({sql_list(NON_OP_CATEGORIES)})"
    return f"""CASE
        WHEN {ph} IN ('X', 'B') THEN CASE
            WHEN {op_test} THEN 'op'
            {gpu_cases}
            WHEN {launch} THEN 'launch'
            WHEN {cat} IN ({sql_list(GPU_OTHER_CATEGORIES)}) THEN 'gpu_other'
            WHEN {cat} IN ({sql_list(PYTHON_CATEGORIES)}) THEN 'python'
            WHEN {cat} IN ({sql_list(TRACE_CATEGORIES)}) THEN 'trace'
            ELSE 'span' END
        WHEN {ph} = 'E' THEN 'end'
        WHEN {ph} IN ({sql_list(ASYNC_BEGIN)}) THEN 'async'
        WHEN {ph} IN ({sql_list(ASYNC_END)}) THEN 'async_end'
        WHEN {ph} IN ('i', 'I', 'R', 'n', 'T', 'p') THEN 'instant'
        WHEN {ph} = 'C' THEN 'counter'
        WHEN {ph} = 'M' THEN 'metadata'
        WHEN {ph} IN ({sql_list(FLOW_PHASES)}) THEN 'flow'
        ELSE 'other' END"""


# --------------------------------------------------------------------------- times
NS_PER_US = NS_PER_UNIT["us"]
#: below this many microseconds a double holds a 3-decimal value exactly enough that its
#: shortest repr rounds back to the same integer ns (ulp < 0.5 ns); beyond it, fractional
#: values must be read from their original text (see docs/formats.md, trace JSON)
EXACT_FRACTIONAL_US_LIMIT = 2 ** 41


def is_fractional_sql(col: str) -> str:
    """SQL: the number text in ``col`` has a fraction or an exponent (is not an integer)."""
    return f"(contains({col}, '.') OR contains({col}, 'e') OR contains({col}, 'E'))"


#: fraction digits of a microseconds text that make whole ns
_NS_DIGITS = len(str(NS_PER_US)) - 1
#: the common fractional times (Kineto since PyTorch 2.2 writes ``1212075548353.304``): at
#: most 15 integer digits and at most ``_NS_DIGITS`` fraction digits, so that their ns are
#: their digits without the dot, scaled, in BIGINT range (RE2 syntax, matched whole)
SHORT_FRACTION_PATTERN = rf"-?([0-9]{{1,15}}\.[0-9]{{0,{_NS_DIGITS}}}|\.[0-9]{{1,{_NS_DIGITS}}})"


def us_text_to_ns_sql(col: str) -> str:
    """SQL: microseconds as JSON number text in ``col`` -> integer ns, exactly (integers
    without a decimal detour; fractions rounded half away from zero); NULL when it is not a
    number in BIGINT range.

    Fractions of at most ``_NS_DIGITS`` digits need no rounding.  Below
    :data:`EXACT_FRACTIONAL_US_LIMIT` their double times 1000 is within 0.25 of the exact
    integer ns (the double is off by at most 2^-13 us there, the product by 0.125 more), so
    that it rounds to them: a cast to DOUBLE, the cheapest reading (0.49 against 0.85 CPU-s
    for 2 x 2.4 M times).  Above it, a short fraction (:data:`SHORT_FRACTION_PATTERN`) is read
    as its digits without the dot, times 10 for each fraction digit short of ``_NS_DIGITS``.
    Both give the decimal rule's value, at a fraction of its cost."""
    scale = "[" + ", ".join(str(10 ** k) for k in range(_NS_DIGITS, -1, -1)) + "]"
    # the cast to whole ns of a us rounds once, half away from zero, on every digit written
    # (a cast to more fraction digits first, then a round, rounded twice: 0.00049999999999 us
    # was 1 ns).  DECIMAL(28,3) holds up to 10^25 us (far beyond BIGINT ns), so that the
    # product (DECIMAL(32,3)) cannot overflow: a larger text (``"ts": "1e26"``) is NULL
    decimal = f"try_cast({col} AS DECIMAL(28,{_NS_DIGITS}))"
    as_double = f"try_cast({col} AS DOUBLE)"
    return (f"CASE WHEN {col} IS NULL THEN NULL "
            f"WHEN {is_fractional_sql(col)} THEN CASE "
            f"WHEN NOT contains({col}, 'e') AND NOT contains({col}, 'E') "
            f"AND strlen({col}) - strpos({col}, '.') <= {_NS_DIGITS} "
            f"AND abs({as_double}) < {EXACT_FRACTIONAL_US_LIMIT} "
            f"THEN CAST(round({as_double} * {NS_PER_US}) AS BIGINT) "
            f"WHEN regexp_full_match({col}, '{SHORT_FRACTION_PATTERN}') "
            f"THEN CAST(replace({col}, '.', '') AS BIGINT) * {scale}[strlen({col}) - strpos({col}, '.') + 1] "
            f"ELSE try_cast({decimal} * {NS_PER_US} AS BIGINT) END "
            f"ELSE try_cast(try_cast({col} AS HUGEINT) * {NS_PER_US} AS BIGINT) END")


def time_problem_sql(col: str, what: str) -> str:
    """SQL: why the time text in ``col`` (the event's ``what``: ts, dur) could not be read."""
    return (f"CASE WHEN {col} IS NULL THEN 'missing {what}' "
            f"WHEN isnan(try_cast({col} AS DOUBLE)) OR isinf(try_cast({col} AS DOUBLE)) "
            f"THEN '{what} is not a finite number (' || {col} || ')' "
            f"ELSE '{what} is not a number in range (' || left({col}, 40) || ')' END")


def ns_to_us_text(ns: int) -> str:
    """Integer ns -> exact microseconds text for JSON output (``1500`` -> ``"1.5"``)."""
    sign = "-" if ns < 0 else ""
    q, r = divmod(abs(int(ns)), NS_PER_US)
    if r == 0:
        return f"{sign}{q}"
    return f"{sign}{q}.{r:03d}".rstrip("0")


# --------------------------------------------------------------------------- kernels
#: the copy direction in a memcpy event's name (also used as a DuckDB regex)
MEMCPY_KIND_PATTERN = r"\b(HtoD|DtoH|DtoD|HtoH|PtoP|DtoA|AtoD|AtoH|HtoA|AtoA)\b"


#: a kernel's short name: the one C++ short-name rule (``operator()`` stays whole)
kernel_short_name = short_name
