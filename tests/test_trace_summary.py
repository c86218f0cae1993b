"""summary for traces (family 'trace') and framework tables (family 'optable')."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "trace"

EVENTS = [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 10, "dur": 40,
     "args": {"Input Dims": [[2, 4], [8, 4]], "Input type": ["float", "float"], "External id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 15, "dur": 30,
     "args": {"Input Dims": [[8], [2, 4], [4, 8]], "External id": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
     "args": {"correlation": 11}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 25, "args": {"correlation": 11}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 200, "dur": 50},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 210, "dur": 20,
     "args": {"Input Dims": [[4, 4], [8, 4]], "Input type": ["float", "float"], "External id": 3}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 2, "ts": 205, "dur": 2},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "backward"}},
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "trainer"}},
]


@pytest.fixture
def trace_db(tmp_path, tmp_db, cli):
    path = tmp_path / "small.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": EVENTS}))
    assert cli("ingest", "--db", tmp_db, "--run", "r1", path).exit_code == 0
    return tmp_db


def summary(cli, db, *args):
    res = cli("summary", "--db", db, *args, "--format", "json")
    assert res.exit_code == 0, res.output
    return res.json()


def test_by_op_contract(cli, trace_db):
    rows = summary(cli, trace_db, "--by", "op")
    by = {r["op"]: r for r in rows}
    assert set(by) == {"ProfilerStep#1", "ProfilerStep#2", "aten::linear", "aten::addmm", "aten::empty"}
    lin = by["aten::linear"]
    assert (lin["count"], lin["total_us"], lin["self_us"], lin["min_us"], lin["max_us"], lin["avg_us"]) == (
        2, 60.0, 30.0, 20.0, 40.0, 30.0)
    assert lin["category"] == "cpu_op"
    assert (by["aten::addmm"]["gpu_self_us"], by["aten::linear"]["gpu_total_us"], by["ProfilerStep#1"]["gpu_total_us"]) == (
        25.0, 25.0, 25.0)
    assert by["aten::linear"]["gpu_self_us"] == 0
    assert sum(r["share_pct"] for r in rows) == pytest.approx(100)
    assert rows[-1]["cum_share_pct"] == pytest.approx(100)
    # sorted by self time
    assert [r["self_us"] for r in rows] == sorted((r["self_us"] for r in rows), reverse=True)


def test_by_category_thread_process(cli, trace_db):
    cats = {r["category"]: r["count"] for r in summary(cli, trace_db, "--by", "category")}
    assert cats == {"cpu_op": 4, "user_annotation": 2}
    threads = {r["thread"]: r["count"] for r in summary(cli, trace_db, "--by", "thread")}
    assert threads == {"1/1": 5, "1/2 (backward)": 1}
    procs = {r["process"]: r["count"] for r in summary(cli, trace_db, "--by", "process")}
    assert procs == {"1 (trainer)": 6}


def test_by_op_and_shape(cli, trace_db):
    rows = summary(cli, trace_db, "--by", "op,shape")
    lin = {r["shape"]: r["count"] for r in rows if r["op"] == "aten::linear"}
    assert lin == {"[[2,4],[8,4]]": 1, "[[4,4],[8,4]]": 1}
    dtypes = {(r["op"], r["dtype"]) for r in summary(cli, trace_db, "--by", "op,dtype")}
    assert ("aten::linear", '["float","float"]') in dtypes


def test_by_step(cli, trace_db):
    rows = summary(cli, trace_db, "--by", "step")
    cols = ["step", "steps", "wall_us", "ops", "cpu_op_us", "gpu_kernels", "gpu_kernel_us", "gpu_busy_us",
            "gpu_idle_pct"]
    assert [tuple(r[c] for c in cols) for r in rows] == [
        # step 1: linear self 10 + addmm self 30 us on the CPU; the 25 us gemm launched at 20 us
        ("ProfilerStep#1", 1, 100.0, 2, 40.0, 1, 25.0, 25.0, 75.0),
        # step 2: linear 20 us and empty 2 us (another thread); no GPU work
        ("ProfilerStep#2", 1, 50.0, 2, 22.0, 0, 0.0, 0.0, 100.0)]


def test_by_step_with_operator_keys_groups_operators(cli, trace_db):
    rows = summary(cli, trace_db, "--by", "step,op")
    got = {(r["step"], r["op"]): r["count"] for r in rows}
    assert got[("ProfilerStep#1", "aten::linear")] == 1 and got[("ProfilerStep#2", "aten::empty")] == 1


def test_top_run_and_source(cli, trace_db):
    assert len(summary(cli, trace_db, "--by", "op", "--top", "2")) == 2
    res = cli("summary", "--db", trace_db, "--by", "op", "--run", "nope")
    assert res.exit_code == 2 and "no such run: 'nope' (runs: r1)" in res.stderr
    assert {r["run"] for r in summary(cli, trace_db, "--by", "run")} == {"r1"}
    assert {r["source"] for r in summary(cli, trace_db, "--by", "source")} == {"small.pt.trace.json"}


def test_table_output_is_compact_and_wide_has_everything(cli, trace_db):
    res = cli("summary", "--db", trace_db, "--by", "op")
    assert res.exit_code == 0 and "self_us" in res.stdout and "cum_share_pct" not in res.stdout
    res = cli("summary", "--db", trace_db, "--by", "op", "--wide")
    assert "cum_share_pct" in res.stdout


def test_unknown_key_is_a_clean_error(cli, trace_db):
    res = cli("summary", "--db", trace_db, "--by", "op,nonsense")
    assert res.exit_code == 2 and "unknown --by" in res.stderr


def test_optable_family(cli, tmp_db):
    assert cli("ingest", "--db", tmp_db, SAMPLES / "mxnet1.5_style_dumps.txt",
               SAMPLES / "torch1.x_style_key_averages.txt").exit_code == 0
    rows = summary(cli, tmp_db, "--by", "op")
    by = {r["op"]: r for r in rows}
    assert by["Convolution"]["count"] == 2 and by["Convolution"]["total_us"] == 300.0
    assert by["mul"]["self_us"] == 47.47
    assert "Memory: cpu/0" not in by and "MXNet C API Calls" not in by
    sections = {r["section"] for r in summary(cli, tmp_db, "--by", "section")}
    assert sections == {"MXNET_C_API", "operator", ""}
    tools = {r["tool"] for r in summary(cli, tmp_db, "--by", "tool,op")}
    assert tools == {"mxnet_dumps", "torch_key_averages"}


def test_trace_wins_over_tables_and_family_option(cli, trace_db):
    assert cli("ingest", "--db", trace_db, SAMPLES / "mxnet1.5_style_dumps.txt").exit_code == 0
    ops = {r["op"] for r in summary(cli, trace_db, "--by", "op")}
    assert "aten::linear" in ops and "Convolution" not in ops
    ops = {r["op"] for r in summary(cli, trace_db, "--by", "op", "--family", "optable")}
    assert "Convolution" in ops and "aten::linear" not in ops
