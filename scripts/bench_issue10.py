#!/usr/bin/env python3
"""Every row of issue 10's table in one run: the four benchmarks one after another, each
side by side with its anchor, their reports printed together.

    python scripts/bench_issue10.py [--onednn-sizes 1G,2G,4G] [--trace-sizes 500,1000,2000]
                                    [--nsys-kernels 2000000] [--report bench-data/issue10.md]

1. ``bench_onednn.py``: mawk's per-kind sum, ``loganalyze ingest`` and ``loganalyze summary``
   on generated oneDNN logs of each size (rows 1, 2 and 5: time, peak RSS, growth per GiB);
2. ``bench_trace.py``: ``json.load`` against ``loganalyze ingest`` on generated Kineto traces
   (row 3: time and peak RSS against the file size), of the usual density and (``--args
   minimal``, ``--dense-trace-sizes``) of the density of the issue's own trace;
3. ``bench_nsys.py``: a plain sqlite3 ``GROUP BY`` per kernel against ingest + per-kernel
   summary on an nsys export (row 4);
4. ``bench_startup.py``: ``python -c pass``, ``import duckdb``, ``--help`` and ``summary``;
5. inputs of real shapes (``--dialect-size``, ``--real-trace-sizes``; empty for none):
   ``bench_onednn_dialects.py`` (every corpus oneDNN dialect repeated to 1 GiB, against mawk)
   and ``bench_trace_real.py`` (the corpus's real Kineto traces, CUDA and CPU-only, each grown to
   500 MB, against ``json.load``); ``bench_onednn.py --dynamic-batch`` (the first oneDNN
   log with its batch sizes drawn from 1..B: a distinct shape every few lines, against mawk).

Each child waits for an idle machine as it does alone and checks its answers against its
anchor; a child that fails is reported and the others still run.  The inputs are generated
(and kept) under ``bench-data/``.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def run_child(name: str, argv: list[str], report: Path) -> tuple[str, int, float]:
    """Run one benchmark script; its Markdown report (``--report``) and exit status."""
    print(f"[{time.strftime('%H:%M:%S')}] {name}: {' '.join(argv)}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(HERE / argv[0]), *argv[1:], "--report", str(report)], cwd=REPO)
    seconds = time.perf_counter() - t0
    text = report.read_text() if report.exists() else f"(no report: exit status {proc.returncode})\n"
    return text, proc.returncode, seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--onednn-sizes", default="1G,2G,4G")
    ap.add_argument("--trace-sizes", default="500,1000,2000", help="MB")
    ap.add_argument("--trace-layout", default="compact", choices=("compact", "pretty"))
    ap.add_argument("--dense-trace-sizes", default="500",
                    help="MB of traces of minimal events (bench_trace.py --args minimal: the density of the "
                         "issue's trace); empty: none")
    ap.add_argument("--nsys-kernels", default="2000000")
    ap.add_argument("--dialect-size", default="1G",
                    help="size each corpus oneDNN log is repeated to (bench_onednn_dialects.py); empty: none")
    ap.add_argument("--real-trace-sizes", default="500",
                    help="MB each real Kineto trace is grown to (bench_trace_real.py); empty: none")
    ap.add_argument("--dynamic-batch", type=int, default=64,
                    help="batch sizes 1..B in the first oneDNN log, timed again (bench_onednn.py --dynamic-batch); "
                         "0: not run")
    ap.add_argument("--repeat", type=int, default=1, help="rounds per benchmark (medians kept)")
    ap.add_argument("--wait-idle", type=float, default=60)
    ap.add_argument("--workdir", default=str(REPO / "bench-data"))
    ap.add_argument("--report", default=str(REPO / "bench-data" / "issue10.md"))
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    idle = ["--wait-idle", str(args.wait_idle)]
    children = [
        ("oneDNN verbose logs", "onednn",
         ["bench_onednn.py", "--sizes", args.onednn_sizes, "--repeat", str(args.repeat), "--workdir", str(work), *idle]),
        ("Kineto trace JSON", "trace",
         ["bench_trace.py", "--sizes", args.trace_sizes, "--rounds", str(args.repeat), "--layout", args.trace_layout,
          "--workdir", str(work), *idle]),
        *([("Kineto trace JSON, minimal events", "trace-minimal",
            ["bench_trace.py", "--sizes", args.dense_trace_sizes, "--args", "minimal", "--rounds", str(args.repeat),
             "--layout", args.trace_layout, "--workdir", str(work), *idle])]
          if args.dense_trace_sizes else []),
        ("nsys export", "nsys",
         ["bench_nsys.py", "--kernels", args.nsys_kernels, "--rounds", str(args.repeat), "--dir", str(work)]),
        *([("oneDNN verbose logs of every corpus dialect", "onednn-dialects",
            ["bench_onednn_dialects.py", "--size", args.dialect_size, "--repeat", str(args.repeat), *idle])]
          if args.dialect_size else []),
        *([("real Kineto traces, grown", "trace-real",
            ["bench_trace_real.py", "--sizes", args.real_trace_sizes, "--rounds", str(args.repeat), *idle])]
          if args.real_trace_sizes else []),
        *([("oneDNN verbose log of dynamic batch sizes", "onednn-dynamic",
            ["bench_onednn.py", "--sizes", args.onednn_sizes.split(",")[0], "--dynamic-batch", str(args.dynamic_batch),
             "--repeat", str(args.repeat), "--workdir", str(work), *idle])]
          if args.dynamic_batch else []),
        ("start-up", "startup",
         ["bench_startup.py", "--runs", "15", "--onednn-log",
          str(work / f"onednn_{args.onednn_sizes.split(',')[0]}_seed1.log")]),
    ]
    parts, failed = [], []
    for name, stem, argv in children:
        text, rc, seconds = run_child(name, argv, work / f"issue10-{stem}.md")
        parts.append(f"## {name}\n\n{text}\n_(this benchmark ran {seconds:.0f} s; exit status {rc})_\n")
        if rc != 0:
            failed.append(name)
    out = "# Issue 10, every row in one run\n\n" + "\n".join(parts)
    Path(args.report).write_text(out)
    print(out)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
