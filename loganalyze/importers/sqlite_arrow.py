"""SELECTs over an SQLite file as Arrow record batches through the ADBC SQLite driver (C: no
Python per row or per batch), and the whole of a table read in parallel parts.

The driver is used through its low-level bindings: its DB-API module imports pandas, polars
and ``pyarrow.dataset`` where they are installed (a third of a second at every start).

The driver types each result column from its first batch and fails on a value of another type
later; a SELECT that starts with one typed row (:func:`~loganalyze.grammars.nsys.select_sql`)
therefore either gives exactly the types it asks for or fails.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterator

import pyarrow as pa

#: rows per record batch (the driver's default, 1024, costs a Python-visible batch per 1024 rows)
BATCH_ROWS = 65536


def adbc_ready() -> bool:
    """Whether the ADBC SQLite driver is installed, allowed (``LOGANALYZE_SQLITE_READER`` is
    not ``stdlib``), and its SQLite can bound a cell's size without reading it
    (``octet_length``, SQLite 3.43+)."""
    global _READY
    if os.environ.get("LOGANALYZE_SQLITE_READER", "").lower() == "stdlib":
        return False
    if _READY is None:
        try:
            with adbc_stream(None, "SELECT octet_length('x')") as rdr:
                rdr.read_all()
            _READY = True
        except Exception:  # not installed, or too old
            _READY = False
    return _READY


_READY: bool | None = None


@contextmanager
def adbc_stream(uri: str | None, sql: str) -> Iterator[pa.RecordBatchReader]:
    """The rows of ``sql`` over the database at ``uri`` (an in-memory one for None) as an
    Arrow stream, read in C; driver errors pass through (``adbc_driver_manager.Error`` when
    the statement fails, ``OSError`` from the stream)."""
    import adbc_driver_manager
    import adbc_driver_sqlite

    db = adbc_driver_sqlite.connect(uri)
    try:
        conn = adbc_driver_manager.AdbcConnection(db)
        try:
            stmt = adbc_driver_manager.AdbcStatement(conn)
            try:
                try:
                    stmt.set_options(**{"adbc.sqlite.query.batch_rows": str(BATCH_ROWS)})
                except Exception:  # an older driver: its default batch size
                    pass
                stmt.set_sql_query(sql)
                handle, _ = stmt.execute_query()
                rdr = pa.RecordBatchReader._import_from_c(handle.address)
                try:
                    yield rdr
                finally:
                    rdr.close()
            finally:
                stmt.close()
        finally:
            conn.close()
    finally:
        db.close()


def read_typed(uri: str, sql: str, schema: pa.Schema) -> pa.Table | None:
    """All rows of ``sql`` but its first, a typed dummy row whose first column is NULL (the
    only NULL there), as one table, when every value has the type ``schema`` gives its
    column; None when one has not, or when the read fails (a second, checked read says why)."""
    try:
        with adbc_stream(uri, sql) as rdr:
            if rdr.schema.types != schema.types:  # a value of another type in the first batch
                return None
            data = rdr.read_all()
    except Exception:  # a value of another type further on, or a damaged file
        return None
    first = data.column(0)
    if data.num_rows == 0 or first.null_count != 1 or first[0].is_valid:
        return None
    return data.slice(1)


def read_parts_typed(uri: str, sqls: list[str], schema: pa.Schema) -> pa.Table | None:
    """:func:`read_typed` of each SELECT in ``sqls`` (parts of one table), on as many threads
    (the driver reads without the GIL), the results concatenated in order; None when one
    part is None."""
    if len(sqls) == 1:
        return read_typed(uri, sqls[0], schema)
    results: list[pa.Table | None] = [None] * len(sqls)

    def run(i: int) -> None:
        results[i] = read_typed(uri, sqls[i], schema)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(1, len(sqls))]
    for t in threads:
        t.start()
    run(0)
    for t in threads:
        t.join()
    if any(r is None for r in results):
        return None
    return pa.concat_tables(results)
