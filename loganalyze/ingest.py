"""Ingest files into the store: one transaction per file, nothing half-written.

Used by the CLI and usable as a library::

    from loganalyze.store import Store
    from loganalyze.ingest import ingest_paths
    with Store("runs.duckdb") as store:
        for result in ingest_paths(store, ["mkldnn_verbose.log"], run_label="baseline"):
            print(result.status, result.message)
"""
from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Callable, Iterator

import duckdb

from . import tempfiles
from .version import __version__
from .identity import StoredSource, duplicate_of, extended_sources, head_sha256, maybe_duplicate
from .importers import IngestContext, candidate_importers, fallback_importer, known_formats
from .importers.base import MemoryRoom
from .memory_limit import file_backed, lowered_memory_limit, setting_bytes
from .inputs import DEFAULT_MAX_EXPAND, FileRefused, InputError, InputFile, expand_paths, is_probably_binary
from .schema.derived import derive
from .signals import is_interrupt, signal_exit_code
from .store import Store

SOURCE_COLUMNS = [
    "source_id", "path", "name", "size_bytes", "sha256", "compression", "format", "dialect",
    "library_version", "isa", "runtime", "run_label", "lines_total", "lines_parsed",
    "lines_non_verbose", "lines_skipped", "crlf_lines", "ends_with_newline", "segments",
    "warnings", "loganalyze_version", "truncated", "file_sha256", "content_bytes", "head_sha256",
]

#: files of at least this many bytes (decompressed) are committed without merging partly
#: filled row groups (:func:`loganalyze.store.row_group_merges`): they add many full row
#: groups per table, and the next commit of a smaller file merges what they leave
UNMERGED_MIN_BYTES = 64 << 20


def _content_size(file: InputFile) -> int:
    return file.content_bytes if file.content_bytes is not None else file.size


@dataclass
class IngestResult:
    path: str
    #: ingested | duplicate (same content stored) | extends (the content of a stored source,
    #: and more: not ingested without ``replace``) | error
    status: str
    message: str = ""
    source_id: int | None = None
    format: str | None = None
    warnings: list[str] = field(default_factory=list)
    source: dict = field(default_factory=dict)
    #: the sources this one replaced (``replace=True``), each ``source N (path) in run 'x'``
    replaced: list[str] = field(default_factory=list)


@dataclass
class IngestOptions:
    """How files are taken in: the run label, the decompression limit (``max_expand``,
    0 for none) and whether a file extending a stored source replaces it (``replace``)."""

    run_label: str | None = None
    max_expand: float = DEFAULT_MAX_EXPAND
    replace: bool = False


class IngestInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM during an ingest: the file in progress was rolled back (or, when the
    signal came during its commit, is stored whole: ``stored``), nothing further was read."""

    def __init__(self, path: str, stored: bool, exit_code: int = 130):
        super().__init__(path)
        self.path, self.stored, self.exit_code = path, stored, exit_code
        self.done: list[IngestResult] = []
        self.not_read: list[str] = []

    def summary(self) -> str:
        """One line: what was ingested, what happened to the file in progress, what was not read."""
        ok = sum(1 for r in self.done if r.status == "ingested")
        now = (f"{self.path} was stored whole before the interrupt" if self.stored
               else f"{self.path} was rolled back (nothing of it stored)")
        return (f"interrupted: {ok} file(s) ingested before it; {now}; "
                f"{len(self.not_read)} more file(s) not read")


def ingest_paths(
    store: Store,
    paths: list[str],
    run_label: str | None = None,
    progress_factory: Callable[[InputFile], Callable[[int], None] | None] | None = None,
    max_expand: float = DEFAULT_MAX_EXPAND,
    replace: bool = False,
) -> Iterator[IngestResult]:
    """One result per file, as each is done.  An interrupt raises :class:`IngestInterrupted`
    carrying what was done and what was not read.  ``max_expand``: the most a compressed
    file may decompress to, in times its size (past the first MBs; 0: no limit);
    ``replace``: a file extending a stored source replaces it (see :mod:`loganalyze.identity`).
    Temporary files left by killed runs are removed first."""
    options = IngestOptions(run_label, max_expand, replace)
    tempfiles.sweep_stale()
    cands = expand_paths(paths)
    done: list[IngestResult] = []
    for i, cand in enumerate(cands):
        if cand.error:
            res = IngestResult(cand.path, "error", cand.error)
        else:
            try:
                res = ingest_file(store, cand.path, options, progress_factory)
            except KeyboardInterrupt as exc:
                # before the file's transaction began (sniffing, hashing): nothing of it stored
                stop = exc if isinstance(exc, IngestInterrupted) else IngestInterrupted(
                    cand.path, False, signal_exit_code(exc))
                stop.done = done
                stop.not_read = [c.path for c in cands[i + 1:]]
                raise stop from None
        done.append(res)
        yield res


def ingest_file(store: Store, path: str, options: IngestOptions | str | None = None,
                progress_factory=None) -> IngestResult:
    """Ingest one file (see :func:`ingest_paths`); ``options`` may be just a run label."""
    if not isinstance(options, IngestOptions):
        options = IngestOptions(run_label=options)
    file = None
    try:
        file = InputFile(path, max_expand=options.max_expand)
        path = file.path  # what messages name: "<stdin>" for "-"
        if file.size == 0:
            raise InputError(f"{path}: empty file")
        head = file.head()
        if file.compression == "gzip" and not head:
            raise InputError(f"{path}: gzip stream is cut off or corrupt")
        if not head:
            raise InputError(f"{path}: empty file")
        # binary formats (SQLite) are claimed by their importers before the binary check
        candidates = candidate_importers(head, file.name)
        if not candidates:
            if is_probably_binary(head):
                raise InputError(f"{path}: binary file, not a text log")
        if not is_probably_binary(head) and not any(c.format == fallback_importer().format for c in candidates):
            candidates.append(fallback_importer())
        if maybe_duplicate(store.con, file):  # cheap pre-check before reading it all
            dup = duplicate_of(store.con, file)
            if dup:
                return _duplicate(path, dup)
        extends = extended_sources(store.con, file, head)
        if extends:
            dup = duplicate_of(store.con, file)
            if dup:
                return _duplicate(path, dup)
            if not options.replace:
                return _extends(path, extends)
        claimed = any(c.format != fallback_importer().format for c in candidates) or \
            fallback_importer().sniff(head, file.name) > 0
        first_error: InputError | None = None
        for importer in candidates:  # most likely first; the next one when it finds nothing it reads
            try:
                sid, row, ctx = _ingest_with(store, file, path, importer, options.run_label, progress_factory,
                                             head, extends)
                break
            except FileRefused:
                raise
            except InputError as exc:
                first_error = first_error or exc
            except Exception as exc:
                if is_interrupt(exc):
                    raise _interrupted(store, file, path, exc) from None
                raise
            except KeyboardInterrupt as exc:
                raise _interrupted(store, file, path, exc) from None
        else:
            if not claimed:
                raise InputError(f"{path}: not a recognised format (tried: {', '.join(known_formats())})")
            raise first_error or InputError(f"{path}: no reader for this file")
        return IngestResult(path, "ingested", source_id=sid, format=importer.format,
                            warnings=ctx.warnings, source=row, replaced=[s.describe() for s in extends])
    except _Duplicate as d:
        return _duplicate(path, d.source)
    except InputError as exc:
        return IngestResult(path, "error", str(exc))
    except MemoryError:
        return IngestResult(path, "error", f"{path}: out of memory while reading")
    except duckdb.Error as exc:
        msg = " ".join(str(exc).split())[:300]
        return IngestResult(path, "error", f"{path}: database error: {msg}")
    except OSError as exc:
        return IngestResult(path, "error", f"{path}: cannot read: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:  # bytes that are not UTF-8 where a reader needed text
        return IngestResult(path, "error", f"{path}: text that is not UTF-8 where the format needs it "
                                           f"({exc.reason} at byte {exc.start}); nothing was ingested from it")
    except Exception as exc:  # a bug: still one line, and the file was rolled back
        msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        return IngestResult(path, "error", f"{path}: internal error ({msg}); nothing was ingested from it")
    finally:
        if file is not None:
            file.close()  # a spooled standard input goes away


def _interrupted(store: Store, file: InputFile, path: str, exc: BaseException) -> IngestInterrupted:
    """The interrupt, with the truth about the file in progress: a signal during COMMIT may
    land after the commit took effect, so the database is asked."""
    stored = False
    if file.has_sha256:
        try:
            stored = store.source_by_sha(file.sha256) is not None
        except duckdb.Error:
            stored = False
    return IngestInterrupted(path, stored, signal_exit_code(exc))


def _duplicate(path: str, src: StoredSource) -> IngestResult:
    """The result for content already in the database: which source, file and run hold it."""
    return IngestResult(path, "duplicate", f"{path}: already ingested as {src.describe()}",
                        source_id=src.source_id)


def _extends(path: str, sources: list[StoredSource]) -> IngestResult:
    """The result for a file whose content starts with the whole content of stored sources."""
    which = "; ".join(s.describe() for s in sources)
    return IngestResult(path, "extends", f"{path}: extends {which} (the same content with more after it); "
                        "--replace to swap it in", source_id=sources[0].source_id)


def _ingest_with(store, file, path, importer, run_label, progress_factory, head: bytes,
                 replaces: list[StoredSource]):
    """One importer, one transaction: the sources row is written last; the sources in
    ``replaces`` are removed in the same transaction."""
    sid = store.next_source_id()
    ctx = IngestContext(con=store.con, source_id=sid, file=file,
                        progress=progress_factory(file) if progress_factory else None)
    limit = getattr(importer, "memory_limit", None)
    with ExitStack() as limits:
        if limit and file_backed(store.con):
            ceiling = limits.enter_context(lowered_memory_limit(store.con, limit))
            if ceiling is not None:
                ctx.memory = MemoryRoom(setting_bytes(limit), ceiling)
        with store.transaction(merge_row_groups=bool(replaces) or _content_size(file) < UNMERGED_MIN_BYTES):
            try:
                importer.ingest(ctx)
                ctx.settle()
            finally:
                ctx.close()  # the connection free again, even on the way to a ROLLBACK
            derive(store.con, sid)
            ctx.note_damage()
            file.check_unchanged()
            dup = duplicate_of(store.con, file)
            if dup:
                raise _Duplicate(dup)
            if replaces:
                from .query.catalog import remove_sources

                remove_sources(store.con, [s.source_id for s in replaces])
            row = dict.fromkeys(SOURCE_COLUMNS)
            row.update(ctx.source)
            row.update(
                source_id=sid, path=file.source_path, name=file.name, size_bytes=file.size,
                sha256=file.sha256, compression=file.compression, format=importer.format,
                run_label=run_label, warnings=ctx.warnings, loganalyze_version=__version__,
                truncated=bool(ctx.source.get("truncated")), file_sha256=file.file_sha256,
                content_bytes=file.content_bytes, head_sha256=head_sha256(head),
            )
            store.con.execute(
                f"INSERT INTO sources ({', '.join(SOURCE_COLUMNS)}) VALUES ({', '.join('?' * len(SOURCE_COLUMNS))})",
                [row[c] for c in SOURCE_COLUMNS],
            )
    return sid, row, ctx


class _Duplicate(Exception):
    def __init__(self, source: StoredSource):
        super().__init__("duplicate")
        self.source = source
