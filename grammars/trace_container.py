"""The trace-event JSON container: a bare array of events, or an object whose
``traceEvents`` member is that array (every other member is metadata).  :func:`scan_prefix`
finds where the event array starts, :func:`scan_tail` where it ends (or that it was cut off)
and what follows it; both work on byte offsets, so the importer can hand DuckDB exactly the
event array without parsing it in Python.  See :mod:`.trace_event` for the events.
"""
from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field

from .json_text import EXACT_NUMBERS, MAX_DEPTH, BoundedDecoder, TooDeep, decode_bounded, loads_bounded, unclosed


class ContainerError(Exception):
    """The bytes are not a trace-event container (one line for the user)."""


#: number literal or the JSON-ish constants Python's json module accepts
_BOM = b"\xef\xbb\xbf"


@dataclass
class Prefix:
    container: str  # "array" | "object"
    events_at: int  # byte offset of the "[" that opens the event array
    metadata: dict = field(default_factory=dict)  # members before traceEvents (object form)
    keys: list = field(default_factory=list)  # top-level keys in file order (so far)


def _member_value(raw: bytes):
    """A top-level member's value (exact numbers), or None when it is not valid JSON."""
    try:
        return loads_bounded(raw.decode("utf-8", "replace"), **EXACT_NUMBERS)
    except ValueError:
        return None


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
            _, k = decode_bounded(dec, text, j)
        except TooDeep:
            raise ContainerError(f"top-level member {key!r} is nested deeper than {MAX_DEPTH} levels") from None
        except json.JSONDecodeError as exc:
            if exc.pos >= len(text) - 1 or not complete:
                # the value may continue beyond the head
                if complete:
                    raise ContainerError(f"top-level member {key!r} is not valid JSON") from None
                return None
            raise ContainerError(f"top-level member {key!r} is not valid JSON") from None
        if k >= len(text) and not complete:
            return None  # a number may continue
        meta[key] = _member_value(head[j:k])
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
#: event starts tried, from the left of the window, before the end is given up as unknown
_MAX_STARTS = 64
#: the end of the window tried first: decoding every event of a 4 MiB window took 0.17-0.28 s
#: of one core on a Kineto trace, while its array ends within the last few KiB
FIRST_TAIL_BYTES = 256 << 10


def scan_tail(tail: bytes, tail_at: int, container: str, events_at: int) -> Tail:
    """Find the end of the event array in ``tail`` (the last bytes of the decompressed file,
    starting at absolute offset ``tail_at``).

    Tries event starts from the left of the window: from a real event start, decoding events
    one after the other must reach ``]`` and then (object form) members and ``}`` and the end
    of the data.  A start inside an event (an object inside ``args``) fails that test.  When
    the events decode up to the end of the data without ``]``, the file was cut off.

    The last :data:`FIRST_TAIL_BYTES` of a longer window are tried first, from starts whose
    first object is an event (has ``ph``), and a complete array found there is the answer:
    from any real event start the events decode to the same end.  (Without that check a
    list of objects in the metadata after the array, such as Kineto's ``deviceProperties``,
    passes the test when the last event is longer than the bytes tried.)  Anything else (a
    cut-off file, an end not found there) is looked for again in the whole window.
    """
    if len(tail) > 2 * FIRST_TAIL_BYTES:
        cut = len(tail) - FIRST_TAIL_BYTES
        found = _scan_tail(tail[cut:], tail_at + cut, container, events_at, events_only=True)
        if found.status == "complete":
            return found
    return _scan_tail(tail, tail_at, container, events_at)


def _scan_tail(tail: bytes, tail_at: int, container: str, events_at: int, events_only: bool = False) -> Tail:
    text = tail.decode("latin-1")
    dec = json.JSONDecoder()
    first = [events_at - tail_at] if events_at >= tail_at else []  # the whole array is in the window: "["
    found = (m.start() for m in _EVENT_START_RE.finditer(text) if m.start() + tail_at > events_at)
    for s in itertools.islice(itertools.chain(first, found), _MAX_STARTS):
        res = _decode_from(text, s, s + tail_at == events_at, dec, container, tail, tail_at, events_only)
        if res is not None:
            return res
    return Tail("unknown")


def _decode_from(text: str, s: int, at_array_start: bool, dec, container: str, raw: bytes, base: int,
                 events_only: bool = False) -> Tail | None:
    """The end found from the event start ``s`` (None: not one); ``events_only``: a start
    whose first object is not an event (no ``ph``) is not one."""
    n = len(text)
    i = s + 1  # after "[" or ","
    last_end = None  # after the last complete event
    events = BoundedDecoder(dec)  # the events one after the other: brackets counted once per window
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
            obj, j = events.decode(text, i)
        except json.JSONDecodeError:
            if not _is_cut_off(text[i:], dec):
                return None
            # the last event was cut off by the end of the data
            piece = raw[i:i + 600].decode("utf-8", "replace")[:200]
            if last_end is not None:
                return Tail("truncated", base + last_end, n - i, incomplete_text=piece)
            return Tail("truncated", base + (s + 1 if at_array_start else s), n - i, incomplete_text=piece)
        if events_only and last_end is None and not (isinstance(obj, dict) and "ph" in obj):
            return None
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
            _, v1 = decode_bounded(dec, text, v0)
        except (json.JSONDecodeError, ValueError):
            if _is_cut_off(text[j:], dec):
                return Tail("complete", base + end, 0, meta, keys)
            return None
        if key == "traceEvents":
            return None
        meta[key] = _member_value(raw[v0:v1])
        keys.append(key)
        j = v1


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
            decode_bounded(dec, candidate + suffix + closers)
            return True
        except TooDeep:
            return bool(closers)  # something was left open: cut off (too deep to check)
        except json.JSONDecodeError:
            continue
        except Exception:
            return True
    return False


def element_boundary(window: bytes, window_at: int, min_events: int = 4) -> int | None:
    """The absolute offset of a comma between two elements of the event array, looked for in
    ``window`` (bytes from inside the array, starting at absolute offset ``window_at``): the
    first comma after which ``min_events`` events (objects with a ``ph`` member) decode one
    after the other, each followed by a comma.

    Found without knowing what came before, so a comma inside a string or inside an event's
    ``args`` can pass this test by accident; the array cut there is not valid JSON on one
    side (an unclosed string, object or array), which the reader reports, and the caller
    reads the array whole instead.  None when no comma in the window passes."""
    text = window.decode("latin-1")
    dec = json.JSONDecoder()
    for m in _EVENT_START_RE.finditer(text):
        comma = m.start()
        if text[comma] != ",":
            continue
        i, decoded = comma, 0
        while decoded < min_events:
            try:
                obj, end = decode_bounded(dec, text, _skip_ws(text, i + 1))
            except ValueError:  # not JSON there, or nested too deep (TooDeep)
                break
            end = _skip_ws(text, end)
            if not (isinstance(obj, dict) and "ph" in obj) or end >= len(text) or text[end] != ",":
                break
            decoded, i = decoded + 1, end
        if decoded == min_events:
            return window_at + comma
    return None
