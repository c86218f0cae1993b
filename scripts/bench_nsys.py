#!/usr/bin/env python3
"""Benchmark: a large Nsight Systems export, loganalyze against plain SQLite.

1. Builds (with the standard ``sqlite3`` module; kept and reused) an nsys-schema export
   with ``--kernels`` kernels (default 2,000,000), one runtime launch call each, and
   ``--ranges`` NVTX push/pop ranges (default 200,000) on one thread: steps, each holding
   nine PyTorch ``emit_nvtx`` operator ranges, plus ten launches between operators.
2. Times, side by side:
   (a) the floor: one SQLite ``GROUP BY`` per kernel name on that file;
   (b) ``loganalyze ingest`` into a fresh database, then ``loganalyze summary --by kernel``;
   (c) ``loganalyze summary --by op`` (kernel -> launch -> innermost NVTX range);
   each command in its own process, with its peak RSS (``wait4``).
3. Checks that (b)'s per-kernel counts and totals equal (a)'s.

    python scripts/bench_nsys.py [--kernels N] [--ranges N] [--dir bench-data] [--record docs/benchmarks.md]

Targets (issue 3): (b)/(a) <= 3, (c) <= 5 s on 2 cores, peak RSS <= 2 GB.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PID, TID = 31337, 31338
GTID = (PID << 24) | TID
GPID = PID << 24
N_NAMES = 200
OPS = [
    "aten::conv2d, seq = {s}, sizes = [[32, 64, 56, 56], [64, 64, 3, 3], [64], [], [], [], []]",
    "aten::batch_norm, seq = {s}, sizes = [[32, 64, 56, 56], [64], [64], [64], [64], [], [], [], []]",
    "aten::relu_, seq = {s}, sizes = [[32, 64, 56, 56]]",
    "aten::addmm, seq = {s}, sizes = [[1000], [32, 2048], [2048, 1000]]",
    "aten::add, seq = {s}, sizes = [[32, 256, 56, 56], [32, 256, 56, 56], []]",
    "aten::max_pool2d, seq = {s}, sizes = [[32, 64, 112, 112], [], [], [], [], []]",
    "aten::mm, seq = {s}, sizes = [[4096, 1024], [1024, 1024]]",
    "ConvolutionBackward0, stashed seq={s}",
    "aten::_softmax, seq = {s}, sizes = [[32, 1000], [], []]",
]


def build(path: Path, n_kernels: int, n_ranges: int) -> None:
    """The export; steps of 100 launches each: 9 op ranges of 10 launches, 10 launches between."""
    tmp = path.with_suffix(".tmp")
    if tmp.exists():
        tmp.unlink()
    con = sqlite3.connect(tmp)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.execute("CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT)")
    con.executemany("INSERT INTO EXPORT_META_DATA VALUES (?, ?)", [
        ("EXPORT_PRODUCT_VERSION", "2023.4.1.97 (bench)"), ("EXPORT_SCHEMA_VERSION", "3.11.1")])
    con.execute("CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT)")
    con.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, 'x', 'x')")
    strings = []
    for i in range(N_NAMES):
        strings += [(1 + 3 * i, f"void bench::kernel_{i}<float, {i % 7}>(float const*, float*, int)"),
                    (2 + 3 * i, f"kernel_{i}"), (3 + 3 * i, f"_ZN5bench8kernel_{i}IfLi{i % 7}EEEvPKfPfi")]
    launch_id = 3 * N_NAMES + 1
    strings.append((launch_id, "cudaLaunchKernel_v7000"))
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", strings)
    con.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
        mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
        gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
        blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
        dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER, localMemoryTotal INTEGER,
        gridId INTEGER, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER)""")
    con.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
        eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
        returnValue INTEGER NOT NULL, callchainId INTEGER)""")
    con.execute("""CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
        rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
        textId INTEGER, domainId INTEGER)""")
    step_ns = 120_000
    n_steps = max(1, n_ranges // 10)

    def launch_start(j: int) -> int:
        step, k = divmod(j, 100)
        return step * step_ns + 1_000 + k * 1_100

    def kernels():
        for j in range(n_kernels):
            name = (j * 7919) % N_NAMES
            ls = launch_start(j)
            start = ls + 5_000
            yield (start, start + 800 + 13 * name + (j % 11), 0, 1, None, 7, j + 1, GPID, 1 + 3 * name,
                   2 + 3 * name, 3 + 3 * name, 1, 0, 32, 64 + name, 1, 1, 256, 1, 1, 0, 0, 0, 0, j, 0, None, 0)

    def launches():
        for j in range(n_kernels):
            ls = launch_start(j)
            yield (ls, ls + 600, 0, GTID, j + 1, launch_id, 0, None)

    def ranges():
        seq = 0
        for step in range(n_steps):
            base = step * step_ns
            yield (base + 500, base + 100 * 1_100 + 1_500, 59, None, None, None, f"step {step % 100}", GTID,
                   None, None, 0)
            for k in range(9):
                first, last = launch_start(step * 100 + k * 11), launch_start(step * 100 + k * 11 + 9) + 600
                seq += 1
                yield (first - 200, last + 200, 59, None, None, None, OPS[k].format(s=seq % 5000), GTID, None,
                       None, 0)

    con.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({', '.join('?' * 28)})", kernels())
    con.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({', '.join('?' * 8)})", launches())
    con.executemany(f"INSERT INTO NVTX_EVENTS VALUES ({', '.join('?' * 11)})", ranges())
    con.commit()
    con.close()
    tmp.rename(path)


def run_measured(cmd: list[str], env=None) -> tuple[float, float, str]:
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err.decode(errors='replace').strip()[-800:]}")
    return dt, ru.ru_maxrss / 1024, out.decode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=2_000_000)
    ap.add_argument("--ranges", type=int, default=200_000)
    ap.add_argument("--dir", default=str(ROOT / "bench-data"))
    ap.add_argument("--record", help="append the results to this Markdown file (docs/benchmarks.md)")
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    export = d / f"nsys_bench_{args.kernels}k_{args.ranges}r.sqlite"
    if args.rebuild or not export.exists():
        t = time.perf_counter()
        build(export, args.kernels, args.ranges)
        print(f"built {export} ({export.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t:.1f} s")
    size_mib = export.stat().st_size / 2**20
    with sqlite3.connect(f"file:{export}?mode=ro", uri=True) as con:
        n_k, n_r, n_n = (con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in
                         ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"))
    floor_sql = ("SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                 "JOIN StringIds s ON s.id = k.demangledName GROUP BY 1")
    floor_code = (f"import sqlite3,json,sys; c=sqlite3.connect('file:{export}?mode=ro', uri=True); "
                  f"print(json.dumps(c.execute({floor_sql!r}).fetchall()))")
    ta, rss_a, out_a = run_measured([sys.executable, "-c", floor_code])
    floor = {n: (c, t) for n, c, t in json.loads(out_a)}

    db = d / "nsys_bench.duckdb"
    for p in (db, Path(str(db) + ".wal")):
        if p.exists():
            p.unlink()
    la = [sys.executable, "-m", "loganalyze.cli"]
    env = dict(os.environ)
    t_ing, rss_ing, _ = run_measured(la + ["ingest", "-q", "--db", str(db), str(export)], env)
    t_sum, rss_sum, out = run_measured(la + ["summary", "--db", str(db), "--by", "kernel", "--format", "json"], env)
    ours = {r["kernel"]: (r["count"], r["total_ns"]) for r in json.loads(out)}
    assert ours == floor, "per-kernel totals differ from the SQLite GROUP BY"
    t_op, rss_op, out = run_measured(la + ["summary", "--db", str(db), "--by", "op", "--format", "json"], env)
    ops = json.loads(out)
    attributed = sum(r["count"] for r in ops if not r["op"].startswith("("))
    tb = t_ing + t_sum
    rows = [
        ("(a) sqlite3 GROUP BY per kernel name (floor)", ta, rss_a),
        ("(b1) loganalyze ingest", t_ing, rss_ing),
        ("(b2) loganalyze summary --by kernel", t_sum, rss_sum),
        ("(b) = ingest + summary --by kernel", tb, max(rss_ing, rss_sum)),
        ("(c) loganalyze summary --by op", t_op, rss_op),
    ]
    try:
        import adbc_driver_sqlite  # noqa: F401
        reader = "ADBC SQLite driver"
    except ImportError:
        reader = "stdlib sqlite3"
    head = (f"{n_k:,} kernels, {n_r:,} runtime calls, {n_n:,} NVTX ranges; export {size_mib:.0f} MiB; "
            f"{os.cpu_count()} cores, Python {platform.python_version()}, reader: {reader}")
    lines = [head, "", "| step | seconds | peak RSS (MiB) |", "|---|---:|---:|"]
    lines += [f"| {n} | {t:.2f} | {r:.0f} |" for n, t, r in rows]
    lines += ["", f"(b)/(a) = {tb / ta:.2f} (target <= 3); (c) = {t_op:.2f} s (target <= 5 s); "
              f"peak RSS {max(r for _, _, r in rows):.0f} MiB (target <= 2048). "
              f"Per-kernel totals equal the SQLite GROUP BY for all {len(floor)} names; "
              f"{attributed:,} of {n_k:,} kernels attributed to {len(ops) - 1} operators."]
    text = "\n".join(lines)
    print(text)
    if args.record:
        with open(args.record, "a", encoding="utf-8") as f:
            f.write(f"\n### Run of {time.strftime('%Y-%m-%d %H:%M')} UTC\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
