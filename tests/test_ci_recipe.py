"""The CI recipe end to end in a shell: four nightly runs (first run, noise, a planted
regression, recovery), the database kept as an artefact between them, reports written,
the job summary appended, the exit status that of check."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from compare_helpers import ROOT, SAMPLES, perturb

SCRIPT = ROOT / "scripts" / "ci" / "loganalyze-ci.sh"
WORKFLOW = ROOT / "scripts" / "ci" / "github-actions.yml"
LOGS = [SAMPLES / "onednn" / "torch2.13_onednn_v3_all.log.gz", SAMPLES / "trace" / "kineto_gpu_style.pt.trace.json"]


def _job(tmp_path, run: str, logs: list, artefacts) -> subprocess.CompletedProcess:
    """One CI job in its own fresh work directory, like a runner would run it."""
    work = tmp_path / run
    work.mkdir()
    job_logs = work / "logs"
    job_logs.mkdir()
    for log in logs:
        shutil.copy(log, job_logs / log.name.replace("slow_", "").replace("noise_", ""))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_", "LOGANALYZE"))}
    env.update(LOGANALYZE=f"{sys.executable} -m loganalyze", RUN_LABEL=run, DB_RESTORE=str(artefacts),
               DB_SAVE=str(artefacts), GITHUB_STEP_SUMMARY=str(work / "summary.md"),
               LOGANALYZE_COMMIT=f"c0ffee{run[-1]}", LOGANALYZE_BRANCH="main", LOGANALYZE_TAGS="runner=test")
    return subprocess.run(["sh", str(SCRIPT), "logs"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=300)


def test_ci_script_end_to_end(tmp_path):
    if not shutil.which("sh"):
        pytest.skip("no POSIX shell")
    artefacts = tmp_path / "artefacts.duckdb"
    noisy = [tmp_path / f"noise_{p.name}" for p in LOGS]
    slow = [tmp_path / f"slow_{p.name}" for p in LOGS]
    for src, n, s, item in zip(LOGS, noisy, slow, ("convolution", "aten::linear")):
        perturb(src, n, noise=0.03, seed=4)
        perturb(src, s, slow=item, factor=1.3, noise=0.01, seed=5)

    first = _job(tmp_path, "nightly-1", LOGS, artefacts)
    assert first.returncode == 0, first.stderr
    assert "first run nightly-1" in (tmp_path / "nightly-1" / "summary.md").read_text(encoding="utf-8")
    assert artefacts.exists()

    second = _job(tmp_path, "nightly-2", noisy, artefacts)
    assert second.returncode == 0, second.stdout + second.stderr
    summary = (tmp_path / "nightly-2" / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith(":white_check_mark: **loganalyze check: PASS") and "baseline nightly-1" in summary
    report = tmp_path / "nightly-2" / "loganalyze-report"
    assert {p.name for p in report.iterdir()} == {"report.md", "report.html", "junit.xml", "report.json"}

    third = _job(tmp_path, "nightly-3", slow, artefacts)
    assert third.returncode == 1, third.stdout + third.stderr
    summary = (tmp_path / "nightly-3" / "summary.md").read_text(encoding="utf-8")
    assert ":x: **loganalyze check: FAIL - 2 regression(s)" in summary and "baseline nightly-2" in summary
    junit = ET.parse(tmp_path / "nightly-3" / "loganalyze-report" / "junit.xml").getroot()
    failed = sorted(c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None)
    assert failed == ["aten::linear", "convolution"]

    again = [tmp_path / "again" / p.name for p in LOGS]  # the same logs, re-timed (identical files are not ingested twice)
    for src, dst in zip(LOGS, again):
        dst.parent.mkdir(exist_ok=True)
        perturb(src, dst, noise=0.02, seed=6)
    fourth = _job(tmp_path, "nightly-4", again, artefacts)  # checked against nightly-2, not the failed one
    assert fourth.returncode == 0, fourth.stdout + fourth.stderr
    assert "baseline nightly-2" in (tmp_path / "nightly-4" / "summary.md").read_text(encoding="utf-8")

    import duckdb

    from loganalyze import runmeta

    con = duckdb.connect(str(artefacts), read_only=True)
    runs = runmeta.runs_table(con)
    con.close()
    assert list(runs["run_label"]) == ["nightly-1", "nightly-2", "nightly-3", "nightly-4"]
    assert list(runs["verdict"].fillna("")) == ["", "pass", "fail", "pass"]
    assert list(runs["checked_against"].fillna("")) == ["", "nightly-1", "nightly-2", "nightly-2"]
    assert runs["git_branch"].iloc[-1] == "main" and runs["git_commit"].iloc[-1] == "c0ffee4"
    assert runs["tags"].iloc[-1] == "runner=test"


def test_ci_script_usage_and_workflow():
    r = subprocess.run(["sh", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "usage" in r.stderr
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "schedule:" in text and "pull_request:" in text and "scripts/ci/loganalyze-ci.sh" in text


def test_workflow_is_valid_yaml():
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert "profile-check" in doc["jobs"]
