"""Trace-event JSON (Chrome / Perfetto "JSON trace"): the container, the events, the flavours.

This module is the single source of truth for the format; the importer
(``loganalyze.importers.trace_json``) only moves bytes and runs SQL.  What it knows:

- **Container.** A bare array of events (``[{...}, ...]``, the closing ``]`` may be missing
  when the writer crashed) or an object whose ``traceEvents`` member is that array; every
  other member (``displayTimeUnit``, ``otherData``, ``deviceProperties``, ``distributedInfo``,
  ``baseTimeNanoseconds``, ``schemaVersion``, ...) is metadata.  :func:`scan_prefix` finds
  where the event array starts, :func:`scan_tail` where it ends (or that it was cut off) and
  what follows it.  Both work on byte offsets, so the importer can hand DuckDB exactly the
  event array without parsing it in Python.
- **Events.** :data:`EVENT_COLUMNS` are the fields read from every event, as text, so that
  numbers stay exact (``ts``/``dur`` are microseconds, integer or fractional; pids, tids and
  ids may exceed 2^63).  :func:`iter_events` is the exact, tolerant, pure-Python reader used
  when DuckDB's reader cannot take the file (cut off inside an event, duplicate keys, invalid
  strings, non-object elements, fractional timestamps beyond double precision).
- **Phases and roles.** :data:`PHASES`; :func:`role_sql` maps phase and category to a role
  (``op``, ``launch``, ``kernel``, ``memcpy``, ...) per flavour (:func:`detect_flavour`:
  ``kineto``, ``mxnet`` or ``generic``).
- **Times.** :func:`us_text_to_ns` is the exact microseconds-text to integer-ns rule.

Sources: the Trace Event Format document; MXNet ``src/profiler/profiler.h`` (B/E operators,
``b``/``e`` tasks, ``Custom Operator`` domain); Kineto ``output_json.cpp`` as seen in PyTorch
traces (categories, ``ac2g`` flows, ``External id``/``correlation``); see docs/formats.md.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Iterable, Iterator

from .cxx_names import short_name
from .json_text import unclosed

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
#: phases whose event has no meaningful ``ts`` requirement
TS_OPTIONAL = ("M",)

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

#: a ProfilerStep annotation (PyTorch profiler schedule)
STEP_NAME_RE = re.compile(r"^ProfilerStep#(\d+)$")


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


def _sql_list(items: Iterable[str]) -> str:
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
    launch = (f"{cat} IN ({_sql_list(LAUNCH_CATEGORIES)}) OR "
              + " OR ".join(f"ends_with({cat}, '{s}')" for s in LAUNCH_SUFFIXES))
    if flavour in ("kineto", "mxnet"):
        op_test = f"{cat} IN ({_sql_list(OP_CATEGORIES)})"
    else:
        op_test = f"coalesce({cat}, '') NOT IN ({_sql_list(NON_OP_CATEGORIES)})"
    return f"""CASE
        WHEN {ph} IN ('X', 'B') THEN CASE
            WHEN {op_test} THEN 'op'
            {gpu_cases}
            WHEN {launch} THEN 'launch'
            WHEN {cat} IN ({_sql_list(GPU_OTHER_CATEGORIES)}) THEN 'gpu_other'
            WHEN {cat} IN ({_sql_list(PYTHON_CATEGORIES)}) THEN 'python'
            WHEN {cat} IN ({_sql_list(TRACE_CATEGORIES)}) THEN 'trace'
            ELSE 'span' END
        WHEN {ph} = 'E' THEN 'end'
        WHEN {ph} IN ({_sql_list(ASYNC_BEGIN)}) THEN 'async'
        WHEN {ph} IN ({_sql_list(ASYNC_END)}) THEN 'async_end'
        WHEN {ph} IN ('i', 'I', 'R', 'n', 'T', 'p') THEN 'instant'
        WHEN {ph} = 'C' THEN 'counter'
        WHEN {ph} = 'M' THEN 'metadata'
        WHEN {ph} IN ('s', 't', 'f') THEN 'flow'
        ELSE 'other' END"""


# --------------------------------------------------------------------------- times
NS_PER_US = 1000
#: below this many microseconds a double holds a 3-decimal value exactly enough that its
#: shortest repr rounds back to the same integer ns (ulp < 0.5 ns); beyond it, fractional
#: values must be read from their original text (see docs/formats.md, trace JSON)
EXACT_FRACTIONAL_US_LIMIT = 2 ** 41


def us_text_to_ns(text: str | int | Decimal | None) -> int | None:
    """Microseconds as JSON number text -> integer nanoseconds, rounded half-even; None for
    NaN, infinities and non-numbers.  ``"1559670569089315"`` -> 1559670569089315000 exactly
    (``float(ts) * 1000`` is off by up to 128 ns at that magnitude)."""
    if text is None:
        return None
    try:
        d = text if isinstance(text, Decimal) else Decimal(str(text).strip())
    except (InvalidOperation, ValueError):
        return None
    if not d.is_finite():
        return None
    return int((d * NS_PER_US).to_integral_value())


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
_MEMCPY_KIND_RE = re.compile(MEMCPY_KIND_PATTERN)


def memcpy_kind(name: str | None) -> str | None:
    """``Memcpy HtoD (Pageable -> Device)`` -> ``HtoD``."""
    if not name:
        return None
    m = _MEMCPY_KIND_RE.search(name)
    return m.group(1) if m else None


#: a kernel's short name: the one C++ short-name rule (``operator()`` stays whole)
kernel_short_name = short_name


# --------------------------------------------------------------------------- container
class ContainerError(Exception):
    """The bytes are not a trace-event container (one line for the user)."""


#: number literal or the JSON-ish constants Python's json module accepts
_WS = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


@dataclass
class Prefix:
    container: str  # "array" | "object"
    events_at: int  # byte offset of the "[" that opens the event array
    metadata: dict = field(default_factory=dict)  # members before traceEvents (object form)
    keys: list = field(default_factory=list)  # top-level keys in file order (so far)


def _exact_decoder() -> json.JSONDecoder:
    return json.JSONDecoder(parse_float=Decimal, parse_constant=lambda c: Decimal(c.replace("Infinity", "Inf")))


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t\r\n":
        i += 1
    return i


def scan_prefix(head: bytes, complete: bool) -> Prefix | None:
    """Where the event array starts, from the first bytes of the (decompressed) file.

    Returns None when ``head`` is too short to tell (the caller reads more; ``complete``
    says there is no more).  Raises :class:`ContainerError` when the bytes are not a
    trace-event container.
    """
    # latin-1 keeps one character per byte, so string offsets are byte offsets
    text = head.decode("latin-1")
    i = 3 if head.startswith(_BOM) else 0
    i = _skip_ws(text, i)
    if i >= len(text):
        if complete:
            raise ContainerError("empty JSON file" if not head.strip() else "no JSON value in the file")
        return None
    if text[i] == "[":
        return Prefix("array", i)
    if text[i] != "{":
        raise ContainerError("not JSON: a trace-event file starts with '[' or '{'")
    dec = json.JSONDecoder()
    meta: dict = {}
    keys: list = []
    i += 1
    while True:
        i = _skip_ws(text, i)
        if i >= len(text):
            break
        ch = text[i]
        if ch == "}":
            raise ContainerError("JSON object without a traceEvents array: not a trace-event file")
        if ch == ",":
            i += 1
            continue
        if ch != '"':
            raise ContainerError(f"not valid JSON at byte {i}")
        try:
            key_latin, j = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            break  # key cut off: need more bytes
        key = head[i + 1:j - 1].decode("utf-8", "replace") if "\\" not in key_latin else json.loads(
            head[i:j].decode("utf-8", "replace"))
        j = _skip_ws(text, j)
        if j >= len(text):
            break
        if text[j] != ":":
            raise ContainerError(f"not valid JSON at byte {j}")
        j = _skip_ws(text, j + 1)
        if j >= len(text):
            break
        if key == "traceEvents":
            if text[j] != "[":
                raise ContainerError("traceEvents is not an array")
            keys.append(key)
            return Prefix("object", j, meta, keys)
        try:
            _, k = dec.raw_decode(text, j)
        except json.JSONDecodeError as exc:
            if exc.pos >= len(text) - 1 or not complete:
                # the value may continue beyond the head
                if complete:
                    raise ContainerError(f"top-level member {key!r} is not valid JSON") from None
                return None
            raise ContainerError(f"top-level member {key!r} is not valid JSON") from None
        if k >= len(text) and not complete:
            return None  # a number may continue
        try:
            meta[key] = _exact_decoder().decode(head[j:k].decode("utf-8", "replace"))
        except ValueError:
            meta[key] = None
        keys.append(key)
        i = k
    if complete:
        raise ContainerError("JSON object without a traceEvents array: not a trace-event file")
    return None


@dataclass
class Tail:
    """How the event array ends, found in the last bytes of the file."""

    status: str  # "complete" | "truncated" | "unknown"
    #: absolute offset just after the last byte that belongs to the event array content:
    #: the "]" for complete arrays (exclusive of it), or after the last complete event
    events_end: int | None = None
    #: bytes after the last complete event that do not form one (truncated files)
    incomplete_bytes: int = 0
    metadata: dict = field(default_factory=dict)  # object members after traceEvents
    keys: list = field(default_factory=list)
    #: the first characters of the cut-off event
    incomplete_text: str | None = None


_EVENT_START_RE = re.compile(r"[\[,]\s*\{")


def scan_tail(tail: bytes, tail_at: int, container: str, events_at: int) -> Tail:
    """Find the end of the event array in ``tail`` (the last bytes of the decompressed file,
    starting at absolute offset ``tail_at``).

    Tries event starts from the left of the window: from a real event start, decoding events
    one after the other must reach ``]`` and then (object form) members and ``}`` and the end
    of the data.  A start inside an event (an object inside ``args``) fails that test.  When
    the events decode up to the end of the data without ``]``, the file was cut off.
    """
    text = tail.decode("latin-1")
    dec = json.JSONDecoder()
    starts = []
    if events_at >= tail_at:
        starts.append(events_at - tail_at)  # the whole array is in the window: start at "["
    starts += [m.start() for m in _EVENT_START_RE.finditer(text) if m.start() + tail_at > events_at]
    for s in starts[:64]:
        res = _decode_from(text, s, s + tail_at == events_at, dec, container, tail, tail_at)
        if res is not None:
            return res
    return Tail("unknown")


def _decode_from(text: str, s: int, at_array_start: bool, dec, container: str, raw: bytes, base: int) -> Tail | None:
    n = len(text)
    i = s + 1  # after "[" or ","
    last_end = None  # after the last complete event
    while True:
        i = _skip_ws(text, i)
        if i >= n:
            # the data ends inside the array, after an event (or a comma): cut off between events
            if last_end is None:
                return Tail("truncated", base + s + 1, 0) if at_array_start else None
            return Tail("truncated", base + last_end, 0)
        ch = text[i]
        if ch == "]":
            end = i
            break
        if ch == ",":
            i += 1
            continue
        if ch != "{":
            return None
        try:
            _, j = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            if not _is_cut_off(text[i:], dec):
                return None
            # the last event was cut off by the end of the data
            piece = raw[i:i + 600].decode("utf-8", "replace")[:200]
            if last_end is not None:
                return Tail("truncated", base + last_end, n - i, incomplete_text=piece)
            return Tail("truncated", base + (s + 1 if at_array_start else s), n - i, incomplete_text=piece)
        last_end = j
        i = j
    # after "]": nothing (array form) or members and "}" (object form)
    j = _skip_ws(text, end + 1)
    meta: dict = {}
    keys: list = []
    if container == "array":
        if j < n:
            return None
        return Tail("complete", base + end, 0, meta, keys)
    while True:
        j = _skip_ws(text, j)
        if j >= n:
            # object never closed: the events are complete, the metadata cut off
            return Tail("complete", base + end, 0, meta, keys)
        ch = text[j]
        if ch == "}":
            if _skip_ws(text, j + 1) < n:
                return None
            return Tail("complete", base + end, 0, meta, keys)
        if ch == ",":
            j += 1
            continue
        if ch != '"':
            return None
        try:
            _, k = dec.raw_decode(text, j)
            key = json.loads(raw[j:k].decode("utf-8", "replace"))
            k = _skip_ws(text, k)
            if k >= n or text[k] != ":":
                return None
            v0 = _skip_ws(text, k + 1)
            _, v1 = dec.raw_decode(text, v0)
        except (json.JSONDecodeError, ValueError):
            if _is_cut_off(text[j:], dec):
                return Tail("complete", base + end, 0, meta, keys)
            return None
        if key == "traceEvents":
            return None
        try:
            meta[key] = _exact_decoder().decode(raw[v0:v1].decode("utf-8", "replace"))
        except ValueError:
            meta[key] = None
        keys.append(key)
        j = v1


# --------------------------------------------------------------------------- exact reader
@dataclass
class RawEvent:
    """One element of the event array as read by :func:`iter_events`."""

    event_no: int
    values: dict | None  # column -> text (EVENT_COLUMNS), or None when skipped
    problem: str | None = None
    text: str | None = None  # the first characters of a skipped element


def _text_value(v) -> str | None:
    """A JSON value as DuckDB's VARCHAR column would give it (numbers exact)."""
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, int):
        return str(v)
    if isinstance(v, Decimal):
        if v.is_nan():
            return "NaN"
        if v.is_infinite():
            return "Infinity" if v > 0 else "-Infinity"
        return format(v, "f") if abs(v.adjusted()) < 30 else str(v)
    return json.dumps(v, default=_json_default, separators=(",", ":"), ensure_ascii=False)


def _json_default(o):
    if isinstance(o, Decimal):
        if o.is_finite():
            return int(o) if o == o.to_integral_value() and "." not in str(o) and "E" not in str(o) else float(o)
        return float("nan") if o.is_nan() else float("inf") if o > 0 else float("-inf")
    raise TypeError(type(o).__name__)


def _json_text(v) -> str | None:
    if v is None:
        return None
    return json.dumps(v, default=_json_default, separators=(",", ":"), ensure_ascii=False)


def event_values(obj: dict) -> dict:
    """The :data:`EVENT_COLUMNS` of one decoded event, as text."""
    out = {}
    for col, typ in EVENT_COLUMNS.items():
        v = obj.get(col)
        out[col] = _json_text(v) if typ == "JSON" else _text_value(v)
    return out


_NEXT_ELEMENT_RE = re.compile(r",(\s*)(?=[\{\[\"0-9\-tfnN])")


def _resync(buf: str, start: int, dec) -> int:
    """Where the element after a malformed one starts: a value after a comma that decodes
    and is followed by "," or "]" (an object, or any value on a line of its own)."""
    for m in _NEXT_ELEMENT_RE.finditer(buf, start):
        at = m.end()
        try:
            value, end = dec.raw_decode(buf, at)
        except json.JSONDecodeError:
            continue
        j = _skip_ws(buf, end)
        if j < len(buf) and buf[j] not in ",]":
            continue
        if isinstance(value, dict) or "\n" in m.group(1):
            return at
    return len(buf)


class StreamResult:
    """What :func:`iter_events` found besides the events."""

    def __init__(self):
        self.status = "complete"  # complete | truncated | garbage_after
        self.trailing_metadata: dict = {}
        self.trailing_keys: list = []
        self.incomplete_bytes = 0


def iter_events(chunks: Iterator[bytes], container: str, result: StreamResult,
                max_event_bytes: int = 64 << 20) -> Iterator[RawEvent]:
    """Every element of the event array, exactly and tolerantly, from decompressed bytes
    that start at the ``[`` of the array.

    Numbers keep their exact text; a cut-off last element is reported with
    ``problem='truncated ...'``; an element that is not an object, or not valid JSON, is
    reported with its reason and reading resumes at the next element start.
    """
    dec = json.JSONDecoder(parse_float=Decimal, parse_int=int,
                           parse_constant=lambda c: Decimal(c.replace("Infinity", "Inf")))
    buf = ""
    pos = 0
    eof = False
    pending = b""
    event_no = 0
    started = False

    def more() -> bool:
        nonlocal buf, pos, eof, pending
        if eof:
            return False
        try:
            chunk = next(chunks)
        except StopIteration:
            eof = True
            if pending:
                buf = buf[pos:] + pending.decode("utf-8", "replace")
                pending = b""
                pos = 0
            return False
        data = pending + chunk
        # keep an incomplete UTF-8 sequence for the next chunk
        cut = len(data)
        for back in range(1, min(4, len(data)) + 1):
            b = data[-back]
            if b & 0xC0 == 0x80:
                continue
            if b >= 0xC0:
                need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
                if need > back:
                    cut = len(data) - back
            break
        pending = data[cut:]
        buf = buf[pos:] + data[:cut].decode("utf-8", "replace")
        pos = 0
        return True

    while True:
        # skip whitespace and separators
        while True:
            n = len(buf)
            while pos < n and buf[pos] in " \t\r\n,":
                pos += 1
            if pos < n or not more():
                break
        if pos >= len(buf):
            result.status = "truncated"
            return
        ch = buf[pos]
        if not started:
            if ch != "[":
                raise ContainerError("the event array does not start with '['")
            started = True
            pos += 1
            continue
        if ch == "]":
            pos += 1
            result.status = "complete"
            if container == "object":
                _read_trailing_members(buf[pos:], chunks, result, dec)
            return
        # one element
        while True:
            try:
                obj, end = dec.raw_decode(buf, pos)
                break
            except json.JSONDecodeError as exc:
                if not eof and len(buf) - pos < max_event_bytes:
                    more()
                    continue
                err = exc
                obj = None
                break
        if obj is None:
            rest = buf[pos:]
            if eof and _is_cut_off(rest, dec):
                result.status = "truncated"
                result.incomplete_bytes = len(rest.encode("utf-8", "replace"))
                yield RawEvent(event_no, None, "truncated: the file ends inside this event", rest[:200])
                return
            # malformed: resume at the next element start
            nxt = _resync(buf, max(err.pos, pos + 1), dec)
            yield RawEvent(event_no, None, f"malformed JSON ({err.msg})", buf[pos:nxt][:200])
            event_no += 1
            pos = nxt
            continue
        if not isinstance(obj, dict):
            kind = type(obj).__name__
            kind = {"Decimal": "number", "int": "number", "str": "string", "list": "array",
                    "NoneType": "null", "bool": "boolean"}.get(kind, kind)
            yield RawEvent(event_no, None, f"not a JSON object ({kind})", buf[pos:end][:200])
        else:
            yield RawEvent(event_no, event_values(obj))
        event_no += 1
        pos = end


def _is_cut_off(rest: str, dec) -> bool:
    """The text is an element the end of the data cut off (not one with a syntax error)."""
    stripped = rest.rstrip()
    if not stripped:
        return True
    # close every open string/container and see whether it parses
    closers, in_str = unclosed(stripped)
    candidate = stripped + ('"' if in_str else "")
    for suffix in ("", "null", "0", '"":null', ':null'):
        try:
            dec.raw_decode(candidate + suffix + closers)
            return True
        except json.JSONDecodeError:
            continue
        except Exception:
            return True
    return False


def _read_trailing_members(text: str, chunks: Iterator[bytes], result: StreamResult, dec) -> None:
    rest = text + "".join(c.decode("utf-8", "replace") for c in chunks)
    i = 0
    n = len(rest)
    while True:
        i = _skip_ws(rest, i)
        if i >= n:
            return
        ch = rest[i]
        if ch == "}":
            if _skip_ws(rest, i + 1) < n:
                result.status = "garbage_after"
            return
        if ch == ",":
            i += 1
            continue
        try:
            key, j = dec.raw_decode(rest, i)
            j = _skip_ws(rest, j)
            if j >= n or rest[j] != ":":
                return
            val, i = dec.raw_decode(rest, _skip_ws(rest, j + 1))
        except json.JSONDecodeError:
            return
        if isinstance(key, str) and key != "traceEvents":
            result.trailing_metadata[key] = val
            result.trailing_keys.append(key)


def metadata_json(meta: dict) -> str:
    """Top-level members as JSON text (exact numbers)."""
    return json.dumps(meta, default=_json_default, ensure_ascii=False)


def metadata_int(v) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, Decimal) and v.is_finite() and v == v.to_integral_value():
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
        return int(v)
    return None
