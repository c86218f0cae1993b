#!/usr/bin/env python
"""(Re)generate the samples in samples/trace/: one small file per supported layout.

    python scripts/make_trace_samples.py                        # the hand-written/synthetic files
    python scripts/make_trace_samples.py --torch-python /work/torchvenv/bin/python   # + real PyTorch output

Nothing here is copied from the public corpus or any other file: the synthetic samples are
written from the layouts in the team's design notes (shared/docs/formats.md sections 4 and 5,
and the printf formats of MXNet ``aggregate_stats.cc``, PyTorch ``_build_table`` and CNTK
``PerformanceProfiler.cpp``), with made-up names and numbers.  The ``torch*`` files are
real output of a tiny CPU training loop, made on our machine with a PyTorch installed in a
separate venv (torch is not a dependency of loganalyze).  Output is deterministic
(fixed seeds; gzip with mtime 0) except for the real PyTorch files.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "samples" / "trace"


def write(name: str, text: str, gz: bool = False) -> None:
    path = OUT / name
    data = text.encode("utf-8")
    if gz:
        with open(path, "wb") as f:
            with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as z:
                z.write(data)
    else:
        path.write_bytes(data)
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")


def pretty_event(ev: dict) -> str:
    """One event the way the Kineto exporter lays it out: a few keys per line."""
    head = ", ".join(f'"{k}": {json.dumps(ev[k])}' for k in ("ph", "cat", "name", "pid", "tid") if k in ev)
    times = ", ".join(f'"{k}": {ev[k]}' for k in ("ts", "dur") if k in ev)
    rest = [f'"{k}": {json.dumps(ev[k])}' for k in ev if k not in ("ph", "cat", "name", "pid", "tid", "ts", "dur", "args")]
    body = [times] + rest if times else rest
    lines = ["  {", f"    {head}" + ("," if body or "args" in ev else "")]
    if body:
        lines.append(f"    {', '.join(body)}" + ("," if "args" in ev else ""))
    if "args" in ev:
        args = ",\n".join(f'      {json.dumps(k)}: {json.dumps(v)}' for k, v in ev["args"].items())
        lines.append('    "args": {')
        lines.append(args)
        lines.append("    }")
    lines.append("  }")
    return "\n".join(lines)


# =========================================================================== Kineto (GPU)
def kineto_gpu(seed: int = 7, steps: int = 2, runtime: str = "cuda") -> str:
    """A PyTorch-profiler-like trace: ProfilerStep annotations, nested aten ops with input
    shapes, launch calls with correlation ids, kernels/memcpy/memset on a stream, ac2g flows,
    a python_function frame, [memory] instants.  ``runtime='hip'`` gives ROCm names."""
    rnd = random.Random(seed)
    pid, tid, dev_pid, stream = 4321, 4321, 0, 7
    t = 1_700_000_000_000_000  # epoch microseconds, integers (Kineto before 2.2)
    ext = corr = 0
    events = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"thread {tid} (python3)"}},
        {"ph": "M", "name": "process_name", "pid": dev_pid, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_labels", "pid": dev_pid, "tid": 0, "args": {"labels": "GPU 0"}},
        {"ph": "M", "name": "thread_name", "pid": dev_pid, "tid": stream, "args": {"name": f"stream {stream} "}},
    ]
    launch = "hipLaunchKernel" if runtime == "hip" else "cudaLaunchKernel"
    memcpy_api = "hipMemcpyAsync" if runtime == "hip" else "cudaMemcpyAsync"
    gpu_t = t + 50
    ops = [("aten::linear", [[8, 64], [32, 64], [32]], [("aten::t", 0, None), ("aten::addmm", 1, "gemm_kernel")]),
           ("aten::relu", [[8, 32]], [("aten::clamp_min", 1, "elementwise_kernel<relu>")]),
           ("aten::add_", [[8, 32], [8, 32], []], [])]
    for step in range(steps):
        step_start = t
        step_events = []
        t += 3
        step_events.append({"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": pid, "tid": tid,
                            "ts": t, "dur": 0})  # duration filled below
        py = step_events[-1]
        for name, dims, children in ops:
            ext += 1
            op = {"ph": "X", "cat": "cpu_op", "name": name, "pid": pid, "tid": tid, "ts": t, "dur": 0,
                  "args": {"External id": ext, "Input Dims": dims, "Input type": ["float"] * len(dims),
                           "Sequence number": ext, "Fwd thread id": 0}}
            step_events.append(op)
            t += 2
            for cname, nk, kernel in children:
                ext += 1
                child = {"ph": "X", "cat": "cpu_op", "name": cname, "pid": pid, "tid": tid, "ts": t, "dur": 0,
                         "args": {"External id": ext}}
                step_events.append(child)
                t += 1
                for _ in range(nk):
                    corr += 1
                    d = rnd.randint(4, 9)
                    step_events.append({"ph": "X", "cat": "cuda_runtime", "name": launch, "pid": pid, "tid": tid,
                                        "ts": t, "dur": d, "args": {"External id": ext, "cbid": 211, "correlation": corr}})
                    step_events.append({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": t, "cat": "ac2g", "name": "ac2g"})
                    gpu_t = max(gpu_t, t + d + 2)
                    kd = rnd.randint(10, 40)
                    step_events.append({"ph": "X", "cat": "kernel", "name": f"void {kernel}<float>(float*, int)",
                                        "pid": dev_pid, "tid": stream, "ts": gpu_t, "dur": kd,
                                        "args": {"External id": ext, "queued": 0, "device": 0, "context": 1,
                                                 "stream": stream, "correlation": corr, "registers per thread": 32,
                                                 "shared memory": 0, "blocks per SM": 0.5, "warps per SM": 4,
                                                 "grid": [64, 1, 1], "block": [128, 1, 1],
                                                 "est. achieved occupancy %": 25}})
                    step_events.append({"ph": "f", "id": corr, "pid": dev_pid, "tid": stream, "ts": gpu_t,
                                        "cat": "ac2g", "name": "ac2g", "bp": "e"})
                    gpu_t += kd
                    t += d + 1
                child["dur"] = t - child["ts"]
                t += 1
            op["dur"] = t - op["ts"]
            t += 2
        # an optimizer step with a host-to-device copy and a memset
        ext += 1
        opt = {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step", "pid": pid, "tid": tid,
               "ts": t, "dur": 0, "args": {"External id": ext}}
        step_events.append(opt)
        t += 1
        corr += 1
        step_events.append({"ph": "X", "cat": "cuda_runtime", "name": memcpy_api, "pid": pid, "tid": tid, "ts": t,
                            "dur": 6, "args": {"External id": ext, "cbid": 41, "correlation": corr}})
        gpu_t = max(gpu_t, t + 8)
        step_events.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": dev_pid,
                            "tid": stream, "ts": gpu_t, "dur": 5,
                            "args": {"External id": ext, "device": 0, "context": 1, "stream": stream,
                                     "correlation": corr, "bytes": 8192, "memory bandwidth (GB/s)": 1.6}})
        gpu_t += 5
        t += 7
        corr += 1
        step_events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync" if runtime != "hip" else "hipMemsetAsync",
                            "pid": pid, "tid": tid, "ts": t, "dur": 3,
                            "args": {"External id": ext, "cbid": 51, "correlation": corr}})
        step_events.append({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": dev_pid, "tid": stream,
                            "ts": gpu_t + 1, "dur": 2, "args": {"External id": ext, "device": 0, "context": 1,
                                                               "stream": stream, "correlation": corr, "bytes": 1024}})
        gpu_t += 3
        t += 4
        step_events.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": pid, "tid": tid, "ts": t,
                            "s": "t", "args": {"Device Type": 1, "Device Id": 0, "Addr": 140000000 + step,
                                               "Bytes": 8192, "Total Allocated": 65536 + 8192 * step,
                                               "Total Reserved": 2097152}})
        opt["dur"] = t - opt["ts"]
        t += 2
        py["dur"] = t - py["ts"]
        t += 2
        ext += 1
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 1}", "pid": pid, "tid": tid,
                       "ts": step_start, "dur": t - step_start, "args": {"External id": ext}})
        events.extend(step_events)
        t += 10
    events.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
                   "ts": 1_700_000_000_000_000, "dur": t - 1_700_000_000_000_000, "args": {"Op count": 0}})
    events.append({"ph": "i", "name": "Iteration Start: PyTorch Profiler", "s": "g", "pid": "Traces",
                   "tid": "Trace PyTorch Profiler", "ts": 1_700_000_000_000_000})
    head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {\n      "id": 0, "name": "Example GPU", '
            '"totalGlobalMem": 17179869184, "computeMajor": 8, "computeMinor": 0, "numSms": 80\n    }\n  ],\n'
            '  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},\n'
            f'  "cuda_runtime_version": 12040,\n  "record_shapes": 1,\n  "traceEvents": [\n')
    tail = '\n  ],\n  "traceName": "rank1.pt.trace.json",\n  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": 1700000000000000000\n}\n'
    return head + ",\n".join(pretty_event(e) for e in events) + tail


# =========================================================================== MXNet
def mxnet_trace() -> str:
    """MXNet profiler.dump() style: object form, pretty-printed with "," alone on a line,
    B/E operators on device pids, async b/e tasks, C counters, M names, 64-bit hash pids/tids
    above 2^63, a custom operator (MyAddOne::pure_python task, MyAddOne::_plus_scalar sub-op)."""
    tid = 13835058055282163711  # above 2^63, as std::hash<thread::id> gives
    api_pid, api_tid = 11529215046068469760, 9223372036854775809
    op_pid = 10376293541461622784
    t = 1_560_000_000_000_000
    ev = [{"ph": "M", "args": {"name": "cpu/0"}, "pid": 0, "name": "process_name"},
          {"ph": "M", "args": {"name": "gpu/0"}, "pid": 1, "name": "process_name"},
          {"ph": "M", "args": {"name": "MXNET_C_API"}, "pid": api_pid, "name": "process_name"},
          {"ph": "M", "args": {"name": "operator"}, "pid": op_pid, "name": "process_name"},
          {"ph": "M", "args": {"name": "Custom Operator"}, "pid": 42, "name": "process_name"}]
    calls = 0
    for i, (name, dur) in enumerate([("_zeros", 20), ("Convolution", 150), ("Activation", 40),
                                     ("MyAddOne::_plus_scalar", 15), ("_backward_Convolution", 300)]):
        calls += 1
        ev.append({"name": "MXImperativeInvokeEx", "cat": "MXNET_C_API", "ph": "b", "ts": t, "id": api_tid,
                   "pid": api_pid, "tid": api_tid})
        ev.append({"name": "MXNet C API Calls", "cat": "MXNET_C_API", "ph": "C", "ts": t + 1,
                   "args": {"MXNet C API Calls": calls}, "pid": api_pid, "tid": api_tid})
        ev.append({"name": "MXImperativeInvokeEx", "cat": "MXNET_C_API", "ph": "e", "ts": t + 5, "id": api_tid,
                   "pid": api_pid, "tid": api_tid})
        t += 10
        cat = "Custom Operator" if "::" in name else "operator"
        ev.append({"name": name, "cat": cat, "ph": "B", "ts": t, "pid": 0, "tid": tid})
        ev.append({"name": name, "cat": cat, "ph": "b", "ts": t, "id": tid, "pid": op_pid if cat == "operator" else 42,
                   "tid": tid})
        ev.append({"name": name, "cat": cat, "ph": "e", "ts": t + dur - 1, "id": tid,
                   "pid": op_pid if cat == "operator" else 42, "tid": tid})
        ev.append({"name": name, "cat": cat, "ph": "E", "ts": t + dur, "pid": 0, "tid": tid})
        ev.append({"name": "Memory: cpu/0", "cat": "Device Storage", "ph": "C", "ts": t + dur,
                   "args": {"Memory: cpu/0": 4096 * (i + 1)}, "pid": 18446744073709551557, "tid": tid})
        t += dur + 5
    # the python part of the custom operator: only recorded as a task
    ev.append({"name": "MyAddOne::pure_python", "cat": "Custom Operator", "ph": "b", "ts": t, "id": tid, "pid": 42,
               "tid": tid})
    ev.append({"name": "MyAddOne::pure_python", "cat": "Custom Operator", "ph": "e", "ts": t + 80, "id": tid, "pid": 42,
               "tid": tid})
    body = "\n,\n".join(_mxnet_event(e) for e in ev)
    return '{\n    "traceEvents": [\n' + body + '\n\n\n    ],\n    "displayTimeUnit": "ms"\n}\n'


def _mxnet_event(e: dict) -> str:
    keys = ["name", "cat", "ph", "ts", "args", "id", "pid", "tid"]
    parts = []
    for k in keys:
        if k in e:
            v = e[k]
            if k == "args":
                inner = ", ".join(f'"{a}": {json.dumps(b)}' for a, b in v.items())
                parts.append(f'        "args": {{ {inner} }}' if e["ph"] == "C" else
                             f'        "args": {{\n                "name": {json.dumps(v["name"])}\n            }}')
            else:
                parts.append(f'        "{k}": {json.dumps(v)}')
    return "    {\n" + ",\n".join(parts) + "\n    }"


def mxnet_table_15() -> str:
    """MXNet <= 1.5 ``dumps()``: every section has the five time columns."""
    rows = {
        "Device Storage": [("Memory: cpu/0", 12, "2048.0000", "0.2560", "4096.0000", "2047.8720")],
        "MXNET_C_API": [("MXImperativeInvokeEx", 5, "1.2340", "0.0100", "1.0010", "0.2468"),
                        ("MXNet C API Calls", 5, "0.0050", "0.0010", "0.0050", "0.0020"),
                        ("MXNDArrayWaitAll", 1, "12.5000", "12.5000", "12.5000", "12.5000")],
        "operator": [("Convolution", 2, "0.3000", "0.1500", "0.1500", "0.1500"),
                     ("_backward_Convolution", 2, "0.6000", "0.2900", "0.3100", "0.3000"),
                     ("Activation", 2, "0.0800", "0.0400", "0.0400", "0.0400")],
    }
    out = ["", "Profile Statistics.", "\tNote that counter items are counter values and not time units."]
    for title, rs in rows.items():
        out += [title, "=================",
                f"{'Name':<25}{'Total Count':>16} {'Time (ms)':>16} {'Min Time (ms)':>16} {'Max Time (ms)':>16} {'Avg Time (ms)':>16}",
                f"{'----':<25}{'-----------':>16} {'---------':>16} {'-------------':>16} {'-------------':>16} {'-------------':>16}"]
        for name, n, *vals in rs:
            out.append(f"{name:<25}{n:>16} " + " ".join(f"{v:>16}" for v in vals))
        out.append("")
    return "\n".join(out) + "\n"


def mxnet_table_16() -> str:
    """MXNet >= 1.6 ``dumps()``: memory sections print Min/Max/Avg Use (kB) and no time column;
    a name longer than its 25-character column; a custom-operator section."""
    out = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    out += ["Device Storage", "=================",
            f"{'Name':<25}{'Total Count':>16} {'Min Use  (kB)':>16} {'Max Use  (kB)':>16} {'Avg Use  (kB)':>16}",
            f"{'----':<25}{'-----------':>16} {'-------------':>16} {'-------------':>16} {'-------------':>16}",
            f"{'Memory: cpu/0':<25}{3:>16} {'96.0600':>16} {'96.0760':>16} {'0.0080':>16}",
            f"{'Memory: gpu/0':<25}{7:>16} {'0.0000':>16} {'4096.0000':>16} {'2048.0000':>16}", ""]
    time_hdr = [f"{'Name':<25}{'Total Count':>16} {'Time (ms)':>16} {'Min Time (ms)':>16} {'Max Time (ms)':>16} {'Avg Time (ms)':>16}",
                f"{'----':<25}{'-----------':>16} {'---------':>16} {'-------------':>16} {'-------------':>16} {'-------------':>16}"]
    sections = {
        "MXNET_C_API": [("MXImperativeInvokeEx", 2, "0.3360", "0.0990", "0.2370", "0.1680"),
                        ("MXNet C API Calls", 17, "0.2320", "0.2160", "0.2320", "0.0080"),
                        ("MXNDArraySyncCopyFromCPU", 1, "0.1750", "0.1750", "0.1750", "0.1750")],
        "operator": [("sum", 1, "0.0530", "0.0530", "0.0530", "0.0530"),
                     ("diag", 1, "0.0450", "0.0450", "0.0450", "0.0450"),
                     ("_random_uniform_like_with_a_long_name", 4, "1.0000", "0.2000", "0.3000", "0.2500")],
        "Custom Operator": [("MyAddOne::pure_python", 2, "0.8000", "0.3900", "0.4100", "0.4000"),
                            ("MyAddOne::_plus_scalar", 2, "0.0300", "0.0140", "0.0160", "0.0150")],
    }
    for title, rs in sections.items():
        out += [title, "================="] + time_hdr
        for name, n, *vals in rs:
            out.append(f"{name:<25}{n:>16} " + " ".join(f"{v:>16}" for v in vals))
        out.append("")
    return "\n".join(out) + "\n"


def mxnet_json() -> str:
    """``dumps(format='json')`` as MXNet 1.6 writes it (including its trailing comma in Unit)."""
    return """{
    "Time": {
        "operator": {
            "Convolution": {
                "Count": 2,
                "Total": 0.3,
                "Min": 0.15,
                "Max": 0.15,
                "Avg": 0.15
            }
            ,
            "Activation": {
                "Count": 2,
                "Total": 0.08,
                "Min": 0.04,
                "Max": 0.04,
                "Avg": 0.04
            }
        }
        ,
        "MXNET_C_API": {
            "MXImperativeInvokeEx": {
                "Count": 5,
                "Total": 1.234,
                "Min": 0.01,
                "Max": 1.001,
                "Avg": 0.2468
            }
        }
    }
    ,
    "Memory": {
        "Device Storage": {
            "Memory: cpu/0": {
                "Count": 3,
                "Min": 96.06,
                "Max": 96.08,
                "Avg": 0.008
            }
        }
    }
,
    "Unit": {
        "Time": "ms",
        "Memory": "kb",
}
"""


# =========================================================================== PyTorch tables
def _torch_table(headers, widths, rows, footer, name_align=">") -> str:
    fmt = ""
    sep = ""
    for k, w in enumerate(widths):
        align = name_align if k == 0 else ">"
        fmt += "{: " + align + str(w) + "}  "
        sep += "-" * w + "  "
    out = [sep, fmt.format(*headers), sep]
    for r in rows:
        out.append(fmt.format(*r))
    out.append(sep)
    out += footer
    return "\n".join(out) + "\n"


def torch_table_cuda() -> str:
    """key_averages().table() of a CUDA run, laid out like torch >= 1.8 (names right-aligned,
    a long name cut with '...', memory columns); inside a CI log with other output."""
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "Self CUDA",
               "Self CUDA %", "CUDA total", "CUDA time avg", "CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem",
               "# of Calls"]
    rows = [
        ["aten::addmm", "40.00%", "400.000us", "45.00%", "450.000us", "225.000us", "1.200ms", "60.00%", "1.200ms",
         "600.000us", "0 b", "0 b", "512.00 Kb", "512.00 Kb", "2"],
        ["aten::linear", "5.00%", "50.000us", "50.00%", "500.000us", "250.000us", "0.000us", "0.00%", "1.200ms",
         "600.000us", "0 b", "0 b", "512.00 Kb", "0 b", "2"],
        ["void at::native::vectorized_elementwise_kernel<4, at...", "0.00%", "0.000us", "0.00%", "0.000us", "0.000us",
         "800.000us", "40.00%", "800.000us", "400.000us", "0 b", "0 b", "0 b", "0 b", "2"],
        ["aten::relu", "45.00%", "450.000us", "50.00%", "500.000us", "250.000us", "0.000us", "0.00%", "800.000us",
         "400.000us", "0 b", "0 b", "1.00 Mb", "0 b", "2"],
        ["cudaLaunchKernel", "10.00%", "100.000us", "10.00%", "100.000us", "25.000us", "0.000us", "0.00%", "0.000us",
         "0.000us", "-16 b", "-16 b", "0 b", "0 b", "4"],
    ]
    widths = [55] + [12] * (len(headers) - 1)
    table = _torch_table(headers, widths, rows, ["Self CPU time total: 1.000ms", "Self CUDA time total: 2.000ms"])
    return ("epoch 1/1: loss=0.4321\n" + "STAGE:2026-11-22 10:00:00 4321:4321 ActivityProfilerController.cpp:314] "
            "Completed Stage: Warm Up\n" + table + "\ntraining done\n")


def torch_table_old() -> str:
    """torch.autograd.profiler table of PyTorch 1.4-1.7: left-aligned names, 15-wide columns,
    'Self CPU total %', 'Number of Calls', 'Input Shapes' (group_by_input_shape=True)."""
    headers = ["Name", "Self CPU total %", "Self CPU total", "CPU total %", "CPU total", "CPU time avg",
               "Number of Calls", "Input Shapes"]
    rows = [
        ["mul", "60.77%", "47.470us", "60.77%", "47.470us", "15.823us", "3", "[[2, 3], [2, 3]]"],
        ["PowBackward0", "12.03%", "9.400us", "100.00%", "121.891us", "121.891us", "1", "[]"],
        ["torch::autograd::AccumulateGrad", "2.70%", "2.110us", "2.70%", "2.110us", "2.110us", "1", "[]"],
        ["pow", "24.50%", "19.140us", "24.50%", "19.140us", "19.140us", "1", "[[2, 3]]"],
    ]
    widths = [35, 15, 15, 15, 15, 15, 15, 20]
    return _torch_table(headers, widths, rows, ["Self CPU time total: 78.120us"], name_align="<")


# =========================================================================== CNTK
def cntk_summary(total: bool = True, hms: bool = False) -> str:
    def t(ms):
        if hms and ms >= 60000:
            s = ms / 1000
            return f"    {int(s) // 3600:02d}:{(int(s) // 60) % 60:02d}:{s % 60:06.3f}"
        return f"{ms:13.3f} ms"

    head = ("Description................ ............Mean ..........StdDev .............Min .............Max "
            "...........Count" + (" ...........Total" if total else ""))
    lines = ["CNTK Performance Profiler Summary Report", "", "Time Stamp: 2017/06/01 12:34:56", "", head, "",
             "Main Thread", ""]
    events = [("Epoch", 61234.5, 0.0, 61234.5, 61234.5, 1), ("_Minibatch Iteration", 61.2, 3.4, 55.0, 80.5, 1000),
              ("__Get Minibatch", 1.5, 0.2, 1.1, 2.9, 1000), ("__Forward + Backward", 40.25, 2.0, 35.0, 60.0, 1000),
              ("__Gradient Aggregation", 10.125, 1.0, 8.0, 15.0, 1000), ("__Weight Update", 5.0, 0.5, 4.0, 7.0, 1000)]
    for name, mean, sd, lo, hi, n in events:
        row = f"{name:<26}: {t(mean)} {t(sd)} {t(lo)} {t(hi)} {n:16d}"
        if total:
            row += " " + t(mean * n)
        lines.append(row)
    lines += ["", "Data Reader", ""]
    row = f"{'Prefetch Minibatch':<26}: {123.456:11.3f} MBps {1.0:11.3f} MBps {100.0:11.3f} MBps {150.0:11.3f} MBps {10:16d}"
    if total:
        row += f" {12345:13d} kB"
    lines.append(row)
    return "\n".join(lines) + "\n"


def cntk_detail(seed: int = 3) -> str:
    rnd = random.Random(seed)
    lines = ["EventDescription,ThreadId,BeginTimeStamp(ms),EndTimeStamp(ms)"]
    t = 1234567.0
    for mb in range(3):
        start = t
        for name, d in (("Get Minibatch", 1.25), ("Forward + Backward", 40.5), ('Custom "scoped", event', 2.0)):
            t += 0.01
            lines.append(f'"{name}",{4242},{t:.8f},{t + d + rnd.random() / 1000:.8f}')
            t += d + 0.002
        lines.append(f'"_Minibatch Iteration",{4242},{start:.8f},{t + 0.01:.8f}')
        t += 0.05
    lines.append(f'"Prefetch",{4243},{1234567.5:.8f},{1234600.25:.8f}')
    return "\n".join(lines) + "\n"


# =========================================================================== generic traces
def generic_trace() -> str:
    """A bare-array Chrome trace: nested B/E on two threads (string and integer tids), an X,
    instants, a counter, an async pair with a legacy S/F pair, a flow, process/thread names."""
    ev = [
        {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "Renderer"}},
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": "main", "args": {"name": "CrRendererMain"}},
        {"name": "RunTask", "cat": "toplevel", "ph": "B", "ts": 100.5, "pid": 1, "tid": "main"},
        {"name": "ParseHTML", "cat": "devtools.timeline", "ph": "B", "ts": 101.25, "pid": 1, "tid": "main",
         "args": {"beginData": {"url": "index.html"}}},
        {"name": "Layout", "cat": "devtools.timeline", "ph": "X", "ts": 102, "dur": 3.5, "pid": 1, "tid": "main"},
        {"name": "ParseHTML", "cat": "devtools.timeline", "ph": "E", "ts": 110, "pid": 1, "tid": "main"},
        {"name": "mark", "ph": "i", "ts": 111, "pid": 1, "tid": "main", "s": "t"},
        {"name": "RunTask", "cat": "toplevel", "ph": "E", "ts": 120, "pid": 1, "tid": "main"},
        {"name": "Worker", "cat": "toplevel", "ph": "X", "ts": 100, "dur": 50, "pid": 1, "tid": 7},
        {"name": "send", "cat": "ipc", "ph": "s", "id": "0x1", "ts": 105, "pid": 1, "tid": 7},
        {"name": "send", "cat": "ipc", "ph": "f", "bp": "e", "id": "0x1", "ts": 108, "pid": 1, "tid": "main"},
        {"name": "fetch", "cat": "net", "ph": "b", "id": "0x2a", "ts": 100, "pid": 1, "tid": 7},
        {"name": "fetch", "cat": "net", "ph": "e", "id": "0x2a", "ts": 140.125, "pid": 1, "tid": 7},
        {"name": "legacy", "cat": "net", "ph": "S", "id": 5, "ts": 101, "pid": 1, "tid": 7},
        {"name": "legacy", "cat": "net", "ph": "F", "id": 5, "ts": 103, "pid": 1, "tid": 7},
        {"name": "heap", "ph": "C", "ts": 130, "pid": 1, "args": {"used": 1024, "total": 4096}},
    ]
    return "[\n" + ",\n".join(json.dumps(e) for e in ev) + "\n]\n"


def truncated_trace() -> str:
    """A bare array written by a process that died: no closing bracket, last event cut."""
    full = generic_trace().rstrip().rstrip("]").rstrip()
    return full[: full.rindex('{"name": "heap"') + 30]


def unmatched_trace() -> str:
    """B/E problems: an E with no open B, a B never closed, an E before its B, a duplicated X,
    an X with a negative dur, an event with ts NaN."""
    ev = [
        {"name": "outer", "cat": "op", "ph": "B", "ts": 10, "pid": 1, "tid": 1},
        {"name": "inner", "cat": "op", "ph": "X", "ts": 11, "dur": 2, "pid": 1, "tid": 1},
        {"name": "inner", "cat": "op", "ph": "X", "ts": 11, "dur": 2, "pid": 1, "tid": 1},
        {"name": "stray", "cat": "op", "ph": "E", "ts": 12, "pid": 1, "tid": 1},
        {"name": "outer", "cat": "op", "ph": "E", "ts": 20, "pid": 1, "tid": 1},
        {"name": "never_closed", "cat": "op", "ph": "B", "ts": 30, "pid": 1, "tid": 1},
        {"name": "backwards", "cat": "op", "ph": "B", "ts": 50, "pid": 1, "tid": 2},
        {"name": "backwards", "cat": "op", "ph": "E", "ts": 40, "pid": 1, "tid": 2},
        {"name": "negative", "cat": "op", "ph": "X", "ts": 60, "dur": -5, "pid": 1, "tid": 2},
    ]
    text = "[\n" + ",\n".join(json.dumps(e) for e in ev)
    text += ',\n{"name": "nan", "cat": "op", "ph": "X", "ts": NaN, "dur": 1, "pid": 1, "tid": 2}\n]\n'
    return text


# =========================================================================== real PyTorch
TORCH_WORKLOAD = r'''
import sys, torch
from torch.profiler import profile, ProfilerActivity, record_function, schedule
out = sys.argv[1]
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 14 * 14, 10))
x = torch.randn(2, 3, 16, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def ready(p):
    p.export_chrome_trace(out + "/trace.json")
    with open(out + "/key_averages.txt", "w") as f:
        f.write(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=-1) + "\n")
    with open(out + "/key_averages_shapes.txt", "w") as f:
        f.write(p.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total", row_limit=-1) + "\n")
with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
             schedule=schedule(wait=0, warmup=1, active=2), on_trace_ready=ready) as prof:
    for step in range(3):
        with record_function("train_step"):
            loss = model(x).sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
        prof.step()
print(torch.__version__)
'''


def real_torch(python: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "workload.py"
        script.write_text(TORCH_WORKLOAD)
        res = subprocess.run([python, str(script), tmp], capture_output=True, text=True, check=True)
        version = res.stdout.strip().splitlines()[-1].split("+")[0]
        tag = "torch" + ".".join(version.split(".")[:2])
        write(f"{tag}_cpu_train.pt.trace.json.gz", Path(tmp, "trace.json").read_text(), gz=True)
        write(f"{tag}_key_averages.txt", Path(tmp, "key_averages.txt").read_text())
        write(f"{tag}_key_averages_shapes.txt", Path(tmp, "key_averages_shapes.txt").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--torch-python", help="python of a venv with torch: also write real PyTorch samples")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    write("kineto_gpu_style.pt.trace.json", kineto_gpu())
    write("kineto_rocm_style.pt.trace.json.gz", kineto_gpu(seed=11, steps=1, runtime="hip"), gz=True)
    write("mxnet_style_profile.json", mxnet_trace())
    write("mxnet1.5_style_dumps.txt", mxnet_table_15())
    write("mxnet1.6_style_dumps.txt", mxnet_table_16())
    write("mxnet1.6_style_dumps.json", mxnet_json())
    write("torch_cuda_style_key_averages.log", torch_table_cuda())
    write("torch1.x_style_key_averages.txt", torch_table_old())
    write("2017-06-01_12-34-56_summary_0.txt", cntk_summary())
    write("2017-06-01_12-34-56_detail_0.csv", cntk_detail())
    write("2017-06-01_12-34-56_summary_1.txt", cntk_summary(total=False, hms=True))
    write("generic_chrome_trace.json", generic_trace())
    write("truncated_no_closing_bracket.json", truncated_trace())
    write("unmatched_begin_end.json", unmatched_trace())
    if args.torch_python:
        real_torch(args.torch_python)


if __name__ == "__main__":
    main()
