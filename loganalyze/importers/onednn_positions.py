"""Where the pieces of each oneDNN verbose line of a batch are: one pass over each line's
first and last bytes, compiled by numba for all but the smallest inputs.

The cut (:mod:`.onednn_cut`) needs, for every verbose line of a batch, where its key, its
timestamp and its last field are.  :func:`find_pieces` finds them and writes each piece as
an Arrow *binary view* into the batch's buffer, ready for polars (no byte is copied).

A verbose line is ``<pre>[,<ts>],<body...>,<tail>`` (the grammar's ``LEADING_CUT_PATTERN``):

- verbose: the line starts with a marker (``g.MARKERS``) followed by a comma, or is only a
  marker and its line end;
- ``pre``: the marker and, when the second field is a version token (``v<digits>``,
  ``g.VERSION_TOKEN_PATTERN``), that field;
- ``ts``: the next field when it is a timestamp (``<digits>.<digits>*``,
  ``g.TIMESTAMP_PATTERN``);
- ``tail``: the last field, when the line has a comma at or after the end of those leading
  fields; ``plain`` when it is a plain decimal number
  (``[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?``);
- ``rest``: the text between the leading fields and the last comma (the key is
  ``pre || rest``).

A ``\\r`` before the line's ``\\n`` is not part of its last field.  Digits are ASCII, as in
the grammar's regexes (tests/test_onednn_speed.py checks the pieces against the former SQL
cut, in both ways of running).

One function, two ways of running it: :func:`_pieces` is plain Python.  numba compiles it
(no Python runs per line, and the compiled code lets go of the GIL, so the cut's worker
threads run it at the same time) once a process has more lines to cut than the
interpreter reads in about the time numba takes to load (0.9 s on the 2-core machine of
docs/benchmarks.md, a third of it numba's check for SciPy's BLAS); until then the
interpreter runs it over the batch's bytes (about 22 µs a line there, with the rest of the
cut).  The compiled code is cached on disk (numba's ``cache=True``: next to this module, or
in the user's cache folder where that is not writable), so only the first large input on a
machine compiles it (3.5 s there).
"""
from __future__ import annotations

import atexit
import gc
import math
import os
import sys
import threading
from contextlib import contextmanager

import numpy as np

from ..grammars import onednn_verbose as g

#: the markers, as bytes for the interpreter, and as the rows of a zero-padded array with
#: their lengths for the compiled kernel
MARKERS = tuple(m.encode() for m in g.MARKERS)
_MARKER_ROWS = np.array([list(m.ljust(max(map(len, MARKERS)), b"\0")) for m in MARKERS], dtype=np.uint8)
_MARKER_LENGTHS = np.array([len(m) for m in MARKERS], dtype=np.int64)
#: the pieces' rows in :func:`find_pieces`' views
PRE, REST, TS, TAIL = range(4)
#: bits of :func:`find_pieces`' flags: TS_READ and TIME_READ say that ``values`` holds the
#: timestamp's and the plain last field's number
HAS_TS, HAS_TAIL, PLAIN, TS_READ, TIME_READ = 1, 2, 4, 8, 16
#: the powers of ten a double holds exactly: a decimal of at most 2^53 as an integer, times
#: or divided by one of them, is the correctly rounded double of the decimal (one rounding:
#: Clinger's fast path, what every correct reader gives, DuckDB's and polars' included)
_POWERS = np.array([10.0 ** k for k in range(23)])
#: the same as integers, up to 10^15
_TENS = np.array([10 ** k for k in range(16)], dtype=np.int64)
#: the largest mantissa that takes another digit without passing 2^53
_MANTISSA_LIMIT = (2 ** 53 - 9) // 10
#: lines a process cuts with the interpreter before it loads the compiled kernel (a batch
#: that would pass this goes to the compiled kernel whole)
INTERPRETED_LINES = 40_000

_interpreted_lines = 0
_lock = threading.Lock()
_compiled = None


def find_pieces(data, offsets: np.ndarray, kernel=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The verbose lines of a batch (bytes ``data``, a buffer; line ``offsets``: where each
    line starts and where the last one ends, every line ending with ``\\n``): their indexes
    in the batch, the Arrow binary views of their pieces (``views[PRE]`` and so on, 16 bytes
    a line; an empty view where a line has no such piece), their flags (HAS_TS, HAS_TAIL,
    PLAIN, TS_READ, TIME_READ) and their numbers (``values[0]``: the timestamp where
    TS_READ, ``values[1]``: the plain last field where TIME_READ; decimals of at most 2^53
    as integers within 10^±22 of them are read here, and timestamps whose digits before
    and after the dot each are; the others are left to the caller).
    ``kernel``: the compiled kernel to run (while :func:`compiled` loads it)."""
    global _interpreted_lines
    n = len(offsets) - 1
    rows = np.empty(n, dtype=np.int64)
    views = np.empty((4, n, 2), dtype=np.uint64)
    flags = np.empty(n, dtype=np.uint8)
    values = np.empty((2, n), dtype=np.float64)
    interpret = False
    if kernel is None:
        with _lock:
            interpret = _compiled is None and _interpreted_lines + n <= INTERPRETED_LINES
            if interpret:
                _interpreted_lines += n
    if interpret:
        k = _pieces(bytes(data), offsets.tolist(), MARKERS, rows, views, flags, values, _POWERS, _TENS,
                    _MANTISSA_LIMIT)
    else:
        data = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(0, np.uint8)
        # read-only whatever the buffer (bytes or bytearray): numba compiles a kernel for each
        # kind of array, and the one loaded ahead (:func:`_load`) is then the only one
        data.flags.writeable = False
        k = (kernel or compiled())(data, offsets, _MARKER_ROWS, rows, views, flags, values, _POWERS, _TENS,
                                   _MANTISSA_LIMIT, _MARKER_LENGTHS)
    return rows[:k], views[:, :k], flags[:k], values[:, :k]


def compiled():
    """:func:`_pieces` compiled by numba (imported, and the code loaded or compiled, at the
    first call)."""
    global _compiled
    with _lock:
        if _compiled is None:
            with _collector_paused(), _unused_imports_skipped():
                from numba import njit

                try:
                    kernel = njit(cache=True, nogil=True)(_pieces)
                except RuntimeError:  # no writable place for numba's cache: compile in each process
                    kernel = njit(nogil=True)(_pieces)
                _load(kernel)
            _compiled = kernel
        return _compiled


#: plain files of at least this size are worth loading the compiled kernel for ahead
#: (:func:`compile_for`): past INTERPRETED_LINES lines of some 150-400 bytes
COMPILE_AHEAD_MIN_BYTES = 16 << 20
#: the first bytes of a file :func:`compile_for` looks at for a verbose line
_HEAD_BYTES = 1 << 16


def compile_for(path: str) -> None:
    """Load the compiled kernel (:func:`compiled`) when ``path`` is a plain file of at least
    :data:`COMPILE_AHEAD_MIN_BYTES` whose first bytes hold a verbose line.  The CLI runs this
    on a helper thread before its own imports, so that numba's load overlaps with them and
    with the database's opening: loaded at the first batch, it held up the cut of the first
    batches (both workers waiting) for 0.42 s of a 1 GiB log's ingest (docs/benchmarks.md,
    "Twenty-fifth session").  Any failure is left to the ingest's own first call, which
    reports it."""
    try:
        if os.path.getsize(path) < COMPILE_AHEAD_MIN_BYTES:
            return
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
        if g.head_has_verbose_line(head):
            compiled()
    except Exception:  # noqa: BLE001 - see above
        pass


def _load(kernel) -> None:
    """Have numba load (or compile) ``kernel``'s code for the arguments
    :func:`find_pieces` passes, now rather than at its first batch."""
    find_pieces(bytearray(b"\n"), np.array([0, 1], dtype=np.int64), kernel)


@contextmanager
def _unused_imports_skipped():
    """In a process that says it needs none of numba's linear algebra (the CLI sets
    ``$LOGANALYZE_NUMBA_WITHOUT_BLAS``), numba's load imports neither SciPy nor PyYAML:

    - numba looks for a BLAS, which imports ``scipy.linalg`` (80 ms on the machine of
      docs/benchmarks.md, a third of numba's load, on the path of every oneDNN ingest), and
      imports ``scipy`` itself to check its version (8 ms).  numba records "no BLAS" when
      SciPy cannot be imported, which a ``None`` in ``sys.modules`` makes so for the length
      of the load only; jitted code of that process that calls ``np.dot`` or ``np.linalg``
      would then be refused.
    - numba's configuration imports ``yaml`` (15 ms) to read a ``.numba_config.yaml`` in the
      current folder; without that file nothing is read, and ``yaml`` is not imported.

    Nothing changes where numba's array functions, SciPy or PyYAML are loaded already."""
    names = []
    if os.environ.get("LOGANALYZE_NUMBA_WITHOUT_BLAS") == "1" and "numba.np.arraymath" not in sys.modules:
        if "scipy" not in sys.modules:
            names.append("scipy")  # (nor can its modules be imported then)
        elif "scipy.linalg.cython_blas" not in sys.modules:
            names.append("scipy.linalg.cython_blas")
        if "yaml" not in sys.modules and not os.path.exists(".numba_config.yaml"):
            names.append("yaml")
    for name in names:
        sys.modules[name] = None
    try:
        yield
    finally:
        for name in names:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


@contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while numba loads, and what is alive then moved
    out of its reach afterwards (``gc.freeze``): numba's load makes some 300,000 objects
    that live as long as the process, which the collector would otherwise walk in each full
    collection (0.17 s of a 1 GiB log's ingest, 3.5% of its wall time; docs/benchmarks.md).
    They are given back to the collector as the interpreter exits, so that its last
    collections free them as before (DuckDB's bindings report objects left over as leaks)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        atexit.register(gc.unfreeze)
        if enabled:
            gc.enable()


def _pieces(d, offsets, markers, rows, views, flags, values, powers, tens, limit, lengths=None) -> int:
    """:func:`find_pieces`' loop, over ``d`` (bytes, or a uint8 array) and ``offsets``;
    ``markers``: the markers (bytes, or the rows of a zero-padded uint8 array with
    ``lengths``); ``powers`` and ``tens``: :data:`_POWERS` and :data:`_TENS`; ``limit``:
    :data:`_MANTISSA_LIMIT`.  Returns
    how many lines are verbose.  Plain Python that numba compiles as it is: no helpers, no
    objects, numbers only."""
    k = 0
    for row in range(len(offsets) - 1):
        s = offsets[row]
        e = offsets[row + 1] - 1  # the line's "\n"
        size = e - s + 1
        verbose = False
        for m in range(len(markers)):
            n = len(markers[m]) if lengths is None else lengths[m]
            if size < n + 1:
                continue
            same = True
            for j in range(n):
                if d[s + j] != markers[m][j]:
                    same = False
                    break
            if same:
                after = d[s + n]
                if after == 44 or (after == 10 and size == n + 1) or (after == 13 and size == n + 2):
                    verbose = True
                    break
        if not verbose:
            continue
        eol = e - 1 if (e > s and d[e - 1] == 13) else e  # without a "\r" before the "\n"
        # the first three commas, the last one
        c1 = c2 = c3 = -1
        count = 0
        i = s
        while i < e and count < 3:
            if d[i] == 44:
                if count == 0:
                    c1 = i
                elif count == 1:
                    c2 = i
                else:
                    c3 = i
                count += 1
            i += 1
        last = e - 1
        while last >= s and d[last] != 44:
            last -= 1
        f1_end = c1 if count >= 1 else eol
        f2_end = c2 if count >= 2 else eol
        f3_end = c3 if count >= 3 else eol
        # a version token: v<digits>
        has_v = count >= 1 and f2_end - c1 - 1 >= 2 and d[c1 + 1] == 118
        i = c1 + 2
        while has_v and i < f2_end:
            has_v = 48 <= d[i] <= 57
            i += 1
        # a timestamp, <digits>.<digits>*: the field after the version token, or after the
        # marker when there is none
        if has_v:
            ts_start, ts_end = c2 + 1, f3_end
            has_ts = count >= 2
        else:
            ts_start, ts_end = c1 + 1, f2_end
            has_ts = count >= 1
        has_ts = has_ts and ts_end - ts_start >= 2 and 48 <= d[ts_start] <= 57
        # where its dot is; then its digits before and after the dot as integers (each of
        # at most 15 digits: below 2^53)
        dot = -1
        i = ts_start
        while has_ts and i < ts_end:
            c = d[i]
            if c == 46:
                has_ts = dot < 0
                dot = i
            elif not 48 <= c <= 57:
                has_ts = False
            i += 1
        has_ts = has_ts and dot > 0
        decimals = ts_end - dot - 1
        ts_read = has_ts and dot - ts_start <= 15 and decimals <= 15
        whole = fraction = 0
        if ts_read:
            for i in range(ts_start, dot):
                whole = whole * 10 + (d[i] - 48)
            for i in range(dot + 1, ts_end):
                fraction = fraction * 10 + (d[i] - 48)
        value = 0.0
        if ts_read and ts_end - ts_start - 1 <= 15:
            # at most 15 digits in all: one integer below 2^53
            value = (whole * tens[decimals] + fraction) / powers[decimals]
        elif ts_read:
            # a timestamp of more digits than 2^53 holds (milliseconds since 1970 with six
            # decimals: 19): whole + fraction / 10^decimals, rounded twice, then kept only where
            # that is provably the correctly rounded sum: TwoSum gives the second rounding's
            # exact error, the first one's is at most 2^-54 (below 1: half its ulp), and
            # together they must stay below half the result's ulp (the smaller one below a
            # power of two); else (a near tie) the caller reads the text
            part = fraction / powers[decimals]
            value = whole + part
            back = value - whole
            error = (whole - (value - back)) + (part - back)
            # (value * 2^-54 is at most that half ulp: enough for most, without frexp)
            ts_read = abs(error) + 5.551115123125783e-17 < value * 5.551115123125783e-17
            if not ts_read:
                m, e = math.frexp(value)
                half_ulp = math.ldexp(1.0, e - 55 if m == 0.5 else e - 54)
                ts_read = abs(error) + 5.551115123125783e-17 < half_ulp
        values[0, k] = value
        pre_end = f2_end if has_v else f1_end
        at = ts_end if has_ts else pre_end
        has_tail = count >= 1 and last >= at
        # a plain decimal tail: <digits>[.<digits>*][(e|E)[+|-]<digits>], its digits as an
        # integer (while within 2^53), how many follow the dot, and its exponent (up to 10^5)
        plain = has_tail
        i = last + 1
        mantissa = 0
        exact = True
        decimals = 0
        exponent = 0
        negative = False
        if plain:
            plain = i < eol and 48 <= d[i] <= 57
            while i < eol and 48 <= d[i] <= 57:
                if mantissa > limit:
                    exact = False
                else:
                    mantissa = mantissa * 10 + (d[i] - 48)
                i += 1
            if i < eol and d[i] == 46:
                i += 1
                while i < eol and 48 <= d[i] <= 57:
                    if mantissa > limit:
                        exact = False
                    else:
                        mantissa = mantissa * 10 + (d[i] - 48)
                    decimals += 1
                    i += 1
            if i < eol and (d[i] == 101 or d[i] == 69):
                i += 1
                if i < eol and (d[i] == 43 or d[i] == 45):
                    negative = d[i] == 45
                    i += 1
                plain = plain and i < eol and 48 <= d[i] <= 57
                while i < eol and 48 <= d[i] <= 57:
                    if exponent < 100000:
                        exponent = exponent * 10 + (d[i] - 48)
                    i += 1
            plain = plain and i == eol
        scale = (-exponent if negative else exponent) - decimals
        time_read = plain and exact and -22 <= scale <= 22
        if not time_read:
            values[1, k] = 0.0
        elif scale >= 0:
            values[1, k] = mantissa * powers[scale]
        else:
            values[1, k] = mantissa / powers[-scale]
        # the views: (start, length) of pre, rest, ts and tail
        starts = (s, at if has_tail else s, ts_start if has_ts else s, last + 1 if has_tail else s)
        sizes = (pre_end - s, last - at if has_tail else 0, ts_end - ts_start if has_ts else 0,
                 eol - last - 1 if has_tail else 0)
        for p in range(4):
            start, length = starts[p], sizes[p]
            head = length
            for j in range(min(length, 4)):
                head |= int(d[start + j]) << (32 + 8 * j)
            views[p, k, 0] = head
            if length <= 12:
                more = 0
                for j in range(4, length):
                    more |= int(d[start + j]) << (8 * (j - 4))
                views[p, k, 1] = more
            else:
                views[p, k, 1] = start << 32  # buffer 0, at this offset
        rows[k] = row
        flags[k] = ((1 if has_ts else 0) | (2 if has_tail else 0) | (4 if plain else 0) | (8 if ts_read else 0)
                    | (16 if time_read else 0))
        k += 1
    return k
