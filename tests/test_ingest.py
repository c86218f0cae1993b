"""Ingest of small hand-written logs through the library (``Store`` + ``ingest_paths``)."""
from __future__ import annotations

import gzip
import hashlib

import pytest

from loganalyze.query.onednn_summary import summary
from loganalyze.store import Store

HDR = "dnnl_verbose,info,oneDNN v1.7.0 (commit 7aed236906b1f7a05c0917e5257a1af05e9ff683)"
RT = "dnnl_verbose,info,cpu,runtime:OpenMP"
MDS = "src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0"
REORDER = f"dnnl_verbose,exec,cpu,reorder,jit:uni,undef,{MDS},,,2x16x7x7"
CONV = ("dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,src_f32::blocked:aBcd8b:f0 "
        "wei_f32::blocked:ABcd8b8a:f0 bia_f32::blocked:a:f0 dst_f32::blocked:aBcd8b:f0,,alg:convolution_direct,"
        "mb2_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2")
MISS = REORDER.replace(",exec,", ",create:cache_miss,")
HIT = CONV.replace(",exec,", ",create:cache_hit,")
TRUNC = "dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,"


def write(tmp_path, name, lines, eol="\n", final_eol=True, encoding="utf-8"):
    text = eol.join(lines) + (eol if final_eol else "")
    p = tmp_path / name
    p.write_bytes(text.encode(encoding))
    return p


def by_kind(db):
    with Store(db, read_only=True) as st:
        cols, rows = summary(st.con, ["kind"])
    return {r[0]: dict(zip(cols, r)) for r in rows}


def source_row(query, name=None):
    cols = ["source_id", "name", "lines_total", "lines_parsed", "lines_non_verbose", "lines_skipped", "crlf_lines",
            "ends_with_newline", "segments", "library_version", "compression", "sha256", "run_label", "runtime",
            "file_sha256", "content_bytes"]
    sql = f"SELECT {', '.join(cols)} FROM sources" + (" WHERE name = ?" if name else "")
    rows = query(sql, [name] if name else [])
    assert len(rows) == 1, rows
    return dict(zip(cols, rows[0]))


def events(query, sid=None):
    return query(
        """SELECT e.line_no, s.op_class, s.kind, e.time_ms, e.ts_ms FROM onednn_events e
           JOIN onednn_shapes s USING (shape_id) """ + ("WHERE e.source_id = ? " if sid else "") + "ORDER BY e.line_no",
        [sid] if sid else [],
    )


def skipped(query, sid=None):
    return query(
        "SELECT line_no, reason, text FROM skipped_lines " + ("WHERE source_id = ? " if sid else "") + "ORDER BY line_no",
        [sid] if sid else [],
    )


# --------------------------------------------------------------------------- line handling
def test_interleaved_application_output(tmp_path, tmp_db, ingest_files, query, consistent):
    lines = [
        "INFO:__main__:loading model",          # 1
        "",                                      # 2
        HDR,                                     # 3
        "[ RUN      ] conv.fwd",                 # 4
        REORDER + ",0.5",                        # 5
        "0:PASSED __REPRO: --conv mb2ic16",      # 6
        CONV + ",1.25",                          # 7
        "epoch 1, loss 0.25, dnnl_verbose,exec", # 8: mentions the marker but does not start with it
        "   ",                                   # 9
        REORDER + ",0.25",                       # 10
    ]
    res = ingest_files([write(tmp_path, "app.log", lines)])
    assert [r.status for r in res] == ["ingested"]
    src = source_row(query)
    assert (src["lines_total"], src["lines_parsed"], src["lines_non_verbose"], src["lines_skipped"]) == (10, 4, 6, 0)
    ev = events(query)
    assert [(e[0], e[1], e[2], e[3]) for e in ev] == [
        (3, "info", "", None), (5, "exec", "reorder", 0.5), (7, "exec", "convolution", 1.25),
        (10, "exec", "reorder", 0.25)]
    k = by_kind(tmp_db)
    assert k["reorder"]["exec_count"] == 2 and k["reorder"]["exec_ms"] == pytest.approx(0.75, rel=1e-12)
    assert k["convolution"]["exec_count"] == 1
    consistent(tmp_db)


def test_first_comma_field_decides(tmp_path, tmp_db, ingest_files, query, consistent):
    lines = [
        "dnnl_verbosex,exec,cpu,reorder,jit:uni,undef,,,,2x2,0.5",   # not the marker: application output
        "onednn_verbose_log,exec,1",                                  # idem
        "Dnnl_verbose,exec,1",                                        # case matters
        " dnnl_verbose," + REORDER.split(",", 1)[1] + ",0.5",         # leading blank: not a verbose line
        REORDER + ",0.5",
    ]
    ingest_files([write(tmp_path, "first.log", lines)])
    src = source_row(query)
    assert (src["lines_parsed"], src["lines_non_verbose"], src["lines_skipped"]) == (1, 4, 0)
    assert [e[0] for e in events(query)] == [5]
    consistent(tmp_db)


def test_crlf_line_endings(tmp_path, tmp_db, ingest_files, query, consistent):
    lines = [HDR, RT, "app output", REORDER + ",0.5", REORDER, CONV + ",2", TRUNC]
    ingest_files([write(tmp_path, "win.log", lines, eol="\r\n")])
    src = source_row(query)
    assert src["crlf_lines"] == 7 and src["ends_with_newline"] is True
    assert (src["lines_total"], src["lines_parsed"], src["lines_non_verbose"], src["lines_skipped"]) == (7, 5, 1, 1)
    assert src["runtime"] == "OpenMP"  # no \r left in the info text
    # no field may keep the \r: the untimed line's problem (its last field) in particular
    rows = query("SELECT e.line_no, s.problem, s.detail, s.key FROM onednn_events e JOIN onednn_shapes s USING (shape_id)")
    for line_no, problem, detail, key in rows:
        assert "\r" not in (problem or "") + (detail or "") + (key or ""), line_no
    assert dict((r[0], r[1]) for r in rows)[5] == "2x16x7x7"
    ev = {e[0]: e for e in events(query)}
    assert ev[4][3] == 0.5 and ev[5][3] is None and ev[6][3] == 2.0
    sk = skipped(query)
    assert [s[0] for s in sk] == [7] and sk[0][1].startswith("truncated")
    assert "\r" not in sk[0][2]
    k = by_kind(tmp_db)
    assert k["reorder"]["exec_count"] == 1 and k["reorder"]["exec_untimed"] == 1
    consistent(tmp_db)


def test_mixed_line_endings(tmp_path, tmp_db, ingest_files, query):
    p = tmp_path / "mixed.log"
    p.write_bytes((HDR + "\n" + REORDER + ",0.5\r\n" + REORDER + ",0.25\n").encode())
    ingest_files([p])
    src = source_row(query)
    assert src["crlf_lines"] == 1 and src["lines_parsed"] == 3
    assert [e[3] for e in events(query)] == [None, 0.5, 0.25]


def test_bare_carriage_return_does_not_end_a_line(tmp_path, tmp_db, ingest_files, query, consistent):
    lines = [
        HDR,                                                   # 1
        "epoch 1 [=====     ] 50%\repoch 1 [==========] 100%",  # 2: progress bar redrawn with \r
        REORDER + ",0.5",                                      # 3
        "\r\r\r",                                              # 4: only carriage returns
        "loss 0.1\r" + REORDER + ",9.0",                       # 5: verbose text after \r: first field is not the marker
        REORDER + ",0.25",                                     # 6
    ]
    ingest_files([write(tmp_path, "progress.log", lines)])
    src = source_row(query)
    assert src["lines_total"] == 6  # as wc -l, grep -n and editors count
    assert (src["lines_parsed"], src["lines_non_verbose"], src["lines_skipped"]) == (3, 3, 0)
    assert [(e[0], e[3]) for e in events(query)] == [(1, None), (3, 0.5), (6, 0.25)]
    assert by_kind(tmp_db)["reorder"]["exec_ms"] == pytest.approx(0.75, rel=1e-12)
    consistent(tmp_db)


def test_gzip_input_matches_plain(tmp_path, tmp_db, ingest_files, query, consistent):
    lines = [HDR, "app", REORDER + ",0.5", MISS + ",0.125", CONV + ",1.5", TRUNC, REORDER]
    plain = write(tmp_path, "run.log", lines)
    gz = tmp_path / "run.log.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    db_plain = str(tmp_path / "plain.duckdb")
    ingest_files([plain], db=db_plain)
    res = ingest_files([gz])
    assert [r.status for r in res] == ["ingested"]
    src = source_row(query)
    assert src["compression"] == "gzip"
    # issue 9: a source is its decompressed content; the file's own hash is kept beside it
    assert src["file_sha256"] == hashlib.sha256(gz.read_bytes()).hexdigest()
    assert src["sha256"] == hashlib.sha256(plain.read_bytes()).hexdigest()
    assert src["content_bytes"] == plain.stat().st_size
    assert src["lines_total"] == 7 and src["lines_skipped"] == 1
    assert events(query) == events(lambda s, p=None: query(s, p, db=db_plain))
    assert [s[:2] for s in skipped(query)] == [s[:2] for s in query("SELECT line_no, reason FROM skipped_lines", db=db_plain)]
    assert by_kind(tmp_db) == by_kind(db_plain)
    consistent(tmp_db)


def test_concatenated_gzip_members(tmp_path, tmp_db, ingest_files, query):
    a = "\n".join([HDR, REORDER + ",0.5"]) + "\n"
    b = "\n".join([REORDER + ",0.25", CONV + ",1"]) + "\n"
    p = tmp_path / "two.log.gz"
    p.write_bytes(gzip.compress(a.encode()) + gzip.compress(b.encode()))
    ingest_files([p])
    assert [(e[0], e[3]) for e in events(query)] == [(1, None), (2, 0.5), (3, 0.25), (4, 1.0)]


def test_last_line_complete_but_without_newline(tmp_path, tmp_db, ingest_files, query, consistent):
    ingest_files([write(tmp_path, "nonl.log", [HDR, REORDER + ",0.5", REORDER + ",0.25"], final_eol=False)])
    src = source_row(query)
    assert src["ends_with_newline"] is False
    assert (src["lines_total"], src["lines_parsed"], src["lines_skipped"]) == (3, 3, 0)
    assert events(query)[-1][3] == 0.25
    consistent(tmp_db)


def test_last_line_cut_off(tmp_path, tmp_db, ingest_files, query, consistent):
    lines = [HDR, REORDER + ",0.5", CONV[: len(CONV) // 2]]
    ingest_files([write(tmp_path, "cut.log", lines, final_eol=False)])
    src = source_row(query)
    assert src["ends_with_newline"] is False
    assert (src["lines_total"], src["lines_parsed"], src["lines_skipped"]) == (3, 2, 1)
    sk = skipped(query)
    assert [s[0] for s in sk] == [3] and sk[0][1].startswith("truncated")
    assert sk[0][2] == CONV[: len(CONV) // 2][:200]
    assert by_kind(tmp_db).keys() == {"reorder"}
    consistent(tmp_db)


# --------------------------------------------------------------------------- runs in one file
def test_concatenated_runs_are_segments(tmp_path, tmp_db, ingest_files, query, consistent):
    h2 = HDR.replace("v1.7.0", "v2.0.0")
    h3 = "onednn_verbose,info,oneDNN v3.2.0 (commit N/A)"
    lines = [
        "app starting",                         # 1  segment 0 (before any header)
        HDR, RT, REORDER + ",1",                # 2-4 segment 1
        "=== second run ===",                   # 5
        h2, "dnnl_verbose,info,cpu,isa:Intel AVX2", REORDER + ",2",  # 6-8 segment 2
        h3, "onednn_verbose,info,cpu,runtime:TBB,nthr:4",
        "onednn_verbose,primitive,info,template:operation,engine,primitive,implementation,prop_kind,"
        "memory_descriptors,attributes,auxiliary,problem_desc,exec_time",
        "onednn_verbose,primitive,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd::f0 "
        "dst_f32::blocked:aBcd8b::f0,,,2x16x7x7,3",  # 9-12 segment 3
    ]
    ingest_files([write(tmp_path, "runs.log", lines)])
    segs = query("SELECT segment, first_line, last_line, library_version, isa, runtime, templates "
                 "FROM onednn_segments ORDER BY segment")
    assert [s[:4] for s in segs] == [
        (0, 1, 1, None),
        (1, 2, 5, "oneDNN v1.7.0"),
        (2, 6, 8, "oneDNN v2.0.0"),
        (3, 9, 12, "oneDNN v3.2.0"),
    ]
    assert segs[1][5] == "OpenMP"
    assert segs[2][4] == "Intel AVX2"
    assert segs[3][5].startswith("TBB")
    assert len(segs[3][6]) == 1 and segs[3][6][0].startswith("primitive:template:operation,engine")
    src = source_row(query)
    assert src["segments"] == 3
    assert src["library_version"] == "oneDNN v1.7.0; oneDNN v2.0.0; oneDNN v3.2.0"
    assert by_kind(tmp_db)["reorder"]["exec_ms"] == pytest.approx(6.0)
    consistent(tmp_db)


def test_file_without_header_is_one_segment(tmp_path, tmp_db, ingest_files, query):
    ingest_files([write(tmp_path, "nohdr.log", [REORDER + ",1", REORDER + ",2"])])
    segs = query("SELECT first_line, last_line, library_version FROM onednn_segments")
    assert segs == [(1, 2, None)]
    assert source_row(query)["library_version"] is None


def test_many_lines_skipped_at_once_keep_their_text_as_one_skip_would(tmp_path, ingest_files, query):
    """Lines the grammar rejects whole come in bulk in a log of many short runs: each is
    stored with its number, its reason and its text cut as IngestContext.skip cuts it (line
    end dropped, first 200 characters), and the warning names the first."""
    long1 = "dnnl_verbose,exec,cpu,convolution,jit:avx2," + "\u00e9" * 300 + ","
    long2 = "dnnl_verbose,exec,cpu," + "x" * 250 + "\u00fc,"
    run = [HDR, REORDER + ",0.5", TRUNC, REORDER + ",0.25", long1, long2]
    lines = run * 3000
    path = tmp_path / "bulk.log"
    path.write_bytes("".join(line + ("\r\n" if i % 2 else "\n") for i, line in enumerate(lines)).encode())
    [res] = ingest_files([path])
    bad = [(i, line) for i, line in enumerate(lines, 1) if line in (TRUNC, long1, long2)]
    rows = skipped(query)
    assert [(r[0], r[2]) for r in rows] == [(i, line.rstrip("\r\n")[:200]) for i, line in bad]
    assert all(r[1] for r in rows) and len({r[1] for r in rows if r[2] == TRUNC}) == 1
    assert source_row(query)["lines_skipped"] == len(bad) == 9000
    assert any(f"9000 line(s) skipped (first: line {bad[0][0]}, " in w for w in res.warnings)


# --------------------------------------------------------------------------- untimed, truncated, malformed
def test_untimed_truncated_and_malformed_lines(tmp_path, tmp_db, ingest_files, query, consistent):
    lines = [
        HDR,                                        # 1 info
        REORDER + ",0.5",                           # 2 timed
        REORDER,                                    # 3 untimed (all fields, no time)
        CONV,                                       # 4 untimed
        TRUNC,                                      # 5 truncated
        REORDER + ",0.5,0.25",                      # 6 malformed: one field too many
        CONV + ",fast",                             # 7 malformed: time is not a number
        "dnnl_verbose,exec,cpu",                    # 8 truncated
        "dnnl_verbose,create:cache_miss,cpu,reorder",  # 9 truncated
        MISS + ",0.125",                            # 10 timed create
        "mkldnn_verbose,exec,reorder,jit:uni,undef,in:f32_nchw out:f32_nChw8c,num:1,2x16x7x7,0.5,x,y",  # 11 malformed
        "mkldnn_verbose,exec,reorder,jit:uni",      # 12 truncated
        CONV + ",2.5",                              # 13 timed
    ]
    ingest_files([write(tmp_path, "bad.log", lines)])
    src = source_row(query)
    assert (src["lines_total"], src["lines_parsed"], src["lines_non_verbose"], src["lines_skipped"]) == (13, 6, 0, 7)
    sk = skipped(query)
    assert [s[0] for s in sk] == [5, 6, 7, 8, 9, 11, 12]
    reasons = {s[0]: s[1] for s in sk}
    for n in (5, 8, 9, 12):
        assert reasons[n].startswith("truncated"), reasons[n]
    for n in (6, 7, 11):
        assert reasons[n].startswith("malformed"), reasons[n]
    assert reasons[5] == "truncated: 5 fields after the operation, layout v1.1+ needs 8 (+1 time)"
    texts = {s[0]: s[2] for s in sk}
    assert texts[6] == (REORDER + ",0.5,0.25")[:200]
    assert [(e[0], e[3]) for e in events(query)] == [(1, None), (2, 0.5), (3, None), (4, None), (10, 0.125), (13, 2.5)]
    k = by_kind(tmp_db)
    assert (k["reorder"]["exec_count"], k["reorder"]["exec_untimed"], k["reorder"]["create_count"],
            k["reorder"]["cache_misses"]) == (1, 1, 1, 1)
    assert (k["convolution"]["exec_count"], k["convolution"]["exec_untimed"]) == (1, 1)
    assert k["convolution"]["exec_ms"] == pytest.approx(2.5)
    consistent(tmp_db)


def test_skipped_text_has_no_timestamp_and_is_cut_at_200(tmp_path, tmp_db, ingest_files, query):
    long_trunc = "dnnl_verbose,1607393146348.667969,exec,cpu,convolution,jit:avx2,forward_training," + "x" * 400
    ingest_files([write(tmp_path, "ts.log", [REORDER + ",1", long_trunc])])
    (line_no, reason, text), = skipped(query)
    assert line_no == 2 and reason.startswith("truncated")
    assert "1607393146348" not in text
    assert len(text) == 200 and text.startswith("dnnl_verbose,exec,cpu,convolution")


def test_timestamps_are_kept_per_line(tmp_path, tmp_db, ingest_files, query):
    lines = [
        "dnnl_verbose,info,oneDNN v2.0.0 (commit N/A)",
        "dnnl_verbose,1607393146348.667969," + REORDER.split(",", 1)[1] + ",3.58594",
        "dnnl_verbose,1607393146356.743896," + REORDER.split(",", 1)[1] + ",3.63916",
        "onednn_verbose,v1,1693533460193.346924,primitive,create:cache_miss,cpu,reorder,jit:uni,undef,"
        "src:f32::blocked:abcd::f0 dst:f32::blocked:aBcd8b::f0,,,2x16x7x7,0.7",
    ]
    ingest_files([write(tmp_path, "ts.log", lines)])
    ev = events(query)
    assert ev[0][4] is None
    assert ev[1][4] == pytest.approx(1607393146348.667969, rel=1e-15)
    assert ev[2][4] == pytest.approx(1607393146356.743896, rel=1e-15)
    assert ev[3][4] == pytest.approx(1693533460193.346924, rel=1e-15)
    # the two dnnl lines differ only by timestamp and time: one shape
    shapes = query("SELECT count(DISTINCT shape_id) FROM onednn_events WHERE line_no IN (2, 3)")
    assert shapes == [(1,)]
    k = by_kind(tmp_db)["reorder"]
    assert k["exec_count"] == 2 and k["exec_ms"] == pytest.approx(3.58594 + 3.63916, rel=1e-12)
    assert k["create_count"] == 1 and k["cache_misses"] == 1


def test_diagnostics_nested_creates_and_graph_lines(tmp_path, tmp_db, ingest_files, query, consistent):
    v1 = "onednn_verbose,v1,primitive"
    md = "src:f32::blocked:abcd::f0 dst:f32::blocked:aBcd8b::f0"
    lines = [
        "onednn_verbose,v1,info,oneDNN v3.7.1 (commit N/A)",
        f"{v1},create:check,matmul,dimension src:1 is inconsistent with weights:0,src/common/matmul.cpp:144",
        f"{v1},create:dispatch,matmul,cpu,matmul,brg:avx512_core_amx,undef,{md},,,256x256:256x256,unsupported isa,"
        "src/cpu/x64/matmul/brgemm_matmul.cpp:97",
        f"{v1},create_nested:cache_miss,cpu,reorder,jit:blk,undef,{md},,,2x16x7x7,0.5",
        f"{v1},create:cache_hit,cpu,reorder,jit:blk,undef,{md},,,2x16x7x7,0.25",
        f"{v1},exec,cpu,reorder,jit:blk,undef,{md},,,2x16x7x7,1",
        "onednn_verbose,v1,graph,exec,cpu,100002,sdp,mha,attrs:{axis:2,keep_dims:0},inputs:{f32:102:strided:undef:1x2},"
        "fpmath:strict,larger_partition_kernel_t,dnnl_backend,7.5",
        "onednn_verbose,v1,common,error,filter format is ill-formed",
    ]
    ingest_files([write(tmp_path, "v3.log", lines)])
    k = by_kind(tmp_db)
    assert set(k) == {"matmul", "reorder"}  # graph partitions are not primitives
    assert (k["matmul"]["check_count"], k["matmul"]["dispatch_count"], k["matmul"]["exec_count"]) == (1, 1, 0)
    r = k["reorder"]
    assert (r["create_count"], r["cache_hits"], r["create_nested_count"], r["exec_count"]) == (1, 1, 1, 1)
    assert r["create_ms"] == pytest.approx(0.25) and r["create_nested_ms"] == pytest.approx(0.5)
    ops = dict(query("SELECT line_no, op_class FROM onednn"))
    assert ops == {1: "info", 2: "check", 3: "dispatch", 4: "create_nested", 5: "create", 6: "exec",
                   7: "graph_exec", 8: "error"}
    src = source_row(query)
    assert (src["lines_parsed"], src["lines_skipped"]) == (8, 0)
    consistent(tmp_db)


def test_unknown_primitive_kind_is_summarised(tmp_path, tmp_db, ingest_files, query):
    line = "onednn_verbose,primitive,exec,cpu,fancy_new_op,ref:any,forward_inference,src_f32::blocked:abc::f0,,,1x2x3,{t}"
    ingest_files([write(tmp_path, "new.log", [line.format(t="0.5"), line.format(t="1.5")])])
    k = by_kind(tmp_db)
    assert k["fancy_new_op"]["exec_count"] == 2 and k["fancy_new_op"]["exec_ms"] == pytest.approx(2.0)


# --------------------------------------------------------------------------- identity of files
def test_reingest_does_not_duplicate(tmp_path, tmp_db, ingest_files, query, counts, consistent):
    p = write(tmp_path, "once.log", [HDR, REORDER + ",0.5", TRUNC])
    first = ingest_files([p], run_label="a")
    before = counts(tmp_db)
    again = ingest_files([p], run_label="b")
    assert [r.status for r in first] == ["ingested"]
    assert [r.status for r in again] == ["duplicate"]
    assert again[0].source_id == first[0].source_id
    assert str(p) in again[0].message
    copy = tmp_path / "copy_of_once.log"
    copy.write_bytes(p.read_bytes())
    assert [r.status for r in ingest_files([copy])] == ["duplicate"]
    assert counts(tmp_db) == before
    assert source_row(query)["run_label"] == "a"
    # one more line: it extends the stored source (issue 9), which --replace swaps out
    p.write_bytes(p.read_bytes() + (REORDER + ",1\n").encode())
    (grown,) = ingest_files([p])
    assert grown.status == "extends" and "--replace" in grown.message, grown.message
    assert counts(tmp_db) == before
    assert [r.status for r in ingest_files([p], replace=True)] == ["ingested"]
    assert counts(tmp_db)["sources"] == 1
    consistent(tmp_db)


def test_same_file_twice_in_one_call(tmp_path, tmp_db, ingest_files, counts):
    d = tmp_path / "logs"
    d.mkdir()
    p = write(d, "twice.log", [REORDER + ",0.5"])
    res = ingest_files([p, p, str(d / "*.log"), d])
    assert [r.status for r in res] == ["ingested"]
    assert counts(tmp_db)["onednn_events"] == 1


def test_run_labels_and_multiple_files(tmp_path, tmp_db, ingest_files, query, consistent):
    a = write(tmp_path, "a.log", [HDR, REORDER + ",1"])
    b = write(tmp_path, "b.log", [HDR, REORDER + ",2", CONV + ",3"])
    ingest_files([a], run_label="base")
    ingest_files([b], run_label="new")
    rows = query("SELECT run_label, kind, sum(time_ms) FROM onednn_primitives WHERE op_class = 'exec' "
                 "GROUP BY ALL ORDER BY ALL")
    assert rows == [("base", "reorder", 1.0), ("new", "convolution", 3.0), ("new", "reorder", 2.0)]
    consistent(tmp_db)


def test_directory_and_glob_expansion(tmp_path, tmp_db, ingest_files, query):
    d = tmp_path / "logs"
    (d / "sub").mkdir(parents=True)
    write(d, "one.log", [REORDER + ",1"])
    write(d / "sub", "two.log", [REORDER + ",2"])
    write(d, ".hidden.log", [REORDER + ",4"])
    res = ingest_files([d])
    assert sorted(r.path.rsplit("/", 1)[-1] for r in res) == ["one.log", "two.log"]
    assert query("SELECT sum(time_ms) FROM onednn_events") == [(3.0,)]


# --------------------------------------------------------------------------- line numbers
def _reference_line_numbers(data: bytes) -> dict[int, str]:
    """line number -> text of the verbose lines, computed the plain way."""
    out = {}
    for i, raw in enumerate(data.split(b"\n"), start=1):
        text = raw.decode("utf-8").removesuffix("\r")
        if text.split(",", 1)[0] in ("onednn_verbose", "dnnl_verbose", "mkldnn_verbose"):
            out[i] = text
    return out


def _noisy_log() -> bytes:
    import random

    rnd = random.Random(1234)
    parts = []
    for i in range(400):
        r = rnd.random()
        eol = "\r\n" if rnd.random() < 0.3 else "\n"
        if r < 0.35:
            parts.append(REORDER + f",{rnd.randint(1, 999) / 64:g}" + eol)
        elif r < 0.45:
            parts.append(CONV + eol)  # untimed
        elif r < 0.5:
            parts.append(HDR + eol)
        elif r < 0.55:
            parts.append(TRUNC + eol)
        elif r < 0.65:
            parts.append("progress " + "\r".join(f"{p}%" for p in range(0, 100, 7)) + eol)
        elif r < 0.7:
            parts.append(eol)
        else:
            parts.append("app: " + "x" * rnd.randint(0, 300) + eol)
    return "".join(parts).encode()


def test_event_line_numbers_match_the_file(tmp_path, tmp_db, ingest_files, query, consistent):
    data = _noisy_log()
    p = tmp_path / "noisy.log"
    p.write_bytes(data)
    ingest_files([p])
    ref = _reference_line_numbers(data)
    stored = {r[0] for r in query("SELECT line_no FROM onednn_events")} | {r[0] for r in query("SELECT line_no FROM skipped_lines")}
    assert stored == set(ref)
    src = source_row(query)
    assert src["lines_total"] == data.count(b"\n")
    assert src["lines_parsed"] + src["lines_skipped"] == len(ref)
    assert src["crlf_lines"] == data.count(b"\r\n")
    # every truncated line is where the file has it
    trunc = {n for n, t in ref.items() if t == TRUNC}
    assert {r[0] for r in query("SELECT line_no FROM skipped_lines")} == trunc
    # and the exec times are the ones written on those lines
    times = dict(query("SELECT line_no, time_ms FROM onednn_events WHERE time_ms IS NOT NULL"))
    assert times == {n: float(t.rsplit(",", 1)[1]) for n, t in ref.items() if t.startswith(REORDER + ",")}
    consistent(tmp_db)


@pytest.mark.parametrize("chunk", [1, 7, 333])
def test_line_batches_across_chunk_boundaries(tmp_path, ingest_files, query, small_chunks, chunk):
    """Tiny read chunks put line (and \\r\\n) boundaries everywhere: same result as one chunk."""
    data = _noisy_log()[:12000]
    p = tmp_path / "noisy.log"
    p.write_bytes(data)
    whole_db = str(tmp_path / "whole.duckdb")
    ingest_files([p], db=whole_db)
    small_chunks(chunk)
    chunked_db = str(tmp_path / "chunked.duckdb")
    ingest_files([p], db=chunked_db)
    q_ev = "SELECT line_no, shape_id, ts_ms, time_ms FROM onednn_events ORDER BY line_no"
    q_sk = "SELECT line_no, reason, text FROM skipped_lines ORDER BY line_no"
    q_src = "SELECT lines_total, lines_parsed, lines_non_verbose, lines_skipped, crlf_lines, ends_with_newline FROM sources"
    for q in (q_ev, q_sk, q_src):
        assert query(q, db=chunked_db) == query(q, db=whole_db)


# --------------------------------------------------------------------------- known bugs
def test_truncated_line_equal_to_key_of_untimed_line(tmp_path, tmp_db, ingest_files, query, consistent):
    # line 2 is line 1 without its last field: truncated (7 fields where v1.1+ needs 8)
    ingest_files([write(tmp_path, "k.log", [REORDER, REORDER.rsplit(",", 1)[0], REORDER + ",0.5"])])
    src = source_row(query)
    assert (src["lines_parsed"], src["lines_skipped"]) == (2, 1)
    assert [s[0] for s in skipped(query)] == [2]
    consistent(tmp_db)


def test_marker_and_version_only_line(tmp_path, tmp_db, ingest_files, query, consistent):
    ingest_files([write(tmp_path, "v.log", ["onednn_verbose,v1", REORDER + ",0.5"])])
    assert [s[0] for s in skipped(query)] == [1]
    consistent(tmp_db)


def test_info_line_prefix_of_another_info_line(tmp_path, tmp_db, ingest_files, query, consistent):
    ingest_files([write(tmp_path, "i.log", [RT, RT + ",nthr:128", REORDER + ",0.5"])])
    details = query("SELECT line_no, detail FROM onednn_info ORDER BY line_no")
    assert details == [(1, "cpu,runtime:OpenMP"), (2, "cpu,runtime:OpenMP,nthr:128")]
    consistent(tmp_db)


def test_marker_only_line_is_truncated(tmp_path, tmp_db, ingest_files, query):
    ingest_files([write(tmp_path, "m.log", ["mkldnn_verbose", REORDER + ",0.5"])])
    (line_no, reason, text), = skipped(query)
    assert line_no == 1
    assert reason.startswith("truncated"), reason
    assert text == "mkldnn_verbose"


def test_malformed_line_after_untimed_line_in_earlier_file(tmp_path, tmp_db, ingest_files, query, consistent):
    ingest_files([write(tmp_path, "u.log", [REORDER])])
    ingest_files([write(tmp_path, "m.log", [REORDER + ",fast", REORDER + ",0.5"])])
    sid = query("SELECT source_id FROM sources WHERE name = 'm.log'")[0][0]
    assert [s[0] for s in skipped(query, sid)] == [1]
    assert by_kind(tmp_db)["reorder"]["exec_untimed"] == 1  # only u.log's line
    consistent(tmp_db)


def test_malformed_line_after_untimed_line_in_earlier_batch(tmp_path, tmp_db, ingest_files, query, small_chunks):
    small_chunks(64)
    ingest_files([write(tmp_path, "b.log", [REORDER, "x" * 200, REORDER + ",fast"])])
    assert [s[0] for s in skipped(query)] == [3]


def test_info_detail_not_borrowed_from_earlier_file(tmp_path, tmp_db, ingest_files, query):
    ingest_files([write(tmp_path, "old.log", [RT, REORDER + ",1"])])
    ingest_files([write(tmp_path, "new.log", [RT + ",nthr:128", REORDER + ",2"])])
    rows = query("SELECT source_name, detail FROM onednn_info ORDER BY source_id")
    assert rows == [("old.log", "cpu,runtime:OpenMP"), ("new.log", "cpu,runtime:OpenMP,nthr:128")]
    assert query("SELECT runtime FROM sources ORDER BY source_id") == [("OpenMP",), ("OpenMP,nthr:128",)]


def test_verbose_lines_after_long_gtest_output(tmp_path, tmp_db, ingest_files, query, consistent):
    """Verbose lines may start after more than the sniffed first block of application output,
    which here starts with '[' like gtest or benchdnn output."""
    pre = "".join(f"[ RUN      ] Suite.Test{i}\n[       OK ] Suite.Test{i} (0 ms)\n" for i in range(2000))
    p = tmp_path / "gtest.log"
    p.write_text("[==========] Running 2000 tests\n" + pre + REORDER + ",0.5\n")
    (res,) = ingest_files([p])
    assert res.status == "ingested", res.message
    assert query("SELECT line_no, time_ms FROM onednn_events") == [(4002, 0.5)]
    consistent(tmp_db)


def test_only_verbose_line_is_the_unterminated_last_line(tmp_path, tmp_db, ingest_files, query):
    p = tmp_path / "last.log"
    p.write_text("[ RUN      ] Conv.Fwd\n" + REORDER + ",0.5")
    (res,) = ingest_files([p])
    assert res.status == "ingested", res.message
    assert query("SELECT line_no, time_ms FROM onednn_events") == [(2, 0.5)]


@pytest.mark.parametrize("bad_time", ["nan", "inf", "-inf", "NaN"])
def test_non_finite_time_is_malformed(tmp_path, tmp_db, ingest_files, query, consistent, bad_time):
    lines = [REORDER + ",0.5", REORDER + "," + bad_time, REORDER + ",0.25"]
    res = ingest_files([write(tmp_path, "nan.log", lines)])
    assert [r.status for r in res] == ["ingested"]
    skipped = query("SELECT line_no, reason FROM skipped_lines")
    assert [s[0] for s in skipped] == [2] and "not a number" in skipped[0][1]
    k = by_kind(tmp_db)
    assert k["reorder"]["exec_count"] == 2 and k["reorder"]["exec_ms"] == pytest.approx(0.75, rel=1e-12)
    consistent(tmp_db)


def test_directory_expansion_leaves_database_files_out(tmp_path, ingest_files):
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs, "run.log", [REORDER + ",0.5"])
    db = logs / "loganalyze.duckdb"
    first = ingest_files([logs], db=str(db))  # the database is created inside the folder
    again = ingest_files([logs], db=str(db))
    assert [r.status for r in first] == ["ingested"]
    assert [r.status for r in again] == ["duplicate"]


# --------------------------------------------------------------------------- commits
def _row_groups(con, table):
    return con.execute(f"SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('{table}')").fetchall()[0][0]


def _three_commits(path, merge):
    with Store(path) as st:
        st.con.execute("SET checkpoint_threshold = '1B'")  # every COMMIT checkpoints
        st.con.execute("CREATE TABLE t (a BIGINT)")
        for k in range(3):
            with st.transaction(merge_row_groups=merge):
                st.con.execute(f"INSERT INTO t SELECT range FROM range({k * 1000}, {(k + 1) * 1000})")
        assert st.con.execute("SELECT current_setting('max_vacuum_tasks')").fetchall()[0][0] == 100
        return _row_groups(st.con, "t")


def test_a_commit_without_merges_leaves_row_groups_and_restores_the_setting(tmp_path):
    assert _three_commits(tmp_path / "a.duckdb", False) == 3 > _three_commits(tmp_path / "b.duckdb", True)


class _CloseSpy:
    """A connection that notes DuckDB's vacuum setting as it is closed."""

    def __init__(self, con):
        self.con, self.vacuum_tasks_at_close = con, None

    def execute(self, *args):
        return self.con.execute(*args)

    def close(self):
        self.vacuum_tasks_at_close = self.con.execute("SELECT current_setting('max_vacuum_tasks')").fetchall()[0][0]
        self.con.close()


@pytest.mark.parametrize("merge, tasks", [(False, 0), (True, 100)])
def test_the_checkpoint_at_close_merges_only_when_the_last_commit_did(tmp_path, merge, tasks):
    """DuckDB checkpoints as a database closes, merging partly filled row groups: after a
    COMMIT that put that off (a large file's), the close must not do it instead."""
    st = Store(tmp_path / "a.duckdb")
    with st.transaction(merge_row_groups=merge):
        st.con.execute("CREATE TABLE t AS SELECT range AS a FROM range(1000)")
    st.con = spy = _CloseSpy(st.con)
    st.close()
    assert spy.vacuum_tasks_at_close == tasks


def _ingest_three(path, logs):
    from loganalyze import ingest

    with Store(path) as st:
        st.con.execute("SET checkpoint_threshold = '1B'")
        for log in logs:
            assert [r.status for r in ingest.ingest_paths(st, [str(log)])] == ["ingested"]
        assert st.con.execute("SELECT current_setting('max_vacuum_tasks')").fetchall()[0][0] == 100
        return _row_groups(st.con, "sources")


def test_large_files_are_committed_without_merging_row_groups(tmp_path, monkeypatch):
    """A file of UNMERGED_MIN_BYTES or more leaves its partly filled row groups (here: one
    row of ``sources`` per file) to a later checkpoint."""
    from loganalyze import ingest

    logs = [write(tmp_path, f"{k}.log", [HDR, RT, CONV.replace("mb2", f"mb{k + 2}") + ",1.5"]) for k in range(3)]
    merged = _ingest_three(tmp_path / "a.duckdb", logs)
    monkeypatch.setattr(ingest, "UNMERGED_MIN_BYTES", 1)
    assert _ingest_three(tmp_path / "b.duckdb", logs) > merged
