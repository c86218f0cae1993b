"""The segments of a oneDNN verbose log (``onednn_segments``, and what ``sources`` says of
them) against a line-by-line model of the rule, on random sequences of header lines."""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loganalyze.ingest import ingest_paths
from loganalyze.store import Store

TEMPLATE = ("template:operation,engine,primitive,implementation,prop_kind,memory_descriptors,attributes,"
            "auxiliary,problem_desc,exec_time")
GRAPH_TEMPLATE = ("template:operation,engine,partition_id,partition_kind,op_names,data_formats,logical_tensors,"
                  "fpmath_mode,backend,exec_time")
V18_ISA = "Intel(R) Advanced Vector Extensions 2 (Intel(R) AVX2)"
#: line -> (version, ISA, runtime, template) it gives its segment; "-": nothing of that part
LINES = {
    "app output, not verbose": ("-", "-", "-", "-"),
    "onednn_verbose,info,oneDNN v3.2.0 (commit 6afab8e57f65a8995685d97ba6f80fa6c24b87a0)":
        ("oneDNN v3.2.0", None, "-", "-"),
    "onednn_verbose,info,oneDNN v3.3.6 (commit N/A)": ("oneDNN v3.3.6", None, "-", "-"),
    f"mkldnn_verbose,info,Intel(R) MKL-DNN v0.18.0 (Git Hash 4cfed5bf82f1339d7c8c7f622fda02dc00ec8ad8),{V18_ISA}":
        ("Intel(R) MKL-DNN v0.18.0", V18_ISA, "-", "-"),
    "onednn_verbose,info,cpu,isa:Intel AVX2": ("-", "Intel AVX2", "-", "-"),
    "onednn_verbose,info,cpu,isa:": ("-", "", "-", "-"),
    "onednn_verbose,info,cpu,runtime:OpenMP,nthr:128": ("-", "-", "OpenMP,nthr:128", "-"),
    "onednn_verbose,info,cpu,runtime:": ("-", "-", "", "-"),
    "onednn_verbose,info,gpu,runtime:none": ("-", "-", "-", "-"),
    f"onednn_verbose,primitive,info,{TEMPLATE}": ("-", "-", "-", f"primitive:{TEMPLATE}"),
    f"onednn_verbose,graph,info,{GRAPH_TEMPLATE}": ("-", "-", "-", f"graph:{GRAPH_TEMPLATE}"),
    "onednn_verbose,primitive,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd::f0 "
    "dst_f32::blocked:aBcd16b::f0,,,2x32x7x7,0.0231934": ("-", "-", "-", "-"),
}
EXEC = list(LINES)[-1]


def model(lines: list[str]) -> tuple[list[tuple], dict]:
    """The segments of ``lines`` by the rule, line by line, and the ``sources`` fields."""
    starts = [i for i, line in enumerate(lines, 1) if LINES[line][0] != "-"]
    heads = ([(0, 1)] if not starts or starts[0] != 1 else []) + list(enumerate(starts, 1))
    rows = []
    for j, (segment, first) in enumerate(heads):
        last = heads[j + 1][1] - 1 if j + 1 < len(heads) else len(lines)
        version, isa, runtime, templates = None, None, None, []
        for line in lines[first - 1:last]:
            v, i, r, t = LINES[line]
            version = v if v != "-" else version
            isa = i if i != "-" else isa
            runtime = r if r != "-" else runtime
            templates += [t] if t != "-" else []
        rows.append((segment, first, last, version, isa, runtime, templates))

    def seen(k):
        return "; ".join(dict.fromkeys(r[k] for r in rows if r[k])) or None

    return rows, {"library_version": seen(3), "isa": seen(4), "runtime": seen(5),
                  "segments": sum(1 for r in rows if r[3]) or 1}


def ingested(lines: list[str]) -> tuple[list[tuple], dict]:
    with tempfile.TemporaryDirectory() as tmp:
        log, db = Path(tmp) / "runs.log", str(Path(tmp) / "t.duckdb")
        log.write_text("\n".join(lines) + "\n")
        with Store(db) as store:
            [res] = ingest_paths(store, [str(log)])
            assert res.status == "ingested", res.message
            rows = store.con.execute(
                """SELECT segment, first_line, last_line, library_version, isa, runtime, templates
                   FROM onednn_segments ORDER BY segment""").fetchall()
            source = store.con.execute("SELECT library_version, isa, runtime, segments FROM sources").fetchall()[0]
    return rows, dict(zip(("library_version", "isa", "runtime", "segments"), source))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(list(LINES)), max_size=40))
def test_segments_follow_the_header_lines(lines):
    lines = lines + [EXEC]  # (a file without any verbose line is refused)
    assert ingested(lines) == model(lines)


def test_a_header_every_few_lines_gives_a_segment_each():
    """Many short runs in one file (a header every nine lines, 3,000 runs)."""
    run = [list(LINES)[i] for i in (1, 4, 6, 8, 9, 10)] + [EXEC] * 3
    lines = ["app output, not verbose"] + run * 3000
    rows, source = ingested(lines)
    assert (rows, source) == model(lines)
    assert len(rows) == 3001 and rows[-1][1:3] == (len(lines) - 8, len(lines))
