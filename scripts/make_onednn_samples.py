#!/usr/bin/env python
"""Regenerate the real oneDNN verbose samples in samples/onednn/ from a PyTorch CPU build.

torch is NOT a dependency of loganalyze and must not be installed into the project's
environment.  Install a CPU build into a separate venv and point this script at its python:

    python -m venv /work/torchvenv
    /work/torchvenv/bin/pip install torch==2.13.0
    python scripts/make_onednn_samples.py --torch-python /work/torchvenv/bin/python

The script itself only uses the standard library.  It runs scripts/torch_onednn_workload.py in a
subprocess under that python once per verbose setting, captures the subprocess's stdout (the
verbose lines interleaved with the workload's own `app:` prints; stderr is not kept) and writes
one file per setting.  File names carry the torch version and the oneDNN major version that
the run printed, e.g. `torch2.13_onednn_v3_exec.log`.  `.gz` outputs are written with a fixed
gzip mtime so that the same content gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "scripts" / "torch_onednn_workload.py"
SIZE_LIMIT = 50 * 1024  # bytes on disk, per sample


@dataclass(frozen=True)
class Setting:
    suffix: str  # file name after "torch<X.Y>_onednn_v<N>_"
    env: dict[str, str]
    gzip: bool = False
    description: str = ""


SETTINGS = [
    Setting("exec.log", {"ONEDNN_VERBOSE": "1"}, description="level 1: exec lines only"),
    Setting(
        "create_exec_timestamps.log",
        {"ONEDNN_VERBOSE": "2", "ONEDNN_VERBOSE_TIMESTAMP": "1"},
        description="level 2: create + exec, with timestamps",
    ),
    Setting(
        "all.log.gz",
        {"ONEDNN_VERBOSE": "all", "ONEDNN_VERBOSE_TIMESTAMP": "1"},
        gzip=True,
        description="level all: create, exec, create:dispatch, exec:check, create_nested, with timestamps; gzip",
    ),
]

# variables that would change what the library prints; cleared before every run
_VERBOSE_VARS = re.compile(r"^(ONEDNN|DNNL|MKLDNN)_(VERBOSE|JIT_DUMP|ITT|DEFAULT_FPMATH|MAX_CPU_ISA|CPU_ISA_HINTS)")
_VERSION_LINE = re.compile(r"^onednn_verbose,(?:v\d+,)?(?:[\d.]+,)?info,oneDNN v(\d+)\.(\d+)\.(\d+)")


def run_workload(python: str, env_extra: dict[str, str], iterations: int, threads: int | None) -> str:
    env = {k: v for k, v in os.environ.items() if not _VERBOSE_VARS.match(k)}
    env.update(env_extra)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("PYTHONWARNINGS", "ignore")
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    cmd = [python, str(WORKLOAD), "--iterations", str(iterations)]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.decode("utf-8", "replace"))
        raise SystemExit(f"workload failed with exit code {proc.returncode}: {' '.join(cmd)}")
    return proc.stdout.decode("utf-8")


def torch_version(python: str) -> str:
    out = subprocess.run(
        [python, "-c", "import torch; print(torch.__version__)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    ).stdout.decode().strip()
    m = re.match(r"(\d+)\.(\d+)", out)
    if not m:
        raise SystemExit(f"cannot read the torch version from {out!r}")
    return f"{m.group(1)}.{m.group(2)}"


def describe(text: str) -> str:
    lines = text.splitlines()
    verbose = [ln for ln in lines if ln.split(",", 1)[0] in ("onednn_verbose", "dnnl_verbose", "mkldnn_verbose")]
    execs = [ln for ln in verbose if ",exec," in ln]
    return f"{len(lines)} lines, {len(verbose)} verbose, {len(execs)} exec"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch-python", required=True, help="python of a venv with a CPU torch build")
    ap.add_argument("--out", default=str(ROOT / "samples" / "onednn"), help="output folder (default samples/onednn)")
    ap.add_argument("--iterations", type=int, default=2, help="workload iterations (default 2)")
    # One thread gives stable sub-millisecond times.  With 2 OpenMP threads on a 2-core machine
    # about half of the exec lines came out at 7-9 ms instead of 0.01 ms (thread wake-up noise).
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS for the runs (default 1; 0 = inherit)")
    args = ap.parse_args(argv)

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    tv = torch_version(args.torch_python)

    status = 0
    for s in SETTINGS:
        text = run_workload(args.torch_python, s.env, args.iterations, args.threads or None)
        m = next((m for m in map(_VERSION_LINE.match, text.splitlines()) if m), None)
        if m is None:
            raise SystemExit(f"no oneDNN version line in the output for {s.env}; does torch use oneDNN here?")
        name = f"torch{tv}_onednn_v{m.group(1)}_{s.suffix}"
        data = text.encode("utf-8")
        if s.gzip:
            # mtime=0 and no file name in the header: same content, same bytes
            data = gzip.compress(data, compresslevel=9, mtime=0)
        path = out_dir / name
        path.write_bytes(data)
        env_txt = " ".join(f"{k}={v}" for k, v in s.env.items())
        print(f"{path}: {len(data)} bytes; {env_txt}; {describe(text)}; oneDNN v{'.'.join(m.groups())}")
        if len(data) > SIZE_LIMIT:
            print(f"  warning: larger than {SIZE_LIMIT} bytes; try --iterations 1", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
