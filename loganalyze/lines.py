"""Bytes to numbered lines: the one line splitter, in two forms.

The rules, for every importer: a line is what ends with ``\\n`` (the last one may lack it); a
bare ``\\r`` (progress bars) stays inside its line, so line numbers agree with ``wc -l``,
editors and ``grep -n``; lines ending ``\\r\\n`` are counted (``LineStats.crlf``); a byte
order mark at the start is dropped.  Lines that are not valid UTF-8 or are too long to be
log records are *rejected*: blanked out of the batch and listed with their reason, so one bad
line never stops a file.  When a damaged compressed input ends inside a line, that line is
rejected as cut off.

Memory is bounded whatever the input: a batch holds at most :data:`MAX_LINES_PER_BATCH`
lines (a file of newlines makes many small batches, not numpy arrays of its whole chunk),
and a line longer than :data:`MAX_LINE_BYTES` is never held: it is passed over, counted,
and rejected with its length and its first :data:`LONG_LINE_KEEP` bytes.

- :func:`iter_line_batches` gives Arrow batches DuckDB can scan without a copy (the oneDNN
  importer).  Each value keeps its ``\\n`` (and ``\\r\\n``): cutting them off would copy every
  byte, while SQL can ignore them for free.
- :func:`iter_lines` gives ``(line number, text without its line end)`` in Python (the
  report importers); rejected lines come back decoded with replacement characters (an
  over-long one: its first bytes only), except a cut-off one, which the caller is told
  about through ``on_cut``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    from .inputs import InputFile

NL = 10
BOM = b"\xef\xbb\xbf"
#: a longer line is never a verbose record: it is reported, not parsed
MAX_LINE_BYTES = 1 << 20
#: rows per Arrow record batch (DuckDB scans record batches in parallel)
ROWS_PER_RECORD_BATCH = 16384
#: most lines in one :class:`LineBatch`
MAX_LINES_PER_BATCH = 1 << 18
#: bytes of a rejected over-long line that are kept (its skipped_lines text, its first field)
LONG_LINE_KEEP = 4096
#: bytes looked at a time while cutting a chunk into batches of MAX_LINES_PER_BATCH lines
_SPLIT_WINDOW = 1 << 20
CUT_REASON = "truncated: the input ends inside this line"


@dataclass
class LineBatch:
    first_line: int  # 1-based number of the first line in the batch
    count: int
    table: pa.Table  # columns line_no BIGINT, line VARCHAR (with its line ending)
    crlf: int
    #: (line_no, reason, the line's bytes) for lines blanked out of ``table``
    rejected: list[tuple[int, str, bytes]] = field(default_factory=list)
    #: the bytes of ``table``'s lines, one after another (rejected lines blanked to "\\n")
    data: pa.Buffer | None = None
    #: where each line starts in ``data``, and where the last one ends (``count + 1`` values)
    offsets: np.ndarray | None = None


@dataclass
class LineStats:
    lines: int = 0
    crlf: int = 0
    ends_with_newline: bool = True
    bytes: int = 0


def iter_line_batches(file: "InputFile", stats: LineStats,
                      progress: Callable[[int], None] | None = None) -> Iterator[LineBatch]:
    """Numbered lines of ``file``'s decompressed bytes, in batches of at most
    :data:`MAX_LINES_PER_BATCH` lines, in order."""
    carry = b""
    long_line: _LongLine | None = None  # an over-long line being passed over
    line_no = 0
    first = True
    for chunk in file.chunks(progress=progress, whole_lines=True):
        if first and chunk:
            first = False
            if chunk.startswith(BOM):
                chunk = chunk[len(BOM):]
        if not chunk:
            continue
        stats.bytes += len(chunk)
        start = 0
        if long_line is not None:
            end = chunk.find(b"\n")
            if end < 0:
                long_line.add(chunk, len(chunk))
                continue
            long_line.add(chunk, end)
            yield long_line.batch(line_no)
            line_no += 1
            stats.crlf += long_line.crlf
            long_line = None
            start = end + 1
        data = carry + chunk if carry else (chunk if start == 0 else chunk[start:])
        cut = data.rfind(b"\n") + 1
        carry = data[cut:]
        if len(carry) > MAX_LINE_BYTES:
            long_line, carry = _LongLine(carry), b""
        for batch in _batches(data, line_no, cut):
            line_no += batch.count
            stats.crlf += batch.crlf
            yield batch
    if long_line is not None:
        stats.ends_with_newline = False
        yield long_line.batch(line_no, cut=file.damage is not None)
        line_no += 1
    elif carry:
        stats.ends_with_newline = False
        batch = _make_batch(carry + b"\n", line_no, cut_last=file.damage is not None)
        line_no += batch.count
        stats.crlf += batch.crlf
        yield batch
    stats.lines = line_no


class _LongLine:
    """A line too long to hold: its length so far, its first bytes, its last byte."""

    def __init__(self, start: bytes):
        self.head = bytes(start[:LONG_LINE_KEEP])
        self.length = len(start)
        self.last = bytes(start[-1:])

    def add(self, chunk: bytes, n: int) -> None:
        """The line goes on with the first ``n`` bytes of ``chunk``."""
        if n:
            self.length += n
            self.last = bytes(chunk[n - 1:n])

    @property
    def crlf(self) -> int:
        return 1 if self.last == b"\r" else 0

    def batch(self, line_no: int, cut: bool = False) -> LineBatch:
        """A batch of one emptied line (number ``line_no + 1``), rejected with its length."""
        reason = CUT_REASON if cut else f"line too long ({self.length} bytes)"
        batch = _make_batch(b"\n", line_no)
        batch.crlf = 0 if cut else self.crlf
        batch.rejected = [(line_no + 1, reason, self.head)]
        return batch


def _batches(data: bytes, line_no: int, cut: int) -> Iterator[LineBatch]:
    """The lines of ``data[:cut]`` (which ends with a newline) as batches of at most
    :data:`MAX_LINES_PER_BATCH` lines."""
    if cut == 0:
        return
    ascii_only = data.isascii()
    start = 0
    for end, ends in _split_points(data, cut):
        batch = _make_batch(data, line_no, start, end, ascii_only=ascii_only, ends=ends)
        line_no += batch.count
        yield batch
        start = end


def _split_points(data: bytes, cut: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(end, newlines)`` for each batch of ``data[:cut]``: the offset just after every
    :data:`MAX_LINES_PER_BATCH`-th newline, then ``cut``, with the positions of the batch's
    newlines (relative to its start).  Found a window at a time: no array over the whole
    chunk, whatever its number of lines."""
    buf = np.frombuffer(data, dtype=np.uint8, count=cut)
    pending: list[np.ndarray] = []  # newlines of the batch so far
    count = start = 0
    for w in range(0, cut, _SPLIT_WINDOW):
        ends = np.flatnonzero(buf[w:w + _SPLIT_WINDOW] == NL) + w
        while count + len(ends) >= MAX_LINES_PER_BATCH:
            take = MAX_LINES_PER_BATCH - count
            pending.append(ends[:take])
            point = int(ends[take - 1]) + 1
            yield point, np.concatenate(pending) - start
            start, pending, count, ends = point, [], 0, ends[take:]
        pending.append(ends)
        count += len(ends)
    if count:
        yield cut, np.concatenate(pending) - start


def iter_lines(file: "InputFile", stats: LineStats, progress: Callable[[int], None] | None = None,
               on_cut: Callable[[int, bytes], None] | None = None) -> Iterator[tuple[int, str]]:
    """``(line number, text without its line end)`` for every line of ``file``; bytes that
    are not UTF-8 are replaced.  A line cut off by damaged compressed input is not yielded:
    ``on_cut(line_no, its bytes)`` is called instead."""
    for batch in iter_line_batches(file, stats, progress):
        texts = batch.table.column("line").to_pylist()
        for line_no, reason, raw in batch.rejected:
            i = line_no - batch.first_line
            if reason == CUT_REASON:
                texts[i] = None
                if on_cut:
                    on_cut(line_no, raw)
            else:  # an over-long line comes as its first bytes, without its end
                text = raw.decode("utf-8", "replace")
                texts[i] = text if text.endswith("\n") else text + "\n"
        for i, text in enumerate(texts):
            if text is not None:
                yield batch.first_line + i, text[:-2] if text.endswith("\r\n") else text[:-1]


def _make_batch(data: bytes, line_no: int, start: int = 0, end: int | None = None, cut_last: bool = False,
                ascii_only: bool | None = None, ends: np.ndarray | None = None) -> LineBatch:
    """Lines of ``data[start:end]``, which ends with a newline (no copy of the bytes); with
    ``cut_last`` the last line is rejected as cut off.  ``ascii_only``: whether ``data`` is
    known to be ASCII (valid UTF-8: no validation pass needed); ``ends``: the positions of
    its newlines, when already found."""
    if ascii_only is None:
        ascii_only = data.isascii()
    end = len(data) if end is None else end
    if start or end < len(data):
        data = memoryview(data)[start:end]
    buf = np.frombuffer(data, dtype=np.uint8)
    if ends is None:
        ends = np.flatnonzero(buf == NL)  # index of each line's '\n'
    n = len(ends)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = ends + 1
    crlf = int(np.count_nonzero(buf[ends[ends > 0] - 1] == 13)) if n else 0
    numbers = np.arange(line_no + 1, line_no + n + 1, dtype=np.int64)
    rejected: list[tuple[int, str, bytes]] = []

    lengths = np.diff(offsets)
    long_rows = np.flatnonzero(lengths > MAX_LINE_BYTES)
    bad_rows = np.empty(0, dtype=np.int64)
    text = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    buffer = text.buffers()[2]
    if not ascii_only:
        # the UTF-8 check alone (a cast would import pyarrow.compute: 45 ms of start-up), of
        # the batch's bytes as one value (half the time of a check line by line): cut at its
        # newlines, valid UTF-8 gives valid lines, and only then are lines checked one by one
        whole = pa.Array.from_buffers(pa.large_string(), 1, [None, pa.py_buffer(offsets[[0, -1]]), buffer])
        try:
            whole.validate(full=True)
        except pa.ArrowInvalid:
            bad_rows = _invalid_utf8_rows(data, offsets)
    cut_rows = np.array([n - 1], dtype=np.int64) if cut_last and n else np.empty(0, dtype=np.int64)
    # (few rows: numpy's set functions import numpy.ma, 16 ms of start-up)
    drop = sorted({*long_rows.tolist(), *bad_rows.tolist(), *cut_rows.tolist()})
    if len(drop):
        for r in drop:
            lo, hi = int(offsets[r]), int(offsets[r + 1])
            if r in cut_rows:
                reason = CUT_REASON
                hi -= 1  # the "\n" was added here: the line has none
            elif (hi - lo) > MAX_LINE_BYTES:
                reason = f"line too long ({hi - lo - 1} bytes)"
                hi = lo + LONG_LINE_KEEP
            else:
                reason = "invalid UTF-8"
            rejected.append((int(numbers[r]), reason, bytes(data[lo:hi])))
        # rebuild the batch with those lines emptied (kept as "\n" so numbering holds)
        pieces = []
        prev = 0
        for r in drop:
            pieces.append(data[int(offsets[prev]):int(offsets[r])])
            pieces.append(b"\n")
            prev = int(r) + 1
        pieces.append(data[int(offsets[prev]):])
        data = b"".join(bytes(p) for p in pieces)
        buf = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero(buf == NL)
        offsets = np.empty(n + 1, dtype=np.int64)
        offsets[0] = 0
        offsets[1:] = ends + 1
        buffer = pa.py_buffer(data)
        text = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), buffer])
    line_nos = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(numbers)])
    table = pa.Table.from_arrays([line_nos, text], names=["line_no", "line"])
    if n > ROWS_PER_RECORD_BATCH:
        table = pa.Table.from_batches(table.to_batches(max_chunksize=ROWS_PER_RECORD_BATCH))
    return LineBatch(first_line=line_no + 1, count=n, table=table, crlf=crlf, rejected=rejected,
                     data=buffer, offsets=offsets)


def _invalid_utf8_rows(data, offsets: np.ndarray) -> np.ndarray:
    bad = []
    data = bytes(data)
    for i in range(len(offsets) - 1):
        try:
            data[int(offsets[i]):int(offsets[i + 1])].decode("utf-8")
        except UnicodeDecodeError:
            bad.append(i)
    return np.array(bad, dtype=np.int64)


def prefetch(items: Iterable, depth: int = 2) -> Iterator:
    """Run an iterator on a helper thread, ``depth`` items ahead of the consumer.

    Line batching (numpy, Arrow, file reads) releases the GIL, and so does DuckDB while it
    runs a statement, so preparing the next batch overlaps with the SQL on the current one.
    Exceptions raised by the producer are raised again in the consumer.
    """
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def run() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put(("item", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(("end", done))
        except BaseException as exc:  # handed to the consumer
            q.put(("error", exc))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    try:
        while True:
            kind, value = q.get()
            if kind == "item":
                yield value
            elif kind == "error":
                raise value
            else:
                return
    finally:
        stop.set()
        t.join(timeout=5)
