#!/usr/bin/env python3
"""Benchmark ``loganalyze`` on large oneDNN verbose logs against a one-line mawk baseline.

    python scripts/bench_onednn.py --sizes 1G,2G --report bench-data/report.md

For each size it generates (or reuses) a log with ``scripts/gen_onednn_log.py`` under the
work directory (default ``bench-data/``, gitignored), then times, in this one run:

(a) the mawk baseline: per-kind exec count and time sum, one pass, fields chosen for the
    generated dialect (with and without timestamps).  Run once untimed first to warm the
    page cache (it cannot be dropped here);
(b) ``loganalyze ingest LOG --db DB`` into a fresh database: wall time and the peak RSS of
    the child (``os.wait4`` rusage of that process alone).  Once per run, untimed first, an
    ingest of the log's first 32 MiB (:func:`warm_up_ingest`: a machine's first large
    oneDNN ingest compiles numba's kernel for the cut, about 3 s, cached after);
(c) ``loganalyze summary --by kind --db DB`` (the default table; the JSON output, which has
    every column and reads every event for the exact median, is run once untimed for the
    check).

(a), (b) and (c) run one after another in ``--repeat`` rounds (default 3), so that load from
other processes falls on all three alike; the median of each is kept, and each round's
(b)/(a) and the machine's load average are reported.

Before each timed run it waits (``--wait-idle``) until other processes leave the CPU alone,
and it reports how much CPU they used during the ingest.  It checks that awk, loganalyze
and the generator's JSON sidecar agree on every kind's exec count (exactly) and exec time
sum (relative 1e-9), and that loganalyze's create counts, cache hits/misses and line counts
match the sidecar.  It prints a Markdown report (machine,
versions, exact commands, table, targets) and writes it to ``--report``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
GEN = HERE / "gen_onednn_log.py"
sys.path.insert(0, str(HERE))
from gen_onednn_log import GENERATOR_VERSION, parse_size  # noqa: E402

#: issue 10's targets (its goals: ingest <= 1.0x mawk, summary <= 0.05x)
TARGETS = {"ingest_ratio": 1.5, "summary_ratio": 0.1, "ingest_rss_mb": 1024}
GOALS = {"ingest_ratio": 1.0, "summary_ratio": 0.05}
REL_TOL = 1e-9


# --------------------------------------------------------------------------- running children
class Result:
    def __init__(self, cmd, seconds, maxrss_kb, rc, stdout, stderr, cpu=0.0):
        self.cmd, self.seconds, self.maxrss_kb, self.rc, self.cpu = cmd, seconds, maxrss_kb, rc, cpu
        self.stdout, self.stderr = stdout, stderr

    @property
    def rss_mb(self) -> float:
        return self.maxrss_kb / 1024


def busy_cpu_seconds() -> float:
    """CPU time the whole machine has been busy (all processes), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / os.sysconf("SC_CLK_TCK")


def run(cmd: list[str], stdout_path: str | None = None, env=None) -> Result:
    """Run ``cmd``; wall time and the peak RSS of that child alone (``wait4``), and how much
    CPU the rest of the machine used meanwhile (a sign of interference on a shared box)."""
    out = open(stdout_path, "wb") if stdout_path else subprocess.PIPE
    busy0 = busy_cpu_seconds()
    t0 = time.perf_counter()
    if env is None:
        # children keep their bytecode caches, as an installed package does (a shell that
        # sets PYTHONDONTWRITEBYTECODE would have every run compile the modules again)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env)
    # read stderr on a thread and stdout here (no pipe deadlock), then reap the child with
    # wait4 to get the rusage of this process alone (RUSAGE_CHILDREN would be the max so far)
    err: list[bytes] = []
    t = threading.Thread(target=lambda: err.append(p.stderr.read()))
    t.start()
    so = p.stdout.read() if p.stdout else b""
    t.join()
    se = err[0]
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if stdout_path:
        out.close()
    res = Result(cmd, secs, ru.ru_maxrss, p.returncode, so.decode("utf-8", "replace"),
                 se.decode("utf-8", "replace"), ru.ru_utime + ru.ru_stime)
    res.other_cpu = max(0.0, busy_cpu_seconds() - busy0 - res.cpu)
    return res


def wait_idle(max_wait: float) -> float:
    """Wait (at most ``max_wait`` s) until the machine's other CPU use over 1 s is below 0.15
    cores; returns the seconds waited.  Other jobs on a shared 2-core box skew every figure."""
    t0 = time.perf_counter()
    told = False
    while time.perf_counter() - t0 < max_wait:
        b0 = busy_cpu_seconds()
        time.sleep(1.0)
        if busy_cpu_seconds() - b0 < 0.15:
            return time.perf_counter() - t0
        if not told:
            log(f"machine busy (other processes); waiting up to {max_wait:.0f} s for it to be idle")
            told = True
    log("machine still busy; measuring anyway")
    return time.perf_counter() - t0


def check_rc(res: Result) -> Result:
    if res.rc != 0:
        sys.stderr.write(res.stdout[-4000:] + res.stderr[-4000:])
        raise SystemExit(f"command failed ({res.rc}): {shlex.join(res.cmd)}")
    return res


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- steps
def ensure_log(workdir: Path, size_label: str, seed: int, regen: bool) -> tuple[Path, dict, float | None]:
    size = parse_size(size_label)
    path = workdir / f"onednn_{size_label}_seed{seed}.log"
    side = Path(str(path) + ".json")
    if not regen and path.exists() and side.exists():
        meta = json.loads(side.read_text())
        if (meta.get("generator_version") == GENERATOR_VERSION and meta["args"]["size"] == size
                and meta["args"]["seed"] == seed and path.stat().st_size == meta["bytes"]):
            log(f"reusing {path} ({meta['bytes']} bytes)")
            return path, meta, None
    log(f"generating {path} ...")
    res = check_rc(run([sys.executable, str(GEN), "--size", size_label, "--seed", str(seed), "--out", str(path)]))
    log(res.stderr.strip())
    return path, json.loads(side.read_text()), res.seconds


#: the problem descriptor's first number (a convolution's ``mb<N>``, a tensor's first dimension)
_FIRST_NUMBER = re.compile(r"\d+")


def with_dynamic_batch(path: Path, meta: dict, batch: int, seed: int) -> tuple[Path, dict]:
    """``path`` with the first number of each exec and create line's problem descriptor (the
    field before the time: the batch size) replaced by a random one in 1..``batch``, as a
    serving workload whose batch size varies logs it: a distinct shape every few lines.
    Kinds, counts and times are those of ``meta`` (the times are untouched); made once
    and kept beside the log."""
    out = path.with_name(f"{path.stem}_batch{batch}.log")
    side = Path(str(out) + ".json")
    if side.exists() and out.exists():
        kept = json.loads(side.read_text())
        if kept.get("dynamic_batch") == batch and kept.get("of_bytes") == meta["bytes"] \
                and out.stat().st_size == kept["bytes"]:
            log(f"reusing {out}")
            return out, kept
    log(f"writing {out} (batch sizes 1..{batch}) ...")
    rnd = random.Random(seed)

    def batch_size(_m) -> str:
        return str(rnd.randint(1, batch))
    with open(path, encoding="utf-8", newline="") as f, open(out, "w", encoding="utf-8", newline="") as o:
        for line in f:
            if ",exec," in line or ",create" in line:
                head, problem, tail = line.rsplit(",", 2)
                line = f"{head},{_FIRST_NUMBER.sub(batch_size, problem, count=1)},{tail}"
            o.write(line)
    kept = dict(meta, path=str(out), bytes=out.stat().st_size, of_bytes=meta["bytes"], dynamic_batch=batch)
    side.write_text(json.dumps(kept, indent=1))
    return out, kept


def awk_program(meta: dict) -> str:
    rules = []
    # the timestamped layout first: its op field ($5) is the kind field of neither layout
    for layout in ("timestamps", "no_timestamps"):
        f = meta["awk_fields"].get(layout)
        if f:
            rules.append(f'$%d=="exec"{{s[$%d]+=$NF;c[$%d]++%s}}' % (f["op"], f["kind"], f["kind"], ";next" if not rules else ""))
    rules.append('END{for(k in s) printf "%s\\t%d\\t%.17g\\n", k, c[k], s[k]}')
    return " ".join(rules)


def parse_awk(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        k, c, s = line.split("\t")
        out[k] = {"exec_count": int(c), "exec_ms": float(s)}
    return out


def close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b), 1e-300)


def compare(meta: dict, awk: dict, la_rows: list[dict], ingest_out: str) -> list[str]:
    """Problems found; empty when all three agree."""
    bad = []
    gen = meta["per_kind"]
    la = {r["kind"]: r for r in la_rows}
    for kind in sorted(set(gen) | set(awk) | set(la)):
        g, a, l = gen.get(kind), awk.get(kind), la.get(kind)
        if not (g and a and l):
            bad.append(f"{kind}: missing in {'generator ' if not g else ''}{'awk ' if not a else ''}"
                       f"{'loganalyze' if not l else ''}".strip())
            continue
        for name, src in (("awk", a), ("loganalyze", l)):
            if src["exec_count"] != g["exec_count"]:
                bad.append(f"{kind}: exec_count {name}={src['exec_count']} generator={g['exec_count']}")
            if not close(src["exec_ms"], g["exec_ms"]):
                bad.append(f"{kind}: exec_ms {name}={src['exec_ms']!r} generator={g['exec_ms']!r}")
        for col in ("create_count", "cache_hits", "cache_misses"):
            if l[col] != g[col]:
                bad.append(f"{kind}: {col} loganalyze={l[col]} generator={g[col]}")
        if not close(l["create_ms"], g["create_ms"]):
            bad.append(f"{kind}: create_ms loganalyze={l['create_ms']!r} generator={g['create_ms']!r}")
    m = re.search(r"lines (\d+): (\d+) parsed, (\d+) other, (\d+) skipped", ingest_out)
    if not m:
        bad.append("ingest output has no line counts")
    else:
        total, parsed, other, skipped = map(int, m.groups())
        want = (meta["lines_total"], meta["lines_verbose"], meta["lines_other"], 0)
        if (total, parsed, other, skipped) != want:
            bad.append(f"line counts loganalyze={total, parsed, other, skipped} generator={want}")
    return bad


def versions() -> dict:
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO).stdout.strip()
        except OSError:
            return "?"
    la_py = shutil.which("python", path=str(Path(la_bin()).parent)) or sys.executable
    code = ("import sys, duckdb, pyarrow, numpy, pyparsing, polars; print(sys.version.split()[0], duckdb.__version__, "
            "pyarrow.__version__, numpy.__version__, pyparsing.__version__, polars.__version__)")
    py, duck, arrow, np_, pp_, pl_ = out([la_py, "-c", code]).split()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
    dirty = out(["git", "status", "--porcelain", "--untracked-files=no", "--", "loganalyze", "grammars"])
    return {
        "nproc": os.cpu_count(), "cpu": cpu, "mem_gb": round(mem / 2**20, 1), "kernel": platform.release(),
        "python": py, "duckdb": duck, "pyarrow": arrow, "numpy": np_, "pyparsing": pp_, "polars": pl_,
        "mawk": out([mawk_bin(), "-W", "version"]).splitlines()[0] if mawk_bin() else "?",
        "commit": out(["git", "rev-parse", "--short", "HEAD"]),
        "dirty": " ".join(l.split()[-1] for l in dirty.splitlines()) if dirty else "",
    }


_ARGS = None


def la_bin() -> str:
    return _ARGS.loganalyze


def mawk_bin() -> str:
    return _ARGS.mawk


# --------------------------------------------------------------------------- warm-up
#: the bytes of a log that the untimed warm-up ingest reads (whole lines): past the 16 MiB
#: from which the CLI loads numba's compiled cut ahead (onednn_positions.COMPILE_AHEAD_MIN_BYTES)
#: and past the lines the interpreter cuts before it
WARM_UP_BYTES = 32 << 20
#: the loganalyze commands already warmed up in this process
_WARMED: set[str] = set()


def warm_up_ingest(args, log_path: Path) -> None:
    """Once per run: ``loganalyze ingest`` of the first :data:`WARM_UP_BYTES` of ``log_path``
    into a scratch database, untimed.  The first oneDNN ingest of a large log on a machine
    compiles the cut's kernel (numba, about 3 s, then cached on disk beside the package or in
    the user's cache folder: docs/benchmarks.md, "Thirty-first session"): a cost of the first
    such ingest after an install, which a timed round must not pay."""
    if args.loganalyze in _WARMED:
        return
    workdir = Path(args.workdir)
    part, db = workdir / "warm_up.log", workdir / "warm_up.duckdb"
    with open(log_path, "rb") as f:
        head = f.read(WARM_UP_BYTES)
    part.write_bytes(head[:head.rfind(b"\n") + 1])
    cmd = [args.loganalyze, "ingest", str(part), "--db", str(db)]
    try:
        res = check_rc(run(cmd))
        log(f"(b) warm-up (untimed, {len(head) >> 20} MiB of the log): {shlex.join(cmd)}: {res.seconds:.2f} s")
    finally:
        for p in (part, db, Path(str(db) + ".wal")):
            p.unlink(missing_ok=True)
    _WARMED.add(args.loganalyze)


# --------------------------------------------------------------------------- one size
def bench_size(args, size_label: str) -> dict:
    workdir = Path(args.workdir)
    path, meta, gen_s = ensure_log(workdir, size_label, args.seed, args.regen)
    if args.dynamic_batch:
        path, meta = with_dynamic_batch(path, meta, args.dynamic_batch, args.seed)
    prog = awk_program(meta)
    awk_cmd = [args.mawk, "-F,", prog, str(path)]
    log(f"(a) warm-up (untimed): {shlex.join(awk_cmd)}")
    check_rc(run(awk_cmd))
    warm_up_ingest(args, path)
    db = workdir / f"bench_{size_label}.duckdb"
    ingest_cmd = [args.loganalyze, "ingest", str(path), "--db", str(db)]
    # (c) as users call it: the default table (the JSON output has every column, the exact
    # median among them, which reads every event: it is run once, untimed, for the check)
    sum_cmd = [args.loganalyze, "summary", "--by", "kind", "--db", str(db)]
    check_cmd = [args.loganalyze, "summary", "--by", "kind", "--format", "json", "--db", str(db)]
    log(f"(b) {shlex.join(ingest_cmd)}")
    # side by side: each round runs mawk, then the ingest, then the summary, so that load
    # from other processes falls on all three alike; medians over the rounds
    awk_runs, ings, sums, loads = [], [], [], []
    for i in range(args.repeat):
        wait_idle(args.wait_idle)
        loads.append(os.getloadavg()[0])
        awk_runs.append(check_rc(run(awk_cmd)))
        for p in (db, Path(str(db) + ".wal")):
            if p.exists():
                p.unlink()
        ings.append(check_rc(run(ingest_cmd)))
        sums.append(check_rc(run(sum_cmd)))
        log(f"round {i + 1}: (a) mawk {awk_runs[-1].seconds:.2f} s, (b) ingest {ings[-1].seconds:.2f} s "
            f"(x{ings[-1].seconds / awk_runs[-1].seconds:.2f}; cpu {ings[-1].cpu:.2f} s; other processes "
            f"{ings[-1].other_cpu:.2f} cpu s; peak RSS {ings[-1].rss_mb:.0f} MB), (c) summary {sums[-1].seconds:.3f} s; "
            f"load average {loads[-1]:.1f}")
    awk_best, ing, sum_best = (sorted(rs, key=lambda r: r.seconds)[len(rs) // 2] for rs in (awk_runs, ings, sums))
    awk = parse_awk(awk_best.stdout)
    rows = json.loads(check_rc(run(check_cmd)).stdout)
    problems = compare(meta, awk, rows, ing.stdout)
    for p in problems:
        log(f"MISMATCH {p}")
    res = {
        "size_label": size_label, "path": str(path), "bytes": meta["bytes"], "lines": meta["lines_total"],
        "exec_lines": sum(v["exec_count"] for v in meta["per_kind"].values()),
        "distinct": meta["distinct_primitives_used"], "dynamic_batch": meta.get("dynamic_batch"), "generation_s": gen_s,
        "awk_cmd": awk_cmd, "awk_s": awk_best.seconds, "awk_all_s": [r.seconds for r in awk_runs],
        "awk_rss_mb": awk_best.rss_mb, "awk_cpu_s": awk_best.cpu,
        "ingest_cmd": ingest_cmd, "ingest_s": ing.seconds, "ingest_rss_mb": ing.rss_mb, "ingest_cpu_s": ing.cpu, "ingest_other_cpu_s": ing.other_cpu,
        "ingest_all_s": [r.seconds for r in ings], "ingest_all_rss_mb": [r.rss_mb for r in ings],
        "ingest_stdout": ing.stdout, "ingest_max_rss_mb": max(r.rss_mb for r in ings),
        "ratios": [i.seconds / a.seconds for i, a in zip(ings, awk_runs)], "load_avg": loads,
        "summary_cmd": sum_cmd, "summary_s": sum_best.seconds, "summary_all_s": [r.seconds for r in sums],
        "summary_rss_mb": sum_best.rss_mb, "summary_cpu_s": sum_best.cpu, "db_bytes": db.stat().st_size,
        "problems": problems,
    }
    if not args.keep_db:
        db.unlink()
    return res


# --------------------------------------------------------------------------- report
def fmt_bytes(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def report(args, env: dict, results: list[dict], argv: list[str]) -> str:
    cmdline = shlex.join(["python", *argv])
    L = []
    L.append(f"Command: `{cmdline}` (run from the repository root)")
    L.append("")
    L.append(
        f"Machine: {env['nproc']} cores ({env['cpu']}), {env['mem_gb']} GB RAM, Linux {env['kernel']}; "
        f"Python {env['python']}, DuckDB {env['duckdb']}, pyarrow {env['pyarrow']}, numpy {env['numpy']}, "
        f"pyparsing {env['pyparsing']}, polars {env['polars']}; {env['mawk']}; loganalyze at commit {env['commit']}"
        + (f" with local changes in {env['dirty']}" if env["dirty"] else "") + "."
    )
    L.append("")
    L.append("| log | lines (exec) | distinct prims | (a) mawk s | (b) ingest s | (b)/(a) | (b) peak RSS MB "
             "| (c) summary s | (c)/(a) | DB size | totals agree |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        L.append(
            f"| {r['size_label']} ({fmt_bytes(r['bytes'])}"
            + (f", batch sizes 1..{r['dynamic_batch']}" if r.get("dynamic_batch") else "")
            + f") | {r['lines']:,} ({r['exec_lines']:,}) | {r['distinct']} "
            f"| {r['awk_s']:.2f} | {r['ingest_s']:.2f} | {r['ingest_s'] / r['awk_s']:.2f} | {r['ingest_rss_mb']:.0f} "
            f"| {r['summary_s']:.3f} | {r['summary_s'] / r['awk_s']:.3f} | {fmt_bytes(r['db_bytes'])} "
            f"| {'yes' if not r['problems'] else 'NO: ' + '; '.join(r['problems'][:3])} |"
        )
    L.append("")
    L.append("Exact commands (per size; the log name changes):")
    L.append("")
    r = results[0]
    L.append("```")
    L.append(f"# {args.repeat} rounds of (a), (b), (c) one after another; the median of each is kept")
    L.append("# (a) once untimed first to warm the page cache")
    L.append(shlex.join(r["awk_cmd"]))
    L.append(f"# (b) once untimed first on the log's first {WARM_UP_BYTES >> 20} MiB, into a scratch database (numba's")
    L.append("#     compiled cut loaded; compiled, on a machine's first large oneDNN ingest)")
    L.append("# (b) into a fresh database each time; peak RSS of this process (wait4 rusage)")
    L.append(shlex.join(r["ingest_cmd"]))
    L.append("# (c)")
    L.append(shlex.join(r["summary_cmd"]))
    L.append("```")
    L.append("")
    L.append("Details: " + "; ".join(
        f"{r['size_label']}: mawk runs {', '.join(f'{s:.2f}' for s in r['awk_all_s'])} s, "
        f"ingest runs {', '.join(f'{s:.2f}' for s in r['ingest_all_s'])} s "
        f"(peak RSS {', '.join(f'{m:.0f}' for m in r['ingest_all_rss_mb'])} MB), "
        f"summary runs {', '.join(f'{s:.3f}' for s in r['summary_all_s'])} s, summary peak RSS {r['summary_rss_mb']:.0f} MB, "
        f"CPU time (user+sys) mawk {r['awk_cpu_s']:.2f} s, ingest {r['ingest_cpu_s']:.2f} s, summary {r['summary_cpu_s']:.3f} s, "
        f"CPU used by other processes during the ingest {r['ingest_other_cpu_s']:.2f} s, "
        f"(b)/(a) per round {', '.join(f'{x:.2f}' for x in r['ratios'])}, "
        f"1-minute load average before each round {', '.join(f'{x:.1f}' for x in r['load_avg'])}"
        for r in results) + ".")
    L.append("")
    L.append("Targets (issue 10): (b)/(a) <= %.1f (goal %.1f), (c)/(a) <= %.2f (goal %.2f), peak RSS of (b) "
             "<= %.1f GB and not growing with file size."
             % (TARGETS["ingest_ratio"], GOALS["ingest_ratio"], TARGETS["summary_ratio"], GOALS["summary_ratio"],
                TARGETS["ingest_rss_mb"] / 1024))
    for r in results:
        ir, sr = r["ingest_s"] / r["awk_s"], r["summary_s"] / r["awk_s"]
        L.append(
            f"- {r['size_label']}: (b)/(a) = {ir:.2f} {_verdict(ir, 'ingest_ratio')}; "
            f"(c)/(a) = {sr:.3f} {_verdict(sr, 'summary_ratio')}; "
            f"peak RSS {r['ingest_rss_mb']:.0f} MB "
            f"{'met' if r['ingest_rss_mb'] <= TARGETS['ingest_rss_mb'] else 'NOT met'}."
        )
    if len(results) > 1:
        a, b = results[0], results[-1]
        growth = b["ingest_max_rss_mb"] / a["ingest_max_rss_mb"]
        per_gb = (b["ingest_max_rss_mb"] - a["ingest_max_rss_mb"]) / ((b["bytes"] - a["bytes"]) / 2**30)
        L.append(f"- Peak RSS from {a['size_label']} to {b['size_label']}: x{growth:.2f}, {per_gb:+.0f} MB per GiB "
                 f"({'flat' if growth < 1.15 else 'GROWS with file size'}).")
    return "\n".join(L) + "\n"


def _verdict(value: float, key: str) -> str:
    if value <= GOALS[key]:
        return "target and goal met"
    return "target met, goal not" if value <= TARGETS[key] else "NOT met"


def main(argv: list[str] | None = None) -> int:
    global _ARGS
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1G", help="comma-separated log sizes, e.g. 1G,2G (G = 2**30 bytes)")
    ap.add_argument("--workdir", default=str(REPO / "bench-data"), help="scratch directory (default: bench-data/)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--regen", action="store_true", help="generate the logs again even if they exist")
    ap.add_argument("--report", help="write the Markdown report here too")
    ap.add_argument("--json", help="write the raw figures as JSON here")
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds of mawk, ingest (fresh database), summary, one after another; medians kept")
    ap.add_argument("--wait-idle", type=float, default=600,
                    help="before each timed run, wait up to this many seconds for other processes to go quiet")
    ap.add_argument("--keep-db", action="store_true", help="keep the benchmark databases")
    ap.add_argument("--dynamic-batch", type=int, default=0, metavar="B",
                    help="time the log with each exec/create line's batch size (the problem descriptor's first "
                         "number) drawn from 1..B instead: a distinct shape every few lines (0: as generated)")
    default_la = Path(sys.executable).parent / "loganalyze"
    ap.add_argument("--loganalyze", default=str(default_la) if default_la.exists() else (shutil.which("loganalyze") or "loganalyze"))
    ap.add_argument("--mawk", default=shutil.which("mawk") or "/usr/bin/mawk")
    args = ap.parse_args(argv)
    _ARGS = args
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    env = versions()
    results = [bench_size(args, s.strip()) for s in args.sizes.split(",") if s.strip()]
    text = report(args, env, results, ["scripts/bench_onednn.py", *argv])
    print(text)
    if args.report:
        Path(args.report).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"env": env, "results": results}, indent=1))
    return 1 if any(r["problems"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
