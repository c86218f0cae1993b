"""oneDNN / DNNL / MKL-DNN verbose logs.

How a file goes in (see docs/benchmarks.md for what each step costs):

1. ``lines.iter_line_batches`` cuts the bytes into numbered lines (numpy, no Python loop),
   on a helper thread, a batch ahead.
2. ``onednn_cut.cut_batch`` keeps the verbose lines of a batch and cuts each into its key
   (the line without its timestamp and last field), timestamp and time: one compiled pass
   over the batch's bytes finds the pieces and reads the numbers (``onednn_positions``,
   numba; the interpreter for a process's first 40,000 lines), polars puts them in
   columns; on worker threads, two batches at once, which also look up the shape ids of
   the keys the file has shown so far and, when the batch needs nothing more, make its
   ``onednn_events`` rows (:meth:`OneDNNVerboseImporter._cut_batch`); on the main thread,
   keys new to the file get their shape ids (DuckDB's ``hash(key)``) once each.
3. Keys never seen before are read once by the pyparsing grammar
   (``loganalyze.grammars.onednn_verbose.parse_shape``) into a row of ``onednn_shapes``
   (written at the end); a batch of many (a log of dynamic batch sizes) has those that
   differ from a shape seen only in their problem descriptor made in columns
   (``onednn_variants``).  When the grammar says the tail is not a time (info lines,
   diagnostics, untimed or truncated lines) those lines are keyed again on the whole line
   and parsed again: on the main thread the first time the file shows a line, by the cut
   worker when the file has shown it before (a repeated header, info or cut-off line).
4. Truncated and malformed lines go to ``skipped_lines`` with the grammar's reason; the
   other lines go into ``onednn_events`` as ``(line_no, shape_id, ts, time)``, a batch at a
   time (its skipped lines with it) on a helper thread (``IngestContext.insert_behind``)
   while the next is prepared, DuckDB with one thread meanwhile.
"""
from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Iterable, NamedTuple

from ..grammars import onednn_verbose as g
from ..inputs import InputError
from ..lines import LineStats, iter_line_batches, prefetch
from ..store import ThreadCursors, temporary_setting, threads_at_most
from .base import IngestContext, RowBuffer, dropped_after, skipped_text, sql_string
from .onednn_segments import insert_segments

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

# polars (and the cut built on it) load when a oneDNN log is read, not with the importer
# registry: other formats and the query commands do not pay for the import

#: line batches cut at once, on as many worker threads
CUT_WORKERS = 2
#: DuckDB memory the importer's limit (``memory_limit``) grows by for each shape the file
#: shows (IngestContext.widen_memory_limit): a log of 830,000 distinct shapes (every other
#: line a distinct info line, 64 MiB) passed with 200 MB, not with 100 MB
SHAPE_MEMORY_BYTES = 160
#: shapes held before they are inserted (a log of dynamic batch sizes shows hundreds of
#: thousands; the usual log's few thousand are inserted at once, at the end)
SHAPE_ROWS_HELD = 16384
#: new shapes parsed before they go into :attr:`OneDNNVerboseImporter._shapes` as columns
SHAPES_AT_ONCE = 4096
#: the most text of a file's bad whole lines kept for the cut workers to skip them (bytes of
#: the texts as skipped; past it the lines go through the main thread)
BAD_TEXT_BYTES = 8 << 20


SHAPE_COLUMNS = [
    "shape_id", "key", "marker", "version_token", "component", "operation", "op_class", "layout",
    "engine", "kind", "impl", "prop_kind", "mds", "attrs", "aux", "problem", "alg", "dtype",
    "dims", "md_list", "info_kind", "detail", "timed",
]


#: the columns of SHAPE_COLUMNS that are fields of the parsed shape by the same name
_SHAPE_FIELDS = frozenset(SHAPE_COLUMNS) - {"shape_id", "timed"}


@dataclass
class _Cut:
    """A batch cut by :meth:`OneDNNVerboseImporter._cut_batch`: its events, their
    ``onednn_events`` rows when nothing more is to be done (else None), the size of the
    known shapes the worker judged that by, and the keys it did not know (``key_hash``,
    ``key``, ``shape_id``), if any."""

    events: pl.DataFrame
    rows: pa.Table | None
    statuses: int
    found: pl.DataFrame | None = None
    #: how many of the file's shape ids (:attr:`OneDNNVerboseImporter._ids`) the worker had
    ids_seen: int = 0
    #: the lines skipped with ``rows`` (``line_no``, ``reason``, ``text``), if any
    skipped: pl.DataFrame | None = None


class _Statuses(dict):
    """shape_id -> ``"ok"`` (a complete timed shape), ``"rekey"`` (read the line whole),
    ``"whole"`` (a whole-line shape) or ``"bad"`` (a whole line the grammar rejects); with
    the ids given the first two statuses, in the order they were first set (the importer
    sets each id once)."""

    def __init__(self):
        super().__init__()
        self.ids: dict[str, list[int]] = {"ok": [], "rekey": []}

    def __setitem__(self, shape_id: int, status: str) -> None:
        if shape_id not in self and status in self.ids:
            self.ids[status].append(shape_id)
        super().__setitem__(shape_id, status)

    def set_all(self, shape_ids: list[int], status: str) -> None:
        """``self[i] = status`` for each of ``shape_ids``, in order."""
        if status in self.ids:
            self.ids[status].extend(dict.fromkeys(i for i in shape_ids if i not in self))
        self.update(dict.fromkeys(shape_ids, status))


class _Known(NamedTuple):
    """What the cut workers read of the shapes known (:meth:`OneDNNVerboseImporter._publish`)."""

    size: int | None  # of ``known``
    ok: pl.Series | None  # shape ids of the complete timed shapes
    rekey: pl.Series | None  # shape ids of those keyed on the whole line
    wholes: pl.DataFrame | None  # OneDNNVerboseImporter._wholes
    bads: pl.DataFrame | None  # OneDNNVerboseImporter._bads


def _of_shapes(ids: pl.Series) -> pl.Expr:
    """The lines of the shapes ``ids`` (a cut with ``shape_id``)."""
    import polars as pl

    return pl.col("shape_id").is_in(ids.implode())


def _untimed(ok_ids: pl.Series) -> pl.Expr:
    """The lines of complete timed shapes (``ok_ids``) whose last field is no time: the
    worker's check of a batch and the main thread's skipping of them are the same rule."""
    import polars as pl

    return pl.col("time_ms").is_null() & _of_shapes(ok_ids)


def _has_untimed(events: pl.DataFrame, ok_ids: pl.Series) -> bool:
    """Whether ``events`` has :func:`_untimed` lines (the shapes looked up only when some
    line has no time: a log of hundreds of thousands of shapes took ~15 ms a batch)."""
    return bool(events["time_ms"].null_count()) and events.select(_untimed(ok_ids).any()).item()


def _with_whole_ids(events: pl.DataFrame, rekey_ids: pl.Series, wholes: pl.DataFrame) -> pl.DataFrame:
    """``events`` with ``line_hash`` for the lines of the shapes ``rekey_ids`` (those keyed on
    the whole line; null for the others) and ``whole_id``, their whole-line shape where
    ``wholes`` (``line_hash`` -> ``whole_id``) has the line, else null."""
    import polars as pl

    from . import onednn_cut as cut

    return events.with_columns(line_hash=pl.when(_of_shapes(rekey_ids)).then(cut.line_hash())).with_columns(
        whole_id=pl.col("line_hash").replace_strict(wholes["line_hash"], wholes["whole_id"], default=None,
                                                    return_dtype=pl.UInt64))


def _whole_unknown() -> pl.Expr:
    """The lines keyed whole (:func:`_with_whole_ids`) without a known whole-line shape."""
    import polars as pl

    return pl.col("line_hash").is_not_null() & pl.col("whole_id").is_null()


def _keyed_whole(events: pl.DataFrame) -> pl.DataFrame:
    """Lines keyed whole (:func:`_with_whole_ids`, every ``whole_id`` found) with their
    whole-line shape's id and no time; the other lines as they are."""
    import polars as pl

    return (
        events.with_columns(
            shape_id=pl.coalesce("whole_id", "shape_id"),
            time_ms=pl.when(pl.col("whole_id").is_null()).then("time_ms"),
        )
        .drop("whole_id", "line_hash")
    )


def _skipped(lines: pl.DataFrame, texts: pl.DataFrame) -> pl.DataFrame:
    """The skipped-line rows (``line_no``, ``reason``, ``text``) of ``lines`` keyed whole
    (:func:`_with_whole_ids`) through ``texts`` (``line_hash`` -> ``reason``, ``text``); a
    null reason where ``texts`` does not have the line."""
    import polars as pl

    line = pl.col("line_hash")
    return lines.select(
        "line_no",
        reason=line.replace_strict(texts["line_hash"], texts["reason"], default=None, return_dtype=pl.String),
        text=line.replace_strict(texts["line_hash"], texts["text"], default=None, return_dtype=pl.String),
    )


class OneDNNVerboseImporter:
    format = "onednn_verbose"
    #: DuckDB's memory limit while a log is stored into a database file, its COMMIT
    #: included (importers.base.Importer): past it DuckDB lets go of the blocks written for
    #: the file instead of keeping them cached, so the peak RSS stops growing with the log.
    #: Generated logs, in-process (docs/benchmarks.md, thirteenth session): 1 GiB 609 → 553 MB,
    #: 4 GiB 825 → 600 MB, at 1.14x the time at 4 GiB (where the ingest is ~1.05x mawk)
    memory_limit = "100MB"

    def __init__(self) -> None:
        #: why a whole-line shape is truncated or malformed, by its id
        self.bad_reason: dict[int, str] = {}

    def sniff(self, head: bytes, name: str) -> int:
        return 90 if g.head_has_verbose_line(head) else 0

    def ingest(self, ctx: IngestContext) -> None:
        import polars as pl

        from . import onednn_cut as cut
        from .onednn_variants import Variants

        con = ctx.con
        #: shape ids of the keys seen in this file, by polars' hash of the key
        self._ids = cut.ShapeIds()
        known = _Statuses()
        for shape_id, timed in con.execute("SELECT shape_id, timed FROM onednn_shapes").fetchall():
            known[shape_id] = "ok" if timed else "whole"
        #: the lines keyed whole so far in this file whose whole-line shape is good: polars'
        #: hash of key and last field (``onednn_cut.line_hash``) -> the shape's id
        self._wholes = pl.DataFrame(schema={"line_hash": pl.UInt64, "whole_id": pl.UInt64})
        #: those whose whole-line shape is bad: line hash -> why, and the text skipped (up to
        #: BAD_TEXT_BYTES of text in all)
        self._bads = pl.DataFrame(schema={"line_hash": pl.UInt64, "reason": pl.String, "text": pl.String})
        self._bad_room = BAD_TEXT_BYTES
        none = pl.Series(dtype=pl.UInt64)
        self._statuses = _Known(None, none, none, None, None)  # (a file before this one may have left its own)
        self._publish(known)
        # (a shape already stored, e.g. on a hash collision, is left as it is)
        self._shapes = RowBuffer(ctx, "onednn_shapes", SHAPE_COLUMNS, limit=SHAPE_ROWS_HELD,
                                 select="SELECT * FROM _arrow WHERE shape_id NOT IN (SELECT shape_id FROM onednn_shapes)")
        #: the shapes new ones are made from in columns (a log of dynamic batch sizes)
        self._variants = Variants(SHAPE_COLUMNS, self._shapes.types)
        #: DuckDB's try_cast and hash for the cut, on each thread's own cursor: the workers
        #: read odd times and hash new keys, and this thread hashes whole lines, while a
        #: batch's insert holds ``con`` (its settle had been a third of the main thread's
        #: time on the batches that need them: docs/benchmarks.md, "Twenty-sixth session")
        self._functions = ThreadCursors(con)

        stats = LineStats()
        batches = prefetch(iter_line_batches(ctx.file, stats, ctx.progress))
        # batches are cut on worker threads (the compiled pass and polars let go of the GIL),
        # several at once, and taken in order here
        workers = ThreadPoolExecutor(max_workers=CUT_WORKERS, thread_name_prefix="onednn-cut")
        cutting: deque[Future] = deque()
        # DuckDB with one thread meanwhile: a batch's insert (one Arrow chunk) gains nothing
        # from a second one, which only took CPU from the cut (0.2 CPU-s of 3.7 at 1 GiB);
        # each full row group written as it fills, on the inserter's thread: DuckDB holds up
        # to five, and the COMMIT compressed and wrote the last ones (58 -> 52 ms at 1 GiB)
        with threads_at_most(con, 1), temporary_setting(con, "write_buffer_row_group_count", 1):
            try:
                for lines in batches:
                    for line_no, reason, text in lines.rejected:
                        if g.starts_with_marker(text):
                            ctx.skip(line_no, reason, text)
                    cutting.append(workers.submit(self._cut_batch, lines))
                    if len(cutting) > CUT_WORKERS:
                        self._ingest_cut(ctx, cutting.popleft().result(), known)
                # the shapes found so far made into columns while the last batches are cut
                # (~35 ms for the 2,700 shapes of docs/benchmarks.md's 1 GiB log), those the
                # last batches bring after them
                shapes = self._shapes.take()
                while cutting:
                    self._ingest_cut(ctx, cutting.popleft().result(), known)
                self._shapes.insert(shapes)
                self._shapes.flush()
            finally:
                # stop the helper threads here, while an exception (a signal) is on its way
                # out, not later from the garbage collector, where a second signal would be
                # reported as "Exception ignored" with a traceback
                workers.shutdown(wait=True, cancel_futures=True)
                batches.close()
                self._functions.close()
                ctx.close()  # the last insert done before the thread count comes back
        ctx.flush_skipped()
        if stats.lines == 0:
            raise InputError(f"{ctx.file.path}: empty file")
        parsed = con.execute("SELECT count(*) FROM onednn_events WHERE source_id = ?", [ctx.source_id]).fetchone()[0]
        verbose = parsed + ctx.skipped_count
        if verbose == 0:
            raise InputError(
                f"{ctx.file.path}: not a oneDNN verbose log (no line starts with "
                "onednn_verbose, dnnl_verbose or mkldnn_verbose)"
            )
        ctx.finish(stats.lines, parsed, what="verbose line", none_is_error=False)
        ctx.source.update(crlf_lines=stats.crlf, ends_with_newline=stats.ends_with_newline)
        self._describe_source(ctx)

    def _publish(self, known: _Statuses) -> None:
        """What the cut workers read of ``known`` (:meth:`_cut_batch`), made again each time
        it, :attr:`_wholes` or :attr:`_bads` grows (:class:`_Known`)."""
        import polars as pl

        was = self._statuses
        if was.size == len(known) and was.wholes is self._wholes and was.bads is self._bads:
            return
        # the ids added since (a log of many distinct shapes adds some every batch: making
        # the Series of every id again each time grew with the shapes)
        ok, rekey = (pl.concat([old, pl.Series(known.ids[status][len(old):], dtype=pl.UInt64)])
                     for old, status in ((was.ok, "ok"), (was.rekey, "rekey")))
        # one tuple, replaced whole: a worker reads one size with its lists
        self._statuses = _Known(len(known), ok, rekey, self._wholes, self._bads)

    def _cut_batch(self, lines) -> _Cut:
        """A batch's lines cut (``onednn_cut.cut_batch``), their odd times read
        (``settle_times``), with the shape id of every key: those this file has shown so
        far, DuckDB's hash of the others (on a worker thread: the main thread parses the
        shapes new to it, in :meth:`_ingest_cut`).  A batch that needs nothing more (the
        usual one: every key known, no line that :meth:`_ingest_cut` would skip by the
        shapes known when it looked, and every line keyed whole one it has seen before with a
        good whole-line shape) comes with its ``onednn_events`` rows."""
        import polars as pl

        from . import onednn_cut as cut

        ids = self._ids
        events = cut.with_events(cut.settle_times(self._functions.get(), cut.cut_batch(lines)), ids)
        size, ok_ids, rekey_ids, wholes, bads = self._statuses
        if events["shape_id"].null_count():
            found = cut.with_shape_ids(self._functions.get(),
                                       cut.keys_of(events.filter(pl.col("shape_id").is_null())))
            return _Cut(cut.with_events(events, cut.ShapeIds().with_added(found)), None, size, found,
                        ids_seen=len(ids))
        if not events.height or _has_untimed(events, ok_ids):
            return _Cut(events, None, size)
        done, skipped = events, None
        if len(rekey_ids) and events.select(_of_shapes(rekey_ids).any()).item():
            # lines keyed whole: done here when each is a line this file has shown already
            # (the usual repeated header, info or cut-off line)
            done = _with_whole_ids(events, rekey_ids, wholes)
            unknown = done.filter(_whole_unknown())
            if unknown.height:
                skipped = _skipped(unknown, bads)
                if skipped["reason"].null_count():
                    return _Cut(events, None, size)
                done = done.filter(~_whole_unknown())
            done = _keyed_whole(done)
        return _Cut(events, cut.event_rows(done), size, skipped=skipped)

    def _ingest_cut(self, ctx: IngestContext, done: _Cut, known: _Statuses) -> None:
        """The events of one batch's cut verbose lines (from :meth:`_cut_batch`) into
        ``onednn_events``: odd times read, new shapes parsed, lines whose last field is not a
        time keyed whole, bad lines skipped.

        Per line only whole-column polars operations: which keys are new to this file, each
        line's shape id (looked up by the key's hash), and the few lines that need more: those
        without a time, and those of shapes whose last field is not a time."""
        import polars as pl

        from . import onednn_cut as cut

        if done.rows is not None and done.statuses == len(known):
            # on a helper thread, while this one takes the next batch
            ctx.insert_behind("onednn_events", done.rows, cut.events_insert(ctx.source_id), skipped=done.skipped)
            return
        events = done.events
        if not events.height:
            return
        if done.found is not None:
            # keys the worker did not know: new to this file, or found since it looked (the
            # ids added after the ones it had: a log of dynamic batch sizes has 10^5 or more)
            since = self._ids.added["key_hash"].slice(done.ids_seen)
            fresh = done.found.filter(~pl.col("key_hash").is_in(since.implode()))
            if fresh.height:
                self._ids = self._ids.with_added(fresh)
                new = fresh.filter(pl.Series([h not in known for h in fresh["shape_id"]], dtype=pl.Boolean))
                if new.height:
                    self._parse_new_keys(ctx, new, known)
                    self._publish(known)
        ok_ids, rekey_ids = self._statuses.ok, self._statuses.rekey
        if _has_untimed(events, ok_ids):
            events = self._skip_bad_times(ctx, events, ok_ids)
        skipped = None
        if len(rekey_ids) and events.select(_of_shapes(rekey_ids).any()).item():
            events, skipped = self._rekey(events, rekey_ids, known)
            self._publish(known)
        ctx.insert_behind("onednn_events", cut.event_rows(events), cut.events_insert(ctx.source_id), skipped=skipped)

    # ------------------------------------------------------------------ shapes
    def _parse_new_keys(self, ctx: IngestContext, new: pl.DataFrame, known: _Statuses) -> None:
        """The shapes of keys new to the file (``new``: ``shape_id``, ``key``), parsed by the
        grammar; of many at once (a log of dynamic batch sizes), those that differ from a
        shape seen only in their problem descriptor are made in columns
        (:mod:`.onednn_variants`), and of the others one key of each text before the
        descriptor is parsed first (its shape may make the others)."""
        import polars as pl

        from .onednn_variants import AT_LEAST, split_keys

        if new.height >= AT_LEAST:
            new = self._made_in_columns(split_keys(new), known)
            first = pl.col("before").is_null() | pl.col("before").is_first_distinct()
            self._parse_keys(new.filter(first), known)
            new = self._made_in_columns(new.filter(~first), known)
        self._parse_keys(new, known)

    def _made_in_columns(self, new: pl.DataFrame, known: _Statuses) -> pl.DataFrame:
        """The rows of ``new`` whose shapes :attr:`_variants` makes, stored; the others returned."""
        rows, rest = self._variants.make(new)
        if rows is not None:
            known.set_all(rows.column("shape_id").to_pylist(), "ok")
            self._shapes.add_table(rows)
            self._shapes.ctx.widen_memory_limit(SHAPE_MEMORY_BYTES * len(known))
        return rest

    def _parse_keys(self, new: pl.DataFrame, known: _Statuses) -> None:
        """The shapes of the keys of ``new`` read by the grammar, one by one."""
        def timed_shapes():
            for h, key in new.select("shape_id", "key").iter_rows():
                shape = g.parse_shape(key)
                if shape.tail_is_time:
                    known[h] = "ok"
                    self._variants.add(shape)
                    yield h, shape
                else:
                    known[h] = "rekey"
        self._insert_shapes(timed_shapes(), known)

    @staticmethod
    def _skip_bad_times(ctx: IngestContext, events: pl.DataFrame, ok_ids: pl.Series) -> pl.DataFrame:
        """Complete profiling lines (of the shapes ``ok_ids``) whose last field is not a
        number are malformed: skipped, and left out of ``events``."""
        from . import onednn_cut as cut

        is_bad = _untimed(ok_ids)
        bad = events.filter(is_bad).sort("line_no").select("line_no", cut.key_text(), cut.tail_text())
        for line_no, key, tail in bad.iter_rows():
            tail = tail or ""
            ctx.skip(line_no, f"malformed: time field {tail!r} is not a number", f"{key},{tail}")
        return events.filter(~is_bad)

    def _rekey(self, events: pl.DataFrame, rekey_ids: pl.Series,
               known: _Statuses) -> tuple[pl.DataFrame, pl.DataFrame | None]:
        """Lines whose last field is not a time: keyed and parsed on the whole line, and
        without a time; the lines the grammar rejects whole are left out and returned as
        skipped (``line_no``, ``reason``, ``text``; None when there are none).  A line this
        file has shown already with a good whole-line shape is looked up in :attr:`_wholes`;
        the others are made into text once per distinct line (new ones, and bad ones: their
        text is the skipped line's), and kept in :attr:`_wholes` or :attr:`_bads`."""
        import polars as pl

        from . import onednn_cut as cut

        events = _with_whole_ids(events, rekey_ids, self._wholes)
        texts = cut.whole_texts(self._functions.get(), events.filter(_whole_unknown()))

        def good_shapes():
            for h2, text in (texts.unique("whole_id", keep="first", maintain_order=True).sort("whole_id")
                             .select("whole_id", "whole").iter_rows()):
                if h2 in known:
                    continue
                shape = g.parse_shape(text, whole=True)
                if shape.status == "ok":
                    known[h2] = "whole"
                    yield h2, shape
                else:
                    known[h2] = "bad"
                    self.bad_reason[h2] = shape.reason
        self._insert_shapes(good_shapes(), known)
        texts = texts.with_columns(reason=pl.Series([self.bad_reason.get(h) for h in texts["whole_id"]],
                                                    dtype=pl.String))
        bad = texts.filter(pl.col("reason").is_not_null()).with_columns(text=skipped_text(pl.col("whole")))
        self._keep(texts.filter(pl.col("reason").is_null()), bad)
        is_bad = pl.col("line_hash").is_not_null() & pl.col("line_hash").is_in(bad["line_hash"].implode())
        skipped = _skipped(events.filter(is_bad), bad)
        events = events.filter(~is_bad).with_columns(whole_id=pl.coalesce(
            "whole_id", pl.col("line_hash").replace_strict(texts["line_hash"], texts["whole_id"], default=None)))
        return _keyed_whole(events), (skipped if skipped.height else None)

    def _keep(self, good: pl.DataFrame, bad: pl.DataFrame) -> None:
        """Lines keyed whole by :meth:`_rekey`, for the cut workers: those of ``good``
        whole-line shapes into :attr:`_wholes`, and those of ``bad`` new to :attr:`_bads`
        into it while :data:`BAD_TEXT_BYTES` last."""
        import polars as pl

        if good.height:
            self._wholes = pl.concat([self._wholes, good.select("line_hash", "whole_id")])
        bad = bad.filter(~pl.col("line_hash").is_in(self._bads["line_hash"].implode()))
        bad = bad.filter(pl.col("text").str.len_bytes().cum_sum() <= self._bad_room)
        if bad.height:
            self._bad_room -= int(bad["text"].str.len_bytes().sum())
            self._bads = pl.concat([self._bads, bad.select("line_hash", "reason", "text")])

    def _insert_shapes(self, shapes: Iterable[tuple[int, g.Shape]], known: _Statuses) -> None:
        """Rows of ``onednn_shapes`` for ``shapes`` ((id, parsed shape) pairs, taken
        :data:`SHAPES_AT_ONCE` at a time: a batch of a log of dynamic batch sizes brings tens
        of thousands, which were all held at once), kept in :attr:`_shapes` until it is full
        or the file's lines are all read (one insert for the usual few thousand shapes of a
        log, not one per batch that shows new ones: each builds some twenty Arrow columns on
        the main thread while the pipeline waits; their columns are built while the last
        batches are cut, and inserted after them).  DuckDB may use more memory as the shapes
        grow (``known``: the shapes the store and the file have shown;
        :data:`SHAPE_MEMORY_BYTES`)."""
        shapes = iter(shapes)
        while chunk := list(islice(shapes, SHAPES_AT_ONCE)):
            self._shapes.ctx.widen_memory_limit(SHAPE_MEMORY_BYTES * len(known))
            ids, parsed = zip(*chunk)
            self._shapes.add_columns(len(ids), shape_id=list(ids), timed=[s.tail_is_time for s in parsed],
                                     **{c: [getattr(s, c) for s in parsed] for c in SHAPE_COLUMNS if c in _SHAPE_FIELDS})
        self._shapes.ctx.widen_memory_limit(SHAPE_MEMORY_BYTES * len(known))

    # ------------------------------------------------------------------ source description
    def _describe_source(self, ctx: IngestContext) -> None:
        con, sid = ctx.con, ctx.source_id
        primitive_classes = ", ".join(sql_string(c) for c in g.PRIMITIVE_CLASSES)
        # lines and timestamps per shape: one scan of the file's events for what follows
        with dropped_after(con, "temp._onednn_per_shape"):
            con.execute(
                """CREATE OR REPLACE TEMP TABLE _onednn_per_shape AS
                   SELECT shape_id, count(*) AS n, bool_or(ts_ms IS NOT NULL) AS ts
                   FROM onednn_events WHERE source_id = ? GROUP BY shape_id""",
                [sid],
            )
            insert_segments(ctx, "_onednn_per_shape")
            ctx.source["dialect"] = self._dialect(con)
            kinds = con.execute(
                f"""SELECT coalesce(sum(p.n) FILTER (WHERE s.op_class IN ({primitive_classes})), 0)
                   FROM _onednn_per_shape p JOIN onednn_shapes s USING (shape_id)"""
            ).fetchone()[0]
        if kinds == 0:
            ctx.warnings.append(
                f"{ctx.file.path}: no primitive exec/create lines (only headers or diagnostics)"
            )

    @staticmethod
    def _dialect(con) -> str:
        """Generations seen, from the profiling lines (from every line when there are none);
        read from the file's lines per shape (``_onednn_per_shape``)."""
        rows = con.execute(
            """SELECT s.marker, s.version_token, s.component <> '' AS has_component, s.layout,
                      bool_or(p.ts) AS ts, sum(p.n), s.layout <> '' AS profiling
               FROM _onednn_per_shape p JOIN onednn_shapes s USING (shape_id)
               GROUP BY ALL ORDER BY 6 DESC"""
        ).fetchall()
        if any(r[6] for r in rows):
            rows = [r for r in rows if r[6]]
        labels: dict[str, None] = {}
        for marker, vtok, has_comp, layout, ts, _, _ in rows:
            if marker == "mkldnn_verbose":
                label = "mkldnn-v1.0" if layout == "v1.0" else "mkldnn-v0"
            elif marker == "dnnl_verbose":
                label = "dnnl-v1/v2"
            elif vtok:
                label = f"onednn-v3.6+ ({vtok})"
            elif has_comp:
                label = "onednn-v3.2+"
            else:
                label = "onednn-v2.5+"
            labels[label + (" +timestamps" if ts else "")] = None
        merged: dict[str, None] = {}
        for lab in labels:
            base = lab.replace(" +timestamps", "")
            if base + " +timestamps" in labels and lab == base:
                continue
            merged[lab] = None
        return ", ".join(merged)
