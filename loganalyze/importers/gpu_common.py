"""What the GPU profile importers share beyond ``importers.base``: buffers over whole
tables, small lookup tables for SQL joins, source facts, and the sniffed head's lines.

SQLite inputs are :mod:`.sqlite_input`, kernel names :mod:`loganalyze.names`, NVTX ranges
:mod:`.nvtx_ranges`; Arrow reaches DuckDB only through :func:`.base.insert_arrow`, and
small tables built in Python as list parameters (:func:`values_select`).
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Dict, Iterator, Tuple, Union

import duckdb
import numpy as np
import pyarrow as pa

from ..inputs import SNIFF_BYTES
from ..lines import BOM
from .base import IngestContext, RowBuffer, arrow_types, create_arrow_table, dropped_after


def table_rows(ctx: IngestContext, table: str) -> RowBuffer:
    """A :class:`~.base.RowBuffer` over every column of ``table`` but ``source_id`` (filled
    from ``ctx``); a row leaves out the columns its format does not have (NULL)."""
    return RowBuffer(ctx, table, [c for c in arrow_types(ctx.con, table) if c != "source_id"])


#: a small table built in Python: column name -> (DuckDB type, values), every list as long
Values = Dict[str, Tuple[str, list]]


def values_select(columns: Values) -> tuple[str, list]:
    """(SELECT, parameters) giving the rows of ``columns``: the lists go to DuckDB as list
    parameters (``unnest``), not through pyarrow's conversion of Python objects, which
    imports pandas (about a third of a second) the first time."""
    select = ", ".join(f"unnest(?::{sql_type}[]) AS {name}" for name, (sql_type, _) in columns.items())
    return f"SELECT {select}", [list(values) for _, values in columns.values()]


#: a table of numpy arrays (column name -> array), which DuckDB scans as it is: object arrays of
#: ``str`` for text, typed arrays for numbers (no None), as long as each other
Arrays = Dict[str, np.ndarray]


@contextmanager
def lookup_tables(con: duckdb.DuckDBPyConnection, **tables: Union[pa.Table, Values, Arrays]) -> Iterator[None]:
    """Small tables (Arrow tables of typed arrays, :data:`Values` or :data:`Arrays`: the
    fastest for thousands of rows) as temporary DuckDB tables for the statements inside,
    dropped after: ``with lookup_tables(con, _kinds=table): ...``."""
    with dropped_after(con, *(f"temp.{name}" for name in tables)):
        for name, data in tables.items():
            if isinstance(data, dict) and not all(isinstance(v, np.ndarray) for v in data.values()):
                select, params = values_select(data)
                con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {select}", params)
            else:
                create_arrow_table(con, name, data, temp=True)
        yield


def insert_values(con: duckdb.DuckDBPyConnection, table: str, columns: Values) -> None:
    """The rows of ``columns`` (:data:`Values`) into ``table``, by column name."""
    select, params = values_select(columns)
    con.execute(f"INSERT INTO {table} BY NAME {select}", params)


def put_meta(ctx: IngestContext, items: dict) -> None:
    """Key/value facts about a source (tool version, session start, ...) in gpu_source_meta."""
    rows = [(k, None if v is None else str(v)) for k, v in items.items() if v is not None]
    if not rows:
        return
    insert_values(ctx.con, "gpu_source_meta", {
        "source_id": ("INTEGER", [ctx.source_id] * len(rows)),
        "key": ("VARCHAR", [r[0] for r in rows]),
        "value": ("VARCHAR", [r[1] for r in rows]),
    })


def first_lines(head: bytes, limit: int = 200) -> list[str]:
    """Up to ``limit`` decoded lines of a sniffed head, cut as :mod:`loganalyze.lines` cuts
    every input (at ``\\n``; a ``\\r`` before it and a leading byte order mark dropped); the
    last, maybe cut, line is left out when the head may be only the start of the file."""
    if head.startswith(BOM):
        head = head[len(BOM):]
    lines = [line[:-1] if line.endswith("\r") else line for line in head.decode("utf-8", "replace").split("\n")]
    if lines and (lines[-1] == "" or len(head) >= SNIFF_BYTES):
        lines.pop()
    return lines[:limit]


def checked_time(value: int | float | None, what: str = "duration") -> int | float | None:
    """``value`` (a time in ns: a duration, or a total of durations) when it is None or a
    finite number >= 0; else a ValueError saying why, so that the row is skipped with that
    reason and never summed."""
    if value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{what} is not a finite number ({value})")
    if value < 0:
        raise ValueError(f"negative {what} ({value} ns)")
    return value
