"""Which content a dataset holds, and claims that keep two writers from adding the same file.

A file's identity is its ``sources.sha256``.  Before a writer adds a file it claims the hash by
creating ``DIR/_claims/<sha256>`` exclusively (``O_CREAT | O_EXCL``, atomic on every local
and network file system that matters); the claim stays once the file is written, and is
removed again when writing fails.  A second writer of the same content finds the claim and
adds nothing.  (A writer killed with SIGKILL can leave a claim without data: remove the file
``DIR/_claims/<sha256>`` to let that content in again.)
"""
from __future__ import annotations

import os
from pathlib import Path

from ..scratch import KnownSource
from .layout import CLAIMS_DIR, has_parts, table_glob


def known_sources(root: str | os.PathLike) -> dict[str, KnownSource]:
    """Every file in the dataset's ``sources`` parts, by content hash."""
    if not has_parts(root, "sources"):
        return {}
    import duckdb

    from ..store import CONNECT_CONFIG

    glob = table_glob(root, "sources").replace("'", "''")
    with duckdb.connect(":memory:", config=CONNECT_CONFIG) as con:
        rows = con.execute(
            f"""SELECT sha256, any_value(source_id), any_value(path), any_value(run_label), any_value(size_bytes),
                       any_value(format)
                FROM read_parquet('{glob}', hive_partitioning = false, union_by_name = true)
                GROUP BY sha256""").fetchall()
    return {sha: KnownSource(sid, path, run, size, fmt) for sha, sid, path, run, size, fmt in rows}


def claim(root: str | os.PathLike, sha256: str) -> bool:
    """Claim ``sha256`` for this writer; False when another writer holds it already."""
    directory = Path(root) / CLAIMS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(directory / sha256, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    os.write(fd, f"{os.getpid()}\n".encode())
    os.close(fd)
    return True


def release(root: str | os.PathLike, sha256s) -> None:
    """Give claims back (their content was not written)."""
    for sha in sha256s:
        (Path(root) / CLAIMS_DIR / sha).unlink(missing_ok=True)
