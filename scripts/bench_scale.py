#!/usr/bin/env python3
"""Scaling benchmark: many mixed files (oneDNN logs and framework traces), 1 vs N jobs, growth
with input size, database and Parquet dataset size, and optionally Spark local mode.

    python scripts/bench_scale.py --sizes 0.25G,0.5G,1G --jobs 1,2 --report bench-data/scale.md

For each size it builds (once, under ``bench-data/scale-<size>/``) a directory of distinct
files: 80% of the bytes are variants of one generated 32 MiB oneDNN log
(``scripts/gen_onednn_log.py``), 20% variants of one generated 8 MiB Kineto-like trace
(``scripts/bench_trace.py``'s generator), half of them gzip-compressed.  Each variant differs by one line of application output (logs) or one top-level
key (traces), so every file is new content and the answers are the same for each.  Then, per
``--jobs`` value, it times ``loganalyze ingest -q --jobs N`` into a fresh database, in a
subprocess (wall time, peak RSS of the largest process: the writer or a worker), and checks
that every file was ingested and the per-kind totals equal the sum of the independent answers.
It exports the database to a Parquet dataset and times ``summary`` on both.  ``--spark-size``
adds ``loganalyze.spark.ingest_with_spark`` (local[N]) and the Spark per-kind and per-operator
totals on an input of that size.

It prints a Markdown report (also to ``--report``) with the commands, the machine, the load
average before each run and the figures.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG_MB = 32
TRACE_MB = 8


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def base_log(work: Path) -> Path:
    """One generated 32 MiB oneDNN log, made once."""
    log = work / f"onednn_{LOG_MB}M.log"
    if not log.exists():
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_onednn_log.py"), "--size", f"{LOG_MB}M",
                        "--out", str(log), "--seed", "7", "--quiet"], check=True)
    return log


def base_trace(work: Path) -> Path:
    """One generated 8 MiB Kineto-like trace, made once."""
    trace = work / f"kineto_{TRACE_MB}M.pt.trace.json"
    if not trace.exists():
        sys.path.insert(0, str(ROOT / "scripts"))
        from bench_trace import generate

        work.mkdir(parents=True, exist_ok=True)
        generate(trace, TRACE_MB)
    return trace


def trace_variant(data: bytes, i: int) -> bytes:
    """The trace with one more top-level key: new content, the same events."""
    start = data.index(b"{")
    return data[:start + 1] + f'"benchVariant": {i}, '.encode() + data[start + 1:]


def build_inputs(work: Path, size: int) -> tuple[Path, dict]:
    """The input directory of ``size`` bytes (about) and what each original contributes."""
    out = work / f"scale-{size >> 20}M"
    manifest = out / "manifest.json"
    if manifest.exists():
        return out / "in", json.loads(manifest.read_text())
    shutil.rmtree(out, ignore_errors=True)
    (out / "in").mkdir(parents=True)
    log = base_log(work).read_bytes()
    trace = base_trace(work).read_bytes()
    counts = {"onednn": 0, "trace": 0}
    written, i = 0, 0
    while written < size * 0.8:
        data = f"application output: bench variant {i}\n".encode() + log
        (out / "in" / f"log{i:05d}.log").write_bytes(data)
        written += len(data)
        counts["onednn"] += 1
        i += 1
    j = 0
    while written < size:
        data = trace_variant(trace, j)
        name = f"trace{j:05d}.pt.trace.json"
        if j % 2:
            data = gzip.compress(data, compresslevel=6, mtime=0)
            name += ".gz"
        (out / "in" / name).write_bytes(data)
        written += len(data)
        counts["trace"] += 1
        j += 1
    counts["files"] = i + j
    counts["bytes"] = sum(p.stat().st_size for p in (out / "in").iterdir())
    manifest.write_text(json.dumps(counts))
    return out / "in", counts


def timed(cmd: list[str]) -> dict:
    """Run ``cmd``; wall time, CPU time (its processes and their children) and the peak RSS of
    its largest process (``os.wait4``: the command's own rusage covers the workers it reaped)."""
    import tempfile

    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {stderr[-2000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
            "load_before": load, "stderr": stderr}


def _totals(rows_by_family: dict) -> dict:
    return {("onednn", r["kind"]): r["exec_count"] for r in rows_by_family.get("onednn", [])} | \
        {("trace", r["op"]): r["count"] for r in rows_by_family.get("trace", [])}


def expected_totals(counts: dict, work: Path) -> dict:
    """Per-kind exec counts and per-operator counts: each original's independent answer times
    its number of variants."""
    import loganalyze

    want: dict = {}
    for path, times in ((base_log(work), counts["onednn"]), (base_trace(work), counts["trace"])):
        with loganalyze.connect(":memory:") as d:
            d.ingest(str(path), jobs=1)
            fams = {f.family: f.result.records() for f in d.summaries(output="rows")}
        for key, n in _totals(fams).items():
            want[key] = want.get(key, 0) + n * times
    return want


def totals(store_args: list[str]) -> dict:
    """The same figures from a database or dataset, through the command line."""
    fams = {}
    for family, by in (("onednn", "kind"), ("trace", "op")):
        res = subprocess.run([sys.executable, "-m", "loganalyze", "summary", *store_args, "--family", family,
                              "--by", by, "--format", "json"], capture_output=True, text=True, check=True)
        fams[family] = json.loads(res.stdout)
    return _totals(fams)


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def bench_size(work: Path, size: int, jobs_list: list[int]) -> list[dict]:
    inputs, counts = build_inputs(work, size)
    want = expected_totals(counts, work)
    mb = counts["bytes"] / 2**20
    rows = []
    for jobs in jobs_list:
        db = work / f"bench-{size >> 20}M-j{jobs}.duckdb"
        db.unlink(missing_ok=True)
        r = timed([sys.executable, "-m", "loganalyze", "ingest", "-q", "--db", str(db), "--jobs", str(jobs),
                   str(inputs)])
        got = totals(["--db", str(db)])
        ds = work / f"bench-{size >> 20}M-j{jobs}.parquet"
        shutil.rmtree(ds, ignore_errors=True)
        exp = timed([sys.executable, "-m", "loganalyze", "export", "--db", str(db), "--parquet", str(ds)])
        s_db = timed([sys.executable, "-m", "loganalyze", "summary", "--db", str(db), "--family", "trace"])
        s_ds = timed([sys.executable, "-m", "loganalyze", "summary", "--dataset", str(ds), "--family", "trace"])
        rows.append({
            "size_mb": round(mb), "files": counts["files"], "jobs": jobs, "wall_s": r["wall_s"], "cpu_s": r["cpu_s"],
            "files_per_s": counts["files"] / r["wall_s"], "mb_per_s": mb / r["wall_s"],
            "peak_rss_mb": r["peak_rss_mb"], "load_before": r["load_before"],
            "db_mb": db.stat().st_size / 2**20, "dataset_mb": dir_mb(ds), "export_s": exp["wall_s"],
            "summary_db_s": s_db["wall_s"], "summary_dataset_s": s_ds["wall_s"],
            "totals_ok": got == want and totals(["--dataset", str(ds)]) == want,
        })
        print(json.dumps(rows[-1]), file=sys.stderr)
        db.unlink(missing_ok=True)
        shutil.rmtree(ds, ignore_errors=True)
    return rows


def bench_spark(work: Path, size: int, jobs: int) -> dict:
    from pyspark.sql import SparkSession

    from loganalyze.spark.ingest import ingest_with_spark
    from loganalyze.spark.summary import onednn_by_kind, trace_by_operator

    inputs, counts = build_inputs(work, size)
    t0 = time.perf_counter()
    spark = (SparkSession.builder.master(f"local[{jobs}]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", str(jobs)).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter() - t0
    ds = work / "bench-spark.parquet"
    shutil.rmtree(ds, ignore_errors=True)
    t1 = time.perf_counter()
    results = ingest_with_spark(spark, [str(inputs)], ds).collect()
    ingest_s = time.perf_counter() - t1
    t2 = time.perf_counter()
    kinds = {("onednn", r["kind"]): r["exec_count"] for r in onednn_by_kind(spark, ds).collect()}
    kinds |= {("trace", r["op"]): r["count"] for r in trace_by_operator(spark, ds).collect()}
    summary_s = time.perf_counter() - t2
    spark.stop()
    ok = sum(r["status"] == "ingested" for r in results) == counts["files"]
    out = {"size_mb": round(counts["bytes"] / 2**20), "files": counts["files"], "jobs": jobs, "start_s": started,
           "ingest_s": ingest_s, "files_per_s": counts["files"] / ingest_s,
           "mb_per_s": counts["bytes"] / 2**20 / ingest_s, "summary_s": summary_s, "dataset_mb": dir_mb(ds),
           "all_ingested": ok, "totals_ok": kinds == expected_totals(counts, work)}
    shutil.rmtree(ds, ignore_errors=True)
    return out


def report(rows: list[dict], spark: dict | None, argv: list[str]) -> str:
    lines = [f"Command: `python scripts/bench_scale.py {' '.join(argv)}`", "",
             f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
             "| input | files | jobs | wall s | files/s | MB/s | CPU s | peak RSS MB | load before | "
             "database MB | dataset MB | export s | summary db s | summary dataset s | totals equal |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['size_mb']} MiB | {r['files']} | {r['jobs']} | {r['wall_s']:.1f} | {r['files_per_s']:.1f} | "
                     f"{r['mb_per_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | {r['load_before']:.1f} | "
                     f"{r['db_mb']:.0f} | {r['dataset_mb']:.0f} | {r['export_s']:.1f} | {r['summary_db_s']:.2f} | "
                     f"{r['summary_dataset_s']:.2f} | {'yes' if r['totals_ok'] else 'NO'} |")
    if spark:
        lines += ["", "Spark local mode (`loganalyze.spark.ingest_with_spark`, local[{jobs}]):".format(**spark), "",
                  "| input | files | start s | ingest s | files/s | MB/s | per-kind summary s | dataset MB | totals equal |",
                  "|---|---|---|---|---|---|---|---|---|",
                  f"| {spark['size_mb']} MiB | {spark['files']} | {spark['start_s']:.1f} | {spark['ingest_s']:.1f} | "
                  f"{spark['files_per_s']:.1f} | {spark['mb_per_s']:.1f} | {spark['summary_s']:.1f} | "
                  f"{spark['dataset_mb']:.0f} | {'yes' if spark['totals_ok'] and spark['all_ingested'] else 'NO'} |"]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="0.25G,0.5G,1G", help="input sizes, comma-separated (e.g. 1G,2G,4G)")
    ap.add_argument("--jobs", default="1,2", help="--jobs values to time, comma-separated")
    ap.add_argument("--work", default=str(ROOT / "bench-data"), help="where inputs and databases go")
    ap.add_argument("--spark-size", help="also time Spark local mode (local[max jobs]) on an input of this size")
    ap.add_argument("--report", help="also write the Markdown report here")
    args = ap.parse_args()
    work = Path(args.work)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    jobs = [int(j) for j in args.jobs.split(",")]
    rows = [row for size in sizes for row in bench_size(work, size, jobs)]
    spark = bench_spark(work, parse_size(args.spark_size), max(jobs)) if args.spark_size else None
    text = report(rows, spark, sys.argv[1:])
    print(text)
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text(text)


if __name__ == "__main__":
    main()
