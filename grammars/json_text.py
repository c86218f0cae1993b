"""Reading JSON text that may be incomplete: the one scanner of strings and brackets.

Used where a JSON document can be cut off or written one brace short (a trace-event file
that ends inside an event, MXNet's ``dumps(format='json')`` of some releases), and to read
hostile JSON within bounds: :func:`decode_bounded` never lets Python's decoder recurse deeper
than :data:`MAX_DEPTH`, :class:`ValueScanner` finds where a value ends (how deep, how long)
without holding it.
"""
from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation


def unclosed(text: str) -> tuple[str, bool]:
    """What would close every container left open in ``text`` (innermost first, e.g. ``"]}"``),
    and whether ``text`` ends inside a string.  Brackets inside strings (escapes included)
    do not count; a stray closer closes the innermost open container."""
    closers: list[str] = []
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            closers.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if closers:
                closers.pop()
    return "".join(reversed(closers)), in_str


# --------------------------------------------------------------------------- exact numbers
def exact_number(text: str) -> Decimal:
    """A JSON number with a fraction or an exponent, exactly (``parse_float``).  One whose
    exponent is beyond what ``Decimal`` holds (a magnitude of 10^18 and more, so past any
    double as well) reads as a double reads it: infinite, or zero, with its sign."""
    try:
        return Decimal(text)
    except InvalidOperation:
        return Decimal(repr(float(text)))


def exact_constant(text: str) -> Decimal:
    """``NaN``, ``Infinity`` and ``-Infinity`` as Decimals (``parse_constant``)."""
    return Decimal(text.replace("Infinity", "Inf"))


#: the decoder options that read every JSON number exactly
EXACT_NUMBERS = {"parse_float": exact_number, "parse_constant": exact_constant}


# --------------------------------------------------------------------------- bounded reading
#: the deepest nesting of arrays and objects read from a trace-event file; a deeper value is
#: skipped (Python's JSON decoder recurses once per level, so depth is checked beforehand)
MAX_DEPTH = 200

_STRUCTURE_RE = re.compile(r'[\[\]{}"]')
#: the rest of a string's content (escapes included) up to its closing quote
_STRING_BODY_RE = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_SCALAR_END_RE = re.compile(r'[\s,\]}]')
#: the first window of text whose brackets are counted before decoding (grows x8)
_FIRST_WINDOW = 1024


class TooDeep(json.JSONDecodeError):
    """A JSON value nested deeper than the limit (not decoded)."""


class ValueScanner:
    """Where one JSON value ends, and how deep it nests, from text fed piece by piece
    (nothing is kept between pieces but the scanner's state; no recursion).

    :meth:`feed` returns the index just after the value in the piece given, or None when
    the piece ends first (feed the next piece from index 0).  Only strings and brackets are
    followed: the value is assumed to be well-formed otherwise."""

    def __init__(self):
        self.depth = 0
        self.max_depth = 0
        self.started = False
        self.in_string = False
        self.escaped = False  # the previous piece ended with a backslash inside a string
        self.scalar = False  # a number or literal (ends at a delimiter)

    def feed(self, text: str, i: int = 0) -> int | None:
        n = len(text)
        if not self.started:
            while i < n and text[i] in " \t\r\n":
                i += 1
            if i >= n:
                return None
            self.started = True
            self.scalar = text[i] not in '[{"'
        if self.scalar:
            m = _SCALAR_END_RE.search(text, i)
            return m.start() if m else None
        while True:
            if self.in_string:
                if self.escaped:
                    if i >= n:
                        return None
                    i += 1
                    self.escaped = False
                i = _STRING_BODY_RE.match(text, i).end()
                if i >= n:
                    return None
                if text[i] == "\\":  # the last character: its escaped one is in the next piece
                    self.escaped = True
                    return None
                i += 1  # the closing quote
                self.in_string = False
                if self.depth == 0:
                    return i
                continue
            m = _STRUCTURE_RE.search(text, i)
            if m is None:
                return None
            i = m.end()
            ch = m.group()
            if ch == '"':
                self.in_string = True
            elif ch in "[{":
                self.depth += 1
                self.max_depth = max(self.max_depth, self.depth)
            else:
                self.depth -= 1
                if self.depth <= 0:
                    return i


def decode_bounded(decoder: json.JSONDecoder, text: str, pos: int = 0,
                   max_depth: int = MAX_DEPTH) -> tuple[object, int]:
    """``decoder.raw_decode(text, pos)`` for a value nested at most ``max_depth`` deep;
    raises :class:`TooDeep` (a ``JSONDecodeError``) for a deeper one, before decoding it.

    Cheap for ordinary values: the brackets in a window of text are counted (C speed), and a
    window with fewer than ``max_depth`` of them is decoded on its own; only values with many
    brackets are scanned (:class:`ValueScanner`)."""
    n = len(text)
    window = _FIRST_WINDOW
    while True:
        hi = min(n, pos + window)
        if text.count("[", pos, hi) + text.count("{", pos, hi) >= max_depth:
            scan = ValueScanner()
            end = scan.feed(text, pos)
            if scan.max_depth > max_depth:
                raise TooDeep(f"nested deeper than {max_depth} levels", text, pos)
            if end is None:  # the text ends inside the value (cut off, or more to come)
                raise json.JSONDecodeError("the value is not complete", text, n)
            try:
                value, used = decoder.raw_decode(text[pos:end])
            except json.JSONDecodeError as exc:
                raise json.JSONDecodeError(exc.msg, text, pos + exc.pos) from None
            return value, pos + used
        if hi == n:
            return decoder.raw_decode(text, pos)
        try:
            value, end = decoder.raw_decode(text[pos:hi])
        except json.JSONDecodeError:
            pass
        else:
            if end < hi - pos:  # ended inside the window (a number may go on beyond it)
                return value, pos + end
        window *= 8


class BoundedDecoder:
    """:func:`decode_bounded` for values read one after the other from the same text (the
    elements of an array): a window of text with fewer than ``max_depth`` brackets is kept
    and the values that end inside it are decoded from it, so brackets are counted once per
    window rather than once per value."""

    def __init__(self, decoder: json.JSONDecoder, max_depth: int = MAX_DEPTH, window: int = 4096):
        self.decoder = decoder
        self.max_depth = max_depth
        self.window = window
        self._text: str | None = None
        self._at = 0
        self._piece = ""

    def decode(self, text: str, pos: int) -> tuple[object, int]:
        """Like :func:`decode_bounded` (``text`` is not changed between calls: a new text is
        a new string)."""
        if text is not self._text or not self._at <= pos < self._at + len(self._piece):
            hi = pos + self.window
            if hi >= len(text) or text.count("[", pos, hi) + text.count("{", pos, hi) >= self.max_depth:
                return decode_bounded(self.decoder, text, pos, self.max_depth)
            self._text, self._at, self._piece = text, pos, text[pos:hi]
        try:
            value, end = self.decoder.raw_decode(self._piece, pos - self._at)
        except json.JSONDecodeError:
            end = len(self._piece)
        if end < len(self._piece):
            return value, self._at + end
        self._piece = ""  # the value goes on past the window
        return decode_bounded(self.decoder, text, pos, self.max_depth)


def loads_bounded(text: str, max_depth: int = MAX_DEPTH, **decoder_options):
    """``json.loads`` (whole text, surrounding whitespace allowed) with the depth bound of
    :func:`decode_bounded`."""
    decoder = json.JSONDecoder(**decoder_options)
    start = len(text) - len(text.lstrip())
    value, end = decode_bounded(decoder, text, start, max_depth)
    if text[end:].strip():
        raise json.JSONDecodeError("Extra data", text, end)
    return value
