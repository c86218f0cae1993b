#!/usr/bin/env python3
"""Benchmark ``loganalyze ingest`` on large Kineto-like traces, side by side with plain
``json.load`` of the same file (and Holistic Trace Analysis where it is installed).

    python scripts/bench_trace.py --sizes 500,1000,2000          # the figures of issue 10
    python scripts/bench_trace.py --sizes 100 --layout compact --rounds 3

For each size (MB) it generates, or reuses, a PyTorch-profiler-like trace under the work
directory (default ``bench-data/``, gitignored): ``ProfilerStep#N`` annotations, nested
``aten::`` operators with input shapes, ``cudaLaunchKernel``/``cudaMemcpyAsync`` calls with
correlation ids, kernels and copies on a stream, ``ac2g`` flow pairs; ``--layout pretty``
writes every event over several lines as the PyTorch exporter does, ``--layout compact``
one event a line (more events per MB); ``--times fractional`` writes times as microseconds
with three decimals, as Kineto does since PyTorch 2.2; ``--args ids`` keeps in each event's
``args`` only the ids and shapes (``External id``, ``correlation``, ``device``, ``stream``,
``Input Dims``) and kernel names of at most 40 characters: about 146 bytes an event instead
of 200 (3.4 M events in 500 MB), the memory per byte of input that a trace of short events
needs; ``--args minimal`` keeps only ``correlation`` (none on operators, whose device work
is then found through the launch calls): about 116 bytes an event (4.3 M in 500 MB), the
density of the trace issue 10 describes (3.9 M events in 500 MB; its ``json.load`` peaked at
1.9 GB, about 490 bytes an event, against 815 here and 1,055 with ``--args ids``).  Then, in ``--rounds`` alternating
rounds, each in its own process (wall time, user+sys CPU and peak RSS of that process from ``os.wait4``):

(a) ``json.load`` of the file in the project's python (the anchor);
(b) ``loganalyze ingest TRACE --db FRESH.duckdb`` (the whole command: sha256, parse,
    matching, nesting, attribution, the rows written and committed);
(c) with ``--hta``, Holistic Trace Analysis ``TraceAnalysis(trace_dir=DIR)`` once, from the
    python of ``--hta-venv`` (default ``bench-data/hta-venv``) when HTA is installed there
    (``--install-hta`` creates it with pip; HTA is not a project dependency).

It prints one table row per size: the best wall time of each, peak RSS, the ratios
(ingest / json.load, ingest RSS / file size) against issue 10's targets, the load average,
and checks that the per-operator totals of ``loganalyze summary --by op --format json``
equal the generator's own tally (and HTA's, when it ran).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
GENERATOR_VERSION = 1
#: issue 10: ingest time / json.load time, ingest peak RSS / file size (target, goal)
TARGETS = {"time_vs_json_load": (0.5, 0.25), "rss_vs_file": (1.0, 0.5)}


# =========================================================================== generator
OPS = [  # name, input dims, child ops (name, kernels launched)
    ("aten::linear", [[32, 1024], [1024, 1024], [1024]], [("aten::t", 0), ("aten::addmm", 1)]),
    ("aten::relu", [[32, 1024]], [("aten::clamp_min", 1)]),
    ("aten::conv2d", [[8, 64, 56, 56], [64, 64, 3, 3], [64]], [("aten::convolution", 0), ("aten::cudnn_convolution", 2)]),
    ("aten::add_", [[32, 1024], [32, 1024], []], []),
    ("aten::sum", [[32, 1024], []], []),
    ("aten::copy_", [[32, 1024], [32, 1024], []], []),
]
KERNELS = ["void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::AddFunctor<float> > >(int, float*)",
           "ampere_sgemm_64x32_sliced1x4_tn", "void cudnn::cnn::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>(int, int, int, float const*)",
           "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float> > >(float*)"]


#: "pretty": every event over several lines, as the PyTorch exporter writes them; "compact":
#: one event a line without indentation, as other writers (and re-saved traces) do
LAYOUT = "pretty"
#: "integer": times in whole microseconds since the epoch, as Kineto wrote them before
#: PyTorch 2.2; "fractional": microseconds with three decimals on a monotonic clock, as it
#: writes them since (``"ts": 1212075548353.304, "dur": 173209.713``); the generator then
#: counts in ns
TIMES = "integer"


#: "full": the args Kineto writes; "ids": only the ids and shapes (short events, see the
#: module's docstring); "minimal": only the correlation ids (the shortest events)
ARGS = "full"
SHORT_ARGS = {"ids": ("External id", "correlation", "device", "stream", "Input Dims"), "minimal": ("correlation",)}
SHORT_NAME = 40


def _us(v: int):
    """A generated time as the JSON number it is written as (``v``: µs, or ns for fractional times)."""
    return v if TIMES == "integer" else float(f"{v // 1000}.{v % 1000:03d}")


def _compact_event(ph, cat, name, pid, tid, ts, dur=None, args=None, extra=None) -> str:
    ev = {"ph": ph, "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": _us(ts)}
    if dur is not None:
        ev["dur"] = _us(dur)
    ev.update(extra or {})
    if args:
        ev["args"] = args
    return json.dumps(ev, separators=(",", ":"))


def _event(ph, cat, name, pid, tid, ts, dur=None, args=None, extra=None) -> str:
    if ARGS != "full":
        args = {k: v for k, v in (args or {}).items() if k in SHORT_ARGS[ARGS]}
        name = name[:SHORT_NAME] if cat == "kernel" else name
    if LAYOUT == "compact":
        return _compact_event(ph, cat, name, pid, tid, ts, dur, args, extra)
    lines = ["  {", f'    "ph": "{ph}", "cat": "{cat}", "name": {json.dumps(name)}, "pid": {pid}, "tid": {tid},']
    times = f'"ts": {_us(ts)}' + (f', "dur": {_us(dur)}' if dur is not None else "")
    if extra:
        times += ", " + ", ".join(f'"{k}": {json.dumps(v)}' for k, v in extra.items())
    if args:
        lines.append(f"    {times},")
        lines.append('    "args": {')
        lines.append(",\n".join(f"      {json.dumps(k)}: {json.dumps(v)}" for k, v in args.items()))
        lines.append("    }")
    else:
        lines.append(f"    {times}")
    lines.append("  }")
    return "\n".join(lines)


def generate(path: Path, target_mb: int, seed: int = 1) -> dict:
    """Write a trace of about ``target_mb`` MB; returns the per-operator tally."""
    rnd = random.Random(seed)
    pid = tid = 3141
    gpu_pid, stream = 0, 7

    def step_of(lo: int, hi: int | None = None) -> int:
        """A time step: whole microseconds, or with fractional times the same step in ns with
        a random sub-microsecond part."""
        v = lo if hi is None else rnd.randint(lo, hi)
        return v if TIMES == "integer" else v * 1000 + rnd.randint(0, 999)

    # integer epoch microseconds, as Kineto wrote them before 2.2; or ns on a monotonic clock
    t = 1_694_039_968_955_744 if TIMES == "integer" else 1_212_075_548_353_304
    gpu_t = t
    ext = corr = 0
    tally: dict = defaultdict(lambda: [0, 0])
    target = target_mb * 1_000_000
    tmp = path.with_suffix(".part")
    with open(tmp, "w") as out:
        out.write('{\n  "schemaVersion": 1,\n  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},\n'
                  '  "deviceProperties": [\n    {\n      "id": 0, "name": "Synthetic GPU", "totalGlobalMem": 42297524224,\n'
                  '      "computeMajor": 8, "computeMinor": 0, "numSms": 108\n    }\n  ],\n  "traceEvents": [\n')
        out.write(",\n".join([
            _event("M", "", "process_name", pid, 0, t, args={"name": "python3"}).replace('"cat": "", ', ""),
            _event("M", "", "thread_name", pid, tid, t, args={"name": f"thread {tid} (python3)"}).replace('"cat": "", ', ""),
            _event("M", "", "process_name", gpu_pid, 0, t, args={"name": "python3"}).replace('"cat": "", ', ""),
            _event("M", "", "thread_name", gpu_pid, stream, t, args={"name": f"stream {stream}"}).replace('"cat": "", ', ""),
        ]))
        step = 0
        while out.tell() < target:
            step += 1
            chunk = []
            step_start = t
            t += step_of(2)
            for _ in range(200):
                name, dims, children = OPS[rnd.randrange(len(OPS))]
                ext += 1
                op_start = t
                t += step_of(1)
                body = []
                for cname, nk in children:
                    ext += 1
                    c_start = t
                    t += step_of(1)
                    cbody = []
                    for _k in range(nk):
                        corr += 1
                        d = step_of(3, 8)
                        cbody.append(_event("X", "cuda_runtime", "cudaLaunchKernel", pid, tid, t, d,
                                            {"External id": ext, "cbid": 211, "correlation": corr}))
                        cbody.append(_event("s", "ac2g", "ac2g", pid, tid, t, extra={"id": corr}))
                        gpu_t = max(gpu_t, t + d)
                        kd = step_of(2, 60)
                        kname = KERNELS[rnd.randrange(len(KERNELS))]
                        cbody.append(_event("X", "kernel", kname, gpu_pid, stream, gpu_t, kd,
                                            {"External id": ext, "queued": 0, "device": 0, "context": 1,
                                             "stream": stream, "correlation": corr, "registers per thread": 64,
                                             "shared memory": 0, "blocks per SM": 1.5, "warps per SM": 6,
                                             "grid": [rnd.randint(1, 512), 1, 1], "block": [256, 1, 1],
                                             "est. achieved occupancy %": 33}))
                        cbody.append(_event("f", "ac2g", "ac2g", gpu_pid, stream, gpu_t, extra={"id": corr, "bp": "e"}))
                        gpu_t += kd
                        t += d + step_of(1)
                    t += step_of(1, 5)
                    cdur = t - c_start
                    body.append(_event("X", "cpu_op", cname, pid, tid, c_start, cdur, {"External id": ext}))
                    body.extend(cbody)
                    tally[cname][0] += 1
                    tally[cname][1] += cdur
                    t += step_of(1)
                if name == "aten::copy_":
                    corr += 1
                    call, copy = step_of(6), step_of(9)
                    body.append(_event("X", "cuda_runtime", "cudaMemcpyAsync", pid, tid, t, call,
                                       {"External id": ext, "cbid": 41, "correlation": corr}))
                    gpu_t = max(gpu_t, t + call)
                    body.append(_event("X", "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", gpu_pid, stream, gpu_t,
                                       copy, {"External id": ext, "device": 0, "context": 1, "stream": stream,
                                           "correlation": corr, "bytes": 131072, "memory bandwidth (GB/s)": 14.5}))
                    gpu_t += copy
                    t += step_of(7)
                t += step_of(1, 20)
                dur = t - op_start
                chunk.append(_event("X", "cpu_op", name, pid, tid, op_start, dur,
                                    {"External id": ext, "Record function id": 0, "Input Dims": dims,
                                     "Input type": ["float"] * len(dims), "Sequence number": ext, "Fwd thread id": 0}))
                chunk.extend(body)
                tally[name][0] += 1
                tally[name][1] += dur
                t += step_of(2)
            t += step_of(3)
            ext += 1
            sdur = t - step_start
            out.write(",\n" + _event("X", "user_annotation", f"ProfilerStep#{step}", pid, tid, step_start, sdur,
                                     {"External id": ext}))
            tally[f"ProfilerStep#{step}"][0] += 1
            tally[f"ProfilerStep#{step}"][1] += sdur
            out.write(",\n" + ",\n".join(chunk))
            t += step_of(10)
        out.write('\n  ],\n  "traceName": "bench.pt.trace.json",\n  "displayTimeUnit": "ms"\n}\n')
    tmp.rename(path)
    return {k: v for k, v in tally.items()}


# =========================================================================== running
class Result:
    def __init__(self, seconds, maxrss_kb, rc, stdout, stderr, other_cpu, cpu=0.0):
        self.seconds, self.maxrss_kb, self.rc, self.cpu = seconds, maxrss_kb, rc, cpu
        self.stdout, self.stderr, self.other_cpu = stdout, stderr, other_cpu

    @property
    def rss_mb(self) -> float:
        return self.maxrss_kb / 1024


def _busy() -> float:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / os.sysconf("SC_CLK_TCK")


def run(cmd: list[str], env=None) -> Result:
    """Run ``cmd``: wall time, peak RSS of that process (wait4), and CPU others used meanwhile."""
    busy0 = _busy()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    err: list[bytes] = []
    th = threading.Thread(target=lambda: err.append(p.stderr.read()))
    th.start()
    out = p.stdout.read()
    th.join()
    _, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - t0
    self_cpu = usage.ru_utime + usage.ru_stime
    other = max(0.0, _busy() - busy0 - self_cpu)
    p.returncode = os.waitstatus_to_exitcode(status)
    return Result(seconds, usage.ru_maxrss, p.returncode, out.decode(errors="replace"),
                  (err[0] if err else b"").decode(errors="replace"), other, self_cpu)


def wait_idle(max_wait: float) -> None:
    """Wait until the machine has been mostly idle for a second (another benchmark may run)."""
    deadline = time.time() + max_wait
    while time.time() < deadline:
        b0 = _busy()
        time.sleep(1.0)
        if _busy() - b0 < 0.3:
            return


HTA_SCRIPT = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
t1 = time.perf_counter()
a = TraceAnalysis(trace_dir=sys.argv[1])
t2 = time.perf_counter()
df = a.t.get_trace(0)
st = a.t.symbol_table
names = st.sym_table
cats = {names[i]: i for i in range(len(names))}
out = {}
for cat in ("cpu_op", "user_annotation"):
    if cat not in cats:
        continue
    sub = df[df["cat"] == cats[cat]]
    g = sub.groupby("name")["dur"].agg(["count", "sum"])
    for idx, row in g.iterrows():
        out[names[int(idx)]] = [int(row["count"]), int(row["sum"])]
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "ops": out}))
"""


def installed_hta(venv: Path) -> Path | None:
    """The python of ``venv`` when HTA is installed there."""
    py = venv / "bin" / "python"
    if py.exists() and subprocess.run([str(py), "-c", "import hta"], capture_output=True).returncode == 0:
        return py
    return None


def ensure_hta(venv: Path, version: str | None) -> Path:
    py = installed_hta(venv)
    if py is not None:
        return py
    print(f"creating {venv} and installing HolisticTraceAnalysis (not a project dependency) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    spec = "HolisticTraceAnalysis" + (f"=={version}" if version else "")
    subprocess.run([str(py), "-m", "pip", "install", "-q", spec], check=True)
    return py


def loganalyze_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("loganalyze")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "loganalyze.cli"]


# =========================================================================== main
def trace_path(args, size_mb: int) -> tuple[Path, dict]:
    """The trace of about ``size_mb`` MB in the chosen layout (generated once) and its tally."""
    global LAYOUT, TIMES, ARGS
    LAYOUT, TIMES, ARGS = args.layout, args.times, args.args
    work = Path(args.workdir)
    suffix = (("" if args.layout == "pretty" else f"_{args.layout}") + ("" if args.times == "integer" else "_frac")
              + ("" if args.args == "full" else f"_{args.args}"))
    tdir = work / f"trace_{size_mb}mb{suffix}"
    tdir.mkdir(parents=True, exist_ok=True)
    trace = tdir / "rank0.pt.trace.json"
    tally_path = work / f"trace_{size_mb}mb{suffix}.tally.json"
    meta = json.loads(tally_path.read_text()) if tally_path.exists() else {}
    if not trace.exists() or meta.get("generator") != GENERATOR_VERSION:
        print(f"generating {trace} ...", flush=True)
        t0 = time.perf_counter()
        tally = generate(trace, size_mb, seed=args.seed)
        meta = {"generator": GENERATOR_VERSION, "seed": args.seed, "tally": tally,
                "seconds": time.perf_counter() - t0}
        tally_path.write_text(json.dumps(meta))
    return trace, meta["tally"]


def _ingest(args, trace: Path, db: Path) -> Result:
    for p in (db, Path(str(db) + ".wal")):
        if p.exists():
            p.unlink()
    wait_idle(args.wait_idle)
    r = run(loganalyze_cmd() + ["ingest", "--quiet", "--db", str(db), str(trace)])
    if r.rc != 0:
        raise SystemExit(f"loganalyze ingest failed: {r.stderr}")
    return r


def _json_load(args, trace: Path) -> Result:
    wait_idle(args.wait_idle)
    r = run([sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1], 'rb'))", str(trace)])
    if r.rc != 0:
        raise SystemExit(f"json.load failed: {r.stderr}")
    return r


def bench_size(args, size_mb: int, hta_py: Path | None) -> dict:
    trace, tally = trace_path(args, size_mb)
    size = trace.stat().st_size
    row: dict = {"size_mb": size / 1e6, "layout": args.layout,
                 "file": str(trace.relative_to(REPO) if trace.is_relative_to(REPO) else trace)}
    db = Path(args.workdir) / f"bench_trace_{size_mb}.duckdb"
    best: dict[str, Result] = {}
    for i in range(args.rounds):  # alternate, so that both see the same machine
        for name, fn in (("json_load", lambda: _json_load(args, trace)), ("loganalyze", lambda: _ingest(args, trace, db))):
            r = fn()
            print(f"  round {i + 1}: {name:10s} {size_mb} MB: {r.seconds:6.2f} s wall, {r.cpu:6.2f} s CPU, "
                  f"{r.rss_mb:5.0f} MiB (others used {r.other_cpu:.1f} s CPU, load {os.getloadavg()[0]:.2f})", flush=True)
            if name not in best or r.seconds < best[name].seconds:
                best[name] = r
    for name, r in best.items():
        row[f"{name}_s"], row[f"{name}_cpu_s"], row[f"{name}_rss_mb"] = r.seconds, r.cpu, r.rss_mb
        row[f"{name}_other_cpu"] = r.other_cpu
    row["time_vs_json_load"] = row["loganalyze_s"] / row["json_load_s"]
    row["cpu_vs_json_load"] = row["loganalyze_cpu_s"] / row["json_load_cpu_s"]
    row["rss_vs_file"] = row["loganalyze_rss_mb"] * 2 ** 20 / size
    row["load_avg"] = os.getloadavg()[0]
    s = run(loganalyze_cmd() + ["summary", "--db", str(db), "--by", "op", "--format", "json"])
    unit = 1 if args.times == "integer" else 1000  # the tally's unit: µs, or ns
    la_ops = {o["op"]: [o["count"], round(o["total_us"] * unit)] for o in json.loads(s.stdout)}
    row["loganalyze_matches_generator"] = la_ops == {k: list(v) for k, v in tally.items()}
    if hta_py is not None:
        wait_idle(args.wait_idle)
        r = run([str(hta_py), "-c", HTA_SCRIPT, str(trace.parent)])
        if r.rc != 0:
            row["hta_error"] = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.rc}"
            print(f"  HTA failed: {row['hta_error']}", flush=True)
        else:
            res = json.loads(r.stdout.strip().splitlines()[-1])
            row["hta_s"], row["hta_rss_mb"], row["hta_load_s"] = r.seconds, r.rss_mb, res["load_s"]
            row["hta_matches_loganalyze"] = {k: list(v) for k, v in res["ops"].items()} == la_ops
            print(f"  HTA {size_mb} MB: {r.seconds:.2f} s (load {res['load_s']:.2f} s), {r.rss_mb:.0f} MiB", flush=True)
    return row


def _mark(value: float, target: tuple[float, float]) -> str:
    return "goal met" if value <= target[1] else "met" if value <= target[0] else "**not met**"


def report(rows: list[dict], args, hta_version: str | None) -> str:
    import duckdb

    sizes = ",".join(str(s) for s in args.sizes)
    t, g = TARGETS["time_vs_json_load"], TARGETS["rss_vs_file"]
    lines = [f"## Trace JSON: Kineto-like traces ({args.layout} layout, {args.times} times, {args.args} args), "
             "ingest against json.load", "",
             f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, DuckDB {duckdb.__version__}"
             + (f", HolisticTraceAnalysis {hta_version}" if hta_version else "") + ".", "",
             "```", f"python scripts/bench_trace.py --sizes {sizes} --layout {args.layout} --times {args.times} --args {args.args} --rounds {args.rounds}"
             + (" --hta" if args.hta else ""), "```", "",
             "Each tool runs in its own process, alternately, best wall time of "
             f"{args.rounds} rounds; CPU is that run's user+sys and RSS its peak (`os.wait4`). "
             "loganalyze: the whole `loganalyze ingest` into a fresh database file.  json.load: "
             "the whole file into Python objects.  Targets (issue 10): ingest time <= "
             f"{t[0]}x json.load (goal {t[1]}x), peak RSS <= {g[0]}x the file (goal {g[1]}x).", "",
             "| trace | layout | json.load | json.load CPU | json.load RSS | ingest | ingest CPU | ingest RSS "
             "| time vs json.load | RSS vs file | load avg | per-op totals exact |"
             + (" HTA load (wall) | HTA RSS |" if args.hta else ""),
             "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if args.hta else "")]
    for r in rows:
        eq = "yes" if r["loganalyze_matches_generator"] else "NO"
        if "hta_matches_loganalyze" in r:
            eq += ", HTA " + ("equal" if r["hta_matches_loganalyze"] else "differs")
        line = (f"| {r['size_mb']:.0f} MB | {r['layout']} | {r['json_load_s']:.2f} s | {r['json_load_cpu_s']:.2f} s | "
                f"{r['json_load_rss_mb']:.0f} MiB | {r['loganalyze_s']:.2f} s | {r['loganalyze_cpu_s']:.2f} s | "
                f"{r['loganalyze_rss_mb']:.0f} MiB | {r['time_vs_json_load']:.2f}x ({_mark(r['time_vs_json_load'], t)}) | "
                f"{r['rss_vs_file']:.2f}x ({_mark(r['rss_vs_file'], g)}) | {r['load_avg']:.2f} | {eq} |")
        if args.hta:
            line += (f" {r['hta_load_s']:.1f} s ({r['hta_s']:.1f} s) | {r['hta_rss_mb']:.0f} MiB |" if "hta_s" in r
                     else " - | - |")
        lines.append(line)
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,500", help="trace sizes in MB, comma-separated")
    ap.add_argument("--layout", choices=("pretty", "compact"), default="pretty")
    ap.add_argument("--times", choices=("integer", "fractional"), default="integer",
                    help="whole epoch microseconds (Kineto before PyTorch 2.2) or three decimals (since)")
    ap.add_argument("--args", choices=("full", "ids", "minimal"), default="full",
                    help="the args Kineto writes, only ids and shapes (shorter events, more per MB), "
                         "or only correlation ids (the shortest)")
    ap.add_argument("--workdir", default=str(REPO / "bench-data"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3, help="alternating json.load / ingest rounds (best kept; single rounds spread widely on a shared host)")
    ap.add_argument("--hta", action="store_true", help="also time HTA where it is installed (--hta-venv)")
    ap.add_argument("--install-hta", action="store_true", help="create --hta-venv and pip-install HTA into it")
    ap.add_argument("--hta-venv", default=None, help="venv for HTA (default: WORKDIR/hta-venv)")
    ap.add_argument("--hta-version", default=None, help="pin HolisticTraceAnalysis to this version")
    ap.add_argument("--wait-idle", type=float, default=60, help="seconds to wait for an idle machine before each run")
    ap.add_argument("--report", default=None, help="also write the Markdown report here")
    ap.add_argument("--json", default=None, help="write the raw figures here")
    args = ap.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    hta_py, hta_version = None, None
    if args.hta or args.install_hta:
        venv = Path(args.hta_venv or Path(args.workdir) / "hta-venv")
        hta_py = ensure_hta(venv, args.hta_version) if args.install_hta else installed_hta(venv)
        args.hta = hta_py is not None
        if hta_py is None:
            print(f"HTA is not installed in {venv} (--install-hta installs it): HTA left out", flush=True)
        else:
            hta_version = subprocess.run([str(hta_py), "-c", "import importlib.metadata as m; "
                                          "print(m.version('HolisticTraceAnalysis'))"],
                                         capture_output=True, text=True).stdout.strip() or None
    rows = [bench_size(args, s, hta_py) for s in args.sizes]
    text = report(rows, args, hta_version)
    print(text)
    if args.report:
        Path(args.report).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
