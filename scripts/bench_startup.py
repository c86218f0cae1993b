"""Start-up time of the command: ``loganalyze --help`` and ``summary`` on a small database of
each family, side by side with ``python -c pass`` and ``python -c "import duckdb"``.

    python scripts/bench_startup.py [--runs 15] [--write-docs]

Each command runs ``--runs`` times as a whole process (after one warm-up); the median wall
time is reported.  ``--write-docs`` replaces the start-up section of docs/benchmarks.md.
It also lists what each command imports that it should not (pandas, pyarrow, the importers).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
TARGETS = {"--help": 0.15, "summary": 0.30}
FAMILIES = [
    ("onednn", [SAMPLES / "onednn"], ["--by", "kind"]),
    ("trace", [SAMPLES / "trace" / "kineto_gpu_style.pt.trace.json"], ["--by", "op"]),
    ("gpu kernel", [SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite"], ["--by", "kernel"]),
    ("gpu op", [SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite"], ["--by", "op"]),
    ("optable", [SAMPLES / "trace" / "mxnet1.6_style_dumps.txt"], ["--by", "op", "--family", "optable"]),
]
HEAVY = ("pandas", "pyarrow", "loganalyze.importers", "numpy", "tabulate")


def timed(cmd: list[str], runs: int) -> float:
    subprocess.run(cmd, capture_output=True, check=False)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def heavy_imports(cmd: list[str]) -> list[str]:
    out = subprocess.run([sys.executable, "-X", "importtime", *cmd[1:]], capture_output=True, text=True)
    names = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    return sorted(n for n in names if n in HEAVY)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    py = sys.executable
    cli = [py, "-m", "loganalyze"]
    rows = [("python -c pass", timed([py, "-c", "pass"], args.runs), None, []),
            ('python -c "import duckdb"', timed([py, "-c", "import duckdb"], args.runs), None, [])]
    rows.append(("loganalyze --help", timed(cli + ["--help"], args.runs), TARGETS["--help"],
                 heavy_imports(cli + ["--help"])))
    with tempfile.TemporaryDirectory() as tmp:
        for name, files, by in FAMILIES:
            db = os.path.join(tmp, name.replace(" ", "_") + ".duckdb")
            if not os.path.exists(db):
                subprocess.run(cli + ["ingest", "-q", "--db", db, *map(str, files)], check=True)
            cmd = cli + ["summary", "--db", db, *by]
            rows.append((f"summary {' '.join(by)} ({name})", timed(cmd, args.runs), TARGETS["summary"],
                         heavy_imports(cmd)))
    lines = ["| command | median wall (s) | target (s) | heavy imports |", "|---|---|---|---|"]
    for label, t, target, heavy in rows:
        mark = "" if target is None else (" (met)" if t <= target else " (**not met**)")
        lines.append(f"| `{label}` | {t:.3f} | {'' if target is None else f'{target:.2f}{mark}'} | "
                     f"{', '.join(heavy) or '-'} |")
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        doc = ROOT / "docs" / "benchmarks.md"
        text = doc.read_text(encoding="utf-8")
        begin, end = "<!-- startup:begin -->", "<!-- startup:end -->"
        block = (f"{begin}\nMeasured with `python scripts/bench_startup.py --runs {args.runs} --write-docs` "
                 f"(whole processes, median of {args.runs} runs after a warm-up, `python -m loganalyze`):\n\n"
                 f"{table}\n{end}")
        if begin in text:
            text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
        else:
            text += "\n## Start-up\n\n" + block + "\n"
        doc.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
