"""The Python API: one :class:`Database` under both the library and the ``loganalyze`` command.

>>> import loganalyze
>>> db = loganalyze.connect(":memory:")
>>> results = db.ingest(["samples/onednn/dnnl_v1_style.log"], run="nightly-42")
>>> db.summary(by="kind", top=2)[["kind", "exec_count"]]          # doctest: +SKIP

Every query method returns a :class:`pandas.DataFrame` with the same columns and values as
the command's ``--format json`` output.  ``output="rows"`` returns a :class:`Rows` instead
(columns and tuples), for callers that want to avoid importing pandas (the CLI does, to start
fast).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal, Mapping, Sequence

from .comparisons import Comparisons
from .errors import LoganalyzeError
from .query.errors import QueryError
from .store import DEFAULT_WAIT_S, Store, StoreError, default_db_path

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from .dataset.export import DatasetExport
    from .export import ExportStats
    from .ingest import IngestResult

Output = Literal["pandas", "rows"]


@dataclass
class Rows:
    """Column names and row tuples: a query result without pandas."""

    columns: list[str]
    rows: list[tuple]

    def records(self) -> list[dict[str, Any]]:
        """One dict per row."""
        return [dict(zip(self.columns, r)) for r in self.rows]

    def to_pandas(self) -> "pandas.DataFrame":
        """A DataFrame; integer columns with missing values stay integers (``Int64``)."""
        import pandas as pd

        df = pd.DataFrame.from_records(self.rows, columns=self.columns)
        for i in range(len(self.columns)):
            vals = [r[i] for r in self.rows]
            if None in vals and any(type(v) is int for v in vals) and all(v is None or type(v) is int for v in vals):
                try:
                    df.isetitem(i, pd.array(vals, dtype="Int64"))
                except (OverflowError, TypeError, ValueError):  # beyond int64: keep Python ints
                    df.isetitem(i, pd.Series(vals, dtype=object))
        return df

    def __len__(self) -> int:
        return len(self.rows)


def _clean(value):
    """Floats without summation noise: 15 significant digits (190.76999999999998 -> 190.77)."""
    if isinstance(value, float) and value == value and value not in (float("inf"), float("-inf")):
        return float(f"{value:.15g}")
    return value


def _out(cols: list[str], rows: list[tuple], output: Output):
    rows = [tuple(_clean(v) for v in r) for r in rows]
    result = Rows(list(cols), rows)
    if output == "rows":
        return result
    if output != "pandas":
        raise LoganalyzeError(f"unknown output {output!r}; choose 'pandas' or 'rows'")
    return result.to_pandas()


def _compact(fam, keys: list[str], cols: list[str], rows: list[tuple]):
    """The key columns and the family's main statistics (``COMPACT``), in result order."""
    compact = getattr(fam, "COMPACT", None)
    if not compact:
        return cols, rows
    keep = [i for i, c in enumerate(cols) if c in keys or c in compact]
    return [cols[i] for i in keep], [tuple(r[i] for i in keep) for r in rows]


def _keys(by: str | Sequence[str] | None) -> list[str] | None:
    if by is None:
        return None
    if isinstance(by, str):
        by = by.replace(" ", ",").split(",")
    keys = [k.strip() for k in by if k and k.strip()]
    if not keys:
        raise LoganalyzeError("--by needs at least one key")
    return keys


@dataclass
class FamilySummary:
    """One family's answer when :meth:`Database.summaries` is asked for every family present."""

    family: str
    by: list[str]
    result: Any  # DataFrame or Rows


class Database(Comparisons):
    """One loganalyze database (a DuckDB file, or ``":memory:"``).

    Use :func:`loganalyze.connect` to open one; close it with :meth:`close` or a ``with`` block.
    """

    def __init__(self, path: str | os.PathLike | None = None, read_only: bool = False,
                 wait: float = DEFAULT_WAIT_S, on_wait: Callable[[str], None] | None = None,
                 dataset: str | os.PathLike | None = None):
        self.dataset: str | None = None
        if dataset is not None:
            self._store = _open_dataset(dataset)
            self.dataset = self._store.path
            read_only = True
        else:
            try:
                self._store = Store(path, read_only=read_only, wait=wait, on_wait=on_wait,
                                    engine_only=read_only)
            except StoreError as exc:
                raise LoganalyzeError(str(exc)) from None
        self.path: str = self._store.path
        self.read_only: bool = read_only

    # ------------------------------------------------------------------ basics
    @property
    def con(self):
        """The underlying ``duckdb.DuckDBPyConnection`` (for SQL the API does not cover)."""
        import duckdb  # noqa: F401  (a read-only database is opened without the package: its API)

        return self._store.con

    @property
    def _con(self):
        """The connection for the query layer's plain SQL (no ``duckdb`` package import)."""
        return self._store.con

    def close(self) -> None:
        """Close the database (further calls fail)."""
        self._store.close()

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<loganalyze.Database {self.path!r}{' read-only' if self.read_only else ''}>"

    # ------------------------------------------------------------------ ingest
    def iter_ingest(self, paths: str | os.PathLike | Iterable[str | os.PathLike], run: str | None = None,
                    progress: Callable[[Any], Callable[[int], None] | None] | None = None,
                    commit: str | None = None, branch: str | None = None,
                    tags: Mapping[str, str] | Sequence[str] | None = None,
                    max_expand: float | None = None, replace: bool = False,
                    jobs: int | None = None) -> Iterator["IngestResult"]:
        """Ingest files, globs, directories or ``-`` (standard input), one transaction per file,
        yielding an :class:`~loganalyze.ingest.IngestResult` as each file is done.

        With a ``run`` label, the run's metadata is recorded once files are in: host, git commit
        and branch (``commit``/``branch``, else detected from the git checkout of the working
        directory), ``tags`` (a mapping or ``key=value`` strings, merged with ``$LOGANALYZE_TAGS``)
        and the library versions the files' headers name.  ``progress`` is called with each
        input file and may return a callback taking the number of bytes read so far (the CLI
        draws its progress bar with it).  An interrupt raises
        :class:`~loganalyze.ingest.IngestInterrupted` saying what was and was not ingested.
        ``max_expand``: how many times its size a compressed file may decompress to (past its
        first 16 MB; default 100, 0 for no limit).  ``replace``: a file whose content extends
        a stored source (the same log with lines appended) replaces it in the same
        transaction; without it such a file is not ingested (status ``extends``).  ``jobs``:
        worker processes that parse files while this process writes (see
        :mod:`loganalyze.parallel`; ``None``: one per core for several files over 32 MB,
        ``1``: none; never with ``replace``)."""
        from . import runmeta
        from .ingest import IngestOptions
        from .inputs import DEFAULT_MAX_EXPAND
        from .parallel import ingest_results

        self._writable()
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        try:
            tag_map = dict(tags) if isinstance(tags, Mapping) else runmeta.parse_tags(list(tags or []))
        except runmeta.TagError as exc:
            raise LoganalyzeError(str(exc)) from None
        landed = False
        try:
            options = IngestOptions(run, DEFAULT_MAX_EXPAND if max_expand is None else max_expand, replace)
            for res in ingest_results(self._store, [os.fspath(p) for p in paths], options, progress, jobs):
                landed = landed or res.status in ("ingested", "duplicate")
                yield res
        finally:
            if run is not None and landed:
                runmeta.record(self.con, run, commit=commit, branch=branch, tags=tag_map)

    def ingest(self, paths: str | os.PathLike | Iterable[str | os.PathLike], run: str | None = None,
               progress: Callable[[Any], Callable[[int], None] | None] | None = None,
               commit: str | None = None, branch: str | None = None,
               tags: Mapping[str, str] | Sequence[str] | None = None,
               max_expand: float | None = None, replace: bool = False, jobs: int | None = None) -> list["IngestResult"]:
        """Ingest files (see :meth:`iter_ingest`) and return one result per file."""
        return list(self.iter_ingest(paths, run=run, progress=progress, commit=commit, branch=branch, tags=tags,
                                     max_expand=max_expand, replace=replace, jobs=jobs))

    # ------------------------------------------------------------------ questions
    def summary(self, by: str | Sequence[str] | None = None, run: str | None = None,
                source: int | str | Sequence[int | str] | None = None, top: int | None = None,
                family: str | None = None, names: str | None = None, wide: bool = True,
                output: Output = "pandas"):
        """Where the time went, grouped by ``by`` keys and sorted by time.

        ``by``: comma-separated keys or a list (oneDNN: ``kind, impl, prop, shape, engine, alg,
        dtype, mds, attrs, aux``; GPU: ``kernel, memcpy, api, nvtx, op`` with ``grid, block,
        device, stream, shapes, domain``; traces: ``op, category, thread, process, shape, dtype,
        step``; every family: ``source, run``).  ``wide=False`` keeps the key columns and the
        family's main statistics (the CLI's table columns).  Without ``by``, the default key of the only
        family present (several families present: name one with ``family`` or use
        :meth:`summaries`).  ``run`` and ``source`` (ids, names or paths) restrict the files;
        ``top`` keeps the N groups with the most time; ``names`` picks GPU name forms (raw,
        demangled, short, mangled)."""
        from . import query

        keys = _keys(by)
        if top is not None and top < 0:
            raise LoganalyzeError(f"top must be 0 or more, not {top}")
        con = self._con
        try:
            ids = self._filters(run, source)
            if keys is None:
                fams = query.families_present(con)
                if family:
                    fam = query.family_for(con, [], family)
                elif len(fams) == 1:
                    fam = fams[0]
                elif not fams:
                    raise QueryError(self._empty_message())
                else:
                    raise QueryError("the database holds several families ("
                                     + ", ".join(f.FAMILY for f in fams)
                                     + "): choose one with --by or --family")
                keys = [k.strip() for k in fam.DEFAULT_BY.split(",")]
            else:
                fam = query.family_for(con, keys, family)
            opts = {"names": names} if names else {}
            cols, rows = fam.summary(con, keys, run=run, top=top or None, source_ids=ids, wide=wide, **opts)
            if not rows:
                raise query.no_data(con, fam, keys, filtered=bool(ids or run))
        except QueryError as exc:
            raise LoganalyzeError(str(exc)) from None
        if not wide:
            cols, rows = _compact(fam, keys, cols, rows)
        return _out(cols, rows, output)

    def summaries(self, run: str | None = None, source: int | str | Sequence[int | str] | None = None,
                  top: int | None = None, wide: bool = True, output: Output = "pandas") -> list[FamilySummary]:
        """The default summary of every family with data in the selected files (one per family),
        in the order oneDNN, traces, GPU, framework tables."""
        from . import query

        try:
            ids = self._filters(run, source)
            fams = query.families_present(self._con)
        except QueryError as exc:
            raise LoganalyzeError(str(exc)) from None
        out = []
        for fam in fams:
            keys = fam.DEFAULT_BY.split(",")
            try:
                cols, rows = fam.summary(self._con, keys, run=run, top=top or None, source_ids=ids, wide=wide)
            except QueryError as exc:
                raise LoganalyzeError(str(exc)) from None
            if rows:
                if not wide:
                    cols, rows = _compact(fam, keys, cols, rows)
                out.append(FamilySummary(fam.FAMILY, keys, _out(cols, rows, output)))
        if not out:
            raise LoganalyzeError(self._empty_message(bool(ids or run)))
        return out

    def benchdnn(self, top: int = 10, run: str | None = None,
                 source: int | str | Sequence[int | str] | None = None) -> list[tuple[str, str]]:
        """benchdnn reproducers for the oneDNN primitives with the most exec time:
        ``(comment, command line)`` pairs, as oneDNN's verbose_converter prints them."""
        from .query import onednn_summary
        from .query.benchdnn import benchdnn_line

        res = self.summary(by=onednn_summary.PRIMITIVE_KEYS, run=run, source=source, top=top or 10,
                           family="onednn", output="rows")
        out = []
        for row in res.records():
            if row["exec_count"] == 0 and row["create_count"] == 0:
                continue
            comment = f"# {row['kind']}: {row['exec_count']} execs, {row['exec_ms']:.6g} ms ({row['share_pct']:.1f}%)"
            out.append((comment, benchdnn_line(row["engine"], row["kind"], row["impl"], row["prop"], row["mds"],
                                               row["attrs"], row["aux"], row["shape"])))
        return out

    def sql(self, query: str, params: Sequence[Any] | dict | None = None, output: Output = "pandas"):
        """Run one SQL statement and return its result.  A read-only database also refuses
        to read or write files from SQL."""
        import duckdb

        if not query or not query.strip():
            raise LoganalyzeError("empty query")
        con = self.con
        if self.dataset is not None:
            self._check_dataset_sql(query)
        try:
            if self.read_only and self.dataset is None:
                con.execute("SET enable_external_access = false")
            cur = con.execute(query, params) if params is not None else con.execute(query)
            if cur is None or cur.description is None:
                return _out([], [], output)
            cols = [d[0] for d in cur.description]
            rows = cur.fetchall()
        except duckdb.Error as exc:
            raise LoganalyzeError(" ".join(str(exc).split())) from None
        return _out(cols, rows, output)

    def sources(self, wide: bool = True, run: str | None = None,
                source: int | str | Sequence[int | str] | None = None, output: Output = "pandas"):
        """The ingested files: format, dialect, versions, run and line counts."""
        from .query import catalog

        ids = self._filters_or_raise(run, source)
        return _out(*catalog.sources(self._con, wide=wide, source_ids=ids, run=run), output)

    def skipped(self, source: int | str | Sequence[int | str] | None = None, limit: int | None = None,
                output: Output = "pandas"):
        """Lines or events that could not be used, with line number (event number) and reason."""
        from .query import catalog

        if limit is not None and limit < 0:
            raise LoganalyzeError(f"limit must be 0 or more, not {limit}")
        ids = self._filters_or_raise(None, source)
        return _out(*catalog.skipped(self._con, source_ids=ids, limit=limit), output)

    # ------------------------------------------------------------------ runs
    def runs(self, output: Output = "pandas"):
        """One row per run label: files, formats, lines and first/last ingest time."""
        from .query import catalog

        return _out(*catalog.runs(self._con), output)

    def remove_run(self, label: str) -> int:
        """Delete run ``label`` (every file and row of it) in one transaction; returns the
        number of files removed."""
        from .query import catalog

        self._writable()
        try:
            with self._store.transaction():
                return catalog.remove_run(self.con, label)
        except QueryError as exc:
            raise LoganalyzeError(str(exc)) from None

    def relabel_run(self, old: str, new: str) -> int:
        """Rename run ``old`` to ``new`` (merging into ``new`` if it exists); returns the number
        of files relabelled."""
        from .query import catalog

        self._writable()
        try:
            with self._store.transaction():
                return catalog.relabel_run(self.con, old, new)
        except QueryError as exc:
            raise LoganalyzeError(str(exc)) from None

    # ------------------------------------------------------------------ export
    def export_chrome_trace(self, path: str | os.PathLike, run: str | None = None,
                            source: int | str | Sequence[int | str] | None = None,
                            onednn: bool = True,
                            progress: Callable[[int], Callable[[int], None] | None] | None = None) -> "ExportStats":
        """Write a trace-event JSON timeline (``.gz``: compressed; ``"-"``: standard output)
        for Perfetto UI or chrome://tracing.  Nothing is left behind when there is nothing to
        export or writing fails.  ``progress`` is called with the number of events to write and
        may return a callback taking the number written so far."""
        from .export import ExportError, write_chrome_trace

        ids = self._filters_or_raise(run, source)
        try:
            return write_chrome_trace(self.con, os.fspath(path), source_ids=ids, run=run, onednn=onednn,
                                      filtered=bool(ids or run), progress=progress)
        except ExportError as exc:
            raise LoganalyzeError(str(exc)) from None

    def export_parquet(self, directory: str | os.PathLike, run: str | None = None,
                       source: int | str | Sequence[int | str] | None = None) -> "DatasetExport":
        """Append the chosen files (every file by default) to the Parquet dataset at
        ``directory`` (created when missing): Hive-partitioned by run and format, new part
        files only, files the dataset holds already (same content) left out."""
        from .dataset.export import export_to_dataset

        ids = self._filters_or_raise(run, source)
        return export_to_dataset(self.con, os.fspath(directory), source_ids=ids, run=run)

    # ------------------------------------------------------------------ helpers
    def _check_dataset_sql(self, query: str) -> None:
        import duckdb

        from .dataset.layout import DatasetError

        try:
            self._store.check_sql(query)
        except (DatasetError, duckdb.Error) as exc:
            raise LoganalyzeError(" ".join(str(exc).split())) from None

    def _writable(self) -> None:
        if self.dataset is not None:
            raise LoganalyzeError(f"{self.path}: a dataset is read-only here; add files with "
                                  "'loganalyze ingest --to parquet DIR FILE'")
        if self.read_only:
            raise LoganalyzeError(f"{self.path}: opened read-only")

    def _filters(self, run, source) -> list[int] | None:
        from .query import catalog

        catalog.check_run(self._con, run)
        if source is not None and not isinstance(source, (list, tuple)):
            source = [source]
        return catalog.resolve_sources(self._con, source)

    def _filters_or_raise(self, run, source) -> list[int] | None:
        try:
            return self._filters(run, source)
        except QueryError as exc:
            raise LoganalyzeError(str(exc)) from None

    def _empty_message(self, filtered: bool = False) -> str:
        if filtered:
            return "the chosen files hold nothing to summarise"
        files = self._con.execute("SELECT count(*) FROM sources").fetchall()[0][0]
        if files:
            return (f"{self.path}: the {files} ingested file(s) hold nothing to summarise "
                    "(no timed records; see 'loganalyze sources')")
        return f"{self.path}: the database holds no data; run 'loganalyze ingest FILE' first"


def _open_dataset(directory: str | os.PathLike):
    from .dataset.layout import DatasetError
    from .dataset.reader import DatasetStore

    try:
        return DatasetStore(os.fspath(directory))
    except DatasetError as exc:
        raise LoganalyzeError(str(exc)) from None


def connect(path: str | os.PathLike | None = None, read_only: bool = False, wait: float = DEFAULT_WAIT_S,
            on_wait: Callable[[str], None] | None = None, dataset: str | os.PathLike | None = None) -> Database:
    """Open (or create) a loganalyze database.

    ``path``: a DuckDB file; ``None`` means ``$LOGANALYZE_DB`` or ``./loganalyze.duckdb``;
    ``":memory:"`` a database that lives as long as the object.  ``read_only=True`` opens an
    existing file for reading only (it is an error when the file does not exist).  While
    another process holds the file (an ingest writing, or readers while we want to write),
    opening waits up to ``wait`` seconds, calling ``on_wait(message)`` once.  A file that is
    not a loganalyze database is refused and left as it is; no extension is ever downloaded
    or loaded.

    ``dataset``: a Parquet dataset directory (``loganalyze ingest --to parquet``, or
    :meth:`Database.export_parquet`) opened read-only instead of a database; every question
    (summary, sql, sources, runs, skipped) reads it through the same tables and views."""
    if dataset is not None:
        if path is not None:
            raise LoganalyzeError("choose a database path or a dataset, not both")
        return Database(dataset=dataset)
    return Database(path if path is not None else default_db_path(), read_only=read_only, wait=wait,
                    on_wait=on_wait)
