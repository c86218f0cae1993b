"""The exact, tolerant, pure-Python reader of trace-event elements (:func:`iter_events`),
used when DuckDB's reader cannot take a file: cut off inside an event, duplicate keys,
invalid strings, non-object elements, fractional timestamps beyond double precision.  Also
the JSON text of metadata members (:func:`metadata_json`, :func:`metadata_int`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterator

from .json_text import EXACT_NUMBERS, MAX_DEPTH, BoundedDecoder, TooDeep, ValueScanner, decode_bounded
from .trace_container import ContainerError, _is_cut_off, _skip_ws
from .trace_event import EVENT_COLUMNS


#: the largest trace event read (DuckDB's ``maximum_object_size`` too); larger ones are skipped
MAX_EVENT_BYTES = 16 << 20


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
            value, end = decode_bounded(dec, buf, at)
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


def too_big_reason(limit: int) -> str:
    """Why an event over ``limit`` bytes is skipped."""
    return f"larger than {limit >> 20} MiB"


def _parse_int(text: str):
    """JSON integers: exact, also beyond the digits ``int()`` accepts from text."""
    return int(text) if len(text) < 4000 else Decimal(text)


def iter_events(chunks: Iterator[bytes], container: str, result: StreamResult,
                max_event_bytes: int = MAX_EVENT_BYTES) -> Iterator[RawEvent]:
    """Every element of the event array, exactly and tolerantly, from decompressed bytes
    that start at the ``[`` of the array.

    Numbers keep their exact text; a cut-off last element is reported with
    ``problem='truncated ...'``; an element that is not an object, or not valid JSON, is
    reported with its reason and reading resumes at the next element start.  An element
    nested deeper than :data:`~grammars.json_text.MAX_DEPTH` or larger than
    ``max_event_bytes`` is skipped with its reason, read piece by piece and never held
    whole; Python's decoder never recurses deeper than that bound.
    """
    dec = json.JSONDecoder(parse_int=_parse_int, **EXACT_NUMBERS)
    bounded = BoundedDecoder(dec)
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
        err = too_big = None
        while True:
            try:
                obj, end = bounded.decode(buf, pos)
            except TooDeep:
                too_big = f"nested deeper than {MAX_DEPTH} levels"
                break
            except json.JSONDecodeError as exc:
                if not eof and len(buf) - pos < max_event_bytes:
                    more()
                    continue
                err = exc
                if not eof and ValueScanner().feed(buf, pos) is None:
                    too_big = too_big_reason(max_event_bytes)
                break
            if end < len(buf) or eof or len(buf) - pos >= max_event_bytes:
                break
            more()  # a value that reaches the end of the text read so far may go on
        if too_big is not None:
            # skipped without holding it: scanned piece by piece up to its end
            head = buf[pos:pos + 200]
            scan = ValueScanner()
            end = scan.feed(buf, pos)
            while end is None:
                buf, pos = "", 0
                if not more():
                    break
                end = scan.feed(buf, 0)
            if end is None:
                result.status = "truncated"
                yield RawEvent(event_no, None, "truncated: the file ends inside this event", head)
                return
            yield RawEvent(event_no, None, too_big, head)
            event_no += 1
            pos = end
            continue
        if err is not None:
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


def _read_trailing_members(text: str, chunks: Iterator[bytes], result: StreamResult, dec) -> None:
    parts, size = [text], len(text)
    for chunk in chunks:  # read to the end (the file is hashed as it is read), hold a bounded part
        if size < MAX_EVENT_BYTES:
            parts.append(chunk.decode("utf-8", "replace"))
            size += len(chunk)
    rest = "".join(parts)
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
            val, i = decode_bounded(dec, rest, _skip_ws(rest, j + 1))
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
