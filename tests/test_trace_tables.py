"""Aggregate tables the frameworks print: MXNet dumps() (<= 1.5, >= 1.6, JSON), PyTorch
key_averages().table() (old and new layouts, inside a log), CNTK summary and detail files."""
from __future__ import annotations

from pathlib import Path

from loganalyze.grammars import cntk, mxnet_table, torch_table

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "trace"


def table(query, name):
    return query("""SELECT t.section, t.name, t.calls, t.total_ns, t.self_ns, t.avg_ns, t.min_ns, t.max_ns,
                           t.is_counter, t.unit FROM profiler_tables t JOIN sources s USING (source_id)
                    WHERE s.name = ? ORDER BY t.line_no""", [name])


# =========================================================================== grammars
def test_mxnet_header_and_rows():
    assert mxnet_table.parse_header("Name                          Total Count        Time (ms)    Min Time (ms)    "
                                    "Max Time (ms)    Avg Time (ms)") == [
        "total_count", "time_ms", "min_time_ms", "max_time_ms", "avg_time_ms"]
    assert mxnet_table.parse_header("Name                          Total Count    Min Use  (kb)    Max Use  (kb)    "
                                    "Avg Use  (kb)") == ["total_count", "min_use_kb", "max_use_kb", "avg_use_kb"]
    cols = ["total_count", "time_ms", "min_time_ms", "max_time_ms", "avg_time_ms"]
    row = mxnet_table.parse_row("MXNet C API Concurrency                30           0.0000           0.0000           "
                                "0.0010           0.0005", cols, "MXNET_C_API")
    assert row.name == "MXNet C API Concurrency" and row.counter and row.values["max_time_ms"] == "0.0010"
    long = mxnet_table.parse_row("a_name_longer_than_its_column_width_of_25     4   1.0000  0.2000  0.3000  0.2500",
                                 cols, "operator")
    assert long.name == "a_name_longer_than_its_column_width_of_25" and not long.counter
    assert mxnet_table.parse_row("Convolution   2  0.3 0.1", cols, "operator").startswith("malformed")
    assert mxnet_table.ms_to_ns("1588.3420") == 1_588_342_000


def test_torch_cells():
    assert torch_table.time_ns("12.345us") == 12_345
    assert torch_table.time_ns("1.5ms") == 1_500_000 and torch_table.time_ns("2.000s") == 2_000_000_000
    assert torch_table.memory_bytes("512.00 Kb") == 524_288 and torch_table.memory_bytes("-16 b") == -16
    assert torch_table.percent("42.03%") == 42.03
    assert torch_table.column_role("Self XPU") == "gpu_self" and torch_table.column_role("XPU time avg") == "gpu_avg"
    assert torch_table.column_role("Self CPU total %") == "self_pct"


def test_cntk_values():
    row = cntk.parse_summary_row("_Minibatch Iteration      :         0.123 ms       0.010 ms       0.100 ms"
                                 "       0.200 ms              100        00:01:12.345")
    assert (row.mean_ns, row.total_ns, row.count) == (123_000, 72_345_000_000, 100)
    thr = cntk.parse_summary_row("Prefetch Minibatch        :     123.456 MBps       1.000 MBps     100.000 MBps"
                                 "     150.000 MBps               10            12 MB")
    assert thr.kind == "throughput" and thr.total_bytes == 12 * 1024 * 1024
    assert cntk.parse_summary_row("Main Thread") is None
    d = cntk.parse_detail_row('"say "hi", twice",4242,12345.12345678,12346.00000001')
    assert (d.name, d.tid, d.begin_ns, d.end_ns) == ('say "hi", twice', "4242", 12_345_123_457, 12_346_000_000)
    assert cntk.file_rank("2017-06-01_12-34-56_detail_12.csv") == ("12", 12)


# =========================================================================== MXNet
def test_mxnet_15_and_16_layouts(ingest_files, query):
    results = ingest_files([SAMPLES / "mxnet1.5_style_dumps.txt", SAMPLES / "mxnet1.6_style_dumps.txt"])
    assert [r.source["dialect"] for r in results] == ["mxnet<=1.5", "mxnet>=1.6"]
    old = table(query, "mxnet1.5_style_dumps.txt")
    assert old[0] == ("Device Storage", "Memory: cpu/0", 12, None, None, None, None, None, True, "counter")
    assert ("MXNET_C_API", "MXImperativeInvokeEx", 5, 1_234_000, None, 246_800, 10_000, 1_001_000, False, "ms") in old
    new = table(query, "mxnet1.6_style_dumps.txt")
    assert new[0][:2] == ("Device Storage", "Memory: cpu/0") and new[0][8:] == (True, "kB")
    assert query("""SELECT value_min, value_max, value_avg, cells['Max Use (kB)'] FROM profiler_tables
                    WHERE name = 'Memory: gpu/0'""") == [(0.0, 4096.0, 2048.0, "4096.0000")]
    assert ("Custom Operator", "MyAddOne::pure_python", 2, 800_000, None, 400_000, 390_000, 410_000, False, "ms") in new
    assert ("operator", "_random_uniform_like_with_a_long_name", 4, 1_000_000, None, 250_000, 200_000, 300_000,
            False, "ms") in new
    for r in results:
        s = r.source
        assert s["lines_total"] == s["lines_parsed"] + s["lines_non_verbose"] + s["lines_skipped"]


def test_mxnet_json_form_with_its_quirks(ingest_files, query):
    (res,) = ingest_files([SAMPLES / "mxnet1.6_style_dumps.json"])
    assert res.status == "ingested" and res.source["dialect"] == "json"
    rows = table(query, "mxnet1.6_style_dumps.json")
    assert ("operator", "Convolution", 2, 300_000, None, 150_000, 150_000, 150_000, False, "ms") in rows
    assert ("Device Storage", "Memory: cpu/0", 3, None, None, None, None, None, True, "kB") in rows
    assert query("SELECT line_no FROM profiler_tables WHERE name = 'MXImperativeInvokeEx'") == [(22,)]


def test_mxnet_table_inside_a_log_and_a_bad_row(tmp_path, ingest_files, query):
    text = ("epoch 1 done\n\nProfile Statistics.\n\tNote that counter items are counter values and not time units.\n"
            "operator\n=================\n"
            "Name                          Total Count        Time (ms)    Min Time (ms)    Max Time (ms)    Avg Time (ms)\n"
            "----                          -----------        ---------    -------------    -------------    -------------\n"
            "Convolution                             2           0.3000           0.1500           0.1500           0.1500\n"
            "Pooling                                 x           0.3000           0.1500           0.1500           0.1500\n"
            "\nall done\n")
    p = tmp_path / "train.log"
    p.write_text(text)
    (res,) = ingest_files([p])
    assert res.status == "ingested" and res.format == "mxnet_table"
    assert query("SELECT name FROM profiler_tables") == [("Convolution",)]
    assert query("SELECT line_no, reason FROM skipped_lines") == [(10, "malformed: 'x' is not a number")]
    s = res.source
    assert (s["lines_total"], s["lines_parsed"], s["lines_skipped"]) == (12, 1, 1)


# =========================================================================== PyTorch
def test_torch_table_new_layout_in_a_log(ingest_files, query):
    (res,) = ingest_files([SAMPLES / "torch_cuda_style_key_averages.log"])
    assert res.format == "torch_table"
    rows = query("""SELECT name, name_truncated, calls, self_ns, total_ns, avg_ns, gpu_self_ns, gpu_total_ns, gpu_avg_ns,
                           cells['Self CUDA Mem'] FROM profiler_tables ORDER BY line_no""")
    assert rows[0] == ("aten::addmm", False, 2, 400_000, 450_000, 225_000, 1_200_000, 1_200_000, 600_000, "512.00 Kb")
    assert rows[2][0].endswith("...") and rows[2][1] is True
    assert len(rows) == 5
    s = res.source
    assert (s["lines_total"], s["lines_parsed"], s["lines_skipped"]) == (15, 5, 0)


def test_torch_table_old_layout(ingest_files, query):
    (res,) = ingest_files([SAMPLES / "torch1.x_style_key_averages.txt"])
    assert res.source["dialect"] == "torch<=1.7"
    assert query("SELECT name, calls, self_ns, total_ns, cells['Input Shapes'] FROM profiler_tables ORDER BY line_no")[:2] == [
        ("mul", 3, 47_470, 47_470, "[[2, 3], [2, 3]]"), ("PowBackward0", 1, 9_400, 121_891, "[]")]


def test_real_torch_tables(ingest_files, query):
    import re

    real = [p for p in sorted(SAMPLES.glob("torch*.txt")) if re.match(r"torch\d+\.\d+_", p.name)]
    assert real, "the shipped torch2.13 samples are missing"
    results = ingest_files(real)
    assert all(r.status == "ingested" for r in results)
    for r in results:
        assert r.source["lines_skipped"] == 0
    # the two tables of one run agree on every operator's self time
    rows = query("""SELECT a.name, a.self_ns, sum(b.self_ns) FROM profiler_tables a JOIN profiler_tables b USING (name)
                    WHERE a.source_id = 1 AND b.source_id = 2 GROUP BY ALL""")
    assert rows
    for name, one, grouped in rows:
        assert abs(one - grouped) <= 10_000, name  # the table rounds each row to 3 printed decimals


# =========================================================================== CNTK
def test_cntk_summary_files(ingest_files, query):
    results = ingest_files([SAMPLES / "2017-06-01_12-34-56_summary_0.txt", SAMPLES / "2017-06-01_12-34-56_summary_1.txt"])
    assert [r.source["dialect"] for r in results] == ["summary", "summary (no Total column)"]
    rows = query("""SELECT rank, section, name, calls, avg_ns, stddev_ns, min_ns, max_ns, total_ns FROM profiler_tables
                    WHERE name = '__Forward + Backward' ORDER BY rank""")
    assert rows == [(0, "Main Thread", "__Forward + Backward", 1000, 40_250_000, 2_000_000, 35_000_000, 60_000_000,
                     40_250_000_000),
                    (1, "Main Thread", "__Forward + Backward", 1000, 40_250_000, 2_000_000, 35_000_000, 60_000_000, None)]
    # 60 s and more print as HH:MM:SS.sss
    assert query("SELECT avg_ns FROM profiler_tables WHERE name = 'Epoch' AND rank = 1") == [(61_234_000_000,)]
    assert query("""SELECT section, is_counter, unit, value_avg, value_total FROM profiler_tables
                    WHERE name = 'Prefetch Minibatch' AND rank = 0""") == [("Data Reader", True, "MBps", 123.456, 12345.0 * 1024)]
    assert results[0].source["runtime"] == "report time 2017/06/01 12:34:56"


def test_cntk_detail_file_is_a_timeline(ingest_files, query, cli, tmp_db):
    (res,) = ingest_files([SAMPLES / "2017-06-01_12-34-56_detail_0.csv"])
    assert res.source["dialect"] == "detail"
    assert query("SELECT flavour, rank, container FROM trace_files") == [("cntk", 0, "csv")]
    got = dict((n, (c, t, s)) for n, c, t, s in query(
        "SELECT name, count(*), sum(dur_ns), sum(self_ns) FROM trace_ops GROUP BY name"))
    assert got["_Minibatch Iteration"][0] == 3
    # the minibatch contains its three scoped events: its self time is what is left
    mb_total, mb_self = got["_Minibatch Iteration"][1:]
    inner = sum(got[n][1] for n in ("Get Minibatch", "Forward + Backward", 'Custom "scoped", event'))
    assert mb_self == mb_total - inner
    assert query("SELECT DISTINCT pid, tid FROM trace_ops ORDER BY tid") == [("0", "4242"), ("0", "4243")]
    res = cli("summary", "--db", tmp_db, "--by", "op", "--format", "json")
    assert {o["op"] for o in res.json()} == set(got)


def test_table_and_trace_cross_check_with_sql(ingest_files, query):
    """A stored table and the trace it summarises can be compared with one query."""
    import re

    real = [p for p in sorted(SAMPLES.glob("torch*")) if re.match(r"torch\d+\.\d+_(cpu_train|key_averages\.txt)", p.name)]
    assert len(real) >= 2, "the shipped torch2.13 samples are missing"
    ingest_files(real)
    rows = query("""
        SELECT t.name, t.self_ns AS table_self, o.self_ns AS trace_self
        FROM profiler_tables t
        JOIN (SELECT name, sum(self_ns) AS self_ns FROM trace_ops GROUP BY name) o USING (name)
        WHERE t.tool = 'torch_key_averages'""")
    assert len(rows) > 20
    assert all(abs(a - b) <= 500_000 for _, a, b in rows)
