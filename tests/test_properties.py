"""Property tests: generated verbose logs of every dialect, mixed with junk, must come out of
the store with exactly the counts, sums and fields the generator put in.

The generator keeps its own books (per kind: exec/create counts and time sums, cache hits and
misses, untimed execs, nested creates, check/dispatch diagnostics), then the file is ingested
into an in-memory store and compared.

Junk lines that start with a marker are built so that no two lines collide on their "shape
keys" (see the known-bug tests in test_ingest.py for what happens when they do).
"""
from __future__ import annotations

import math
import re
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loganalyze.grammars import onednn_verbose as g
from loganalyze.ingest import ingest_paths
from loganalyze.query.onednn_summary import summary
from loganalyze.store import Store

MARKERS = ("onednn_verbose", "dnnl_verbose", "mkldnn_verbose")
ENGINES = ["cpu", "gpu", "cpu2gpu", "gpu2cpu", "gpu:0", "gpu:1", "cpu:0"]
KNOWN_KINDS = ["convolution", "deconvolution", "reorder", "matmul", "inner_product", "eltwise", "sum", "concat",
               "batch_normalization", "layer_normalization", "pooling", "pooling_v2", "softmax_v2", "binary",
               "lrn", "resampling", "shuffle", "prelu", "reduction", "rnn", "sdpa", "gated_mlp"]
IMPLS = ["jit:avx512_core", "brg:avx512_core_amx", "gemm:jit", "ref:any", "jit:ir", "ocl:ref:any", "simple:any",
         "zendnn:matmul:f32|bf16:amd", "jit_bf16:avx512_core_bf16", "jit:uni", "brgconv:avx2", "x64:gemm:jit"]
PROPS = ["forward_training", "forward_inference", "backward", "backward_data", "backward_weights", "undef"]
DTS = ["f32", "bf16", "f16", "s8", "u8", "s32", "undef", "f8_e5m2"]
TAGS = ["abcd", "aBcd8b", "aBcd16b", "ABcd16b16a", "Acdb16a", "ab", "ba", "a", "abcde", "any", "acdb", "nchw"]
ARGS = ["src", "wei", "bia", "dst", "diff_src", "diff_dst", "diff_wei", "ws", "data", "src1", "scratchpad"]

TIMED_CREATES = ["create:cache_miss", "create:cache_hit", "create:from_cache_blob"]


# --------------------------------------------------------------------------- field strategies
def _not_engine(s: str) -> bool:
    return not re.fullmatch(r"(?:cpu|gpu|cpu2gpu|gpu2cpu)(?::\d+)?", s)


kinds = st.one_of(
    st.sampled_from(KNOWN_KINDS),
    st.from_regex(r"[a-z][a-z0-9_]{2,14}", fullmatch=True).filter(_not_engine),
)
impls = st.one_of(st.sampled_from(IMPLS), st.from_regex(r"[a-z_]{1,8}(:[a-z0-9_|]{1,10}){0,2}", fullmatch=True))
engines = st.sampled_from(ENGINES)
props = st.sampled_from(PROPS)
times = st.floats(min_value=0, max_value=1e4, allow_nan=False, allow_infinity=False, allow_subnormal=False).map(
    lambda x: "%g" % x
)
timestamps = st.floats(min_value=1.6e12, max_value=1.8e12).map(lambda x: "%.6f" % x)


def md_v0():
    return st.one_of(
        st.builds(lambda a, t: f"{a}:{t}", st.sampled_from(["fsrc", "fwei", "fbia", "fdst", "fdata", "fdiff"]),
                  st.sampled_from(TAGS + ["undef", "nChw8c", "OIhw8i8o", "x"])),
        st.builds(lambda a, d, t: f"{a}:{d}_{t}", st.sampled_from(["in", "out"]), st.sampled_from(DTS[:-1]),
                  st.sampled_from(TAGS)),
    )


def md_v1():  # arg_dt:props:format_kind:tag:flags
    return st.builds(lambda a, d, p, k, t: f"{a}_{d}:{p}:{k}:{t}:f0", st.sampled_from(ARGS), st.sampled_from(DTS),
                     st.sampled_from(["", "a", "p"]), st.sampled_from(["blocked", "undef", "any"]),
                     st.sampled_from(TAGS + [""]))


def md_v3():  # arg_dt:props:format_kind:tag:strides:flags[:extras]
    return st.builds(lambda a, d, p, t, s, f, x: f"{a}_{d}:{p}:blocked:{t}:{s}:{f}{x}", st.sampled_from(ARGS),
                     st.sampled_from(DTS), st.sampled_from(["", "a", "p", "o"]), st.sampled_from(TAGS),
                     st.sampled_from(["", "64s16s4s1"]), st.sampled_from(["f0", "f2", "f10"]),
                     st.sampled_from(["", ":s8m1", ":zpm2"]))


def md_v36():  # arg:dt:props:format_kind:tag:strides:flags
    return st.builds(lambda a, d, p, t, f: f"{a}:{d}:{p}:blocked:{t}::{f}", st.sampled_from(ARGS),
                     st.sampled_from(DTS), st.sampled_from(["", "a"]), st.sampled_from(TAGS),
                     st.sampled_from(["f0", "f0_mask2"]))


def mds_of(md):
    return st.lists(md, min_size=0, max_size=4).map(" ".join)


attrs_old = st.sampled_from(["", "scratchpad_mode:user;", "post_ops:'eltwise_relu;';", "oscale:2;"])
attrs_new = st.lists(st.sampled_from([
    "attr-scratchpad:user", "attr-fpmath:f16:true", "attr-scales:wei:2:f16", "attr-post-ops:binary_add:f16:3:ab+eltwise_relu",
    "attr-zero-points:src0:0:s32", "attr-post-ops:eltwise_relu",
]), max_size=3, unique=True).map(" ".join)
aux_values = st.lists(st.sampled_from(["alg:convolution_direct", "alg:eltwise_relu", "alpha:0", "beta:0", "num:1",
                                       "flags:3", "alg:pooling_max"]), max_size=3, unique=True).map(" ".join)
small = st.integers(min_value=1, max_value=512)


@st.composite
def problems(draw):
    form = draw(st.sampled_from(["conv", "gconv", "shape", "matmul", "ip", "lrn"]))
    if form in ("conv", "gconv"):
        mb, ic, oc, ih, kh = (draw(small) for _ in range(5))
        g_ = f"g{draw(small)}" if form == "gconv" else ""
        return f"mb{mb}_{g_}ic{ic}oc{oc}_ih{ih}oh{ih}kh{kh}sh1dh0ph1_iw{ih}ow{ih}kw{kh}sw1dw0pw1"
    if form == "shape":
        return "x".join(str(draw(small)) for _ in range(draw(st.integers(1, 5))))
    if form == "matmul":
        m, k, n = draw(small), draw(small), draw(small)
        return f"{m}x{k}:{k}x{n}"
    if form == "ip":
        return f"mb{draw(small)}ic{draw(small)}oc{draw(small)}"
    return f"mb{draw(small)}ic{draw(small)}ih{draw(small)}iw{draw(small)}ls5beta0.75"


# --------------------------------------------------------------------------- dialects
@dataclass(frozen=True)
class Dialect:
    name: str
    marker: str
    version: str  # version token or ""
    component: bool
    layout: str
    timestamps: bool
    ops: tuple
    md: object
    attrs: object
    header: str

    def prefix(self, ts: str | None) -> str:
        parts = [self.marker]
        if self.version:
            parts.append(self.version)
        if ts is not None:
            parts.append(ts)
        if self.component:
            parts.append("primitive")
        return ",".join(parts)


DIALECTS = [
    Dialect("mkldnn-v0", "mkldnn_verbose", "", False, "v0.x", False, ("exec", "create"), md_v0(), None,
            "mkldnn_verbose,info,Intel MKL-DNN v0.21.1 (commit 7d2fd500bc78936d1d648ca713b901012f470dbc)"),
    Dialect("mkldnn-v1.0", "mkldnn_verbose", "", False, "v1.0", False, ("exec", "create"), md_v1(), None,
            "mkldnn_verbose,info,Intel(R) MKL-DNN v0.95.0 (Git Hash ce116d48579332ae7e51a46219114f8d3c1e48db),"
            "Intel(R) Advanced Vector Extensions 2 (Intel(R) AVX2)"),
    Dialect("dnnl", "dnnl_verbose", "", False, "v1.1+", True, ("exec", "create:cache_miss", "create:cache_hit"),
            md_v1(), attrs_old, "dnnl_verbose,info,DNNL v1.3.0 (commit d0fc158e98590dfad0165e568ca466876a794597)"),
    Dialect("onednn-2.5", "onednn_verbose", "", False, "v1.1+", True, ("exec",) + tuple(TIMED_CREATES), md_v3(),
            attrs_new, "onednn_verbose,info,oneDNN v2.6.0 (commit N/A)"),
    Dialect("onednn-3.2", "onednn_verbose", "", True, "v1.1+", True,
            ("exec",) + tuple(TIMED_CREATES) + ("create_nested:cache_miss",), md_v3(), attrs_new,
            "onednn_verbose,info,oneDNN v3.2.0 (commit 6afab8e57f65a8995685d97ba6f80fa6c24b87a0)"),
    Dialect("onednn-3.6", "onednn_verbose", "v1", True, "v1.1+", True,
            ("exec",) + tuple(TIMED_CREATES) + ("create_nested:cache_miss",), md_v36(), attrs_new,
            "onednn_verbose,v1,info,oneDNN v3.7.1 (commit N/A)"),
]


@dataclass
class Line:
    text: str
    role: str  # primitive | check | dispatch | info | graph | junk | bad
    dialect: Dialect | None = None
    op: str = ""
    values: dict = field(default_factory=dict)
    time: str | None = None
    ts: str | None = None


@st.composite
def primitive_lines(draw, dialect: Dialect | None = None):
    d = dialect or draw(st.sampled_from(DIALECTS))
    op = draw(st.sampled_from(d.ops))
    untimed = op == "exec" and draw(st.integers(0, 5)) == 0
    ts = draw(timestamps) if d.timestamps and draw(st.booleans()) else None
    v = {"kind": draw(kinds), "impl": draw(impls), "prop_kind": draw(props), "mds": draw(mds_of(d.md)),
         "aux": draw(aux_values), "problem": draw(problems()), "engine": "", "attrs": ""}
    if d.layout != "v0.x":
        v["engine"] = draw(engines)
    if d.layout == "v1.1+":
        v["attrs"] = draw(d.attrs)
    names = g.LAYOUTS[d.layout]
    body = [v[n] for n in names]
    t = None if untimed else draw(times)
    fields_ = [d.prefix(ts), op] + body + ([] if t is None else [t])
    return Line(",".join(fields_), "primitive", d, op, v, t, ts)


@st.composite
def diagnostic_lines(draw):
    d = draw(st.sampled_from([x for x in DIALECTS if x.component]))
    kind = draw(kinds)
    loc = f"src/common/{draw(st.from_regex(r'[a-z_]{3,10}', fullmatch=True))}.cpp:{draw(st.integers(1, 999))}"
    if draw(st.booleans()):
        op = draw(st.sampled_from(["create:check", "exec:check"]))
        msg = draw(st.sampled_from(["dimension src:1 is inconsistent with weights:0", "bad dims, strides, or type",
                                    "unsupported attribute"]))
        return Line(f"{d.prefix(None)},{op},{kind},{msg},{loc}", "check", d, op, {"kind": kind})
    desc = ",".join([draw(engines), kind, draw(impls), draw(props), draw(mds_of(d.md)), draw(d.attrs),
                     draw(aux_values), draw(problems())])
    reason = draw(st.sampled_from(["unsupported isa", "unsupported datatype, attributes or format"]))
    return Line(f"{d.prefix(None)},create:dispatch,{kind},{desc},{reason},{loc}", "dispatch", d, "create:dispatch",
                {"kind": kind})


INFO_LINES = [
    "onednn_verbose,info,cpu,runtime:OpenMP,nthr:128",
    "dnnl_verbose,info,cpu,isa:Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions",
    "dnnl_verbose,info,gpu,runtime:none",
    "mkldnn_verbose,info,Detected ISA is Intel AVX2",
    "onednn_verbose,v1,info,graph,backend,0:dnnl_backend",
    "onednn_verbose,v1,info,gpu,engine,0,backend:Level Zero,name:Intel(R) Data Center GPU Max 1100,driver_version:1.3",
    "dnnl_verbose,info,prim_template:timestamp,operation,engine,primitive,implementation,prop_kind,"
    "memory_descriptors,attributes,auxiliary,problem_desc,exec_time",
    "onednn_verbose,v1,primitive,info,template:operation,engine,primitive,implementation,prop_kind,"
    "memory_descriptors,attributes,auxiliary,problem_desc,exec_time",
    "onednn_verbose,graph,info,template:operation,engine,partition_id,partition_kind,op_names,data_formats,"
    "logical_tensors,fpmath_mode,backend,exec_time",
] + [d.header for d in DIALECTS]

GRAPH_LINES = [
    "onednn_verbose,v1,graph,exec,cpu,100002,sdp,mha,attrs:{axis:2,keep_dims:0},inputs:{f32:102:strided:undef:1x2},"
    "fpmath:strict,larger_partition_kernel_t,dnnl_backend,{t}",
    "onednn_verbose,graph,exec,gpu:0,100005,mlp,MatMul;ReLU,in0_f16:1:strided:undef:1x4,fpm:strict,dnnl_backend,{t}",
]


@st.composite
def info_or_graph_lines(draw):
    if draw(st.integers(0, 3)) == 0:
        return Line(draw(st.sampled_from(GRAPH_LINES)).replace("{t}", draw(times)), "graph")
    return Line(draw(st.sampled_from(INFO_LINES)), "info")


def _not_verbose(text: str) -> bool:
    return not text.startswith(MARKERS)


junk_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\n"), max_size=80
)


@st.composite
def junk_lines(draw):
    """Application output: anything that does not start with a verbose marker, bare \\r included."""
    parts = draw(st.lists(junk_text, min_size=1, max_size=3))
    text = "\r".join(parts)
    if draw(st.integers(0, 4)) == 0:
        text = draw(st.sampled_from(["0:PASSED __REPRO: --conv mb2ic16", "[ RUN      ] Conv.Fwd", "epoch 1, loss 0.25",
                                     "", "   ", "\t", "INFO:root:onednn_verbose,exec is on"]))
    if not _not_verbose(text):
        text = "app: " + text
    return Line(text, "junk")


@st.composite
def bad_verbose_lines(draw):
    """Lines that start with a verbose marker but are truncated or have extra fields."""
    base: Line = draw(primitive_lines())
    d = base.dialect
    body = [base.values[n] for n in g.LAYOUTS[d.layout]]
    prefix = d.prefix(base.ts)
    # (an untimed line with a field inserted could read as a timed one when its problem is a
    # number, like "16": only timed lines get extra fields)
    how = draw(st.sampled_from(["truncate", "bad_time", "extra_field", "inserted_field"] if base.time is not None
                               else ["truncate"]))
    if how == "truncate":
        j = draw(st.integers(0, len(body) - 2))
        # the closing "@cut" field keeps this line's text from being any other line's shape key
        text = ",".join([prefix, base.op] + body[:j] + ["@cut"])
    elif how == "bad_time":
        text = ",".join([prefix, base.op] + body + [draw(st.sampled_from(["@bad", "fast", "n/a", "0.5ms"]))])
    elif how == "extra_field":
        text = ",".join([prefix, base.op] + body + [base.time, "@extra"])
    else:
        at = draw(st.integers(0, len(body)))
        text = ",".join([prefix, base.op] + body[:at] + ["@x"] + body[at:] + [base.time])
    return Line(text, "bad", d, base.op)


any_line = st.one_of(
    primitive_lines(), primitive_lines(), primitive_lines(),  # weight the profiling lines
    diagnostic_lines(), info_or_graph_lines(), junk_lines(), bad_verbose_lines(),
)


@st.composite
def logs(draw):
    lines = draw(st.lists(any_line, min_size=1, max_size=60))
    if lines[0].role == "junk" and lines[0].text.lstrip().startswith(("[", "{", "==")):
        # a file that opens like JSON or nvprof output is another format's business (see
        # test_verbose_lines_after_long_gtest_output in test_ingest.py)
        lines[0] = Line("app: " + lines[0].text, "junk")
    crlf = draw(st.sampled_from(["never", "always", "mixed"]))
    eols = [("\r\n" if crlf == "always" or (crlf == "mixed" and draw(st.booleans())) else "\n") for _ in lines]
    final_eol = draw(st.booleans()) or lines[-1].text == ""
    return lines, eols, final_eol


def render(lines, eols, final_eol) -> bytes:
    out = []
    for i, (line, eol) in enumerate(zip(lines, eols)):
        out.append(line.text)
        if i < len(lines) - 1 or final_eol:
            out.append(eol)
    return "".join(out).encode("utf-8")


# --------------------------------------------------------------------------- the books
def expected_by_kind(lines):
    books = defaultdict(lambda: defaultdict(list))
    for ln in lines:
        if ln.role == "primitive":
            k = books[ln.values["kind"]]
            if ln.op == "exec":
                (k["exec"] if ln.time is not None else k["untimed"]).append(ln.time)
            elif ln.op.startswith("create_nested"):
                k["nested"].append(ln.time)
            else:
                k["create"].append(ln.time)
                if ln.op == "create:cache_hit":
                    k["hits"].append(1)
                if ln.op == "create:cache_miss":
                    k["misses"].append(1)
        elif ln.role in ("check", "dispatch"):
            books[ln.values["kind"]][ln.role].append(1)
    return books


def fsum_str(values) -> float:
    return math.fsum(float(v) for v in values)


def close(a, b) -> bool:
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


def ingest_bytes(data: bytes):
    tmp = tempfile.TemporaryDirectory()
    path = Path(tmp.name) / "generated.log"
    path.write_bytes(data)
    store = Store(":memory:")
    results = list(ingest_paths(store, [str(path)]))
    return tmp, store, results


# --------------------------------------------------------------------------- properties
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(logs())
def test_generated_logs_round_trip(log):
    lines, eols, final_eol = log
    data = render(lines, eols, final_eol)
    n_verbose_ok = sum(ln.role not in ("junk", "bad") for ln in lines)
    n_bad = sum(ln.role == "bad" for ln in lines)
    n_junk = sum(ln.role == "junk" for ln in lines)
    tmp, store, results = ingest_bytes(data)
    try:
        (res,) = results
        if n_verbose_ok + n_bad == 0:
            assert res.status == "error" and "generated.log" in res.message, res.message
            assert "database error" not in res.message, res.message
            return
        assert res.status == "ingested", res.message
        con = store.con

        # line counts, and the invariant
        total, parsed, other, skipped = con.execute(
            "SELECT lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources").fetchone()
        assert total == len(lines) == parsed + other + skipped
        assert (parsed, other, skipped) == (n_verbose_ok, n_junk, n_bad)

        # junk verbose lines are in skipped_lines, at their line numbers, with a reason
        bad_at = [i for i, ln in enumerate(lines, start=1) if ln.role == "bad"]
        sk = con.execute("SELECT line_no, reason FROM skipped_lines ORDER BY line_no").fetchall()
        assert [s[0] for s in sk] == bad_at
        assert all(s[1].startswith(("truncated", "malformed")) for s in sk), sk

        # every good verbose line is stored at its line number, fields as generated
        stored = {r[0]: r for r in con.execute(
            """SELECT line_no, op_class, operation, marker, version_token, layout, engine, kind, impl, prop_kind,
                      mds, attrs, aux, problem, time_ms, ts_ms FROM onednn ORDER BY line_no""").fetchall()}
        good_at = [i for i, ln in enumerate(lines, start=1) if ln.role not in ("junk", "bad")]
        assert sorted(stored) == good_at
        for i, ln in enumerate(lines, start=1):
            if ln.role == "primitive":
                r = stored[i]
                d = ln.dialect
                assert (r[2], r[3], r[4], r[5]) == (ln.op, d.marker, d.version, d.layout), (i, ln.text)
                got = dict(zip(["engine", "kind", "impl", "prop_kind", "mds", "attrs", "aux", "problem"], r[6:14]))
                assert got == ln.values, (i, ln.text)
                if ln.time is None:
                    assert r[14] is None
                else:
                    assert r[14] == float(ln.time)
                if ln.ts is None:
                    assert r[15] is None
                else:
                    assert r[15] == pytest.approx(float(ln.ts), rel=1e-15)
            elif ln.role in ("check", "dispatch"):
                assert (stored[i][1], stored[i][7]) == (ln.role, ln.values["kind"]), (i, ln.text)
            elif ln.role == "info":
                assert stored[i][1] == "info", (i, ln.text)
            elif ln.role == "graph":
                assert stored[i][1] == "graph_exec", (i, ln.text)

        # per kind: counts and sums equal the generator's own books
        cols, rows = summary(con, ["kind"])
        got = {r[0]: dict(zip(cols, r)) for r in rows}
        books = expected_by_kind(lines)
        assert set(got) == set(books)
        for kind, b in books.items():
            s = got[kind]
            assert s["exec_count"] == len(b["exec"]), kind
            assert close(s["exec_ms"], fsum_str(b["exec"])), (kind, s["exec_ms"], b["exec"])
            assert s["exec_untimed"] == len(b["untimed"]), kind
            assert s["create_count"] == len(b["create"]), kind
            assert close(s["create_ms"], fsum_str(b["create"])), kind
            assert s["cache_hits"] == len(b["hits"]) and s["cache_misses"] == len(b["misses"]), kind
            assert s["create_nested_count"] == len(b["nested"]), kind
            assert close(s["create_nested_ms"], fsum_str(b["nested"])), kind
            assert s["check_count"] == len(b["check"]) and s["dispatch_count"] == len(b["dispatch"]), kind
    finally:
        store.close()
        tmp.cleanup()


@settings(max_examples=200, deadline=None)
@given(primitive_lines())
def test_grammar_round_trips_one_line(line):
    """The grammar alone, on many more lines: the key of a timed line, or the whole untimed line."""
    text = re.sub(r"^((?:onednn|dnnl|mkldnn)_verbose(?:,v\d+)?),\d+\.\d*", r"\1", line.text)
    if line.time is not None:
        shape = g.parse_shape(text.rsplit(",", 1)[0])
        assert shape.tail_is_time
    else:
        assert not g.parse_shape(text.rsplit(",", 1)[0]).tail_is_time
        shape = g.parse_shape(text, whole=True)
    assert shape.status == "ok"
    assert shape.operation == line.op and shape.layout == line.dialect.layout
    assert {k: getattr(shape, k) for k in line.values} == line.values
    # every descriptor is read, in order, with its argument name
    assert len(shape.md_list) == len(line.values["mds"].split())
    for md, token in zip(shape.md_list, line.values["mds"].split()):
        assert token.startswith(md["arg"])


@settings(max_examples=100, deadline=None)
@given(bad_verbose_lines())
def test_grammar_rejects_bad_lines(line):
    text = re.sub(r"^((?:onednn|dnnl|mkldnn)_verbose(?:,v\d+)?),\d+\.\d*", r"\1", line.text)
    key_shape = g.parse_shape(text.rsplit(",", 1)[0])
    if key_shape.tail_is_time:  # the key looks complete: then the tail must not be a number
        tail = text.rsplit(",", 1)[1]
        with pytest.raises(ValueError):
            float(tail)
    else:
        assert g.parse_shape(text, whole=True).status in ("truncated", "malformed")
