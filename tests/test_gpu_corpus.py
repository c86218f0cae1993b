"""GPU profiles of the public corpus against their independently computed answers.

Skips cleanly when ``../shared/corpus`` is absent, and per file when a file's hash differs
from ``expected/index.json`` (it has been replaced).  SQLite corpus files are only ever
opened read-only and immutable.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

NSYS = "nsys/pipit_saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
NVVP = "nvprof/mxnet-profiler-demo_basic_nvprof_output.nvvp"
TRACES = ["nvprof/magus_matrixMul_trace.csv", "nvprof/magus_traces_cudasdk_concurrentKernels.csv"]
SUMMARY = "nvprof/GPGPU_Project_base_model_ACET_summary.csv"
METRICS = "nvprof/magus_vectorAdd_metrics.csv"
PYPROF = "pyprof/IoTensorJuly_net_1.dict"


def close(a, b, rel=1e-6):
    if a is None or b is None:
        return a == b
    return abs(float(a) - float(b)) <= rel * max(1.0, abs(float(b)))


@pytest.fixture
def corpus_file(corpus):
    index = json.loads((corpus / "expected" / "index.json").read_text())

    def get(rel: str) -> tuple[Path, dict]:
        path = corpus / rel
        if not path.exists():
            pytest.skip(f"{rel} not in the corpus")
        entry = index.get(path.name)
        if entry and hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
            pytest.skip(f"{rel} was replaced (hash differs from expected/index.json)")
        expected = json.loads((corpus / "expected" / f"{path.name}.expected.json").read_text())
        return path, expected

    return get


@pytest.fixture
def gpu_db(tmp_db, cli):
    """Ingest files into the scratch database through the CLI; returns a summary helper."""

    def ingest(*paths):
        res = cli("ingest", "--db", tmp_db, *paths)
        assert res.exit_code == 0, res.output
        return res

    def summary(by, *extra):
        res = cli("summary", "--db", tmp_db, "--by", by, "--format", "json", *extra)
        assert res.exit_code == 0, res.output
        return res.json()

    return ingest, summary


def by_key(rows, key):
    out = {}
    for r in rows:
        assert r[key] not in out, f"two rows for {r[key]!r}"
        out[r[key]] = r
    return out


def check_stats(got: dict, exp: dict, keys=("count", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns")):
    for k in keys:
        if k in exp:
            assert close(got[k], exp[k]), (k, got[k], exp[k])


# --------------------------------------------------------------------------- Nsight Systems
def test_nsys_export(corpus_file, gpu_db, query, tmp_db):
    path, exp = corpus_file(NSYS)
    ingest, summary = gpu_db
    ingest(path)
    src = query("SELECT format, dialect, library_version, lines_total, lines_parsed, lines_non_verbose, "
                "lines_skipped FROM sources")[0]
    assert src[0] == "nsys_sqlite" and exp["schema_version"] in src[1] and exp["nsys_version"] in src[2]
    assert src[3] == src[4] + src[5] + src[6]
    # kernels, demangled (the default for nsys) and short
    kern = by_key(summary("kernel"), "kernel")
    assert set(kern) == set(exp["kernels"]["by_demangledName"])
    for name, e in exp["kernels"]["by_demangledName"].items():
        check_stats(kern[name], e)
    short = by_key(summary("kernel", "--names", "short"), "kernel")
    assert set(short) == set(exp["kernels"]["by_shortName"])
    for name, e in exp["kernels"]["by_shortName"].items():
        check_stats(short[name], e)
    # copies by copyKind
    rows = query("SELECT copy_kind, any_value(regexp_extract(name, '\\[CUDA memcpy (.*)\\]', 1)), count(*), "
                 "sum(bytes), sum(duration_ns), min(duration_ns), max(duration_ns), median(duration_ns) "
                 "FROM gpu_memops GROUP BY 1")
    got = {f"{r[0]}:{r[1]}": r for r in rows}
    assert set(got) == set(exp["memcpy_by_copyKind"])
    for k, e in exp["memcpy_by_copyKind"].items():
        r = got[k]
        assert (r[2], r[3], r[4], r[5], r[6]) == (e["count"], e["bytes"], e["total_ns"], e["min_ns"], e["max_ns"])
        assert close(r[7], e["median_ns"])
    mem = summary("memcpy")
    assert sum(r["count"] for r in mem) == exp["memcpy_total"]["count"]
    assert sum(r["bytes"] for r in mem) == exp["memcpy_total"]["bytes"]
    assert sum(r["total_ns"] for r in mem) == exp["memcpy_total"]["total_ns"]
    # API calls: runtime + driver only, never the eventClass 67 backtrace rows
    api_raw = by_key(summary("api", "--names", "raw"), "api")
    assert set(api_raw) == set(exp["api_calls"]["by_name"])
    for name, e in exp["api_calls"]["by_name"].items():
        check_stats(api_raw[name], e)
    api = by_key(summary("api"), "api")
    assert set(api) == set(exp["api_calls"]["by_base_name"])
    for name, e in exp["api_calls"]["by_base_name"].items():
        check_stats(api[name], e)
    assert sum(r["count"] for r in api.values()) == exp["api_calls"]["count"]
    assert sum(r["total_ns"] for r in api.values()) == exp["api_calls"]["total_ns"]
    other = sum(v for k, v in exp["runtime_table_rows_by_eventClass"].items() if not k.startswith(("0:", "1:")))
    assert src[5] == other
    # NVTX
    nvtx = by_key(summary("nvtx"), "nvtx")
    assert set(nvtx) == set(exp["nvtx_ranges"]["by_name"])
    for name, e in exp["nvtx_ranges"]["by_name"].items():
        check_stats(nvtx[name], e)
    dom = query("SELECT coalesce(domain, '(default domain)') || '|' || text, count(*) FROM nvtx_ranges "
                "WHERE event_type IN ('push_pop', 'start_end') GROUP BY 1")
    assert dict(dom) == exp["nvtx_ranges"]["by_domain_and_name"]
    assert query("SELECT count(*) FROM nvtx_ranges WHERE event_type = 'mark'")[0][0] == exp["nvtx_marks"]
    threads = {f"{p}/{t}": n for p, t, n in query("SELECT pid, tid, name FROM gpu_threads WHERE name IS NOT NULL")}
    for k, v in exp["thread_names"].items():
        assert threads.get(k) == v, k
    # per-operator GPU time: the innermost enclosing push/pop range of each launch
    att = exp["kernel_time_by_nvtx_range"]
    ops = by_key(summary("op"), "op")
    for name, e in att["by_innermost_range"].items():
        assert ops[name]["count"] == e["count"] and ops[name]["gpu_total_ns"] == e["total_ns"]
    unatt = [r for r in ops.values() if r["op"].startswith("(")]
    assert sum(r["count"] for r in unatt) == att["unattributed"]["count"]
    inst = query("SELECT range_text, range_start_ns, range_end_ns, count(*), sum(duration_ns) FROM gpu_activity_nvtx "
                 "WHERE kind = 'kernel' AND range_row IS NOT NULL GROUP BY ALL")
    got = {f"{r[0]}@{r[1]}": r for r in inst}
    assert set(got) == set(att["per_range_instance"])
    for k, e in att["per_range_instance"].items():
        assert got[k][2:] == (e["range_end_ns"], e["count"], e["total_ns"])
    mem_att = query("SELECT count(*), sum(duration_ns) FROM gpu_activity_nvtx WHERE kind <> 'kernel' AND range_row IS NULL")
    assert mem_att[0] == (exp["memcpy_time_by_nvtx_range"]["unattributed"]["count"],
                          exp["memcpy_time_by_nvtx_range"]["unattributed"]["total_ns"])
    # metadata
    meta = dict(query("SELECT key, value FROM gpu_source_meta"))
    assert meta["session_start.utcEpochNs"] == exp["session_start_utcEpochNs"]
    assert meta["metadata_table"] == exp["metadata_table"]
    assert [r[0] for r in query("SELECT name FROM gpu_devices")] == exp["gpus"]


def test_nsys_kernel_totals_equal_direct_sql(corpus_file, gpu_db):
    """Per-kernel totals equal a plain GROUP BY on the export itself."""
    path, _ = corpus_file(NSYS)
    ingest, summary = gpu_db
    ingest(path)
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        direct = {n: (c, t) for n, c, t in con.execute(
            "SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName GROUP BY 1")}
    finally:
        con.close()
    ours = {r["kernel"]: (r["count"], r["total_ns"]) for r in summary("kernel")}
    assert ours == direct


# --------------------------------------------------------------------------- nvprof database
def test_nvprof_database(corpus_file, gpu_db, query):
    path, exp = corpus_file(NVVP)
    ingest, summary = gpu_db
    ingest(path)
    k = exp["kernels"]
    rows = by_key(summary("kernel", "--names", "mangled"), "kernel")
    assert len(rows) == k["distinct_names"]
    assert sum(r["count"] for r in rows.values()) == k["count"]
    assert sum(r["total_ns"] for r in rows.values()) == k["total_ns"]
    for name, e in k["per_name"].items():
        check_stats(rows[name], e, ("count", "total_ns", "min_ns", "max_ns"))
    raw = by_key(summary("kernel"), "kernel")  # as stored: the mangled StringTable names
    assert set(raw) == set(k["per_name"])
    demangled = summary("kernel", "--names", "demangled")
    assert any(r["kernel"].startswith("void cudnn::detail::") for r in demangled)
    short = {r["kernel"] for r in summary("kernel", "--names", "short")}
    assert "dgrad_alg1_engine" in short
    for table, e in exp["kernels_by_table"].items():
        got = query("SELECT count(*), coalesce(sum(duration_ns), 0) FROM gpu_kernels WHERE origin = ?", [table])[0]
        assert got == (e["rows"], e["total_ns"]), table
    got = {f"{c}:{k.upper()}": (n, b, t, mn, mx) for c, k, n, b, t, mn, mx in query(
        "SELECT copy_kind, kind, count(*), sum(bytes), sum(duration_ns), min(duration_ns), max(duration_ns) "
        "FROM gpu_memops WHERE op = 'memcpy' GROUP BY ALL")}
    assert got == {k: (e["count"], e["bytes"], e["total_ns"], e["min_ns"], e["max_ns"])
                   for k, e in exp["memcpy_by_copyKind"].items()}
    ms = query("SELECT count(*), sum(duration_ns), min(duration_ns), max(duration_ns), sum(bytes) "
               "FROM gpu_memops WHERE op = 'memset'")[0]
    e = exp["memset_total"]
    assert ms == (e["count"], e["total_ns"], e["min_ns"], e["max_ns"], e["bytes"])
    for api, key in (("runtime", "runtime_api"), ("driver", "driver_api")):
        got = query("SELECT count(*), sum(duration_ns), count(DISTINCT cbid) FROM gpu_api_calls WHERE api = ?", [api])[0]
        assert got == (exp[key]["rows"], exp[key]["total_ns"], exp[key]["distinct_cbid"])
    assert query("SELECT count(*) FROM gpu_api_calls WHERE name LIKE '%cbid%'")[0][0] == 0  # every cbid is named
    assert [r[0] for r in query("SELECT name FROM gpu_devices ORDER BY device")] == exp["devices"]
    # no NVTX here: every kernel is unattributed, and --by op says so instead of failing
    ops = summary("op")
    assert len(ops) == 1 and ops[0]["count"] == k["count"] and ops[0]["op"].startswith("(")


# --------------------------------------------------------------------------- nvprof CSV
@pytest.mark.parametrize("rel", TRACES)
def test_nvprof_gpu_trace_csv(rel, corpus_file, gpu_db, query):
    path, exp = corpus_file(rel)
    ingest, summary = gpu_db
    ingest(path)
    src = query("SELECT lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources")[0]
    assert src == (exp["lines_total"], exp["rows"], exp["lines_total"] - exp["rows"], 0)
    kernels = by_key(summary("kernel"), "kernel")
    copies = by_key(summary("memcpy"), "memcpy")
    for name, e in exp["per_name"].items():
        got = kernels[name] if e["kind"] == "kernel" else copies[name]
        check_stats(got, e, ("count", "total_ns", "min_ns", "max_ns"))
    assert len(kernels) == sum(1 for e in exp["per_name"].values() if e["kind"] == "kernel")
    for kind, e in exp["by_kind"].items():
        got = query("SELECT count(*), sum(duration_ns) FROM gpu_activities WHERE kind = ?", [kind])[0]
        assert got == (e["count"], e["total_ns"])
    streams = {str(s): (n, t, mn, mx) for s, n, t, mn, mx in query(
        "SELECT stream, count(*), sum(duration_ns), min(duration_ns), max(duration_ns) FROM gpu_activities GROUP BY 1")}
    assert streams == {s: (e["count"], e["total_ns"], e["min_ns"], e["max_ns"]) for s, e in exp["per_stream"].items()}
    assert query("SELECT min(start_ns), max(end_ns), sum(duration_ns) FROM gpu_activities")[0] == (
        exp["first_start_ns"], exp["last_end_ns"], exp["total_ns"])
    meta = dict(query("SELECT key, value FROM gpu_source_meta"))
    assert int(meta["correlation_suffix_stripped"]) == exp["correlation_suffix_stripped"]
    assert meta["nvprof_messages"].splitlines() == exp["nvprof_messages"]
    # the stripped suffix is the correlation id
    assert query("SELECT count(*) FROM gpu_kernels WHERE correlation_id IS NULL")[0][0] == 0


def test_nvprof_summary_csv(corpus_file, gpu_db, query):
    path, exp = corpus_file(SUMMARY)
    ingest, summary = gpu_db
    ingest(path)
    rows = {r[0]: r for r in query(
        "SELECT name, category, count, total_ns, avg_ns, min_ns, max_ns, time_pct FROM gpu_report_rows")}
    assert len(rows) == exp["rows"]
    for name, e in exp["per_name"].items():
        r = rows[name]
        assert (r[2], r[3], r[5], r[6]) == (e["calls"], e["time_ns"], e["min_ns"], e["max_ns"]), name
        assert close(r[4], e["avg_ns"]) and close(r[7], e["time_percent"])
    t = exp["per_type"]["GPU activities"]
    assert query("SELECT count(*), sum(count), sum(total_ns) FROM gpu_report_rows")[0] == (t["rows"], t["calls"],
                                                                                          t["time_ns"])
    # the summary answers --by kernel and --by memcpy like instance data would
    kernels = by_key(summary("kernel"), "kernel")
    copies = by_key(summary("memcpy"), "memcpy")
    for name, e in exp["per_name"].items():
        got = copies[name] if name.startswith("[CUDA mem") else kernels[name]
        assert (got["count"], got["total_ns"], got["min_ns"], got["max_ns"]) == (
            e["calls"], e["time_ns"], e["min_ns"], e["max_ns"]), name
        assert close(got["avg_ns"], e["avg_ns"])


def test_nvprof_metrics_csv(corpus_file, gpu_db, query):
    path, exp = corpus_file(METRICS)
    ingest, _ = gpu_db
    ingest(path)
    assert query("SELECT count(*), count(DISTINCT metric) FROM gpu_metrics")[0] == (
        exp["kernel_metric_rows"], exp["distinct_metric_names"])
    for kernel, e in exp["per_kernel"].items():
        got = query("SELECT count(*), list(DISTINCT invocations), list(DISTINCT device) FROM gpu_metrics "
                    "WHERE kernel = ?", [kernel])[0]
        assert (got[0], sorted(got[1]), sorted(got[2])) == (e["rows"], e["invocations"], e["devices"])
    shapes = dict(query("SELECT value_shape, count(*) FROM gpu_metrics GROUP BY 1"))
    assert shapes == exp["avg_value_shapes"]
    assert query("SELECT lines_total FROM sources")[0][0] == exp["lines_total"]


# --------------------------------------------------------------------------- PyProf
def test_pyprof_parse_output(corpus_file, gpu_db, query):
    path, exp = corpus_file(PYPROF)
    ingest, summary = gpu_db
    ingest(path)
    assert query("SELECT lines_total, lines_parsed, lines_skipped FROM sources")[0] == (
        exp["lines_total"], exp["records"], len(exp["unparsed_lines"]))
    assert query("SELECT sum(duration_ns) FROM gpu_kernels")[0][0] == exp["total_kDuration_ns"]
    for names, key in (("short", "per_kShortName"), ("raw", "per_kLongName")):
        rows = by_key(summary("kernel", "--names", names), "kernel")
        assert set(rows) == set(exp[key])
        for name, e in exp[key].items():
            check_stats(rows[name], e, ("count", "total_ns", "min_ns", "max_ns"))
    ops = summary("op")
    for k, e in exp["per_dir_op"].items():
        direction, op = k.split("|")
        row = by_key(ops, "op")[op]
        assert (row["count"], row["gpu_total_ns"], row["gpu_min_ns"], row["gpu_max_ns"]) == (
            e["count"], e["total_ns"], e["min_ns"], e["max_ns"])
        assert row["direction"] == {"fprop": "fwd", "bprop": "bwd"}[direction]
        assert row["flops"] and row["flops"] > 0  # conv2d FLOPs from the argument markers
    ds = {f"{d}/{s}": (n, t) for d, s, n, t in query(
        "SELECT device, stream, count(*), sum(duration_ns) FROM gpu_kernels GROUP BY ALL")}
    assert ds == {k: (e["count"], e["total_ns"]) for k, e in exp["per_device_stream"].items()}


def test_every_gpu_corpus_file_ingests_together(corpus, cli, tmp_db):
    """All GPU corpus files in one database, one command; summaries still answer."""
    files = [str(corpus / r) for r in [NSYS, NVVP, SUMMARY, METRICS, PYPROF, *TRACES] if (corpus / r).exists()]
    res = cli("ingest", "--db", tmp_db, *files)
    assert res.exit_code == 0, res.output
    for by in ("kernel", "kernel,grid,block", "memcpy", "api", "nvtx", "op", "kernel,source"):
        out = cli("summary", "--db", tmp_db, "--by", by, "--format", "json")
        assert out.exit_code == 0, out.output
        assert out.json()
