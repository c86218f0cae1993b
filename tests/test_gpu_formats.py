"""GPU formats on the hand-made samples in samples/gpu (scripts/make_gpu_samples.py), and the
grammar pieces they rest on."""
from __future__ import annotations

import gzip
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_nsys_speed import _bench as bench_nsys

from loganalyze.grammars import nvprof as gnv
from loganalyze.grammars import ncu as gncu
from loganalyze.grammars import nsys_stats as gstats
from loganalyze.grammars.cupti_cbid import api_name
from loganalyze.grammars.pyprof import nvtx_seq_template, parse_dict_line, parse_nvtx_name
from loganalyze.importers.nvtx_ranges import MAX_SEQ, nvtx_op_table
from loganalyze.grammars.cuda_api import base_api_name
from loganalyze.names import demangle, name_forms, short_name
from loganalyze.op_costs import op_cost

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "gpu"
GEMM = "void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int)"
RELU = "void at::native::elementwise_kernel<128, 4>(int, at::native::relu_functor)"


def sample(name: str) -> Path:
    p = SAMPLES / name
    assert p.exists(), f"{p} missing: run scripts/make_gpu_samples.py"
    return p


@pytest.fixture
def run(cli, tmp_db):
    def _run(*args):
        return cli(*args[:1], "--db", tmp_db, *args[1:])

    return _run


@pytest.fixture
def ingest_ok(run):
    def _ingest(*names):
        res = run("ingest", *[str(sample(n)) for n in names])
        assert res.exit_code == 0, res.output
        return res

    return _ingest


def summary(run, by, *extra):
    res = run("summary", "--by", by, "--format", "json", *extra)
    assert res.exit_code == 0, res.output
    return {r[by.split(",")[0]]: r for r in res.json()}


# --------------------------------------------------------------------------- names
def test_demangle_and_short_names():
    assert demangle("_Z11gemm_kernelIfLi128EEvPKfS1_Pfiii").startswith("void gemm_kernel<float, 128>(")
    assert demangle("sgemm_sm35_ldg_nn_64x16x64x16x16") == "sgemm_sm35_ldg_nn_64x16x64x16x16"
    assert demangle("_Znot_valid") == "_Znot_valid"  # a failed demangling keeps the name
    assert short_name(GEMM) == "gemm_kernel"
    assert short_name(RELU) == "elementwise_kernel"
    assert short_name("saxpy(double *, double *, double *, double, int)") == "saxpy"
    assert short_name("void cudnn::winograd_nonfused::winogradForwardOutput4x4<float, float>("
                      "cudnn::winograd_nonfused::WinogradOutputParams<float, float>)") == "winogradForwardOutput4x4"
    assert short_name("void at::native::(anonymous namespace)::reduce_kernel<512, 1>(at::native::ReduceOp<float>)") \
        == "reduce_kernel"
    assert short_name("[CUDA memcpy HtoD]") == "[CUDA memcpy HtoD]"
    assert short_name("volta_sgemm_128x32_nn") == "volta_sgemm_128x32_nn"
    d, s, m = name_forms("_ZN5cudnn6detail17dgrad_alg1_engineIfLi512ELi6ELi5ELi3ELi3ELi3ELb1ELb0EEEviiiPKT_iS4_iPS2_18kernel_grad_paramsiifi")
    assert d.startswith("void cudnn::detail::dgrad_alg1_engine<float, 512") and s == "dgrad_alg1_engine" and m
    assert base_api_name("cudaMemcpy_v3020") == "cudaMemcpy" and base_api_name("cuInit") == "cuInit"
    assert api_name("runtime", 211) == "cudaLaunchKernel_v7000" and api_name("driver", 1) == "cuInit"
    assert api_name("runtime", 99999) == "runtime_cbid_99999"


def test_nvtx_names_and_flops():
    p = parse_nvtx_name("aten::addmm, seq = 7, sizes = [[512], [64, 256], [256, 512]]")
    assert (p.op, p.seq, p.direction) == ("aten::addmm", 7, "fwd")
    assert p.shapes == ((512,), (64, 256), (256, 512))
    assert op_cost(p.op, p.shapes) == (2.0 * 64 * 512 * 256 + 64 * 512, None)
    b = parse_nvtx_name("AddmmBackward0, stashed seq=7")
    assert (b.op, b.seq, b.direction) == ("AddmmBackward0", 7, "bwd")
    e = parse_nvtx_name("autograd::engine::evaluate_function: ConvolutionBackward0, seq = 3")
    assert (e.op, e.direction) == ("ConvolutionBackward0", "bwd")
    plain = parse_nvtx_name("MPI_Send")
    assert (plain.op, plain.direction, plain.seq) == ("MPI_Send", None, None)
    assert op_cost("aten::mm", ((64, 32), (32, 16))) == (2.0 * 64 * 16 * 32, None)
    assert op_cost("aten::bmm", ((4, 8, 16), (4, 16, 2)), "float32")[0] == 2.0 * 4 * 8 * 2 * 16
    assert op_cost("aten::linear", ((10, 64, 256), (512, 256)))[0] == 2.0 * 640 * 512 * 256
    assert op_cost("aten::add", ((8, 1), (1, 4)), "float16") == (32.0, 2.0 * (8 + 4 + 32))
    assert op_cost("aten::conv2d", ((1, 3, 8, 8), (4, 3, 3, 3))) == (None, None)  # no stride/padding
    assert op_cost("conv2d", ((1, 3, 8, 8), (4, 3, 3, 3)), "float32", {"stride": 1, "padding": 1})[0] == \
        2.0 * 1 * 4 * 64 * 3 * 9
    assert op_cost("aten::softmax", ((2, 3),)) == (None, None)


#: emit_nvtx names and near misses (Unicode digits and spaces, stray commas, a second seq)
NVTX_NAMES = st.builds(
    lambda op, sep, stashed, eq, digits, tail: f"{op}{sep}{stashed}seq{eq}{digits}{tail}",
    st.sampled_from(["aten::mm", "AddmmBackward0", "autograd::engine::evaluate_function: MulBackward0", "a b ", ""]),
    st.sampled_from([",", ", ", " , ", ",\t", ",\u00a0", "", ", x, "]),
    st.sampled_from(["", "stashed ", "stashed"]),
    st.sampled_from(["=", " = ", "= ", "=\u2003", ""]),
    st.from_regex(r"[0-9\u0663]{0,25}", fullmatch=True),
    st.sampled_from(["", ", sizes = [[2, 3], [3]]", ", sizes = []", ",sizes=[[1]] ", " ", "x", "5", ", sizes = [",
                     ", seq = 4", "\u00a0", ", sizes = [[2, 3], [3]], seq = 1"]))


@settings(max_examples=400, deadline=None)
@given(NVTX_NAMES)
def test_nvtx_names_that_differ_only_in_seq_parse_alike(text):
    """What nvtx_op_table parses once per kind: the name with its sequence number written 0
    gives the same operator, direction and shapes, and the number is the one the name has."""
    template = nvtx_seq_template(text)
    a = parse_nvtx_name(text)
    if template is None:
        assert a.seq is None
        return
    tpl, seq = template
    b = parse_nvtx_name(tpl)
    assert (a.direction, b.direction is None) == (b.direction, a.direction is None)
    if a.direction is not None:
        assert (a.op, a.shapes, a.shapes_text, a.seq, b.seq) == (b.op, b.shapes, b.shapes_text, seq, 0)


def test_nvtx_op_table_parses_each_kind_once():
    names, kinds = nvtx_op_table([
        "aten::mm, seq = 3, sizes = [[4, 5], [5, 6]]", "aten::mm, seq = 4, sizes = [[4, 5], [5, 6]]",
        "aten::mm, seq = 5, sizes = [[1, 5], [5, 6]]", "MmBackward0, stashed seq=3", "train_step",
        f"aten::mm, seq = {MAX_SEQ + 1}, sizes = [[4, 5], [5, 6]]",
        "{'mod': 'torch', 'op': 'relu', 'args': [{'name': '', 'type': 'tensor', 'shape': (8,), 'dtype': 'float32'}]}"])
    rows = {t: (int(k), int(q)) for t, k, q in zip(names["text"], names["kind"], names["seq"])}
    assert len(rows) == 5 and "train_step" not in rows  # no operator; nor a seq past BIGINT
    assert rows["aten::mm, seq = 3, sizes = [[4, 5], [5, 6]]"] == (0, 3)
    assert rows["aten::mm, seq = 4, sizes = [[4, 5], [5, 6]]"] == (0, 4)
    assert rows["aten::mm, seq = 5, sizes = [[1, 5], [5, 6]]"] == (1, 5)
    assert rows["MmBackward0, stashed seq=3"] == (2, 3)
    assert [v for t, v in rows.items() if t.startswith("{")] == [(3, -1)]
    assert kinds["op"][1] == ["aten::mm", "aten::mm", "MmBackward0", "relu"]
    assert kinds["direction"][1] == ["fwd", "fwd", "bwd", None]
    assert kinds["flops"][1][:3] == [2.0 * 4 * 6 * 5, 2.0 * 1 * 6 * 5, None]


def test_nvprof_values_and_units():
    assert gnv.time_to_ns("584.620743", "ms") == 584620743
    assert gnv.time_to_ns("1.0240us") == 1024 and gnv.time_to_ns("8.43532s") == 8435320000
    assert gnv.time_to_ns("196ns") == 196 and gnv.time_to_ns("-") is None
    with pytest.raises(ValueError):
        gnv.time_to_ns("12 parsecs")
    assert gnv.size_to_bytes("400.000000", "KB") == 409600 and gnv.size_to_bytes("1.5000KB") == 1536
    assert gnv.split_correlation("foo(int) [1073]") == ("foo(int)", 1073)
    assert gnv.split_correlation("[CUDA memcpy HtoD]") == ("[CUDA memcpy HtoD]", None)
    assert gnv.is_units_row(["ms", "ms", "", "KB", "MB/s"]) and not gnv.is_units_row(["1.0", "ms"])
    assert gnv.metric_value("Low (1)") == ("category", 1.0, None)
    assert gnv.metric_value("1.1655GB/s") == ("number_with_unit", 1.1655, "GB/s")
    row = gnv.parse_summary_text_row(" GPU activities:   56.17%  1.28508s     13672  93.993us  86.845us  103.33us  k(int, float)")
    assert row["type"] == "GPU activities" and row["name"] == "k(int, float)" and row["calls"] == "13672"
    assert gncu.number("2,000.00") == 2000.0 and gncu.number("2.000,50") == 2000.5 and gncu.number("n/a") is None
    assert gstats.number("88,573,480") == 88573480 and gstats.canonical("Total Time (ns)") == ("total", "ns")
    assert gstats.report_from_columns(["Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Name"]) == "api"


_SUMMARY_ROW = " GPU activities:   80.00%  100.00us  {calls}  33.333us  30.000us  40.000us  gemm(float const*, int)"


def test_a_summary_row_without_its_calls_is_not_a_row():
    """A text summary row whose Calls cell is missing is not read as ``33`` calls of
    ``.333us`` each (the grammar's tokens end at blanks, as the fast regex's do); found by
    scripts/fuzz.py, where the cell values came back as parse results, an internal error."""
    assert gnv.parse_summary_text_row(_SUMMARY_ROW.format(calls="")) is None
    assert gnv.parse_summary_text_row(_SUMMARY_ROW.format(calls="3"))["calls"] == "3"


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["GPU activities:", "API calls:", "80.00%", "100.00us", "3", "33.333us", ".5ms",
                                 "1e3s", "k(int)", "", " ", ":", "%", "-"]), max_size=12))
@example(["GPU activities:", "80.00%", "100.00us", "33.333us", ".5ms", "1e3s", "k(int)"])
def test_the_fast_summary_regex_reads_every_row_the_grammar_reads_the_same_way(pieces):
    """The grammar is the reference for text summary rows: every line it reads, the fast
    regex reads into the same cells (the regex takes any text for a time; its reader then
    checks it), and a row read has only text cells."""
    line = " " + " ".join(pieces)
    row = gnv.parse_summary_text_row(line)
    if row is not None:
        assert all(v is None or type(v) is str for v in row.values()), row
    try:
        res = gnv.summary_row.parse_string(line.strip(), parse_all=True)
    except gnv.pp.ParseException:
        return
    assert row is not None, line
    want = {k: "".join(res[k]) if isinstance(res[k], gnv.pp.ParseResults) else str(res[k])
            for k in ("time_pct", "time", "calls", "avg", "min", "max")}
    assert {k: row[k] for k in want} == want and row["name"] == res["name"].strip(), line
    assert row["type"] == res.get("type"), line


def test_pyprof_dict_is_read_without_eval():
    rec = parse_dict_line("{'kShortName': 'k', 'kDuration': 5, 'grid': (1, 2, 3)}")
    assert rec["grid"] == (1, 2, 3)
    with pytest.raises(ValueError):
        parse_dict_line("{'kShortName': __import__('os').system('echo pwned'), 'kDuration': 1}")


def test_fwd_op_is_the_same_in_every_run(tmp_path, run):
    """A backward op's fwd_op when seqs are reused: each seq's forward op is the outermost,
    then the first in the file; a group's fwd_op the most frequent, ties by name (DuckDB's
    mode and arg_min break ties by thread timing: the report changed from run to run)."""
    path = tmp_path / "export.sqlite"
    bench_nsys().build(path, 3000, 300)  # 30 steps of 9 op ranges, seq 9 * step + 1 ... + 9; ConvolutionBackward0 at + 8
    con = sqlite3.connect(path)
    steps: dict = {}
    for rowid, text, end in con.execute("SELECT rowid, text, end FROM NVTX_EVENTS WHERE text LIKE '%seq = %'"):
        op, seq = text.split(",")[0], int(text.split("seq = ")[1].split(",")[0])
        steps.setdefault((seq - 1) // 9, {})[op] = (rowid, text, seq, end)
    for step, ops in steps.items():
        bwd_seq = 9 * step + 8
        # aten::add takes the seq (before the others in the file, but inside aten::relu_: deeper)
        # and so does aten::mm (even steps) or aten::_softmax (odd ones), one level up
        for op in ("aten::add", "aten::mm" if step % 2 == 0 else "aten::_softmax"):
            rowid, text, seq, _ = ops[op]
            con.execute("UPDATE NVTX_EVENTS SET text = ? WHERE rowid = ?",
                        (text.replace(f"seq = {seq},", f"seq = {bwd_seq},"), rowid))
        con.execute("UPDATE NVTX_EVENTS SET end = ? WHERE rowid = ?", (ops["aten::add"][3] + 1, ops["aten::relu_"][0]))
    con.commit()
    con.close()
    assert run("ingest", str(path)).exit_code == 0
    ops = [summary(run, "op")["ConvolutionBackward0"]["fwd_op"] for _ in range(3)]
    assert ops == ["aten::_softmax"] * 3  # 15 calls each for aten::mm and aten::_softmax; not aten::add


# --------------------------------------------------------------------------- Nsight Systems samples
@pytest.mark.parametrize("name", ["nsys_2022_pytorch.sqlite", "nsys_2024_pytorch.sqlite"])
def test_nsys_sample_kernels_and_ops(name, ingest_ok, run, query):
    ingest_ok(name)
    kern = summary(run, "kernel")
    assert kern[GEMM]["count"] == 3 and kern[GEMM]["total_ns"] == 100_000 and kern[GEMM]["median_ns"] == 30_000
    assert kern[RELU]["count"] == 2 and kern[RELU]["total_ns"] == 12_000
    assert set(summary(run, "kernel", "--names", "short")) == {"gemm_kernel", "elementwise_kernel"}
    assert set(summary(run, "kernel", "--names", "mangled")) == {
        "_Z11gemm_kernelIfLi128EEvPKfS1_Pfiii", "_ZN2at6native18elementwise_kernelILi128ELi4EEEviNS0_12relu_functorE"}
    grid = run("summary", "--by", "kernel,grid,block", "--format", "json").json()
    assert {(r["kernel"], r["grid"], r["block"], r["count"]) for r in grid} == {
        (GEMM, "8x4x1", "128x1x1", 2), (GEMM, "16x2x1", "128x1x1", 1), (RELU, "64x1x1", "128x1x1", 2)}
    ops = summary(run, "op")
    assert ops["aten::addmm"]["count"] == 1 and ops["aten::addmm"]["gpu_total_ns"] == 30_000
    assert ops["aten::addmm"]["flops"] == 2.0 * 64 * 512 * 256 + 64 * 512
    assert abs(ops["aten::addmm"]["gflops_per_s"] - ops["aten::addmm"]["flops"] / 30_000) < 1e-9
    assert ops["aten::relu"]["gpu_total_ns"] == 4_000 and ops["aten::relu"]["flops"] == 64 * 512
    bwd = ops["AddmmBackward0"]
    assert (bwd["count"], bwd["calls"], bwd["gpu_total_ns"], bwd["direction"], bwd["fwd_op"]) == (
        2, 1, 70_000, "bwd", "aten::linear")
    unatt = [r for r in ops.values() if r["op"].startswith("(")]
    assert len(unatt) == 1 and unatt[0]["gpu_total_ns"] == 8_000  # launched outside any push/pop range
    assert sum(r["gpu_total_ns"] for r in ops.values()) == 112_000
    nvtx = summary(run, "nvtx")
    assert nvtx["train_step"]["total_ns"] == 99_000 and nvtx["data loading"]["style"] == "start_end"
    assert query("SELECT text, depth, parent_row IS NOT NULL FROM nvtx_ranges WHERE op = 'aten::addmm'") == [
        ("aten::addmm, seq = 7, sizes = [[512], [64, 256], [256, 512]]", 2, True)]
    assert query("SELECT count(*) FROM nvtx_ranges WHERE event_type = 'mark'")[0][0] == 1
    assert query("SELECT domain FROM nvtx_ranges WHERE text = 'train_step'")[0][0] == "PyTorch"
    api = summary(run, "api")
    assert api["cudaLaunchKernel"]["count"] == 5  # never the backtrace rows of the 2022 export
    mem = summary(run, "memcpy")
    assert mem["[CUDA memcpy HtoD]"]["bytes"] == 262144 and mem["[CUDA memcpy DtoH]"]["count"] == 1
    assert query("SELECT DISTINCT name FROM gpu_memops WHERE kind = 'HtoD'") == [("[CUDA memcpy Host-to-Device]",)]
    assert query("SELECT name, sm_count, compute_capability FROM gpu_devices") == [("Sample GPU", 80, "8.0")]


def test_nsys_readers_agree(tmp_path, monkeypatch, ingest_files):
    """The ADBC reader and the stdlib sqlite3 fallback store the same rows."""
    from loganalyze.store import Store

    dumps = []
    for reader in ("adbc", "stdlib"):
        monkeypatch.setenv("LOGANALYZE_SQLITE_READER", reader)
        db = str(tmp_path / f"{reader}.duckdb")
        res = ingest_files([sample("nsys_2022_pytorch.sqlite"), sample("nvprof_markers.nvvp")], db=db)
        assert [r.status for r in res] == ["ingested", "ingested"], [r.message for r in res]
        with Store(db, read_only=True) as st:
            dumps.append([st.con.execute(f"SELECT * EXCLUDE (source_id) FROM {t} ORDER BY ALL").fetchall()
                          for t in ("gpu_kernels", "gpu_memops", "gpu_api_calls", "nvtx_ranges")])
    assert dumps[0] == dumps[1]


def test_gzipped_export(tmp_path, ingest_files, query):
    gz = tmp_path / "report.sqlite.gz"
    with open(sample("nsys_2024_pytorch.sqlite"), "rb") as src, gzip.open(gz, "wb") as out:
        shutil.copyfileobj(src, out)
    res = ingest_files([gz])
    assert res[0].status == "ingested", res[0].message
    assert query("SELECT count(*) FROM gpu_kernels")[0][0] == 5


def test_nvprof_database_sample(ingest_ok, run, query):
    ingest_ok("nvprof_markers.nvvp")
    kern = summary(run, "kernel", "--names", "demangled")
    assert kern[GEMM]["count"] == 3 and kern[RELU]["count"] == 1
    assert query("SELECT count(*) FROM gpu_kernels WHERE pid = 4242")[0][0] == 4  # pid from the launch call
    assert summary(run, "api")["cudaLaunchKernel"]["count"] == 4
    ops = summary(run, "op")
    assert ops["aten::linear"]["gpu_total_ns"] == 30_000 and ops["train_step"]["count"] == 3
    assert query("SELECT tid FROM nvtx_ranges LIMIT 1")[0][0] == 4294967296 - 570288384


def test_attribution_edge_cases(tmp_path, ingest_files, query):
    """Strict comparisons, a launch outliving the innermost range, nested ranges sharing a
    start, and two threads."""
    db = tmp_path / "edge.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "k"), (2, "cudaLaunchKernel_v7000")])
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, contextId INT, "
                "streamId INT, correlationId INT, globalPid INT, demangledName INT, shortName INT)")
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, end INT, eventClass INT, globalTid INT, "
                "correlationId INT, nameId INT, returnValue INT)")
    con.execute("CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, text TEXT, globalTid INT, domainId INT)")
    t1, t2 = (7 << 24) | 7, (7 << 24) | 8
    ranges = [("outer", 0, 100, t1), ("a", 10, 20, t1), ("b", 30, 90, t1), ("g", 40, 50, t1), ("same", 30, 35, t1),
              ("other thread", 0, 1000, t2)]
    con.executemany("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, ?, 0)", [(s, e, t, g) for t, s, e, g in ranges])
    launches = [(1, 15, 16, t1, "a"), (2, 45, 46, t1, "g"), (3, 60, 61, t1, "b"), (4, 95, 96, t1, "outer"),
                (5, 48, 55, t1, "b"), (6, 200, 201, t1, None), (7, 10, 12, t1, "outer"), (8, 31, 32, t1, "same"),
                (9, 5, 6, t2, "other thread"), (10, 0, 1, t1, None)]
    for corr, s, e, gtid, _ in launches:
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 2, 0)", [s, e, gtid, corr])
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1010, 0, 1, 7, ?, ?, 1, 1)", [corr, 7 << 24])
    con.commit()
    con.close()
    res = ingest_files([db])
    assert res[0].status == "ingested", res[0].message
    got = dict(query("SELECT correlation_id, range_text FROM gpu_activity_nvtx"))
    assert got == {c: want for c, *_, want in launches}
    depth = dict(query("SELECT text, depth FROM nvtx_ranges"))
    assert depth == {"outer": 0, "a": 1, "b": 1, "g": 2, "same": 2, "other thread": 0}


# --------------------------------------------------------------------------- nvprof text samples
def test_nvprof_text_samples(ingest_ok, run, query):
    ingest_ok("nvprof_gpu_trace_cuda10.csv", "nvprof_gpu_trace.txt", "nvprof_api_trace.csv")
    k = run("summary", "--by", "kernel,source", "--format", "json").json()
    got = {(r["source"], r["kernel"]): (r["count"], r["total_ns"]) for r in k}
    assert got[("nvprof_gpu_trace_cuda10.csv", GEMM)] == (3, 100_000)
    assert got[("nvprof_gpu_trace.txt", "gemm_kernel(float const *, float*, int)")] == (2, 70_000)
    assert got[("nvprof_gpu_trace.txt", "relu_kernel(int, float*)")] == (1, 4_000)
    assert query("SELECT correlation_id, grid_x, block_x, static_smem FROM gpu_kernels "
                 "WHERE origin = 'gpu_trace' AND start_ns = 10000 ORDER BY ALL") == [(101, 8, 128, 1024)] * 2
    assert query("SELECT bytes, src_kind FROM gpu_memops ORDER BY ALL") == [(262144, "Pageable"), (262144, None)]
    api = summary(run, "api")
    assert api["cudaLaunchKernel"]["count"] == 2 and api["cuInit"]["type"] == "driver"


def test_nvprof_summary_text_samples(ingest_ok, run, query):
    ingest_ok("nvprof_summary.txt", "nvprof_summary_cuda8.txt")
    rows = query("SELECT s.name, r.category, r.name, r.count, r.total_ns, r.avg_ns, r.max_ns FROM gpu_report_rows r "
                 "JOIN sources s USING (source_id) ORDER BY s.name, r.row_no")
    assert rows[0] == ("nvprof_summary.txt", "kernel", GEMM, 3, 100_000, 33_333.0, 40_000)
    assert ("nvprof_summary.txt", "memcpy", "[CUDA memcpy HtoD]", 1, 6_250, 6_250.0, 6_250) in rows
    assert ("nvprof_summary.txt", "api", "cudaLaunchKernel", 4, 1_500_000_000, 375_000_000.0, 1_499_990_000) in rows
    assert ("nvprof_summary_cuda8.txt", "api", "cudaLaunchKernel", 4, 1_500_000_000, 375_000_000.0,
            1_499_990_000) in rows
    assert summary(run, "api")["cudaLaunchKernel"]["count"] == 8


def test_nvprof_metrics_text(ingest_ok, query):
    ingest_ok("nvprof_metrics.txt")
    rows = query("SELECT kernel, device, metric, description, value, min_value, value_shape, unit FROM gpu_metrics "
                 "ORDER BY row_no")
    assert rows[0] == ("gemm_kernel(float const *, float*, int)", "Sample GPU (0)", "inst_per_warp",
                       "Instructions per warp", 125.0, 120.5, "number", None)
    assert rows[2][4:] == (1.35, 1.2, "number_with_unit", "GB/s")
    assert rows[3][2:] == ("sm_efficiency", "Multiprocessor Activity", 4.0, 2.0, "category", None)


# --------------------------------------------------------------------------- nsys stats, ncu, PyProf
def test_nsys_stats_samples(ingest_ok, run, query):
    ingest_ok("nsys_stats_cuda_gpu_kern_sum.csv", "nsys_stats_reports.txt", "nsys_stats_cuda_gpu_trace.csv")
    k = run("summary", "--by", "kernel,source", "--format", "json").json()
    got = {(r["source"], r["kernel"]): r for r in k}
    for src in ("nsys_stats_cuda_gpu_kern_sum.csv", "nsys_stats_reports.txt"):
        r = got[(src, GEMM)]
        assert (r["count"], r["total_ns"], r["median_ns"], r["min_ns"], r["max_ns"]) == (3, 100_000, 30_000, 30_000,
                                                                                         40_000)
        assert abs(r["stddev_ns"] - 5773.5) < 1e-6
    assert got[("nsys_stats_cuda_gpu_trace.csv", GEMM)]["count"] == 1
    api = summary(run, "api")
    assert api["cudaLaunchKernel"]["count"] == 4 and api["cudaMemcpyAsync"]["total_ns"] == 400
    nv = summary(run, "nvtx")
    assert nv["train_step"]["total_ns"] == 99_000 and nv["train_step"]["style"] == "PushPop"
    assert query("SELECT bytes FROM gpu_memops")[0][0] == 262000
    skipped = query("SELECT reason FROM skipped_lines")
    assert skipped and "osrtsum" in skipped[0][0]


def test_ncu_samples(ingest_ok, run, query):
    ingest_ok("ncu_details.csv", "ncu_raw.csv")
    rows = query("SELECT s.name, k.name, k.duration_ns, k.grid_x, k.block_x, k.pid FROM gpu_kernels k "
                 "JOIN sources s USING (source_id) ORDER BY ALL")
    assert rows == [("ncu_details.csv", "elementwise_kernel", 4032, 64, 128, 7010),
                    ("ncu_details.csv", "gemm_kernel", 30020, 8, 128, 7010),
                    ("ncu_raw.csv", "elementwise_kernel", 4032, 64, 128, 7011),
                    ("ncu_raw.csv", "gemm_kernel", 30016, 8, 128, 7011)]
    assert query("SELECT value FROM gpu_metrics WHERE metric = 'Elapsed Cycles' AND launch_id = 0")[0][0] == 42150
    assert query("SELECT value, unit FROM gpu_metrics WHERE metric = 'dram__bytes.sum' AND launch_id = 1")[0] == (
        262144.0, "byte")


def test_pyprof_samples(ingest_ok, run, query):
    ingest_ok("pyprof_net.dict", "pyprof_prof.csv", "pyprof_prof.txt")
    ops = run("summary", "--by", "op,source", "--format", "json").json()
    got = {(r["source"], r["op"]): r for r in ops}
    lin = got[("pyprof_net.dict", "linear")]
    assert (lin["count"], lin["gpu_total_ns"], lin["flops"]) == (2, 70_000, 2.0 * 64 * 512 * 256 + 64 * 512)
    assert got[("pyprof_prof.csv", "linear")]["flops"] == 2 * 16777216
    assert got[("pyprof_prof.txt", "relu")]["gpu_total_ns"] == 4_000
    assert query("SELECT lines_skipped FROM sources WHERE name = 'pyprof_net.dict'")[0][0] == 1
    assert query("SELECT grid_x, grid_y, block_x FROM gpu_kernels k JOIN sources s USING (source_id) "
                 "WHERE s.name = 'pyprof_prof.csv' AND k.row_no = 2") == [(8, 4, 128)]


def test_every_sample_keeps_the_line_invariant(ingest_ok, query):
    ingest_ok(*sorted(p.name for p in SAMPLES.iterdir()))
    for name, total, parsed, other, skipped in query(
            "SELECT name, lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources"):
        assert total == parsed + other + skipped, name
    n = query("SELECT count(*) FROM sources")[0][0]
    assert n == len(list(SAMPLES.iterdir()))


def test_one_short_name_rule_for_profiles_and_traces():
    """Operator functions keep their whole name; traces and GPU profiles agree."""
    from loganalyze.grammars.trace_event import kernel_short_name

    assert kernel_short_name is short_name
    assert short_name("void foo::operator()(int)") == "operator()"
    assert short_name("void a::b<int>::operator()(float) const") == "operator()"
    assert short_name("void ns::(anonymous namespace)::k<1>(int)") == "k"


def test_sniffed_lines_follow_the_line_rules():
    """A byte order mark and CRLF do not hide a report's header from sniffing."""
    from loganalyze.importers.gpu_common import first_lines
    from loganalyze.importers.nvprof_text import NvprofTextImporter

    head = b'\xef\xbb\xbf"Start","Duration","Name"\r\nms,ms,\r\n'
    assert first_lines(head) == ['"Start","Duration","Name"', "ms,ms,"]
    assert NvprofTextImporter().sniff(head, "t.csv") == 75
    assert first_lines(b"a\rb\nc") == ["a\rb", "c"]  # a bare CR stays inside its line
