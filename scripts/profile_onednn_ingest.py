#!/usr/bin/env python3
"""Where does ``loganalyze ingest`` spend its time on a big oneDNN log?  (No package edits.)

    python scripts/profile_onednn_ingest.py LOG [--mode instrument|stages|cprofile] [--check LOG.json]

``instrument`` (default) runs the real ingest (``loganalyze.ingest.ingest_file``) in this
process with timers around each step of the oneDNN importer (the line batcher on its helper
thread, the polars cut, the per-batch key ids, the event insert, the pyparsing grammar) and
a sampler of this process's RSS; ``--check`` compares the per-kind totals with the
generator's sidecar afterwards.  The timers wrap module functions, not the DuckDB
connection: DuckDB finds the Arrow data of a statement (``_arrow`` …) in its caller's local
variables, which a proxy in between would hide.

``stages`` times the pipeline cut into pieces, each alone over the whole file (reading,
line batching, the cut, key ids, the insert).  ``cprofile`` runs the ingest under cProfile.
"""
from __future__ import annotations

import argparse
import cProfile
import collections
import functools
import json
import os
import pstats
import sys
import tempfile
import threading
import time

import duckdb

import loganalyze.importers.onednn as onednn
from loganalyze import ingest as ingest_mod
from loganalyze.importers import base as importers_base
from loganalyze.importers import onednn_cut
from loganalyze.inputs import InputFile
from loganalyze.lines import LineStats, iter_line_batches
from loganalyze.store import Store


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class RssSampler(threading.Thread):
    def __init__(self, every: float = 0.1):
        super().__init__(daemon=True)
        self.every, self.peak, self.samples, self.stop_ = every, 0.0, [], False
        self.t0 = time.perf_counter()

    def run(self) -> None:
        while not self.stop_:
            r = rss_mb()
            self.peak = max(self.peak, r)
            self.samples.append((time.perf_counter() - self.t0, r))
            time.sleep(self.every)


#: step name -> seconds of each call
TIMES: dict[str, list[float]] = collections.defaultdict(list)


def timed(name: str, fn):
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        t0 = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            TIMES[name].append(time.perf_counter() - t0)
    return wrapper


def timed_iter(name: str, fn):
    """Time each ``next`` of the iterator ``fn`` returns (on whatever thread runs it)."""
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        it = fn(*a, **kw)
        while True:
            t0 = time.perf_counter()
            try:
                item = next(it)
            except StopIteration:
                return
            finally:
                TIMES[name].append(time.perf_counter() - t0)
            yield item
    return wrapper


#: (module, attribute, step name, wrapper) for every step instrumented
STEPS = [
    (onednn, "iter_line_batches", "line batching (helper thread, overlaps the rest)", timed_iter),
    (onednn_cut, "cut_batch", "cut_batch: the cut of a batch (worker threads, overlapping)", timed),
    (onednn_cut, "settle_times", "settle_times: odd times of a batch", timed),
    (onednn_cut, "keys_of", "keys_of: distinct keys of a batch", timed),
    (onednn_cut, "with_shape_ids", "with_shape_ids: DuckDB hash per distinct key", timed),
    (onednn_cut, "with_events", "with_events: shape id of each line", timed),
    (onednn_cut, "event_rows", "event_rows: Arrow rows of a batch", timed),
    (importers_base, "insert_arrow", "insert of a batch's events (helper thread, overlapping)", timed),
    (onednn.g, "parse_shape", "pyparsing parse_shape", timed),
    (onednn.OneDNNVerboseImporter, "_describe_source", "describe the source (segments, dialect)", timed),
]


def check_totals(con, sidecar: str) -> str:
    from loganalyze.query.onednn_summary import summary

    want = json.load(open(sidecar))["per_kind"]
    cols, rows = summary(con, ["kind"])
    got = {r[0]: dict(zip(cols, r)) for r in rows}
    bad = [k for k, w in want.items()
           if got.get(k, {}).get("exec_count") != w["exec_count"]
           or abs(got[k]["exec_ms"] - w["exec_ms"]) > 1e-9 * w["exec_ms"]
           or got[k]["create_count"] != w["create_count"]]
    return "OK" if not bad and len(got) == len(want) else f"MISMATCH {bad}"


def instrument(path: str, check: str | None = None) -> None:
    db = os.path.join(tempfile.mkdtemp(prefix="la-prof-"), "p.duckdb")
    store = Store(db)
    originals = [(owner, attr, getattr(owner, attr)) for owner, attr, _, _ in STEPS]
    for owner, attr, name, wrap in STEPS:
        setattr(owner, attr, wrap(name, getattr(owner, attr)))
    sampler = RssSampler()
    sampler.start()
    t0, cpu0 = time.perf_counter(), time.process_time()
    try:
        res = ingest_mod.ingest_file(store, path)
    finally:
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        sampler.stop_ = True
        sampler.join()
        for owner, attr, fn in originals:
            setattr(owner, attr, fn)
    print(f"ingest {path}: {res.status} {res.message}".rstrip())
    print(f"wall {wall:.2f} s, process CPU {cpu:.2f} s (both cores: {cpu / wall:.2f}), peak RSS {sampler.peak:.0f} MB, "
          f"load average {os.getloadavg()[0]:.1f}")
    if check:
        print("check against the generator's sidecar:", check_totals(store.con, check))
    print(f"{'step':58s} {'calls':>6s} {'total s':>8s} {'share':>6s}")
    for name, ts in sorted(TIMES.items(), key=lambda kv: -sum(kv[1])):
        print(f"{name:58s} {len(ts):6d} {sum(ts):8.2f} {100 * sum(ts) / wall:5.1f}%")
    marks = sampler.samples[:: max(1, len(sampler.samples) // 12)]
    print("RSS over time (s: MB): " + ", ".join(f"{t:.0f}: {r:.0f}" for t, r in marks))
    store.close()


def stages(path: str) -> None:
    """Each piece of the pipeline alone over the whole file (wall and process CPU)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE ev (source_id INTEGER, line_no BIGINT, shape_id UBIGINT, ts_ms DOUBLE, time_ms DOUBLE)")

    def run(name: str, per_batch=None) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        with InputFile(path) as f:
            if per_batch is None:
                for _ in f.chunks():
                    pass
            else:
                for lines in iter_line_batches(f, LineStats()):
                    per_batch(lines)
        print(f"{name:60s} wall {time.perf_counter() - t0:6.2f} s  cpu {time.process_time() - c0:6.2f} s")

    def cut(lines):
        return onednn_cut.cut_lines(con, lines)

    def ids(lines):
        cuts = cut(lines)
        return cuts, onednn_cut.with_shape_ids(con, onednn_cut.keys_of(cuts))

    def insert(lines):
        cuts, keys = ids(lines)
        _arrow = onednn_cut.event_rows(onednn_cut.with_events(cuts, keys))  # noqa: F841 - read below
        con.execute(f"INSERT INTO ev {onednn_cut.events_insert(1)}")

    run("read 16 MiB chunks (with the sha256 thread)")
    run("+ line batching (numpy -> Arrow)", lambda t: None)
    run("+ the cut (cut_lines)", cut)
    run("+ distinct keys and their DuckDB hash", ids)
    run("+ events into a DuckDB table", insert)


def cprofile(path: str) -> None:
    db = os.path.join(tempfile.mkdtemp(prefix="la-prof-"), "p.duckdb")
    store = Store(db)
    prof = cProfile.Profile()
    prof.enable()
    ingest_mod.ingest_file(store, path)
    prof.disable()
    store.close()
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--mode", choices=("instrument", "stages", "cprofile"), default="instrument")
    ap.add_argument("--check", help="the generator's JSON sidecar: compare per-kind totals after the ingest")
    args = ap.parse_args()
    if args.mode == "instrument":
        instrument(args.log, args.check)
    elif args.mode == "stages":
        stages(args.log)
    else:
        cprofile(args.log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
