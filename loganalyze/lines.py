"""Bytes to numbered lines: the one line splitter, in two forms.

The rules, for every importer: a line is what ends with ``\\n`` (the last one may lack it); a
bare ``\\r`` (progress bars) stays inside its line, so line numbers agree with ``wc -l``,
editors and ``grep -n``; lines ending ``\\r\\n`` are counted (``LineStats.crlf``); a byte
order mark at the start is dropped.  Lines that are not valid UTF-8 or are too long to be
log records are *rejected*: blanked out of the batch and listed with their reason, so one bad
line never stops a file.  When a damaged compressed input ends inside a line, that line is
rejected as cut off.

- :func:`iter_line_batches` gives Arrow batches DuckDB can scan without a copy (the oneDNN
  importer).  Each value keeps its ``\\n`` (and ``\\r\\n``): cutting them off would copy every
  byte, while SQL can ignore them for free.
- :func:`iter_lines` gives ``(line number, text without its line end)`` in Python (the
  report importers); rejected lines come back decoded with replacement characters, except
  a cut-off one, which the caller is told about through ``on_cut``.
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
CUT_REASON = "truncated: the input ends inside this line"


@dataclass
class LineBatch:
    first_line: int  # 1-based number of the first line in the batch
    count: int
    table: pa.Table  # columns line_no BIGINT, line VARCHAR (with its line ending)
    crlf: int
    #: (line_no, reason, the line's bytes) for lines blanked out of ``table``
    rejected: list[tuple[int, str, bytes]] = field(default_factory=list)


@dataclass
class LineStats:
    lines: int = 0
    crlf: int = 0
    ends_with_newline: bool = True
    bytes: int = 0


def iter_line_batches(file: "InputFile", stats: LineStats,
                      progress: Callable[[int], None] | None = None) -> Iterator[LineBatch]:
    """Numbered lines of ``file``'s decompressed bytes, a batch per chunk, in order."""
    carry = b""
    line_no = 0
    first = True
    for chunk in file.chunks(progress=progress):
        if first and chunk:
            first = False
            if chunk.startswith(BOM):
                chunk = chunk[len(BOM):]
        if not chunk:
            continue
        stats.bytes += len(chunk)
        data = carry + chunk if carry else chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        carry = data[cut:]
        batch = _make_batch(data, line_no, cut)
        line_no += batch.count
        stats.crlf += batch.crlf
        yield batch
    if carry:
        stats.ends_with_newline = False
        batch = _make_batch(carry + b"\n", line_no, cut_last=file.damage is not None)
        line_no += batch.count
        stats.crlf += batch.crlf
        yield batch
    stats.lines = line_no


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
            else:
                texts[i] = raw.decode("utf-8", "replace")
        for i, text in enumerate(texts):
            if text is not None:
                yield batch.first_line + i, text[:-2] if text.endswith("\r\n") else text[:-1]


def _make_batch(data: bytes, line_no: int, size: int | None = None, cut_last: bool = False) -> LineBatch:
    """Lines of ``data[:size]``, which ends with a newline (no copy of the bytes); with
    ``cut_last`` the last line is rejected as cut off."""
    ascii_only = data.isascii()  # ASCII is valid UTF-8: no validation pass needed
    if size is not None and size < len(data):
        data = memoryview(data)[:size]
    buf = np.frombuffer(data, dtype=np.uint8)
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
    if ascii_only:
        text = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    else:
        arr = pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
        try:
            text = arr.cast(pa.large_string())
        except (pa.ArrowInvalid, UnicodeDecodeError):
            bad_rows = _invalid_utf8_rows(data, offsets)
            text = None
    cut_rows = np.array([n - 1], dtype=np.int64) if cut_last and n else np.empty(0, dtype=np.int64)
    drop = np.union1d(np.union1d(long_rows, bad_rows), cut_rows)
    if len(drop):
        for r in drop:
            start, end = int(offsets[r]), int(offsets[r + 1])
            if r in cut_rows:
                reason = CUT_REASON
                end -= 1  # the "\n" was added here: the line has none
            elif (end - start) > MAX_LINE_BYTES:
                reason = f"line too long ({end - start - 1} bytes)"
            else:
                reason = "invalid UTF-8"
            rejected.append((int(numbers[r]), reason, bytes(data[start:end])))
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
        arr = pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
        text = arr.cast(pa.large_string())
    line_nos = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(numbers)])
    table = pa.Table.from_arrays([line_nos, text], names=["line_no", "line"])
    if n > ROWS_PER_RECORD_BATCH:
        table = pa.Table.from_batches(table.to_batches(max_chunksize=ROWS_PER_RECORD_BATCH))
    return LineBatch(first_line=line_no + 1, count=n, table=table, crlf=crlf, rejected=rejected)


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
