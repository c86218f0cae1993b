"""What one side of a comparison names: a run label in the database, a database file, raw
files (ingested into a temporary in-memory database), or ``@last-good`` / ``@previous`` /
``@latest`` (runs of the database, oldest first by first ingest).

``open_side(spec, db_path)`` returns ``(con, label, runs, cleanup)``: the connection to
read, the side's label for reports, the run labels to read (None: every file of the
database) and a function closing what was opened for this side.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import Callable

from .. import runmeta

SPECIAL = ("@last-good", "@previous", "@latest")
_DUCKDB_MAGIC = b"DUCK"


class SideError(ValueError):
    """A side that names nothing usable; worth one line to the user."""


@dataclass
class Side:
    """One side of a comparison."""

    con: object
    label: str
    runs: list[str] | None
    kind: str                      # run | database | files
    cleanup: Callable[[], None]


def is_database_file(path: str) -> bool:
    """A DuckDB database file (by its header), whatever its name."""
    try:
        with open(path, "rb") as fh:
            return fh.read(12)[8:12] == _DUCKDB_MAGIC
    except OSError:
        return False


def _open_store(path: str, read_only: bool):
    from ..store import Store, StoreError

    try:
        return Store(path, read_only=read_only)
    except StoreError as exc:
        raise SideError(str(exc)) from None


class SideOpener:
    """Opens sides, sharing one connection to ``db_path`` between them; ``close()`` closes all."""

    def __init__(self, db_path: str | None, writable: bool = False, store=None):
        """``store``: an open :class:`~loganalyze.store.Store` to use as the ``--db`` database
        (a :class:`loganalyze.Database` passes its own; it is not closed here)."""
        self.db_path = db_path if store is None else store.path
        self.writable = writable
        self._db = store
        self._closers: list[Callable[[], None]] = []

    def database(self):
        """The ``--db`` store (opened on first use), or None when it does not exist."""
        if self._db is None:
            from ..store import default_db_path

            path = self.db_path or default_db_path()
            if not os.path.exists(path):
                return None
            self._db = _open_store(path, read_only=not self.writable)
            self._closers.append(self._db.close)
        return self._db

    def open(self, spec: str, other_label: str | None = None) -> Side:
        """Resolve ``spec``; ``other_label`` is the candidate's label (``@last-good`` skips it)."""
        if spec in SPECIAL:
            return self._special(spec, other_label)
        if os.path.isfile(spec) and is_database_file(spec):
            if self.database() is not None and os.path.abspath(spec) == os.path.abspath(self._db.path):
                return Side(self._db.con, os.path.basename(spec), None, "database", lambda: None)
            store = _open_store(spec, read_only=True)
            self._closers.append(store.close)
            return Side(store.con, os.path.basename(spec), None, "database", store.close)
        db = self.database() if not os.path.exists(spec) or self.db_path else None
        if db is not None and spec in runmeta.run_labels(db.con):
            return Side(db.con, spec, [spec], "run", lambda: None)
        files = [p for part in spec.split(",") if part for p in (glob.glob(part) or [part])]
        if files and all(os.path.exists(p) for p in files):
            return self._ingest(spec, files)
        where = f" in {db.path}" if db is not None else ""
        raise SideError(f"{spec}: no such run{where}, database file or log file")

    def _special(self, spec: str, other_label: str | None) -> Side:
        db = self.database()
        if db is None:
            raise SideError(f"{spec}: needs a database (--db)")
        labels = runmeta.run_labels(db.con)
        if spec == "@latest":
            label = labels[-1] if labels else None
        elif spec == "@previous":
            before = labels[:labels.index(other_label)] if other_label in labels else labels[:-1]
            label = before[-1] if before else None
        else:
            label = runmeta.last_good(db.con, exclude=other_label)
        if label is None:
            raise SideError(f"{spec}: no such run in {db.path}")
        return Side(db.con, label, [label], "run", lambda: None)

    def _ingest(self, spec: str, files: list[str]) -> Side:
        from ..ingest import ingest_paths

        store = _open_store(":memory:", read_only=False)
        self._closers.append(store.close)
        errors = [r.message for r in ingest_paths(store, files, run_label=spec) if r.status == "error"]
        if errors:
            raise SideError(errors[0])
        return Side(store.con, spec, None, "files", store.close)

    def close(self) -> None:
        """Close every connection this opener made."""
        for close in reversed(self._closers):
            close()
        self._closers.clear()
        self._db = None

    def __enter__(self) -> "SideOpener":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_side(spec: str, db_path: str | None = None, other_label: str | None = None):
    """Open one side on its own: ``(con, label, runs, cleanup)`` (see the module docstring)."""
    opener = SideOpener(db_path)
    try:
        side = opener.open(spec, other_label)
    except BaseException:
        opener.close()
        raise
    return side.con, side.label, side.runs, opener.close
