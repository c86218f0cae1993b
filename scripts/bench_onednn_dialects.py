#!/usr/bin/env python3
"""Benchmark the oneDNN ingest on real logs of every dialect at scale, against mawk.

    python scripts/bench_onednn_dialects.py --size 1G

``bench_onednn.py`` times one generated dialect (oneDNN v3.6+ with ``v1`` tokens, a header
per run of thousands of lines).  Here each public corpus log (``../shared/corpus/onednn_verbose``:
MKL-DNN v0.x, DNNL v1.x/v2.x with and without timestamps, oneDNN v3.x, mixed files; or the
files given with ``--log``) is repeated whole until it reaches ``--size``: a header every
few lines, and whatever else the log has (cut-off lines, odd last fields) at the same rate.
That is far denser than a real log of that size (a header per run), and it is what shows a
path whose cost grows with such lines.  For each log, one at a time (its repeated copy is
written under ``--workdir`` and removed after, unless ``--keep``):

(a) mawk, one pass: per-kind exec count and time sum, written as one would for any dialect
    (the ``exec`` field among the first six; the kind after it, past the engine field when
    the line has one);
(b) ``loganalyze ingest COPY --db FRESH.duckdb``: wall time, CPU, peak RSS of that process
    (``os.wait4``).

(a) once untimed first (page cache), and one untimed ingest of the first log's first 32 MiB
(``bench_onednn.warm_up_ingest``: numba's compiled cut loaded, or compiled on a machine's first
large oneDNN ingest); then ``--repeat`` rounds of (a) and (b), medians kept.
loganalyze's per-kind exec counts and times (``summary --by kind --format json``) and its
line count are checked against the corpus's independent answers
(``expected/<log>.expected.json``) times the number of copies: counts exactly, times to a
relative 1e-9.  mawk's own totals are shown beside them, not checked (its rule is not the
format's: it counts cut-off lines, and a graph line's partition id as a kind).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import sys
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import bench_onednn as bo  # noqa: E402
from corpus_answers import CORPUS, expected_for  # noqa: E402
from gen_onednn_log import parse_size  # noqa: E402

#: per-kind exec count and time sum, for any dialect: the op field is among $2..$6, the kind
#: follows it (after the engine field where there is one)
AWK_PROGRAM = (
    '$1 ~ /^(onednn|dnnl|mkldnn)_verbose$/ {for (i = 2; i <= 6; i++) if ($i == "exec") {'
    'k = ($(i + 1) == "cpu" || $(i + 1) == "gpu") ? $(i + 2) : $(i + 1); s[k] += $NF; c[k]++; break}} '
    'END {for (k in s) printf "%s\\t%d\\t%.17g\\n", k, c[k], s[k]}'
)


def repeated(source: Path, workdir: Path, size: int) -> tuple[Path, int]:
    """``source`` written again and again (with a final newline) into a file of at least
    ``size`` bytes; the file and the number of copies."""
    data = source.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    copies = max(1, math.ceil(size / len(data)))
    out = workdir / f"{source.stem}.x{copies}.log"
    if not (out.exists() and out.stat().st_size == copies * len(data)):
        block = data * max(1, (16 << 20) // len(data))
        with open(out, "wb") as f:
            whole, rest = divmod(copies * len(data), len(block))
            for _ in range(whole):
                f.write(block)
            f.write(block[:rest])
    return out, copies


def check(expected: dict | None, copies: int, rows: list[dict], ingest_out: str) -> list[str]:
    """Problems found in loganalyze's answers against the expected ones times ``copies``."""
    if expected is None:
        return ["no expected answers for this file (not checked)"]
    bad = []
    got = {r["kind"]: r for r in rows}
    for kind, exp in expected["per_kind"].items():
        have = got.get(kind)
        want_n, want_ms = exp["exec_count"] * copies, float(Decimal(exp["exec_time_ms_exact"]) * copies)
        if have is None:
            if want_n:
                bad.append(f"{kind}: missing")
            continue
        if have["exec_count"] != want_n:
            bad.append(f"{kind}: exec_count {have['exec_count']} != {want_n}")
        if not bo.close(have["exec_ms"], want_ms):
            bad.append(f"{kind}: exec_ms {have['exec_ms']!r} != {want_ms!r}")
    extra = sorted(set(got) - set(expected["per_kind"]))
    if extra:
        bad.append(f"kinds not expected: {', '.join(extra)}")
    m = next((line for line in ingest_out.splitlines() if "lines " in line and " parsed" in line), "")
    want_lines = f"lines {expected['lines_total'] * copies}:"
    if want_lines not in m.replace(",", ""):
        bad.append(f"line count: {m.strip() or '(none printed)'} (expected {expected['lines_total'] * copies})")
    return bad


def bench_log(args, source: Path) -> dict:
    workdir = Path(args.workdir)
    path, copies = repeated(source, workdir, parse_size(args.size))
    awk_cmd = [args.mawk, "-F,", AWK_PROGRAM, str(path)]
    db = workdir / f"{source.stem}.duckdb"
    ingest_cmd = [args.loganalyze, "ingest", str(path), "--db", str(db)]
    check_cmd = [args.loganalyze, "summary", "--by", "kind", "--format", "json", "--db", str(db)]
    bo.log(f"{source.name}: {copies:,} copies, {path.stat().st_size / 2**20:.0f} MiB")
    bo.check_rc(bo.run(awk_cmd))
    bo.warm_up_ingest(args, path)
    awks, ings, loads = [], [], []
    for _ in range(args.repeat):
        bo.wait_idle(args.wait_idle)
        loads.append(os.getloadavg()[0])
        awks.append(bo.check_rc(bo.run(awk_cmd)))
        for p in (db, Path(str(db) + ".wal")):
            if p.exists():
                p.unlink()
        ings.append(bo.check_rc(bo.run(ingest_cmd)))
        bo.log(f"  (a) mawk {awks[-1].seconds:.2f} s, (b) ingest {ings[-1].seconds:.2f} s "
               f"(x{ings[-1].seconds / awks[-1].seconds:.2f}, peak RSS {ings[-1].rss_mb:.0f} MB), "
               f"load average {loads[-1]:.1f}")
    awk, ing = (sorted(rs, key=lambda r: r.seconds)[len(rs) // 2] for rs in (awks, ings))
    rows = json.loads(bo.check_rc(bo.run(check_cmd)).stdout)
    problems = check(expected_for(source), copies, rows, ing.stdout)
    for p in problems:
        bo.log(f"  MISMATCH {p}")
    awk_totals = bo.parse_awk(awk.stdout)
    res = {
        "log": source.name, "copies": copies, "bytes": path.stat().st_size, "awk_cmd": awk_cmd,
        "ingest_cmd": ingest_cmd, "awk_s": awk.seconds, "ingest_s": ing.seconds, "ingest_cpu_s": ing.cpu,
        "ingest_rss_mb": ing.rss_mb, "ratios": [i.seconds / a.seconds for i, a in zip(ings, awks)],
        "load_avg": loads, "problems": problems,
        "exec_lines": sum(r["exec_count"] for r in rows),
        "awk_exec_lines": sum(v["exec_count"] for v in awk_totals.values()),
    }
    if not args.keep:
        for p in (path, db, Path(str(db) + ".wal")):
            if p.exists():
                p.unlink()
    return res


def report(args, env: dict, results: list[dict], argv: list[str]) -> str:
    L = [f"Command: `{shlex.join(['python', *argv])}` (run from the repository root)", ""]
    L.append(f"Machine: {env['nproc']} cores ({env['cpu']}), Python {env['python']}, DuckDB {env['duckdb']}, "
             f"polars {env['polars']}; {env['mawk']}; loganalyze at commit {env['commit']}"
             + (f" with local changes in {env['dirty']}" if env["dirty"] else "") + f"; {args.repeat} round(s), medians.")
    L.append("")
    L.append("| corpus log, repeated | copies | size | exec lines (mawk's) | (a) mawk s | (b) ingest s | (b)/(a) "
             "| (b) CPU s | (b) peak RSS MB | answers agree |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        L.append(f"| {r['log']} | {r['copies']:,} | {bo.fmt_bytes(r['bytes'])} | {r['exec_lines']:,} "
                 f"({r['awk_exec_lines']:,}) | {r['awk_s']:.2f} | {r['ingest_s']:.2f} | {r['ingest_s'] / r['awk_s']:.2f} "
                 f"| {r['ingest_cpu_s']:.2f} | {r['ingest_rss_mb']:.0f} "
                 f"| {'yes' if not r['problems'] else 'NO: ' + '; '.join(r['problems'][:2])} |")
    L.append("")
    L.append("```")
    L.append(shlex.join(results[0]["awk_cmd"]).replace(results[0]["log"].rsplit(".", 1)[0], "<log>"))
    L.append(shlex.join(results[0]["ingest_cmd"]).replace(results[0]["log"].rsplit(".", 1)[0], "<log>"))
    L.append("```")
    ratios = [r["ingest_s"] / r["awk_s"] for r in results]
    L.append("")
    L.append(f"(b)/(a) from {min(ratios):.2f} to {max(ratios):.2f} (issue 10's target: <= {bo.TARGETS['ingest_ratio']:.1f} "
             f"on a 1 GiB log); peak RSS at most {max(r['ingest_rss_mb'] for r in results):.0f} MB "
             f"(target <= {bo.TARGETS['ingest_rss_mb']} MB).")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1G", help="size of each repeated log (G = 2**30 bytes)")
    ap.add_argument("--log", action="append", default=[],
                    help="a log to repeat (any number; default: every log of ../shared/corpus/onednn_verbose)")
    ap.add_argument("--workdir", default=str(REPO / "bench-data" / "dialects"))
    ap.add_argument("--repeat", type=int, default=1, help="rounds of (a) and (b) per log; medians kept")
    ap.add_argument("--wait-idle", type=float, default=60)
    ap.add_argument("--keep", action="store_true", help="keep the repeated logs and their databases")
    ap.add_argument("--report", help="write the Markdown report here too")
    default_la = Path(sys.executable).parent / "loganalyze"
    ap.add_argument("--loganalyze", default=str(default_la) if default_la.exists() else (shutil.which("loganalyze") or "loganalyze"))
    ap.add_argument("--mawk", default=shutil.which("mawk") or "/usr/bin/mawk")
    args = ap.parse_args(argv)
    bo._ARGS = args  # (bench_onednn.versions names mawk and loganalyze through it)
    logs = [Path(p) for p in args.log] or sorted((CORPUS / "onednn_verbose").glob("*.log"))
    if not logs:
        raise SystemExit(f"no logs: give --log, or put the public corpus at {CORPUS}")
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    env = bo.versions()
    results = [bench_log(args, p) for p in logs]
    text = report(args, env, results, ["scripts/bench_onednn_dialects.py", *argv])
    print(text)
    if args.report:
        Path(args.report).write_text(text)
    return 1 if any(r["problems"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
