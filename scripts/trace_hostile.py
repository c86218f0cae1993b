#!/usr/bin/env python3
"""Hostile but (mostly) valid trace-event files, ingested one by one in a child process that
is timed and whose peak RSS is read with ``resource.getrusage(RUSAGE_CHILDREN)``.

    python scripts/trace_hostile.py                     # every case, 40k events, 200 MB string
    python scripts/trace_hostile.py --cases fifo deep --events 100000
    python scripts/trace_hostile.py --cases big_string --string-mb 200

Cases (each file is written under ``--dir``, default ``bench-data/hostile``, gitignored):

- ``fifo``: n B events of distinct names, then their E events first-in-first-out (each E
  closes the outermost open B);
- ``unmatched``: n open B events, then n E events whose names were never opened;
- ``deep``: n B events nested one within the other, closed last-in-first-out;
- ``deep_x``: n complete events, each within the previous one;
- ``async_fifo``: like ``fifo`` with async ``b``/``e`` events of one id;
- ``flows``: n flow starts/ends that each bind after a long run of closed slices;
- ``null``: non-object elements (null, number, string, array, empty object) among events;
- ``deep_array``: a 100k-deep nested array beside a valid event;
- ``big_string``: one event whose ``args`` holds a ``--string-mb`` MB string.

The CI tests (tests/test_trace_hostile.py) run the same shapes at sizes that take seconds.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _ev(ph: str, name: str, ts: int, **extra) -> str:
    d = {"ph": ph, "name": name, "cat": "cpu_op", "ts": ts, "pid": 1, "tid": 1}
    d.update(extra)
    return json.dumps(d)


def _elements(case: str, n: int):
    if case == "fifo":
        yield from (_ev("B", f"op{i}", i) for i in range(n))
        yield from (_ev("E", f"op{i}", n + i) for i in range(n))
    elif case == "unmatched":
        yield from (_ev("B", f"op{i}", i) for i in range(n))
        yield from (_ev("E", f"zz{i}", n + i) for i in range(n))
    elif case == "deep":
        yield from (_ev("B", f"op{i}", i) for i in range(n))
        yield from (_ev("E", f"op{n - 1 - i}", n + i) for i in range(n))
    elif case == "deep_x":
        yield from (_ev("X", f"op{i}", i, dur=2 * (n - i)) for i in range(n))
    elif case == "async_fifo":
        yield from (_ev("b", f"t{i}", i, id=1) for i in range(n))
        yield from (_ev("e", f"t{i}", n + i, id=1) for i in range(n))
    elif case == "flows":
        yield from (_ev("X", f"op{i}", 2 * i, dur=1) for i in range(n))
        yield from (_ev(ph, "flow", 2 * n + 10, id=i, bp="e") for i in range(n // 2) for ph in ("s", "f"))
    elif case == "null":
        yield _ev("X", "a", 0, dur=5)
        yield from ["null", "3", '"text"', "[1, 2]", "{}", '{"foo": 1}'] * max(1, n // 6)
    elif case == "deep_array":
        yield _ev("X", "a", 0, dur=5)
        yield "[" * 100_000 + "]" * 100_000
        yield _ev("X", "b", 10, dur=5)
    else:
        raise ValueError(case)


def write_case(path: Path, case: str, n: int, string_mb: int) -> None:
    """Write one hostile trace to ``path`` without holding it in memory."""
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n')
        if case == "big_string":
            f.write(_ev("X", "a", 0, dur=5) + ',\n{"ph": "X", "name": "big", "cat": "cpu_op", "ts": 10, '
                    '"dur": 5, "pid": 1, "tid": 1, "args": {"s": "')
            block = "x" * (1 << 20)
            for _ in range(string_mb):
                f.write(block)
            f.write('"}},\n' + _ev("X", "b", 20, dur=5))
        else:
            f.write(",\n".join(_elements(case, n)))
        f.write("\n]}\n")


def measure(path: Path, db: Path) -> tuple[float, float, int, str]:
    """(seconds, peak RSS MiB of the ingest process, exit code, last line of output)."""
    db.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "loganalyze", "ingest", "-q", "--db", str(db), str(path)],
                          capture_output=True, text=True, cwd=REPO)
    secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = (proc.stdout + proc.stderr).strip().splitlines()
    # ru_maxrss of children is the largest of any child so far: run one case per invocation
    # when an earlier case may have been bigger
    return secs, max(peak, before) / 1024, proc.returncode, out[-1] if out else ""


CASES = ["fifo", "unmatched", "deep", "deep_x", "async_fifo", "flows", "null", "deep_array", "big_string"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=CASES, choices=CASES)
    ap.add_argument("--events", type=int, default=40_000, help="n of the adversarial shapes")
    ap.add_argument("--string-mb", type=int, default=200)
    ap.add_argument("--dir", type=Path, default=REPO / "bench-data" / "hostile")
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    print("| case | file MB | seconds | peak RSS MiB (max so far) | exit | last message |")
    print("|---|---|---|---|---|---|")
    for case in args.cases:
        path = args.dir / f"{case}.json"
        write_case(path, case, args.events, args.string_mb)
        secs, rss, rc, last = measure(path, args.dir / f"{case}.duckdb")
        print(f"| {case} | {path.stat().st_size / 1e6:.1f} | {secs:.1f} | {rss:.0f} | {rc} | {last[:100]} |",
              flush=True)
        path.unlink()


if __name__ == "__main__":
    main()
