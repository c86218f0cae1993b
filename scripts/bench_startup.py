"""Start-up time of the command, side by side with the interpreter and DuckDB alone.

    python scripts/bench_startup.py [--runs 15] [--onednn-log LOG [--onednn-db DB]] [--write-docs]

Times, as whole processes, in one run: ``python -c pass``, ``python -c "import duckdb"``,
``loganalyze --help`` and ``loganalyze summary`` on a small database of each family (made from
samples/ in a temporary folder).  Every round runs each command once, in turn (so that load
from other processes falls on all of them alike), after one warm-up round; the median wall
time and the median CPU time (user + system of that child, ``os.wait4``) of ``--runs`` rounds
are reported, with each command's ratio to ``python -c pass`` and to ``import duckdb``.
The children write and use bytecode caches as on a user's machine (PYTHONDONTWRITEBYTECODE
is left out of their environment: the warm-up round writes them).

``--onednn-log LOG`` (a log from ``scripts/gen_onednn_log.py``, with its ``LOG.json``
sidecar) adds issue 10's row: mawk's per-kind exec count and time sum over LOG (the program of
``scripts/bench_onednn.py``) against ``loganalyze summary --db DB`` on a database holding LOG
(``--onednn-db``; made by an untimed ingest when missing), in alternating rounds, with the
ratio summary/mawk (target ≤ 0.1, goal ≤ 0.05) and a check that both give the same per-kind
exec counts.  ``--write-docs`` replaces the start-up section of docs/benchmarks.md.  It also
lists what each command imports that it should not (pandas, pyarrow, pydantic, ...).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
TARGETS = {"--help": 0.15, "summary": 0.30}
#: issue 10: summary on the 1 GiB log's database, as a share of mawk's per-kind sum over the log
SUMMARY_VS_MAWK = {"target": 0.10, "goal": 0.05}
FAMILIES = [
    ("onednn", [SAMPLES / "onednn"], ["--by", "kind"]),
    ("trace", [SAMPLES / "trace" / "kineto_gpu_style.pt.trace.json"], ["--by", "op"]),
    ("gpu kernel", [SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite"], ["--by", "kernel"]),
    ("gpu op", [SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite"], ["--by", "op"]),
    ("optable", [SAMPLES / "trace" / "mxnet1.6_style_dumps.txt"], ["--by", "op", "--family", "optable"]),
]
#: modules a start-up path should not import (``duckdb`` is the Python package: a summary needs
#: only DuckDB's compiled engine, ``_duckdb``)
HEAVY = ("pandas", "pyarrow", "numpy", "polars", "pydantic", "rich", "duckdb", "loganalyze.importers")


#: the children's environment: Python writes and reads bytecode caches as on a user's machine
#: (with PYTHONDONTWRITEBYTECODE set and no ``__pycache__`` yet, every run would compile the
#: loganalyze modules again: ≈ 30 ms of a summary)
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed_once(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of this child alone) of one run of ``cmd``."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=CHILD_ENV)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"command failed: {shlex.join(cmd)}")
    return wall, ru.ru_utime + ru.ru_stime


def side_by_side(cmds: list[list[str]], runs: int) -> list[tuple[float, float]]:
    """(median wall, median CPU) of each command, run in turn ``runs`` times after a warm-up."""
    for cmd in cmds:
        timed_once(cmd)
    samples: list[list[tuple[float, float]]] = [[] for _ in cmds]
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            samples[i].append(timed_once(cmd))
    return [(statistics.median(w for w, _ in s), statistics.median(c for _, c in s)) for s in samples]


def heavy_imports(cmd: list[str]) -> list[str]:
    """The :data:`HEAVY` modules ``cmd`` (a Python command) imports."""
    out = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True, env=CHILD_ENV)
    names = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    return sorted(n for n in names if n in HEAVY)


def cli_command() -> list[str]:
    """The ``loganalyze`` console script beside this interpreter (as users run it), else
    ``python -m loganalyze``."""
    script = Path(sys.executable).parent / "loganalyze"
    return [str(script)] if script.exists() else [sys.executable, "-m", "loganalyze"]


def python_of(cmd: list[str]) -> list[str]:
    """``cmd`` as a command line starting with the Python interpreter (for ``-X importtime``)."""
    return cmd if cmd[0] == sys.executable else [sys.executable, *cmd]


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [f"Python {sys.version.split()[0]}"]
    for dist in ("duckdb", "typer", "tabulate"):
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist} -")
    return ", ".join(parts)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def startup_table(cli: list[str], runs: int, tmp: str) -> str:
    py = sys.executable
    rows: list[tuple[str, list[str], float | None]] = [
        ("python -c pass", [py, "-c", "pass"], None),
        ('python -c "import duckdb"', [py, "-c", "import duckdb"], None),
        ("loganalyze --help", cli + ["--help"], TARGETS["--help"]),
    ]
    for name, files, by in FAMILIES:
        db = os.path.join(tmp, name.replace(" ", "_") + ".duckdb")
        if not os.path.exists(db):
            subprocess.run(cli + ["ingest", "-q", "--db", db, *map(str, files)], check=True)
        rows.append((f"loganalyze summary {' '.join(by)} ({name})", cli + ["summary", "--db", db, *by],
                     TARGETS["summary"]))
    times = side_by_side([cmd for _, cmd, _ in rows], runs)
    base_pass, base_duckdb = times[0][0], times[1][0]
    lines = ["| command | median wall (s) | median CPU (s) | × `python -c pass` | × `import duckdb` "
             "| target (s) | heavy imports |", "|---|---|---|---|---|---|---|"]
    for (label, cmd, target), (wall, cpu) in zip(rows, times):
        mark = "" if target is None else f"{target:.2f} ({'met' if wall <= target else '**not met**'})"
        heavy = ", ".join(heavy_imports(python_of(cmd))) if target is not None else ""
        lines.append(f"| `{label}` | {wall:.3f} | {cpu:.3f} | {wall / base_pass:.1f} | {wall / base_duckdb:.2f} "
                     f"| {mark} | {heavy or '-'} |")
    return "\n".join(lines)


def mawk_table(cli: list[str], log_path: Path, db: Path | None, runs: int, tmp: str) -> str:
    """Issue 10's summary row: mawk's per-kind sum over the log against the summary on its
    database, alternating, with the ratio."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_onednn import awk_program, parse_awk

    meta = json.loads(Path(str(log_path) + ".json").read_text())
    mawk = shutil.which("mawk") or "/usr/bin/mawk"
    awk_cmd = [mawk, "-F,", awk_program(meta), str(log_path)]
    db = db or Path(tmp) / "onednn_log.duckdb"
    if not db.exists():
        print(f"ingesting {log_path} into {db} (untimed) ...", file=sys.stderr)
        subprocess.run(cli + ["ingest", "-q", "--db", str(db), str(log_path)], check=True)
    sum_cmd = cli + ["summary", "--db", str(db)]
    awk_counts = {k: v["exec_count"] for k, v in parse_awk(
        subprocess.run(awk_cmd, capture_output=True, text=True, check=True).stdout).items()}
    la_rows = json.loads(subprocess.run(cli + ["summary", "--by", "kind", "--format", "json", "--db", str(db)],
                                        capture_output=True, text=True, check=True).stdout)
    agree = awk_counts == {r["kind"]: r["exec_count"] for r in la_rows}
    (awk_wall, awk_cpu), (sum_wall, sum_cpu) = side_by_side([awk_cmd, sum_cmd], runs)
    ratio = sum_wall / awk_wall
    verdict = ("goal met" if ratio <= SUMMARY_VS_MAWK["goal"] else
               "target met" if ratio <= SUMMARY_VS_MAWK["target"] else "**not met**")
    size = log_path.stat().st_size
    return "\n".join([
        f"| {log_path.name} ({size / 2**30:.2f} GiB) | median wall (s) | median CPU (s) | ÷ mawk |",
        "|---|---|---|---|",
        f"| mawk per-kind exec count and sum | {awk_wall:.3f} | {awk_cpu:.3f} | 1 |",
        f"| `loganalyze summary --db DB` | {sum_wall:.3f} | {sum_cpu:.3f} | {ratio:.3f} "
        f"(target ≤ {SUMMARY_VS_MAWK['target']}, goal ≤ {SUMMARY_VS_MAWK['goal']}: {verdict}) |",
        "",
        f"Per-kind exec counts of mawk and `summary --by kind` {'agree' if agree else '**DIFFER**'}.",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15, help="timed rounds (after one warm-up round)")
    ap.add_argument("--onednn-log", type=Path, help="a generated oneDNN log (with LOG.json) for the mawk row")
    ap.add_argument("--onednn-db", type=Path, help="a database holding --onednn-log (default: ingest it first)")
    ap.add_argument("--report", help="also write the Markdown report here")
    ap.add_argument("--write-docs", action="store_true", help="replace the start-up section of docs/benchmarks.md")
    args = ap.parse_args()
    cli = cli_command()
    load_before = load()
    with tempfile.TemporaryDirectory() as tmp:
        text = startup_table(cli, args.runs, tmp)
        if args.onednn_log:
            text += "\n\n" + mawk_table(cli, args.onednn_log, args.onednn_db, args.runs, tmp)
    text += (f"\n\n{versions()}; `{shlex.join(Path(c).name if i == 0 else c for i, c in enumerate(cli))}`; "
             f"bytecode caches on; load average {load_before} before, {load()} after.")
    print(text)
    if args.report:
        Path(args.report).write_text(text + "\n", encoding="utf-8")
    if args.write_docs:
        doc = ROOT / "docs" / "benchmarks.md"
        old = doc.read_text(encoding="utf-8")
        begin, end = "<!-- startup:begin -->", "<!-- startup:end -->"
        block = (f"{begin}\nMeasured with `python scripts/bench_startup.py --runs {args.runs}"
                 f"{' --onednn-log LOG' if args.onednn_log else ''} --write-docs` (whole processes, medians of "
                 f"{args.runs} alternating rounds after a warm-up):\n\n{text}\n{end}")
        if begin in old:
            new = old[:old.index(begin)] + block + old[old.index(end) + len(end):]
        else:
            new = old + "\n## Start-up\n\n" + block + "\n"
        doc.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    main()
