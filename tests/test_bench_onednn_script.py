"""scripts/bench_onednn.py --dynamic-batch: the generated log with its batch sizes drawn
again gives the generator's answers (the script exits 1 on any mismatch), with many more
distinct shapes than the log it comes from."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.mark.skipif(shutil.which("mawk") is None, reason="mawk (the benchmark's anchor) is not installed")
def test_a_log_of_dynamic_batch_sizes_gives_the_generators_answers(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPTS / "bench_onednn.py"), "--sizes", "256K", "--dynamic-batch", "8",
                        "--repeat", "1", "--wait-idle", "0", "--workdir", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    [row] = [line for line in r.stdout.splitlines() if line.startswith("| 256K")]
    assert "batch sizes 1..8" in row and row.rstrip().endswith("| yes |")
    base, dynamic = tmp_path / "onednn_256K_seed1.log", tmp_path / "onednn_256K_seed1_batch8.log"
    a, b = base.read_text().splitlines(), dynamic.read_text().splitlines()
    assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) > len(a) // 2
    # only the problem descriptor of exec/create lines changed
    assert all(x.rsplit(",", 2)[::2] == y.rsplit(",", 2)[::2] for x, y in zip(a, b))
    assert json.loads(Path(str(dynamic) + ".json").read_text())["dynamic_batch"] == 8
