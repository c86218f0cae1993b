#!/usr/bin/env python3
"""Benchmark the trace ingest on a real Kineto trace grown to a large size, against ``json.load``.

    python scripts/bench_trace_real.py --sizes 500

``bench_trace.py`` times traces of its own generator.  This takes real traces (by default
the public corpus's two Kineto traces: ``hta_critical_path__simple_add...trace.json.gz``, a
PyTorch 2.x CUDA trace with ``ac2g`` flows, ``cuda_sync`` and memset events, instants and
metadata, and ``hta_cpu_only__rank-34...pt.trace.json.gz``, a CPU-only trace with
fractional microsecond times; or ``--trace FILE``, repeatable) and writes each one's events
again and again until the file reaches each size
(MB): the metadata events once, every other event once per copy, its ``ts`` moved past the
copy before, its ``correlation``, ``External id``, ``Ev Idx`` and flow ``id`` moved past
the copy's own, in the exporter's layout (each event over several indented lines).  Then,
in ``--rounds`` alternating rounds, each in its own process (wall time, CPU and peak RSS
from ``os.wait4``; best of each kept):

(a) ``json.load`` of the file (the anchor of issue 10);
(b) ``loganalyze ingest TRACE --db FRESH.duckdb``.

The per-operator counts, inclusive and self times (``summary --by op --format json``) and
the per-kernel counts and times (``--by kernel``; for a trace without kernels, that the
summary says there are none) are checked against the corpus's independent answers for the
trace (``expected/<trace>.expected.json``) times the number of copies (the copies do not
overlap in time, so nothing nests across them).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import bench_trace as bt  # noqa: E402
from corpus_answers import CORPUS, expected_for  # noqa: E402

DEFAULT_TRACES = [CORPUS / "trace_json" / name for name in (
    "hta_critical_path__simple_add__benchmark_result_493459_1694039959_trace.json.gz",
    "hta_cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")]
#: the args that number things within a trace (moved past each copy's own)
ID_ARGS = ("correlation", "External id", "Ev Idx")


def _read(path: Path) -> dict:
    with (gzip.open(path) if path.suffix == ".gz" else open(path, "rb")) as f:
        return json.load(f)


def _text(event: dict) -> str:
    """An event as the PyTorch exporter lays it out (over several indented lines)."""
    return "  " + json.dumps(event, indent=4).replace("\n", "\n  ")


def grown(source: Path, size_mb: int, workdir: Path) -> tuple[Path, int, int]:
    """``source``'s events written again and again into a trace of about ``size_mb`` MB;
    the trace, the number of copies and the number of events."""
    top = _read(source)
    events = top.pop("traceEvents")
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    times = [e["ts"] for e in body if "ts" in e]
    span = int(max(e["ts"] + e.get("dur", 0) for e in body if "ts" in e) - min(times)) + 1000
    step = 1 + max([e["id"] for e in body if isinstance(e.get("id"), int)]
                   + [e["args"][k] for e in body for k in ID_ARGS if isinstance(e.get("args", {}).get(k), int)])
    copies = max(1, round(size_mb * 1e6 / sum(len(_text(e)) + 2 for e in body)))
    out = workdir / f"{source.name.split('.json')[0]}.x{copies}.json"
    events = len(meta) + copies * len(body)
    if out.exists():
        return out, copies, events
    tmp = out.with_suffix(".partial")
    with open(tmp, "w") as f:
        f.write("{\n" + "".join(f'  "{k}": {json.dumps(v)},\n' for k, v in top.items()) + '  "traceEvents": [\n')
        f.write(",\n".join(_text(e) for e in meta))
        for k in range(copies):
            for e in body:
                e = dict(e, ts=e["ts"] + k * span)
                if isinstance(e.get("id"), int):
                    e["id"] += k * step
                if e.get("args"):
                    e["args"] = {a: v + k * step if a in ID_ARGS and isinstance(v, int) else v
                                 for a, v in e["args"].items()}
                f.write(",\n" + _text(e) if meta or k or e is not body[0] else _text(e))
        f.write("\n  ]\n}\n")
    tmp.rename(out)
    return out, copies, events


def check(expected: dict | None, copies: int, db: Path) -> list[str]:
    """Problems in loganalyze's per-operator and per-kernel answers against the expected
    ones times ``copies``."""
    if expected is None:
        return ["no expected answers for this trace (not checked)"]
    bad = []
    ops = {o["op"]: o for o in json.loads(bt.run(bt.loganalyze_cmd() + [
        "summary", "--db", str(db), "--by", "op", "--format", "json"]).stdout)}
    for name, exp in dict(expected["per_name"]).items():
        got = ops.get(name)
        want = (exp["count"] * copies, exp["total_ns"] * copies, exp["self_ns"] * copies)
        have = got and (got["count"], round(got["total_us"] * 1000), round(got["self_us"] * 1000))
        if have != want:
            bad.append(f"op {name}: {have} != {want}")
    if set(ops) - set(dict(expected["per_name"])):
        bad.append(f"ops not expected: {sorted(set(ops) - set(dict(expected['per_name'])))[:3]}")
    res = bt.run(bt.loganalyze_cmd() + ["summary", "--db", str(db), "--by", "kernel", "--format", "json"])
    if not dict(expected["kernels"])["count"]:  # a CPU-only trace: the summary must say there are none
        if res.rc != 2 or "no gpu data" not in res.stderr:
            bad.append(f"kernels: none expected, summary --by kernel gave rc {res.rc}: {res.stderr.strip()[:80]}")
        return bad
    kernels = {k["kernel"]: k for k in json.loads(res.stdout)}
    for name, exp in dict(expected["kernels"])["per_name"].items():
        got = kernels.get(name)
        want = (exp["count"] * copies, exp["total_ns"] * copies)
        have = got and (got["count"], got["total_ns"])
        if have != want:
            bad.append(f"kernel {name[:40]}: {have} != {want}")
    return bad


def _measure(args, source: Path, expected: dict | None, size_mb: int, work: Path) -> tuple[str, list[str]]:
    """``source`` grown to ``size_mb`` MB, json.load against the ingest: the report's row and
    the answers' problems."""
    trace, copies, events = grown(source, size_mb, work)
    size = trace.stat().st_size
    db = work / "bench_real.duckdb"
    best: dict[str, bt.Result] = {}
    for i in range(args.rounds):
        for name, fn in (("json.load", lambda: bt._json_load(args, trace)), ("ingest", lambda: bt._ingest(args, trace, db))):
            r = fn()
            print(f"  round {i + 1}: {name:9s} {trace.name[:40]} {size / 1e6:.0f} MB: {r.seconds:6.2f} s wall, "
                  f"{r.cpu:6.2f} s CPU, {r.rss_mb:5.0f} MiB (load {os.getloadavg()[0]:.2f})", flush=True)
            if name not in best or r.seconds < best[name].seconds:
                best[name] = r
    problems = check(expected, copies, db)
    for p in problems:
        print(f"  MISMATCH {p}", flush=True)
    a, b = best["json.load"], best["ingest"]
    row = (f"| `{source.name.split('.json')[0][:40]}` | {size / 1e6:.0f} | {copies:,} | {events:,} | {a.seconds:.2f} "
           f"| {a.rss_mb:.0f} | {b.seconds:.2f} | {b.cpu:.2f} | {b.rss_mb:.0f} | **{b.seconds / a.seconds:.2f}** "
           f"| {b.rss_mb * 2**20 / size:.2f} | {'yes' if not problems else 'NO: ' + '; '.join(problems[:2])} |")
    for p in (db, Path(str(db) + ".wal")) + (() if args.keep else (trace,)):
        if p.exists():
            p.unlink()
    return row, problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="500", help="trace sizes in MB, comma-separated")
    ap.add_argument("--trace", action="append", default=None,
                    help="a real trace to grow (.json or .json.gz); repeatable; default: the corpus's Kineto traces")
    ap.add_argument("--workdir", default=str(REPO / "bench-data" / "real-traces"))
    ap.add_argument("--rounds", type=int, default=3, help="alternating json.load / ingest rounds (best kept)")
    ap.add_argument("--wait-idle", type=float, default=60, help="seconds to wait for an idle machine before each run")
    ap.add_argument("--keep", action="store_true", help="keep the grown traces")
    ap.add_argument("--report", default=None, help="also write the Markdown report here")
    args = ap.parse_args()
    sources, work = [Path(t) for t in args.trace or DEFAULT_TRACES], Path(args.workdir)
    for source in sources:
        if not source.exists():
            raise SystemExit(f"no trace at {source}: give --trace, or put the public corpus at {CORPUS}")
    work.mkdir(parents=True, exist_ok=True)
    lines = [f"Command: `python scripts/bench_trace_real.py {' '.join(sys.argv[1:])}` (run from the repository root); "
             f"best of {args.rounds} alternating rounds.", "",
             "| grown from | size MB | copies | events | (a) json.load s | (a) RSS MiB | (b) ingest s | (b) CPU s "
             "| (b) RSS MiB | (b)/(a) | (b) RSS / file | answers agree |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    failed = False
    for source in sources:
        expected = expected_for(source)
        for size_mb in (int(s) for s in args.sizes.split(",")):
            row, problems = _measure(args, source, expected, size_mb, work)
            failed |= bool(problems)
            lines.append(row)
    lines += ["", "Targets (issue 10): (b)/(a) <= 0.5 (goal 0.25), (b) RSS <= 1x the file (goal 0.5x)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.report:
        Path(args.report).write_text(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
