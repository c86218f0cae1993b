"""Trace-event JSON: PyTorch/Kineto (``*.pt.trace.json[.gz]``), MXNet ``profiler.dump()``,
and any Chrome/Perfetto JSON trace.

How a file goes in (docs/benchmarks.md, "Trace JSON", says what it costs):

1. ``grammars.trace_event.scan_prefix`` finds where the event array starts (bare array or
   the ``traceEvents`` member of an object; earlier members are metadata), and the
   categories in the first MiBs choose the flavour (checked again on all events later).
2. ``scan_tail`` finds in the last MiBs where the array ends, or that the file was cut off.
   DuckDB's ``read_json`` then parses exactly the array (``]`` added when it was missing):
   uncompressed files are cut in the kernel into temp files, a large array into one part
   per core at boundaries between events (parsed at the same time; a part DuckDB rejects
   sends the array to one whole read; the CLI cuts a large trace while it imports:
   ``trace_stage.stage_ahead``); gzip files are decompressed into a temp file into a
   database file (DuckDB holds what it reads from a pipe in memory), by a writer thread into
   a FIFO that DuckDB reads at the same time into an in-memory one.  The same statement
   converts the fields (exact integer ns, ids from args, role, problems) into ``_ev``,
   a view over the parts, whose row ids number the events (``trace_load.EventPart``).  The
   file's sha256 starts once the array is read (a core is free then).
   Files DuckDB cannot read (a syntax error inside an event, duplicate keys, lone
   surrogates, fractional timestamps beyond double precision) go through the exact Python
   reader instead.
3. ``trace_spans.SpanEngine`` matches B/E and async pairs, computes nesting, self time,
   flows and kernel -> launch -> operator attribution, and writes ``trace_events``,
   ``trace_counters``, ``trace_flows``, ``gpu_kernels``, ``gpu_memops`` and
   ``gpu_api_calls``; ``trace_files`` gets the file's metadata and counts.

Memory: into a database file, the workspace is a database file of its own in a temporary
folder (its tables compressed, their blocks dropped from memory when the arrays of step 3
need the room), DuckDB works under a limit (``trace_workspace.memory_budget``: a quarter of
the file's size, at least 192 MiB; past it operators spill to the temporary folder), the
span engine's computed columns (the slices flow events bind to among them) go into working
Parquet files in the same folder (cheaper to write than compressed tables, read once), and
the per-event arrays of step 3 are released before the rows are copied into the store.
"""
from __future__ import annotations

from ..grammars import trace_event as te
from ..grammars import trace_reader as tr
from ..trace_stage import find_prefix, head_categories, sniff
from .base import IngestContext
from .trace_load import load_events
from .trace_spans import NeedsExactReader, SpanEngine
from .trace_tables import insert_trace_file
from .trace_workspace import Workspace


class TraceJsonImporter:
    format = "trace_json"

    def sniff(self, head: bytes, name: str) -> int:
        return sniff(head, name)

    def ingest(self, ctx: IngestContext) -> None:
        prefix = find_prefix(ctx.file)
        guess = te.detect_flavour(prefix.keys, head_categories(ctx.file, prefix))
        with Workspace(ctx) as ws:
            load = load_events(ctx, ws, prefix, guess)
            # the file's identity now, while the span engine leaves a core free (not during
            # the load, which keeps both busy)
            ctx.file.hash_in_background()
            try:
                stats, flavour = self._spans(ctx, ws, prefix, load, guess)
            except NeedsExactReader:
                # fractional timestamps too large for a double: read the text exactly instead
                ctx.clear_skipped()
                load = load_events(ctx, ws, prefix, guess, force_stream=True)
                stats, flavour = self._spans(ctx, ws, prefix, load, guess)
        if load.cut_event is not None:
            event_no, reason, text = load.cut_event
            ctx.skip(event_no, reason, text)
        parsed = stats.parsed
        total = parsed + ctx.skipped_count
        ctx.finish(total, parsed, 0, "trace event", unit="event", warn=False,
                   empty="the trace has no events")
        meta = dict(prefix.metadata)
        meta.update(load.trailing_metadata)
        keys = list(prefix.keys) + [k for k in load.trailing_keys if k not in prefix.keys]
        if prefix.container == "array":
            keys = []
        complete = load.complete
        dist = meta.get("distributedInfo") if isinstance(meta.get("distributedInfo"), dict) else {}
        devprops = meta.get("deviceProperties")
        insert_trace_file(
            ctx, stats, container=prefix.container, flavour=flavour, reader=load.reader, complete=complete,
            top_level_keys=keys, display_time_unit=_str(meta.get("displayTimeUnit")),
            base_time_ns=tr.metadata_int(meta.get("baseTimeNanoseconds")),
            schema_version=_str(meta.get("schemaVersion")), trace_name=_str(meta.get("traceName")),
            rank=tr.metadata_int(dist.get("rank")), world_size=tr.metadata_int(dist.get("world_size")),
            device_properties=tr.metadata_json(devprops) if devprops is not None else None,
            metadata=tr.metadata_json(meta) if meta else None, events=total,
        )
        ctx.source.update(
            dialect=flavour + ("" if complete else ", cut off"),
            library_version=_library_version(flavour, meta),
        )
        self._warn(ctx, load, stats, complete)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _spans(ctx, ws, prefix, load, guess):
        keys = list(prefix.keys) + list(load.trailing_keys)
        engine = SpanEngine(ctx, ws, guess, check_precision=load.reader == "duckdb", keys=keys)
        stats = engine.run()
        return stats, engine.flavour

    @staticmethod
    def _warn(ctx, load, stats, complete) -> None:
        path = ctx.file.path
        if not complete and not ctx.file.damage:
            ctx.source["truncated"] = True
            ctx.warnings.append(f"{path}: partial data: the event array is not closed (file cut off); "
                                "the complete events were kept")
        if stats.unmatched_e:
            ctx.warnings.append(f"{path}: {stats.unmatched_e} E event(s) without an open B (skipped)")
        if stats.unclosed_b:
            ctx.warnings.append(f"{path}: {stats.unclosed_b} B event(s) never closed (kept without duration)")
        if stats.async_unmatched_e:
            ctx.warnings.append(f"{path}: {stats.async_unmatched_e} async end event(s) without a begin (skipped)")
        if stats.duplicates:
            ctx.warnings.append(f"{path}: {stats.duplicates} duplicated event(s) skipped")
        if stats.improper_nesting:
            ctx.warnings.append(f"{path}: {stats.improper_nesting} operator(s) end after their parent")
        other = ctx.skipped_count - stats.unmatched_e - stats.async_unmatched_e - stats.duplicates
        if other > 0:
            row = ctx.con.execute(
                """SELECT line_no, reason FROM skipped_lines WHERE source_id = ?
                   AND reason NOT LIKE 'unmatched%' AND reason NOT LIKE 'duplicate%' ORDER BY line_no LIMIT 1""",
                [ctx.source_id]).fetchall()
            first = f" (first: event {row[0][0]}, {row[0][1]})" if row else ""
            ctx.warnings.append(f"{path}: {other} event(s) skipped{first}")


def _str(v) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else tr.metadata_json(v)


def _library_version(flavour: str, meta: dict) -> str | None:
    if flavour == "kineto":
        parts = []
        if meta.get("schemaVersion") is not None:
            parts.append(f"Kineto schema {_str(meta.get('schemaVersion'))}")
        for key, label in (("cuda_runtime_version", "CUDA runtime"), ("cupti_version", "CUPTI"),
                           ("roctracer_version", "roctracer")):
            if meta.get(key) is not None:
                parts.append(f"{label} {_str(meta.get(key))}")
        return ", ".join(parts) or None
    return None


__all__ = ["TraceJsonImporter"]
