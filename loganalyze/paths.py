"""Which files the paths named on the command line stand for: files, globs, directories
(recursively) and standard input; what cannot be read is said, never skipped quietly."""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass

#: our own database files are never inputs when a directory is expanded
DATABASE_SUFFIXES = (".duckdb", ".duckdb.wal")
#: the path that names standard input
STDIN = "-"


@dataclass
class Candidate:
    """A path named on the command line, expanded; ``error`` set when it cannot be read."""

    path: str
    error: str | None = None


def expand_paths(args: list[str]) -> list[Candidate]:
    """Files, globs and directories (recursively, hidden files left out) in a stable order;
    ``-`` (standard input) passes through."""
    out: list[Candidate] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            out.append(Candidate(p))

    for arg in args:
        if arg == STDIN:
            if arg not in seen:
                seen.add(arg)
                out.append(Candidate(arg))
        elif os.path.isdir(arg):
            found, unreadable = _walk(arg)
            if not found and not unreadable:
                out.append(Candidate(arg, f"{arg}: directory holds no files"))
            for f in found:
                add(f)
            out.extend(unreadable)
        elif os.path.exists(arg):
            add(arg)
        elif any(ch in arg for ch in "*?["):
            matches = sorted(glob.glob(arg, recursive=True))
            files = [m for m in matches if os.path.isfile(m)]
            if not files:
                out.append(Candidate(arg, f"{arg}: no file matches this pattern"))
            for f in files:
                add(f)
        else:
            out.append(Candidate(arg, f"{arg}: no such file or directory"))
    return out


def _walk(top: str) -> tuple[list[str], list[Candidate]]:
    """The files under directory ``top`` (hidden ones left out), and a :class:`Candidate`
    with an error for each directory that cannot be read."""
    found: list[str] = []
    unreadable: list[Candidate] = []

    def failed(exc: OSError) -> None:
        where = exc.filename or top
        unreadable.append(Candidate(where, f"{where}: cannot read directory ({exc.strerror or exc})"))

    for root, dirs, files in os.walk(top, onerror=failed):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(root, f) for f in sorted(files) if _walked_file(f))
    return found, unreadable


def _walked_file(name: str) -> bool:
    """Whether a file of a directory is read: not hidden, not a database."""
    return not name.startswith(".") and not name.endswith(DATABASE_SUFFIXES)


def only_file(arg: str) -> str | None:
    """The one file :func:`expand_paths` gives for ``arg`` when that is a file, or a directory
    holding one file and no directory (HTA's trace folders): looked up without a walk, for
    what the CLI does before its imports; else None (standard input too)."""
    if arg == STDIN:
        return None
    if os.path.isfile(arg):
        return arg
    if not os.path.isdir(arg):
        return None
    try:
        with os.scandir(arg) as it:
            entries = [e for e in it if not e.name.startswith(".")]
        files = [e for e in entries if e.is_file() and _walked_file(e.name)]
        if len(files) != 1 or any(e.is_dir() for e in entries):
            return None
    except OSError:
        return None
    return os.path.join(arg, files[0].name)
