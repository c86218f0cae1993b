"""Lowering DuckDB's memory limit for a while (never raising it): past the limit DuckDB
spills its tables and operators to its temporary folder instead of growing.  Also the
memory DuckDB keeps for its blocks, its cached blocks dropped, and the C heap's free pages
given back (:func:`give_back_free_heap`)."""
from __future__ import annotations

import math
import re
from contextlib import contextmanager

from .store import restored_after

_SIZE_RE = re.compile(r"^\s*([\d.]+)\s*([KMGT]?i?B|bytes?)\s*$")


def setting_bytes(text: str) -> float:
    """A DuckDB size setting (``'1.5GB'``, ``'18.8 GiB'``, ``'0 bytes'``) in bytes; infinity
    when it is not one."""
    m = _SIZE_RE.match(str(text))
    if not m:
        return float("inf")
    if m.group(2).startswith("byte"):
        return float(m.group(1))
    unit = m.group(2).upper().replace("I", "")
    return float(m.group(1)) * {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[unit] * (
        1.024 ** {"B": 0, "KB": 1, "MB": 2, "GB": 3, "TB": 4}[unit] if "i" in m.group(2) else 1)


def file_backed(con) -> bool:
    """The connection's current database is a file (an in-memory one holds its rows in
    memory anyway, and has no temporary folder of its own to spill to: a limit there
    would only make large inserts fail)."""
    return bool(con.execute("SELECT path FROM duckdb_databases() "
                            "WHERE database_name = current_database()").fetchall()[0][0])


@contextmanager
def lowered_memory_limit(con, limit: str):
    """Lower DuckDB's memory limit to ``limit`` (never raise it) inside the block, then
    restore it.  The setting is the database instance's: every connection to it sees it.
    Yields the limit in force before, in bytes, when it lowered it (else None)."""
    try:
        current = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        smaller = setting_bytes(limit) < setting_bytes(current)
    except Exception:
        smaller = False
    if not smaller:
        yield None
        return
    con.execute(f"SET memory_limit = '{limit}'")

    def restore(c) -> None:
        # DuckDB shows the limit cut to one decimal ('18.8 GiB'): the default comes back
        # exactly with RESET, a value someone set half a shown step above what is shown (so
        # that it shows the same, and does not shrink a little at every use)
        c.execute("RESET memory_limit")
        if c.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] != current:
            c.execute(f"SET memory_limit = '{_as_shown(current)}'")

    with restored_after(con, restore):
        yield setting_bytes(current)


def keep_block_memory(con, size: int) -> None:
    """Let DuckDB keep up to ``size`` bytes of memory for its buffer blocks once it has used
    them (the ``block_allocator_memory`` setting), instead of giving each freed block back to
    the system and faulting fresh zeroed pages in for the next: a 500 MB trace's ingest spent
    0.8 s less in the kernel (docs/benchmarks.md, "Twentieth session").  That memory stays
    with the database instance until it is closed, and DuckDB refuses to lower the setting:
    it is only ever raised here.  Nothing happens on DuckDB releases without the setting."""
    try:
        current = con.execute("SELECT current_setting('block_allocator_memory')").fetchall()[0][0]
        if size > setting_bytes(current):
            con.execute(f"SET block_allocator_memory = '{int(size)}B'")
    except Exception:  # noqa: BLE001 - a release without the setting: nothing to keep
        pass


#: the limit set for a moment by :func:`release_cached_blocks`
RELEASE_LIMIT = "8MiB"


def release_cached_blocks(con, limit: str | None = None) -> None:
    """Make DuckDB drop the blocks it keeps in memory only as a cache (those of database
    files, which it can read again), by lowering its memory limit for a moment, then set
    ``limit`` (the limit in force; None: the limit shown now): DuckDB keeps the blocks it
    read until its limit is reached, and a lower limit is what makes it evict them now.
    Blocks still in use stay (the first SET fails then, which changes nothing)."""
    if limit is None:
        limit = _as_shown(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
    try:
        con.execute(f"SET memory_limit = '{RELEASE_LIMIT}'")
    except Exception:  # noqa: BLE001 - more than that still in use: nothing was changed
        return
    con.execute(f"SET memory_limit = '{limit}'")


def _as_shown(shown: str) -> str:
    """A limit DuckDB shows as ``shown`` (``'7.4 GiB'``), in bytes."""
    m = _SIZE_RE.match(shown)
    if not m:
        return shown
    return f"{math.floor(setting_bytes(shown) + setting_bytes('0.05 ' + m.group(2)))}B"


def give_back_free_heap() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``; nothing
    elsewhere).  glibc gives back only the free memory at the top of its heap by itself:
    the span engine's large arrays, freed in another order than made, leave the middle of
    the heap free but resident, beside what DuckDB's own allocator takes next
    (docs/benchmarks.md, "Twenty-fourth session")."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        try:
            import ctypes

            _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            pass
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim = None
