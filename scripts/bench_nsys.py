#!/usr/bin/env python3
"""Benchmark: large Nsight Systems exports, loganalyze against plain SQLite, side by side.

1. Builds (with the standard ``sqlite3`` module; kept and reused) an nsys-schema export per
   size in ``--kernels`` (default 2,000,000), one runtime launch call per kernel, and one NVTX
   push/pop range per ``--kernels-per-range`` kernels (default 10) on one thread: steps, each
   holding nine PyTorch ``emit_nvtx`` operator ranges, plus ten launches between operators.
2. Times, in ``--rounds`` rounds (default 3; medians kept), each command in its own process
   with its peak RSS and CPU seconds (``os.wait4``), one after another so that load from other
   processes falls on all alike:
   (a) the floor: one SQLite ``GROUP BY`` per kernel name on that file;
   (b) ``loganalyze ingest`` into a fresh database, then ``loganalyze summary --by kernel``;
   (c) ``loganalyze summary --by op`` (kernel -> launch -> innermost NVTX range).
3. Checks that (b)'s per-kernel counts and totals equal (a)'s.
4. Prints one row per size: (a), (b), (b)/(a), ingest, summary, (c), peak RSS.

    python scripts/bench_nsys.py [--kernels 2000000,4000000,8000000] [--rounds 3] [--dir bench-data]
                                 [--record docs/benchmarks.md]

Targets (issue 10): (b)/(a) <= 3 (goal 1.5) at 2 M kernels; (c) <= 5 s; peak RSS <= 2 GB.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
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


def run_measured(cmd: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS in MiB and standard output of
    ``cmd`` in its own process (``os.wait4``); exits with its error when it fails."""
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stdout.close()
        if p.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed: {err.read().decode(errors='replace').strip()[-800:]}")
    return dt, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out.decode()


FLOOR_SQL = ("SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
             "JOIN StringIds s ON s.id = k.demangledName GROUP BY 1")


def export_for(d: Path, n_kernels: int, per_range: int, rebuild: bool) -> Path:
    """The export of ``n_kernels`` kernels in ``d``, built when missing."""
    n_ranges = max(10, n_kernels // per_range)
    export = d / f"nsys_bench_{n_kernels}k_{n_ranges}r.sqlite"
    if rebuild or not export.exists():
        t = time.perf_counter()
        build(export, n_kernels, n_ranges)
        print(f"built {export} ({export.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t:.1f} s",
              flush=True)
    return export


def measure(export: Path, d: Path, rounds: int) -> dict:
    """Median figures of (a), (b) and (c) over ``rounds`` rounds on ``export``."""
    floor_code = (f"import sqlite3,json; c=sqlite3.connect('file:{export}?mode=ro', uri=True); "
                  f"print(json.dumps(c.execute({FLOOR_SQL!r}).fetchall()))")
    la = [sys.executable, "-m", "loganalyze.cli"]
    db = d / "nsys_bench.duckdb"
    runs: dict[str, list] = {k: [] for k in ("a", "ingest", "summary", "c")}
    loads = []
    run_measured([sys.executable, "-c", floor_code])  # page cache warm for both
    for _ in range(rounds):
        loads.append(os.getloadavg()[0])
        runs["a"].append(run_measured([sys.executable, "-c", floor_code]))
        for p in (db, Path(str(db) + ".wal")):
            if p.exists():
                p.unlink()
        runs["ingest"].append(run_measured(la + ["ingest", "-q", "--db", str(db), str(export)]))
        runs["summary"].append(run_measured(la + ["summary", "--db", str(db), "--by", "kernel", "--format", "json"]))
        runs["c"].append(run_measured(la + ["summary", "--db", str(db), "--by", "op", "--format", "json"]))
    floor = {n: (c, t) for n, c, t in json.loads(runs["a"][-1][3])}
    ours = {r["kernel"]: (r["count"], r["total_ns"]) for r in json.loads(runs["summary"][-1][3])}
    assert ours == floor, f"{export}: per-kernel totals differ from the SQLite GROUP BY"
    ops = json.loads(runs["c"][-1][3])
    med = {k: [statistics.median(r[i] for r in v) for i in range(3)] for k, v in runs.items()}
    b_each = [i[0] + s[0] for i, s in zip(runs["ingest"], runs["summary"])]
    ratios = [b / a[0] for b, a in zip(b_each, runs["a"])]
    with sqlite3.connect(f"file:{export}?mode=ro", uri=True) as con:
        n_k = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    return {"kernels": n_k, "mib": export.stat().st_size / 2**20, "a": med["a"], "ingest": med["ingest"],
            "summary": med["summary"], "c": med["c"], "b": statistics.median(b_each),
            "ratio": statistics.median(ratios), "ratios": ratios, "loads": loads, "names": len(floor),
            "attributed": sum(r["count"] for r in ops if not r["op"].startswith("(")), "ops": len(ops) - 1,
            "rss": max(med["ingest"][2], med["summary"][2], med["c"][2])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default="2000000", help="comma-separated kernel counts (e.g. 2000000,4000000)")
    ap.add_argument("--kernels-per-range", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=str(ROOT / "bench-data"))
    ap.add_argument("--record", help="append the results to this Markdown file (docs/benchmarks.md)")
    ap.add_argument("--report", help="write the results to this Markdown file")
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    sizes = [int(float(k)) for k in args.kernels.split(",") if k.strip()]
    exports = [export_for(d, n, args.kernels_per_range, args.rebuild) for n in sizes]
    try:
        import adbc_driver_sqlite  # noqa: F401
        reader = "ADBC SQLite driver"
    except ImportError:
        reader = "stdlib sqlite3"
    load0 = os.getloadavg()
    results = [measure(e, d, args.rounds) for e in exports]
    head = (f"{os.cpu_count()} cores, Python {platform.python_version()}, reader: {reader}; "
            f"{args.rounds} rounds, medians; 1-min load {load0[0]:.2f} at the start, "
            f"{os.getloadavg()[0]:.2f} at the end")
    lines = [head, "",
             "| kernels | export MiB | (a) sqlite3 floor s | (b) ingest + summary s | (b)/(a) | ingest s (CPU s) "
             "| summary --by kernel s | (c) summary --by op s | peak RSS MiB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['kernels']:,} | {r['mib']:.0f} | {r['a'][0]:.2f} | {r['b']:.2f} | **{r['ratio']:.2f}** "
                     f"| {r['ingest'][0]:.2f} ({r['ingest'][1]:.2f}) | {r['summary'][0]:.2f} | {r['c'][0]:.2f} "
                     f"| {r['rss']:.0f} |")
    lines.append("")
    for r in results:
        lines.append(f"{r['kernels']:,} kernels: (b)/(a) per round {', '.join(f'{x:.2f}' for x in r['ratios'])} "
                     f"(load before each: {', '.join(f'{x:.1f}' for x in r['loads'])}); per-kernel totals equal "
                     f"the SQLite GROUP BY for all {r['names']} names; {r['attributed']:,} kernels attributed to "
                     f"{r['ops']} operators.")
    lines.append("Targets: (b)/(a) <= 3 (goal <= 1.5); (c) <= 5 s; peak RSS <= 2048 MiB.")
    text = "\n".join(lines)
    print(text)
    if args.report:
        Path(args.report).write_text(text + "\n", encoding="utf-8")
    if args.record:
        with open(args.record, "a", encoding="utf-8") as f:
            f.write(f"\n### Run of {time.strftime('%Y-%m-%d %H:%M')} UTC\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
