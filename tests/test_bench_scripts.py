"""The real-shape benchmarks (scripts/bench_onednn_dialects.py, scripts/bench_trace_real.py)
run end to end on small sizes: their grown inputs give the corpus's answers times the
copies (the scripts exit 1 on any mismatch).  Skips when the public corpus is absent."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

pytestmark = pytest.mark.skipif(not (CORPUS / "expected" / "index.json").exists(),
                                reason="public corpus ../shared/corpus not present")


def _run(script: str, *args: str) -> str:
    r = subprocess.run([sys.executable, str(SCRIPTS / script), *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return r.stdout


@pytest.mark.skipif(shutil.which("mawk") is None, reason="mawk (the benchmark's anchor) is not installed")
def test_every_oneDNN_dialect_repeated_gives_the_expected_answers_times_the_copies(tmp_path):
    logs = sorted((CORPUS / "onednn_verbose").glob("*.log"))
    out = _run("bench_onednn_dialects.py", "--size", "256K", "--wait-idle", "0", "--workdir", str(tmp_path),
               *[a for log in logs[:3] for a in ("--log", str(log))])
    rows = [line for line in out.splitlines() if line.startswith("| ") and ".log |" in line]
    assert len(rows) == 3 and all(row.rstrip().endswith("| yes |") for row in rows)
    assert not list(tmp_path.glob("*.log"))  # the repeated copies are removed


def test_each_real_trace_grown_gives_the_expected_answers_times_the_copies(tmp_path):
    # the corpus's two Kineto traces by default: the CUDA one and the CPU-only one, whose
    # summary must say it has no kernels
    out = _run("bench_trace_real.py", "--sizes", "3", "--rounds", "1", "--wait-idle", "0", "--workdir", str(tmp_path))
    rows = [line for line in out.splitlines() if line.startswith("| `hta_")]
    assert [row.split("`")[1][:14] for row in rows] == ["hta_critical_p", "hta_cpu_only__"]
    for row in rows:
        size, copies = (int(row.split("|")[k].replace(",", "")) for k in (2, 3))
        assert size == 3 and copies >= 8 and row.rstrip().endswith("| yes |")
