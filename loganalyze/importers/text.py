"""Numbered lines of a small or report-style text input, for the table/CSV importers.

The oneDNN importer does not use this: it cuts lines with numpy and hands them to DuckDB in
batches (``loganalyze.lines``).  Report files (nvprof, nsys stats, ncu, PyProf, MXNet, PyTorch,
CNTK tables) are read line by line in Python, all through this one reader.
"""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

from ..inputs import InputError
from .base import IngestContext


def text_lines(ctx: IngestContext, chunks: Iterable[bytes] | None = None) -> Iterator[tuple[int, str]]:
    """(line number, line without its end) for every line; sets ``ctx.source`` crlf_lines and
    ends_with_newline.  Bytes that are not UTF-8 are replaced; a leading BOM is dropped.
    ``chunks`` defaults to ``ctx.file.chunks()``."""
    carry = b""
    n = 0
    crlf = 0
    done = 0
    for chunk in ctx.file.chunks() if chunks is None else chunks:
        done += len(chunk)
        data = carry + chunk
        lines = data.split(b"\n")
        carry = lines.pop()
        for raw in lines:
            n += 1
            if raw.endswith(b"\r"):
                crlf += 1
                raw = raw[:-1]
            text = raw.decode("utf-8", "replace")
            yield n, (text[1:] if n == 1 and text.startswith("\ufeff") else text)
        if ctx.progress:
            ctx.progress(done)
    ends = not carry
    if carry:
        n += 1
        if carry.endswith(b"\r"):
            crlf += 1
        text = carry.rstrip(b"\r").decode("utf-8", "replace")
        yield n, (text[1:] if n == 1 and text.startswith("\ufeff") else text)
    ctx.source["crlf_lines"] = crlf
    ctx.source["ends_with_newline"] = ends


def feed_lines(ctx: IngestContext, handle: Callable[[int, str], None], buffers: Iterable = ()) -> int:
    """Every line to ``handle(line_no, text)``; then flush ``buffers`` (objects with
    ``flush()``) and the skipped lines.  Returns the number of lines; an empty file is an
    InputError."""
    total = 0
    for n, line in text_lines(ctx):
        total = n
        handle(n, line)
    for buf in buffers:
        buf.flush()
    ctx.flush_skipped()
    if total == 0:
        raise InputError(f"{ctx.file.path}: empty file")
    return total
