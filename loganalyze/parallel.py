"""Parallel ingest: files parsed in worker processes, one writer (``loganalyze ingest --jobs N``).

Each worker parses files with the normal importers (:func:`loganalyze.ingest.ingest_file`)
into its own scratch in-memory database (:class:`~loganalyze.scratch.ScratchStore`, which knows
the destination's files: content already stored is hashed once and never parsed) and ships
each file's rows back as Arrow tables.  The one writer, in this process, inserts each file in
one transaction under the next source id, in input order, so the database holds what a serial
ingest leaves (only the ids differ: a serial ingest also spends one on each rejected file).  At most ``2 * jobs`` files are in flight, so memory stays bounded.

An interrupt stops the writer between or inside files (the file being written is rolled
back), terminates the workers and raises :class:`~loganalyze.ingest.IngestInterrupted` as a
serial ingest does.
"""
from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Iterator

from .cores import usable_cores
from .identity import HEAD_BYTES, StoredSource
from .ingest import IngestInterrupted, IngestOptions, IngestResult, _duplicate, ingest_file
from .inputs import STDIN, Candidate
from .scratch import KnownSource, ScratchStore, known_sources_of
from .signals import signal_exit_code
from .store import Store, finish_results

#: below this much input, worker start-up (about a second) costs more than it saves
PARALLEL_MIN_BYTES = 32 << 20
#: DuckDB threads in each worker process
WORKER_THREADS = 1
#: files per worker task, and bytes after which a task takes no more files
CHUNK_FILES = 16
CHUNK_BYTES = 4 << 20
#: the table holding a file's identity: written last, as a serial ingest does
SOURCES = "sources"
#: the shared dictionary of oneDNN shapes: rows are added when new, never replaced
SHAPES = "onednn_shapes"


def default_jobs() -> int:
    """Worker processes when ``--jobs`` is not given: one per core this process may use."""
    return usable_cores()


def worth_parallel(cands: list[Candidate], jobs: int | None) -> bool:
    """Whether to use workers: more than one file, more than one job, and (with the default
    number of jobs) enough bytes to repay starting them; standard input is always read here."""
    files = [c for c in cands if not c.error]
    if len(files) < 2 or any(c.path == STDIN for c in files):
        return False
    if jobs is not None:
        return jobs > 1
    if default_jobs() < 2:
        return False
    return sum(_size(c) for c in files) >= PARALLEL_MIN_BYTES


@dataclass
class ParsedFile:
    """What a worker sends back for one file: its result and (when ingested) its rows."""

    result: IngestResult
    sha256: str | None = None
    tables: dict = field(default_factory=dict)  # table name -> pyarrow.Table, sources last


# ---------------------------------------------------------------------------- worker side
_WORKER: dict = {}


def _worker_start(known: dict[str, KnownSource]) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the writer's to handle
    store = ScratchStore(known)
    # one thread per worker: the jobs share the cores (DuckDB's own pool would take every core
    # in every worker, and the oversubscribed threads measured ~1.8x the CPU time)
    store.con.execute(f"SET threads = {WORKER_THREADS}")
    _WORKER["store"] = store


def _file_tables() -> list[str]:
    """The tables a file's rows live in (every one with a source_id), sources last."""
    from .dataset.layout import schema_tables

    names = [t for t, cols in schema_tables().items() if any(c.name == "source_id" for c in cols)]
    return [t for t in names if t != SOURCES] + [SOURCES]


def _parse_chunk(paths: list[str], options: IngestOptions) -> list[ParsedFile]:
    """Worker: ingest a few files into the scratch store, take their rows out (one query per
    table for the whole chunk, split per file in Arrow) and clear them from the store again
    (the oneDNN shapes stay: they make later files faster)."""
    import pyarrow.compute as pc

    store: ScratchStore = _WORKER["store"]
    con = store.con
    results = [ingest_file(store, path, options) for path in paths]
    sids = [r.source_id for r in results if r.status == "ingested"]
    if not sids:
        return [ParsedFile(r) for r in results]
    id_list = ", ".join(str(int(i)) for i in sids)
    finish_results(con)
    whole = {SHAPES: con.sql(f"""SELECT m._sid, s.* FROM {SHAPES} s JOIN
                                 (SELECT DISTINCT source_id AS _sid, shape_id FROM onednn_events
                                  WHERE source_id IN ({id_list})) m USING (shape_id)""").to_arrow_table()}
    for table in _file_tables():
        whole[table] = con.sql(f'SELECT * FROM "{table}" WHERE source_id IN ({id_list})').to_arrow_table()
    with store.transaction():  # the store holds this chunk only: empty the tables (fast path)
        for table in _file_tables():
            con.execute(f'DELETE FROM "{table}"')
    out = []
    for res in results:
        if res.status != "ingested":
            out.append(ParsedFile(res))
            continue
        tables = {}
        for table, rows in whole.items():
            key = "_sid" if table == SHAPES else "source_id"
            mine = rows.filter(pc.equal(rows[key], res.source_id))
            if mine.num_rows:
                tables[table] = mine.drop_columns(["_sid"]) if table == SHAPES else mine
        out.append(ParsedFile(res, res.source.get("sha256"), tables))
    return out


# ---------------------------------------------------------------------------- writer side
def _may_extend(store: Store, source: dict) -> bool:
    """Whether a stored source might be a prefix of this file's content (the same first
    :data:`~loganalyze.identity.HEAD_BYTES`, or shorter than that): a worker cannot tell, as
    its scratch store does not hold the database's sources."""
    size = source.get("content_bytes")
    if size is None:
        return False
    return bool(store.con.execute(
        "SELECT count(*) FROM sources WHERE content_bytes < ? AND sha256 <> ? AND (head_sha256 = ? OR content_bytes < ?)",
        [size, source.get("sha256"), source.get("head_sha256"), HEAD_BYTES]).fetchall()[0][0])


def _write(store: Store, parsed: ParsedFile, options: IngestOptions) -> IngestResult:
    """Insert one parsed file in one transaction under the next source id (or report it as a
    duplicate of content another worker's file brought in first)."""
    from .importers.base import insert_arrow

    res = parsed.result
    if res.status == "duplicate":
        return with_format(store, res)
    if res.status != "ingested":
        return res
    if _may_extend(store, res.source):  # the database decides: read it here, as a serial ingest does
        return with_format(store, ingest_file(store, res.path, options))
    with store.transaction():
        dup = store.source_by_sha(parsed.sha256)
        if dup:
            return with_format(store, _duplicate(res.path, StoredSource(*dup)))
        sid = store.next_source_id()
        for table, rows in parsed.tables.items():
            if table == SHAPES:
                insert_arrow(store.con, table, rows,
                             select=f"SELECT * FROM _arrow WHERE shape_id NOT IN (SELECT shape_id FROM {SHAPES})")
            else:
                insert_arrow(store.con, table, rows, select=f"SELECT * REPLACE ({int(sid)} AS source_id) FROM _arrow")
    return replace(res, source_id=sid, source=dict(res.source, source_id=sid))


def with_format(store: Store, res: IngestResult) -> IngestResult:
    """A duplicate with the format of the file that holds its content (other results as they are)."""
    if res.status == "duplicate" and res.format is None and res.source_id is not None:
        row = store.con.execute("SELECT format FROM sources WHERE source_id = ?", [res.source_id]).fetchone()
        if row:
            return replace(res, format=row[0])
    return res


def ingest_results(store: Store, paths: list[str], options: IngestOptions, progress, jobs: int | None
                   ) -> Iterator[IngestResult]:
    """Serial or parallel ingest, as :func:`worth_parallel` decides (always serial with
    ``options.replace``: replacing reads the database); duplicates carry the format of the
    file that holds them.  ``progress``: a serial ingest's progress factory (with workers: one
    bar over all files when given)."""
    from .ingest import ingest_paths
    from .inputs import expand_paths

    cands = expand_paths(paths)
    if not options.replace and worth_parallel(cands, jobs):
        yield from parallel_ingest(store, cands, options, jobs=jobs, show_progress=bool(progress))
        return
    for res in ingest_paths(store, paths, run_label=options.run_label, progress_factory=progress,
                            max_expand=options.max_expand, replace=options.replace):
        yield with_format(store, res)


def parallel_ingest(store: Store, cands: list[Candidate], options: IngestOptions, jobs: int | None = None,
                    show_progress: bool = False) -> Iterator[IngestResult]:
    """Ingest the expanded inputs ``cands`` with ``jobs`` worker processes (default: one per
    core) and this process as the one writer; one result per file, in input order.
    ``show_progress`` draws one bar on standard error (files/s and MB/s)."""
    jobs = jobs or default_jobs()
    bar = _bar(cands) if show_progress else None
    try:
        yield from _run(store, cands, options, jobs, bar)
    finally:
        if bar is not None:
            bar.close()


def _bar(cands: list[Candidate]):
    from .ingest_report import FilesBar

    return FilesBar(sum(_size(c) for c in cands), len(cands))


def _size(cand: Candidate) -> int:
    try:
        return 0 if cand.error else os.stat(cand.path).st_size
    except OSError:
        return 0


def _chunks(cands: list[Candidate]) -> Iterator[list[Candidate]]:
    """Consecutive inputs in groups of up to :data:`CHUNK_FILES` files and about
    :data:`CHUNK_BYTES` (a big file goes alone): small files share a worker round trip."""
    chunk: list[Candidate] = []
    total = 0
    for cand in cands:
        size = _size(cand)
        if chunk and (len(chunk) >= CHUNK_FILES or total + size > CHUNK_BYTES):
            yield chunk
            chunk, total = [], 0
        chunk.append(cand)
        total += size
    if chunk:
        yield chunk


def _run(store: Store, cands: list[Candidate], options: IngestOptions, jobs: int, bar) -> Iterator[IngestResult]:
    import multiprocessing

    known = known_sources_of(store.con)
    ctx = multiprocessing.get_context("spawn")  # never fork a process holding DuckDB's threads
    done: list[IngestResult] = []
    with ctx.Pool(jobs, initializer=_worker_start, initargs=(known,)) as pool:
        queue: deque = deque()  # (candidates of a chunk, the worker's job or None)
        chunks = _chunks(cands)

        def submit() -> None:
            chunk = next(chunks, None)
            if chunk is not None:
                paths = [c.path for c in chunk if not c.error]
                queue.append((chunk, pool.apply_async(_parse_chunk, (paths, options)) if paths else None))

        for _ in range(2 * jobs):
            submit()
        while queue:
            chunk, job = queue[0]
            pos, parsed = 0, []
            try:
                parsed = _parsed_chunk(chunk, job)
                for pos, (cand, one) in enumerate(zip(chunk, parsed)):
                    res = _write(store, one, options)
                    done.append(res)
                    if bar is not None:
                        bar.file_done(_size(cand))
                    yield res
            except KeyboardInterrupt as exc:
                pool.terminate()
                one = parsed[pos] if pos < len(parsed) else None  # a signal during COMMIT may land after it
                stored = bool(one and one.sha256 and store.source_by_sha(one.sha256))
                stop = IngestInterrupted(chunk[pos].path, stored, signal_exit_code(exc))
                stop.done = done
                stop.not_read = [c.path for c in chunk[pos + 1:]] + \
                    [c.path for ch, _ in list(queue)[1:] for c in ch] + [c.path for ch in chunks for c in ch]
                raise stop from None
            queue.popleft()
            submit()


def _parsed_chunk(chunk: list[Candidate], job) -> list[ParsedFile]:
    """A worker's answers for ``chunk``, one per candidate; a worker that failed (a bug, or
    killed) is one line about each of its files, as a serial ingest reports a bug."""
    answers: list[ParsedFile] = []
    if job is not None:
        try:
            answers = job.get()
        except Exception as exc:
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            answers = [ParsedFile(IngestResult(c.path, "error", f"{c.path}: internal error ({msg}); "
                                                                "nothing was ingested from it"))
                       for c in chunk if not c.error]
    found = iter(answers)
    return [ParsedFile(IngestResult(c.path, "error", c.error)) if c.error else next(found) for c in chunk]
