"""Numbered lines of a report-style text input, for the table/CSV importers.

The lines come from the one splitter (``loganalyze.lines.iter_lines``); this module adds
what an importer needs around it: the ``sources`` line-ending facts, the skipped entry for a
line cut off by damaged compressed input, and an empty file as an error.  The oneDNN
importer takes the Arrow-batch form of the same splitter instead.
"""
from __future__ import annotations

import csv
from typing import Callable, Iterable, Iterator

from ..inputs import InputError
from ..lines import CUT_REASON, LineStats, iter_lines
from .base import IngestContext


#: stands for a carriage return while the csv module reads a line (a private-use character)
_CR_STAND_IN = "\ue000"


def csv_cells(line: str) -> list[str]:
    """The cells of one CSV line (the csv module's default dialect).  A carriage return is a
    character of its cell, as the line splitter keeps a bare ``\r`` inside its line (the csv
    module would take it for the end of a record in an unquoted cell).  A line the csv
    module cannot read (a cell over its field size limit) is a ValueError saying why."""
    stand_in = "\r" in line and _CR_STAND_IN not in line
    try:
        cells = next(csv.reader([line.replace("\r", _CR_STAND_IN) if stand_in else line]), [])
    except csv.Error as exc:
        raise ValueError(f"not one CSV record: {exc}") from None
    return [c.replace(_CR_STAND_IN, "\r") for c in cells] if stand_in else cells


def header_cells(line: str) -> list[str]:
    """The cells of a line that may be a CSV header: :func:`csv_cells`, or none when the
    line is not one CSV record (it is then no header)."""
    try:
        return csv_cells(line)
    except ValueError:
        return []


def text_lines(ctx: IngestContext, stats: LineStats | None = None) -> Iterator[tuple[int, str]]:
    """(line number, line without its end) for every line of ``ctx.file``; sets
    ``ctx.source`` crlf_lines and ends_with_newline.  Bytes that are not UTF-8 are replaced;
    a leading BOM is dropped; a line cut off by damaged compressed input is skipped (it
    still counts in ``stats.lines``)."""
    stats = LineStats() if stats is None else stats
    yield from iter_lines(ctx.file, stats, ctx.progress, on_cut=lambda n, raw: ctx.skip(n, CUT_REASON, raw))
    ctx.source["crlf_lines"] = stats.crlf
    ctx.source["ends_with_newline"] = stats.ends_with_newline


def read_lines(ctx: IngestContext) -> tuple[list[tuple[int, str]], int]:
    """Every line of a (small) text input, and the number of lines (a cut-off last line
    included); an empty input is an InputError."""
    stats = LineStats()
    lines = list(text_lines(ctx, stats))
    if stats.lines == 0:
        raise InputError(f"{ctx.file.path}: empty file")
    return lines, stats.lines


def feed_lines(ctx: IngestContext, handle: Callable[[int, str], None], buffers: Iterable = ()) -> int:
    """Every line to ``handle(line_no, text)``; then flush ``buffers`` (objects with
    ``flush()``) and the skipped lines.  Returns the number of lines; an empty file is an
    InputError."""
    stats = LineStats()
    for n, line in text_lines(ctx, stats):
        handle(n, line)
    for buf in buffers:
        buf.flush()
    ctx.flush_skipped()
    if stats.lines == 0:
        raise InputError(f"{ctx.file.path}: empty file")
    return stats.lines
