#!/usr/bin/env python3
"""Where does ``loganalyze ingest`` spend its time on a big oneDNN log?  (No package edits.)

    python scripts/profile_onednn_ingest.py LOG [--mode instrument|stages|cprofile|proto] [--check LOG.json]

``instrument`` (default) runs the real ingest (``loganalyze.ingest.ingest_file``) in this
process with a proxy around the DuckDB connection that times every statement by what it
does, a wrapper timing the line batcher on its helper thread, a wrapper timing the pyparsing
grammar, and a sampler of this process's RSS.  Experiment flags change the ingest from the
outside, to measure a fix before anyone makes it: ``--no-register`` (replacement scans
instead of register/unregister inside the transaction), ``--one-regex`` (CUT_SQL with the
regex evaluated once per line), ``--narrow-recut`` (cut only the lines of new shapes again),
``--chunk-mb``, ``--memory-limit``, ``--threads``; ``--check`` compares the per-kind totals
with the generator's sidecar afterwards.

``stages`` times the pipeline cut into pieces, each alone (reading, line batching, UTF-8
validation, pieces of the SQL cut).  ``cprofile`` runs the ingest under cProfile.  ``proto``
runs a prototype hot path (numpy cutter + Arrow string_view columns + INSERT) for comparison.
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import sys
import tempfile
import threading
import time

import duckdb
import numpy as np
import pyarrow as pa

import loganalyze.importers.onednn as onednn
from loganalyze import ingest as ingest_mod
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


LABELS = [
    ("INSERT INTO onednn_events", "insert: cut + insert events (per batch)"),
    ("bool_or(time_ms IS NULL)", "scan: distinct shapes of the batch from onednn_events"),
    ("any_value(key)", "new keys: cut again, keys of new shapes"),
    ("INSERT OR IGNORE INTO onednn_shapes", "insert shapes"),
    ("AND time_ms IS NULL", "skip bad times"),
    ("CREATE OR REPLACE TEMP TABLE _rk", "rekey: cut again"),
    ("_rk", "rekey: other"),
    ("op_class = 'info'", "describe source: info lines"),
    ("GROUP BY ALL ORDER BY 6 DESC", "describe source: dialect"),
    ("FILTER (WHERE s.op_class IN", "describe source: count kinds"),
    ("COMMIT", "commit"),
    ("INSERT INTO sources", "insert source row"),
]


def label_of(sql: str) -> str:
    for needle, name in LABELS:
        if needle in sql:
            return name
    return "other: " + " ".join(sql.split())[:50]


class TimedCon:
    """Delegates to a DuckDB connection; times ``execute`` by statement kind.

    With ``no_register``, ``register``/``unregister`` only keep the object in a dict and
    ``execute`` binds it to a local variable of the same name, which DuckDB's replacement
    scan finds: no temporary view is created or dropped inside the ingest transaction.
    """

    def __init__(self, con, no_register: bool = False):
        self._con = con
        self._objs: dict = {}
        self.no_register = no_register
        self.times: dict[str, list[float]] = collections.defaultdict(list)

    def register(self, name, obj):
        if not self.no_register:
            return self._con.register(name, obj)
        self._objs[name] = obj
        return self

    def unregister(self, name):
        if not self.no_register:
            return self._con.unregister(name)
        self._objs.pop(name, None)
        return self

    def execute(self, sql, *a, **kw):
        o = self._objs
        # the names the importer registers, as locals of this frame (replacement scan)
        batch, _new_ids, _badt, _rk_ids, _bad = (o.get(n) for n in ("batch", "_new_ids", "_badt", "_rk_ids", "_bad"))
        _shapes, _segs, _skipped_rows = (o.get(n) for n in ("_shapes", "_segs", "_skipped_rows"))
        t0 = time.perf_counter()
        r = self._con.execute(sql, *a, **kw)
        self.times[label_of(sql)].append(time.perf_counter() - t0)
        del batch, _new_ids, _badt, _rk_ids, _bad, _shapes, _segs, _skipped_rows
        return r

    def __getattr__(self, name):
        return getattr(self._con, name)


#: the filter of CUT_SQL, and one that lets the regex run once per line (see --one-regex)
OLD_FILTER = """    WHERE starts_with(line, 'onednn_verbose') OR starts_with(line, 'dnnl_verbose')
       OR starts_with(line, 'mkldnn_verbose')"""
NEW_FILTER = """    WHERE starts_with(line, 'onednn_verbose,') OR starts_with(line, 'dnnl_verbose,')
       OR starts_with(line, 'mkldnn_verbose,')
       OR regexp_full_match(line, '(?:onednn|dnnl|mkldnn)_verbose\\r?\\n')"""


def one_regex_cut(cut_sql: str) -> str:
    """CUT_SQL without ``WHERE m.pre <> ''``: DuckDB pushes that predicate into the filter and
    evaluates regexp_extract there and again in the projection (see EXPLAIN).  When the marker
    is followed by a comma or the line end, the regex always matches, so the check can go."""
    assert OLD_FILTER in cut_sql and "    FROM v WHERE m.pre <> ''" in cut_sql
    return cut_sql.replace(OLD_FILTER, NEW_FILTER).replace("    FROM v WHERE m.pre <> ''", "    FROM v")


def _narrow_recut(tcon: "TimedCon") -> None:
    """Experiment: before the importer cuts the batch again to read the keys of new shapes
    (or to key lines whole), narrow ``batch`` to the lines that carry those shapes, found in
    ``onednn_events`` by shape id.  Needs ``no_register`` (the batch is in ``tcon._objs``)."""
    import pyarrow.compute as pc

    imp = onednn.OneDNNVerboseImporter
    orig_new, orig_rekey = imp._parse_new_keys, imp._rekey

    def lines_of(ids, lo, hi, first_only):
        tcon.register("_ids", pa.table({"h": pa.array(list(ids), pa.uint64())}))
        agg = "min(line_no)" if first_only else "line_no"
        sql = (f"SELECT {agg} FROM onednn_events WHERE line_no BETWEEN {lo} AND {hi} "
               f"AND shape_id IN (SELECT h FROM _ids)" + (" GROUP BY shape_id" if first_only else ""))
        _ids = tcon._objs["_ids"]  # noqa: F841 - replacement scan
        rows = tcon._con.execute(sql).fetchall()
        tcon.unregister("_ids")
        return [r[0] for r in rows]

    def narrowed(first_only, ids, call):
        full = tcon._objs["batch"]
        col = full.column("line_no")
        lo, hi = pc.min(col).as_py(), pc.max(col).as_py()
        keep = lines_of(ids, lo, hi, first_only)
        tcon._objs["batch"] = full.filter(pc.is_in(col, value_set=pa.array(keep, pa.int64())))
        try:
            return call()
        finally:
            tcon._objs["batch"] = full

    def parse_new_keys(self, con, new_ids, known, rekey_ids):
        return narrowed(True, new_ids, lambda: orig_new(self, con, new_ids, known, rekey_ids))

    def rekey(self, ctx, ids, known, lo, hi):
        return narrowed(False, ids, lambda: orig_rekey(self, ctx, ids, known, lo, hi))

    imp._parse_new_keys, imp._rekey = parse_new_keys, rekey


def instrument(path: str, memory_limit: str | None, threads: int | None, no_register: bool = False,
               one_regex: bool = False, check: str | None = None, narrow_recut: bool = False,
               chunk_mb: int | None = None) -> None:
    db = os.path.join(tempfile.mkdtemp(prefix="la-prof-"), "p.duckdb")
    store = Store(db)
    if memory_limit:
        store.con.execute(f"SET memory_limit = '{memory_limit}'")
    if threads:
        store.con.execute(f"SET threads = {threads}")
    if one_regex:
        onednn.CUT_SQL = one_regex_cut(onednn.CUT_SQL)
        onednn.INSERT_SQL = onednn.INSERT_SQL.replace(OLD_FILTER, NEW_FILTER).replace(
            "    FROM v WHERE m.pre <> ''", "    FROM v")
    tcon = TimedCon(store.con, no_register)
    store.con = tcon
    if narrow_recut:
        _narrow_recut(tcon)
    if chunk_mb:
        InputFile.chunks.__defaults__ = (chunk_mb << 20,)
    producer = {"s": 0.0, "n": 0}
    orig_batches = onednn.iter_line_batches

    def timed_batches(chunks, stats):
        it = orig_batches(chunks, stats)
        while True:
            t0 = time.perf_counter()
            try:
                b = next(it)
            except StopIteration:
                producer["s"] += time.perf_counter() - t0
                return
            producer["s"] += time.perf_counter() - t0
            producer["n"] += 1
            yield b

    parse = {"s": 0.0, "n": 0}
    orig_parse = onednn.g.parse_shape

    def timed_parse(*a, **kw):
        t0 = time.perf_counter()
        try:
            return orig_parse(*a, **kw)
        finally:
            parse["s"] += time.perf_counter() - t0
            parse["n"] += 1

    onednn.iter_line_batches = timed_batches
    onednn.g.parse_shape = timed_parse
    sampler = RssSampler()
    sampler.start()
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    res = ingest_mod.ingest_file(store, path)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    sampler.stop_ = True
    sampler.join()
    onednn.iter_line_batches = orig_batches
    onednn.g.parse_shape = orig_parse
    print(f"ingest {path}: {res.status} {res.message}".rstrip())
    print(f"wall {wall:.2f} s, process CPU {cpu:.2f} s, peak RSS {sampler.peak:.0f} MB "
          f"(memory_limit={memory_limit or 'default'}, threads={threads or 'default'}, "
          f"no_register={no_register}, one_regex={one_regex}, narrow_recut={narrow_recut}, "
          f"chunk={chunk_mb or 16} MiB)")
    if check:
        import json

        from loganalyze.query.onednn_summary import summary

        want = json.load(open(check))["per_kind"]
        cols, rows = summary(tcon._con, ["kind"])
        got = {r[0]: dict(zip(cols, r)) for r in rows}
        bad = [k for k, w in want.items()
               if got.get(k, {}).get("exec_count") != w["exec_count"]
               or abs(got[k]["exec_ms"] - w["exec_ms"]) > 1e-9 * w["exec_ms"]
               or got[k]["create_count"] != w["create_count"]]
        print("check against the generator's sidecar:", "OK" if not bad and len(got) == len(want) else f"MISMATCH {bad}")
    print(f"{'step':58s} {'calls':>6s} {'total s':>8s} {'share':>6s}  first/last call s")
    rows = sorted(tcon.times.items(), key=lambda kv: -sum(kv[1]))
    for name, ts in rows:
        print(f"{name:58s} {len(ts):6d} {sum(ts):8.2f} {100 * sum(ts) / wall:5.1f}%  {ts[0]:.4f} / {ts[-1]:.4f}")
    print(f"{'line batching on the helper thread (overlaps the SQL)':58s} {producer['n']:6d} {producer['s']:8.2f} "
          f"{100 * producer['s'] / wall:5.1f}%")
    print(f"{'pyparsing parse_shape':58s} {parse['n']:6d} {parse['s']:8.2f} {100 * parse['s'] / wall:5.1f}%")
    scan = tcon.times.get("scan: distinct shapes of the batch from onednn_events", [])
    if len(scan) >= 8:
        q = len(scan) // 4
        print("scan per batch, by quarter of the file (s): "
              + ", ".join(f"{sum(scan[i * q:(i + 1) * q]) / q:.4f}" for i in range(4)))
    ins = tcon.times.get("insert: cut + insert events (per batch)", [])
    if len(ins) >= 8:
        q = len(ins) // 4
        print("insert per batch, by quarter of the file (s): "
              + ", ".join(f"{sum(ins[i * q:(i + 1) * q]) / q:.4f}" for i in range(4)))
    marks = [s for s in sampler.samples[:: max(1, len(sampler.samples) // 12)]]
    print("RSS over time (s: MB): " + ", ".join(f"{t:.0f}: {r:.0f}" for t, r in marks))
    try:
        rows = tcon._con.execute(
            "SELECT tag, round(memory_usage_bytes / 2^20) FROM duckdb_memory() WHERE memory_usage_bytes > 0"
        ).fetchall()
        print("duckdb_memory() after commit (MB): " + ", ".join(f"{t}={m:.0f}" for t, m in rows))
    except duckdb.Error:
        pass
    store.close()


def stages(path: str) -> None:
    """Each piece alone, on the main thread, on the whole file."""
    f = InputFile(path)
    # 1. read the bytes (+ sha256 on the helper thread, as ingest does)
    t0 = time.perf_counter()
    n = 0
    for chunk in f.chunks():
        n += len(chunk)
    t_read = time.perf_counter() - t0
    print(f"read {n / 2**20:.0f} MiB in 16 MiB chunks (+sha256 thread): {t_read:.2f} s")

    # 2. line batching (numpy + arrow)
    f = InputFile(path)
    f.sha256 = "skip"  # no hashing
    stats = LineStats()
    t0 = time.perf_counter()
    batches = 0
    non_ascii = 0
    for b in iter_line_batches(f.chunks(), stats):
        batches += 1
    t_batch = time.perf_counter() - t0
    print(f"read + line batches: {t_batch:.2f} s, {batches} batches, {stats.lines} lines")

    # 2b. ascii check vs validation cast, on the raw chunks
    f = InputFile(path)
    f.sha256 = "skip"
    t_isascii = t_cast = 0.0
    for chunk in f.chunks():
        t0 = time.perf_counter()
        a = chunk.isascii()
        t_isascii += time.perf_counter() - t0
        if not a:
            non_ascii += 1
            arr = pa.Array.from_buffers(pa.large_binary(), 1, [None, pa.py_buffer(
                pa.array([0, len(chunk)], pa.int64()).buffers()[1]), pa.py_buffer(chunk)])
            t0 = time.perf_counter()
            arr.cast(pa.large_string())
            t_cast += time.perf_counter() - t0
    print(f"non-ASCII chunks {non_ascii}/{batches}: isascii {t_isascii:.2f} s, UTF-8 validation cast {t_cast:.2f} s")

    # 3. SQL pieces on each batch, no insert
    con = duckdb.connect()
    pieces = {
        "filter only (starts_with)": "SELECT count(*) FROM batch WHERE starts_with(line, 'onednn_verbose') "
                                     "OR starts_with(line, 'dnnl_verbose') OR starts_with(line, 'mkldnn_verbose')",
        "cut (CUT_SQL), hash(key) + casts": f"SELECT sum(hash(key)), sum(try_cast(ts AS DOUBLE)), "
                                           f"sum(try_cast(tail AS DOUBLE)) FROM ({onednn.CUT_SQL})",
        "cut, hash(key) only": f"SELECT sum(hash(key)) FROM ({onednn.CUT_SQL})",
        "regexp_extract only": "SELECT count(*) FROM batch WHERE regexp_extract(line, "
                               "'^((?:onednn|dnnl|mkldnn)_verbose(?:,v[0-9]+)?)(,[0-9]+\\.[0-9]*)?(,|\\r?\\n$)', 1) <> ''",
        "hash(line) only": "SELECT sum(hash(line)) FROM batch",
    }
    tot = collections.Counter()
    f = InputFile(path)
    f.sha256 = "skip"
    for b in iter_line_batches(f.chunks(), LineStats()):
        con.register("batch", b.table)
        for name, sql in pieces.items():
            t0 = time.perf_counter()
            con.execute(sql).fetchall()
            tot[name] += time.perf_counter() - t0
        con.unregister("batch")
    for name, s in tot.items():
        print(f"SQL per batch, summed: {name:40s} {s:.2f} s")


# --------------------------------------------------------------------------- prototype: numpy cut
# What the per-line cut costs if lines.py computed, with numpy, the byte positions of each
# verbose line's prefix, timestamp, body and time, and handed them to DuckDB as Arrow
# ``string_view`` columns pointing into the chunk (no string is copied or built in SQL).
# Covers the hot path only (no shapes, no skipped lines): an estimate, not an importer.

VIEW = np.dtype([("len", "<i4"), ("prefix", "V4"), ("buf", "<i4"), ("off", "<i4")])
PROTO_MARKERS = (b"onednn_verbose", b"dnnl_verbose", b"mkldnn_verbose")


def sv_array(data: bytes, buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> pa.Array:
    """Arrow string_view of ``buf[start:end]`` per row; values over 12 bytes point into ``data``."""
    n = len(start)
    ln = (end - start).astype(np.int32)
    out = np.zeros(n, dtype=VIEW)
    out["len"] = ln
    raw = out.view(np.uint8).reshape(n, 16)
    top = len(buf) - 1
    short, long_ = np.flatnonzero(ln <= 12), np.flatnonzero(ln > 12)
    if len(long_):
        raw[long_, 4:8] = buf[np.minimum(start[long_, None] + np.arange(4), top)]
        out["off"][long_] = start[long_]
    if len(short):
        w = buf[np.minimum(start[short, None] + np.arange(12), top)]
        w[np.arange(12)[None, :] >= ln[short, None]] = 0
        raw[short, 4:16] = w
    return pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(out), pa.py_buffer(data)])


def numpy_cut(data: bytes, line_no0: int) -> tuple[pa.Table, int]:
    """(line_no, pre, ts, body, tail) of the verbose lines of ``data`` (whole lines), and the
    number of lines.  key = pre || body, as CUT_SQL cuts it."""
    buf = np.frombuffer(data, np.uint8)
    top = len(buf) - 1
    ends = np.flatnonzero(buf == 10) + 1
    starts = np.concatenate(([0], ends[:-1]))
    ln = ends - starts
    head = buf[np.minimum(starts[:, None] + np.arange(16), top)]
    plen = np.zeros(len(starts), np.int64)
    for m in PROTO_MARKERS:
        L = len(m) + 1
        plen[(ln > L) & np.all(head[:, :L] == np.frombuffer(m + b",", np.uint8), axis=1)] = len(m)
    v = np.flatnonzero(plen)
    s, e, pl = starts[v], ends[v], plen[v]
    commas = np.flatnonzero(buf == 44)
    ci = np.searchsorted(commas, s + pl)
    c1 = commas[ci]
    c2 = commas[np.minimum(ci + 1, len(commas) - 1)]
    c3 = commas[np.minimum(ci + 2, len(commas) - 1)]
    d2 = buf[np.minimum(c1 + 2, top)]
    ver = (buf[np.minimum(c1 + 1, top)] == 118) & (d2 >= 48) & (d2 <= 57) & (c2 - c1 <= 5) & (c2 < e)
    pre_end = np.where(ver, c2, c1)
    nxt = np.where(ver, c3, c2)
    TW = 24
    tw = buf[np.minimum(pre_end[:, None] + 1 + np.arange(TW), top)]
    inside = np.arange(TW)[None, :] < (nxt - pre_end - 1)[:, None]
    isd, isdot = (tw >= 48) & (tw <= 57), tw == 46
    ts_ok = ((nxt - pre_end - 1 >= 2) & (nxt - pre_end - 1 <= TW) & (nxt < e) & isd[:, 0]
             & np.all(~inside | isd | isdot, axis=1) & (np.sum(inside & isdot, axis=1) == 1))
    body_s = np.where(ts_ok, nxt, pre_end)
    eol = np.where(buf[e - 2] == 13, 2, 1)
    last = commas[np.searchsorted(commas, e - 1) - 1]
    has_tail = last >= body_s
    body_e = np.where(has_tail, last, e - eol)
    tbl = pa.table({
        "line_no": pa.array(line_no0 + v + 1),
        "pre": sv_array(data, buf, s, pre_end),
        "ts": sv_array(data, buf, np.where(ts_ok, pre_end + 1, pre_end), np.where(ts_ok, nxt, pre_end)),
        "body": sv_array(data, buf, body_s, body_e),
        "tail": sv_array(data, buf, np.where(has_tail, last + 1, e - eol), e - eol),
    })
    return tbl, len(starts)


def proto(path: str, check: str | None) -> None:
    from loganalyze.lines import prefetch

    def batches():
        carry, line0 = b"", 0
        for chunk in InputFile(path).chunks():  # with the sha256 thread, as ingest
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            t0 = time.perf_counter()
            tbl, n = numpy_cut(data[:cut], line0)
            times["numpy cut (helper thread)"] += time.perf_counter() - t0
            line0 += n
            yield tbl
        if carry:
            yield numpy_cut(carry + b"\n", line0)[0]

    times = collections.Counter()
    db = os.path.join(tempfile.mkdtemp(prefix="la-prof-"), "p.duckdb")
    store = Store(db)
    con = store.con
    sampler = RssSampler()
    sampler.start()
    t0 = time.perf_counter()
    con.execute("BEGIN")
    for batch in prefetch(batches()):  # noqa: B007 - found by DuckDB's replacement scan
        t1 = time.perf_counter()
        con.execute("INSERT INTO onednn_events SELECT 1, line_no, hash(pre || body), "
                    "try_cast(nullif(ts, '') AS DOUBLE), try_cast(tail AS DOUBLE) FROM batch")
        times["DuckDB insert from string_view columns"] += time.perf_counter() - t1
    del batch
    t1 = time.perf_counter()
    con.execute("COMMIT")
    times["commit"] += time.perf_counter() - t1
    wall = time.perf_counter() - t0
    sampler.stop_ = True
    sampler.join()
    print(f"prototype hot path (numpy cut + insert, no shapes): wall {wall:.2f} s, peak RSS {sampler.peak:.0f} MB")
    for k, v in times.items():
        print(f"  {k:45s} {v:.2f} s")
    if check:
        import json
        import math

        meta = json.load(open(check))
        n, total = con.execute("SELECT count(*), fsum(time_ms) FROM onednn_events").fetchone()
        want = math.fsum(v["exec_ms"] + v["create_ms"] for v in meta["per_kind"].values())
        ok = n == meta["lines_verbose"] and abs(total - want) <= 1e-9 * want
        print(f"check: {n} events (sidecar {meta['lines_verbose']} verbose lines), sum of times "
              f"{total!r} (sidecar exec+create {want!r}): {'OK' if ok else 'MISMATCH'}")
    store.close()


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
    ap.add_argument("--mode", choices=("instrument", "stages", "cprofile", "proto"), default="instrument")
    ap.add_argument("--memory-limit", help="SET memory_limit before the ingest (instrument mode)")
    ap.add_argument("--threads", type=int, help="SET threads before the ingest (instrument mode)")
    ap.add_argument("--no-register", action="store_true",
                    help="experiment: replacement scans instead of register/unregister in the transaction")
    ap.add_argument("--one-regex", action="store_true",
                    help="experiment: CUT_SQL with the regex evaluated once per line")
    ap.add_argument("--narrow-recut", action="store_true",
                    help="experiment (needs --no-register): cut only the lines of new shapes again, not the batch")
    ap.add_argument("--chunk-mb", type=int, help="experiment: read chunks of this many MiB (default 16)")
    ap.add_argument("--check", help="the generator's JSON sidecar: compare per-kind totals after the ingest")
    args = ap.parse_args()
    if args.mode == "instrument":
        instrument(args.log, args.memory_limit, args.threads, args.no_register, args.one_regex, args.check,
                   args.narrow_recut, args.chunk_mb)
    elif args.mode == "proto":
        proto(args.log, args.check)
    elif args.mode == "stages":
        stages(args.log)
    else:
        cprofile(args.log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
