"""Unit tests of the verbose-line grammar (``loganalyze.grammars.onednn_verbose``), one
dialect at a time.

The importer never shows the grammar a timestamp: it cuts every line into
``key`` (the line without its timestamp and without its last comma field) + ``tail``, calls
``parse_shape(key)``, and when the grammar says the tail is not a time it calls
``parse_shape(whole_line_without_timestamp, whole=True)``.  :func:`shape_of` does the same.
"""
from __future__ import annotations

import re

import pyparsing as pp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loganalyze.grammars import onednn_verbose as g

TS = re.compile(r"^((?:onednn|dnnl|mkldnn)_verbose(?:,v\d+)?)(,\d+\.\d*)(?=,|$)")


def strip_ts(line: str) -> str:
    return TS.sub(r"\1", line)


def shape_of(line: str) -> g.Shape:
    """What the importer stores for ``line``: the key shape when the last field is the time,
    else the whole-line shape."""
    text = strip_ts(line)
    key = text.rsplit(",", 1)[0] if "," in text else text
    shape = g.parse_shape(key)
    if shape.tail_is_time:
        return shape
    return g.parse_shape(text, whole=True)


def fields(shape: g.Shape) -> dict:
    return {k: getattr(shape, k) for k in ("engine", "kind", "impl", "prop_kind", "mds", "attrs", "aux", "problem")}


# --------------------------------------------------------------------------- v0.x
class TestMkldnnV0:
    LINE = "mkldnn_verbose,exec,reorder,jit:uni,undef,in:f32_nchw out:f32_nChw8c,num:1,2x16x7x7,0.529053"

    def test_exec_reorder(self):
        s = shape_of(self.LINE)
        assert s.tail_is_time and s.status == "ok"
        assert (s.marker, s.version_token, s.component, s.operation, s.op_class) == (
            "mkldnn_verbose", "", "", "exec", "exec")
        assert s.layout == "v0.x"
        assert fields(s) == {
            "engine": "", "kind": "reorder", "impl": "jit:uni", "prop_kind": "undef",
            "mds": "in:f32_nchw out:f32_nChw8c", "attrs": "", "aux": "num:1", "problem": "2x16x7x7",
        }
        assert s.dims == {"t0": "2x16x7x7"}
        assert s.dtype == "f32"
        assert [(m["arg"], m["dt"], m["tag"]) for m in s.md_list] == [("in", "f32", "nchw"), ("out", "f32", "nChw8c")]

    def test_convolution_with_v0_descriptors(self):
        s = shape_of(
            "mkldnn_verbose,exec,convolution,jit:avx2,forward_training,fsrc:nChw8c fwei:OIhw8i8o fbia:x "
            "fdst:nChw8c,alg:convolution_direct,mb2_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2,0.0241699"
        )
        assert s.layout == "v0.x" and s.kind == "convolution" and s.prop_kind == "forward_training"
        assert s.alg == "convolution_direct"
        assert s.dims["mb"] == "2" and s.dims["kh"] == "5" and s.dims["pw"] == "2"
        assert [m["arg"] for m in s.md_list] == ["fsrc", "fwei", "fbia", "fdst"]
        assert s.md_list[0]["tag"] == "nChw8c"

    def test_plain_create(self):
        s = shape_of(
            "mkldnn_verbose,create,reorder,jit:uni,undef,in:f32_oihw out:f32_Ohwi16o,num:1,64x3x11x11,0.0249023"
        )
        assert s.tail_is_time and s.operation == "create" and s.op_class == "create" and s.layout == "v0.x"
        assert s.kind == "reorder" and s.problem == "64x3x11x11"

    def test_untimed_v0_line(self):
        line = "mkldnn_verbose,exec,convolution,gemm:jit,backward_weights,fsrc:nchw fwei:goihw fbia:undef fdst:nchw," \
               "alg:convolution_direct,mb128_g32ic256oc256_ih28oh28kh3sh1dh0ph1_iw28ow28kw3sw1dw0pw1"
        key = line.rsplit(",", 1)[0]
        assert not g.parse_shape(key).tail_is_time
        s = g.parse_shape(line, whole=True)
        assert s.status == "ok" and s.layout == "v0.x" and s.op_class == "exec"
        assert s.problem.startswith("mb128_g32") and s.dims["g"] == "32"


# --------------------------------------------------------------------------- v1.0
class TestMkldnnV10:
    def test_engine_without_attrs(self):
        s = shape_of(
            "mkldnn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0,"
            "num:1,2x16x7x7,0.468994"
        )
        assert s.layout == "v1.0" and s.tail_is_time
        assert fields(s) == {
            "engine": "cpu", "kind": "reorder", "impl": "jit:uni", "prop_kind": "undef",
            "mds": "src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0", "attrs": "", "aux": "num:1",
            "problem": "2x16x7x7",
        }

    def test_gpu_exec_without_time(self):
        # MKL-DNN v1.0 printed GPU exec lines without a time below verbose level 4
        line = ("mkldnn_verbose,exec,gpu,convolution,ocl:ref:any,forward_training,src_f32::blocked:abcd:f0 "
                "dst_f32::blocked:abcd:f0,alg:convolution_direct,mb1_ic3oc8_ih5oh5kh1sh1dh0ph0_iw5ow5kw1sw1dw0pw0")
        s = shape_of(line)
        assert s.status == "ok" and not s.tail_is_time
        assert s.layout == "v1.0" and s.engine == "gpu" and s.kind == "convolution"
        assert s.problem == "mb1_ic3oc8_ih5oh5kh1sh1dh0ph0_iw5ow5kw1sw1dw0pw0"


# --------------------------------------------------------------------------- dnnl v1.x / v2
class TestDnnl:
    def test_v1_with_old_attribute_syntax(self):
        s = shape_of(
            "dnnl_verbose,exec,cpu,convolution,jit:avx512_common,forward_training,src_f32::blocked:abcd:f0 "
            "wei_f32::blocked:Acdb16a:f0 bia_undef::undef::f0 dst_f32::blocked:aBcd16b:f0,scratchpad_mode:user;,"
            "alg:convolution_direct,mb32_ic3oc64_ih224oh112kh7sh2dh0ph3_iw224ow112kw7sw2dw0pw3,28.7791"
        )
        assert s.layout == "v1.1+" and s.tail_is_time
        assert s.engine == "cpu" and s.kind == "convolution" and s.impl == "jit:avx512_common"
        assert s.attrs == "scratchpad_mode:user;"
        assert s.aux == "alg:convolution_direct" and s.alg == "convolution_direct"
        assert s.dims["ih"] == "224" and s.dims["oh"] == "112" and s.dims["sh"] == "2"
        assert [m["arg"] for m in s.md_list] == ["src", "wei", "bia", "dst"]
        bia = s.md_list[2]
        assert bia["dt"] == "undef" and bia["format_kind"] == "undef"

    def test_post_ops_attribute_with_quotes(self):
        s = shape_of(
            "dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_inference,src_f32::blocked:aBcd8b:f0 "
            "dst_f32::blocked:aBcd8b:f0,post_ops:'eltwise_relu;';,alg:convolution_direct,"
            "mb1_ic8oc8_ih5oh5kh3sh1dh0ph1_iw5ow5kw3sw1dw0pw1,0.01"
        )
        assert s.attrs == "post_ops:'eltwise_relu;';"
        assert s.prop_kind == "forward_inference"

    def test_cache_miss_and_hit(self):
        base = "dnnl_verbose,{op},cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:Acdb16a:f0,,,64x3x7x7,0.214111"
        miss = shape_of(base.format(op="create:cache_miss"))
        hit = shape_of(base.format(op="create:cache_hit"))
        for s, op in ((miss, "create:cache_miss"), (hit, "create:cache_hit")):
            assert s.operation == op and s.op_class == "create" and s.tail_is_time
            assert s.attrs == "" and s.aux == "" and s.problem == "64x3x7x7"

    def test_v2_timestamp_is_stripped_before_the_grammar(self):
        line = ("dnnl_verbose,1607393146348.667969,exec,cpu,reorder,jit:blk,undef,src_f32::blocked:abcd:f0 "
                "dst_f32::blocked:aBcd8b:f0,,,2x16x7x7,3.58594")
        without = line.replace(",1607393146348.667969", "")
        assert strip_ts(line) == without
        s = shape_of(line)
        assert s.layout == "v1.1+" and s.kind == "reorder" and s.impl == "jit:blk" and s.problem == "2x16x7x7"
        # and the grammar itself also accepts the timestamp where the importer would cut it
        with_ts = g.parse_shape(line.rsplit(",", 1)[0])
        assert with_ts.tail_is_time and fields(with_ts) == fields(s)

    def test_prim_template_info(self):
        s = shape_of(
            "dnnl_verbose,info,prim_template:timestamp,operation,engine,primitive,implementation,prop_kind,"
            "memory_descriptors,attributes,auxiliary,problem_desc,exec_time"
        )
        assert s.op_class == "info" and s.info_kind == "template"
        assert s.detail.startswith("prim_template:timestamp,operation")


# --------------------------------------------------------------------------- oneDNN v2.5 .. v3.x
class TestOnednn:
    def test_v25_without_component(self):
        s = shape_of("onednn_verbose,exec,cpu,reorder,jit:blk,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0,,,2x16x7x7,0.5")
        assert s.marker == "onednn_verbose" and s.component == "" and s.version_token == ""
        assert s.layout == "v1.1+" and s.kind == "reorder" and s.tail_is_time

    def test_v32_component_token(self):
        line = ("onednn_verbose,1693533460272.561035,primitive,exec,cpu,convolution,jit:avx512_core,forward_training,"
                "src_f32:a:blocked:aBcd16b::f0 wei_f32:a:blocked:ABcd16b16a::f0 bia_f32:a:blocked:a::f0 "
                "dst_f32:a:blocked:aBcd16b::f0,,alg:convolution_direct,mb2_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2,0.0878906")
        s = shape_of(line)
        assert s.component == "primitive" and s.operation == "exec" and s.op_class == "exec"
        assert s.layout == "v1.1+" and s.engine == "cpu" and s.kind == "convolution"
        assert s.md_list[0] == {"arg": "src", "dt": "f32", "props": "a", "format_kind": "blocked",
                                "tag": "aBcd16b", "strides": "", "flags": "f0", "extra": ""}
        assert s.dims["ic"] == "16" and s.dims["kw"] == "5"

    def test_v36_version_token_and_colon_descriptors(self):
        line = ("onednn_verbose,v1,primitive,exec,gpu:0,matmul,jit:gemm:any,undef,src:f16::blocked:ab::f0 "
                "wei:s8::blocked:ba::f0 bia:f16::blocked:ab::f0_mask2 dst:f16::blocked:ab::f0,attr-scratchpad:user "
                "attr-fpmath:f16:true attr-scales:wei:2:f16 attr-post-ops:binary_add:f16:3:ab+eltwise_relu,,"
                "256x256:256x256,0.732178")
        s = shape_of(line)
        assert s.version_token == "v1" and s.component == "primitive"
        assert s.engine == "gpu:0" and s.kind == "matmul" and s.impl == "jit:gemm:any"
        assert s.attrs.startswith("attr-scratchpad:user ") and s.attrs.endswith("+eltwise_relu")
        assert s.aux == "" and s.problem == "256x256:256x256"
        assert s.dims == {"t0": "256x256", "t1": "256x256"}
        assert [(m["arg"], m["dt"], m["tag"]) for m in s.md_list] == [
            ("src", "f16", "ab"), ("wei", "s8", "ba"), ("bia", "f16", "ab"), ("dst", "f16", "ab")]
        assert s.md_list[2]["flags"].startswith("f0")
        assert "mask2" in s.md_list[2]["flags"] + s.md_list[2]["extra"]
        assert s.dtype == "f16"

    def test_v36_with_timestamp_after_version_token(self):
        line = ("onednn_verbose,v1,1795335013652.939941,primitive,exec,cpu,reorder,jit:uni,undef,"
                "src:f32::blocked:abcd::f0 dst:f32::blocked:aBcd16b::f0,,,2x16x7x7,0.01")
        assert strip_ts(line).startswith("onednn_verbose,v1,primitive,exec,")
        s = shape_of(line)
        assert s.version_token == "v1" and s.kind == "reorder" and s.tail_is_time

    @pytest.mark.parametrize("engine", ["cpu", "gpu", "gpu:0", "gpu:1", "cpu2gpu", "gpu2cpu", "cpu:0"])
    def test_engines(self, engine):
        s = shape_of(f"onednn_verbose,primitive,exec,{engine},reorder,ocl:ref:any,undef,"
                     "src_f32::blocked:abcd::f0 dst_f32::blocked:abcd::f0,,,2x16x7x7,0.1")
        assert s.engine == engine and s.layout == "v1.1+" and s.kind == "reorder"

    @pytest.mark.parametrize("op", ["create:cache_miss", "create:cache_hit", "create:from_cache_blob",
                                    "create:persistent_cache_hit"])
    def test_timed_creates(self, op):
        s = shape_of(f"onednn_verbose,primitive,{op},cpu,reorder,jit:uni,undef,src_f32::blocked:a::f0 "
                     "dst_f32::blocked:a::f0,,,16,0.0358887")
        assert s.operation == op and s.op_class == "create" and s.tail_is_time
        assert s.problem == "16" and s.dims == {"t0": "16"}

    def test_create_nested(self):
        s = shape_of("onednn_verbose,v1,primitive,create_nested:cache_miss,cpu,reorder,jit:blk,undef,"
                     "src:f32::blocked:abcd::f0 dst:f32::blocked:aBcd8b::f0,,,2x16x7x7,0.02")
        assert s.operation == "create_nested:cache_miss" and s.op_class == "create_nested"
        assert s.kind == "reorder" and s.tail_is_time

    def test_create_check(self):
        line = ("onednn_verbose,primitive,create:check,matmul,dimension src:1 is inconsistent with weights:0,"
                "src/common/matmul.cpp:144")
        assert not g.parse_shape(line.rsplit(",", 1)[0]).tail_is_time
        s = shape_of(line)
        assert s.op_class == "check" and s.operation == "create:check" and s.status == "ok"
        assert s.kind == "matmul"
        assert s.detail == "matmul,dimension src:1 is inconsistent with weights:0,src/common/matmul.cpp:144"

    def test_check_message_with_commas_and_windows_path(self):
        s = shape_of(r"onednn_verbose,v1,primitive,exec:check,matmul,runtime dims, strides, not supported,"
                     r"src\common\primitive_exec_types.cpp:74")
        assert s.op_class == "check" and s.kind == "matmul"
        assert s.detail.endswith(r"src\common\primitive_exec_types.cpp:74")

    def test_create_dispatch(self):
        s = shape_of(
            "onednn_verbose,primitive,create:dispatch,matmul,cpu,matmul,brg:avx512_core_amx,undef,"
            "src_u8:a:any:any::f0 wei_s8:a:any:any::f0 dst_f32:a:any:any::f0,,,256x256:256x256,unsupported isa,"
            "src/cpu/x64/matmul/brgemm_matmul.cpp:97"
        )
        assert s.op_class == "dispatch" and s.operation == "create:dispatch" and s.status == "ok"
        assert s.kind == "matmul" and s.engine == "cpu" and s.impl == "brg:avx512_core_amx"
        assert s.prop_kind == "undef" and s.problem == "256x256:256x256"
        assert "unsupported isa" in s.detail

    def test_unknown_primitive_kind_is_kept(self):
        s = shape_of("onednn_verbose,v1,primitive,exec,cpu,gated_mlp_v7,ref:any,forward_inference,"
                     "src:f32::blocked:abc::f0,,,1x2x3,0.5")
        assert s.kind == "gated_mlp_v7" and s.op_class == "exec" and s.tail_is_time

    def test_ukernel_component(self):
        s = shape_of("onednn_verbose,v1,ukernel,exec,cpu,brgemm,jit:avx512_core,undef,src:f32::blocked:ab::f0,,,16x16:16x16,0.001")
        assert s.component == "ukernel" and s.kind == "brgemm" and s.op_class == "exec"

    def test_error_and_warn_lines(self):
        e = shape_of("onednn_verbose,common,error,filter format is ill-formed, check ONEDNN_VERBOSE")
        assert e.op_class == "error" and e.component == "common"
        assert e.detail == "filter format is ill-formed, check ONEDNN_VERBOSE"
        w = shape_of("onednn_verbose,v1,primitive,warn,something odd")
        assert w.op_class == "warn"


# --------------------------------------------------------------------------- info lines
class TestInfo:
    @pytest.mark.parametrize(
        "line,kind",
        [
            ("mkldnn_verbose,info,Intel(R) MKL-DNN v0.18.0 (Git Hash 4cfed5bf82f1339d7c8c7f622fda02dc00ec8ad8),"
             "Intel(R) Advanced Vector Extensions 2 (Intel(R) AVX2)", "version"),
            ("mkldnn_verbose,info,Intel MKL-DNN v0.21.1 (commit 7d2fd500bc78936d1d648ca713b901012f470dbc)", "version"),
            ("mkldnn_verbose,info,Detected ISA is Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions", "isa"),
            ("dnnl_verbose,info,DNNL v1.3.0 (commit d0fc158e98590dfad0165e568ca466876a794597)", "version"),
            ("dnnl_verbose,info,cpu,runtime:OpenMP", "runtime"),
            ("dnnl_verbose,info,cpu,isa:Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions", "isa"),
            ("dnnl_verbose,info,gpu,runtime:none", "runtime"),
            ("onednn_verbose,info,oneDNN v3.2.0 (commit N/A)", "version"),
            ("onednn_verbose,info,cpu,runtime:OpenMP,nthr:128", "runtime"),
            ("onednn_verbose,info,gpu,engine,0,backend:Level Zero,name:Intel(R) Data Center GPU Max 1100,"
             "driver_version:1.3.26516,binary_kernels:enabled", "gpu_engine"),
            ("onednn_verbose,v1,info,gpu,engine,opencl device count:1", "gpu_engine"),
            ("onednn_verbose,info,graph,backend,0:dnnl_backend", "graph_backend"),
            ("onednn_verbose,v1,info,oneDNN v3.7.1 (commit N/A)", "version"),
            ("onednn_verbose,primitive,info,template:operation,engine,primitive,implementation,prop_kind,"
             "memory_descriptors,attributes,auxiliary,problem_desc,exec_time", "template"),
            ("onednn_verbose,v1,graph,info,template:timestamp,operation,engine,partition_id,partition_kind,op_names,"
             "data_formats,logical_tensors,fpmath_mode,implementation,backend,exec_time", "template"),
        ],
    )
    def test_info_kinds(self, line, kind):
        s = shape_of(line)
        assert s.op_class == "info" and s.operation == "info" and s.status == "ok"
        assert s.info_kind == kind
        # the detail is the whole free text after "info", commas included
        assert s.detail == strip_ts(line).split(",info,", 1)[1]

    def test_info_version_and_isa(self):
        v018 = ("Intel(R) MKL-DNN v0.18.0 (Git Hash 4cfed5bf82f1339d7c8c7f622fda02dc00ec8ad8),"
                "Intel(R) Advanced Vector Extensions 2 (Intel(R) AVX2)")
        assert g.info_version(v018)[0] == "Intel(R) MKL-DNN v0.18.0"
        assert g.info_isa(v018) == "Intel(R) Advanced Vector Extensions 2 (Intel(R) AVX2)"
        assert g.info_version("DNNL v1.3.0 (commit d0fc158e)")[0] == "DNNL v1.3.0"
        assert g.info_version("oneDNN v3.2.0 (commit N/A)")[0] == "oneDNN v3.2.0"
        assert g.info_version("Intel MKL-DNN v0.21.1 (commit 7d2fd500)")[0] == "Intel MKL-DNN v0.21.1"
        assert g.info_version("cpu,runtime:OpenMP") is None
        assert g.info_isa("cpu,isa:Intel AVX2") == "Intel AVX2"
        assert g.info_isa("Detected ISA is Intel AVX-512") == "Intel AVX-512"
        assert g.info_isa("gpu,runtime:none") is None


# --------------------------------------------------------------------------- graph lines
class TestGraph:
    LINE = ("onednn_verbose,v1,graph,exec,gpu:0,100005,sdp,MatMul:{id:0,attrs:{transpose_b:1},inputs:{f16:1,f16:2},"
            "outputs:{f32:101}};SoftMax:{id:1,attrs:{axis:-1,mode:inf_as_zero},inputs:{f32:101},outputs:{f16:102}},,"
            "in0_f16:1:strided:undef:1x4x128x32:16384s4096s32s1 out0_f16:4:strided:undef:1x4x128x32:16384s4096s32s1,"
            "fpm:strict,sdp_primitive_v1_kernel_t,dnnl_backend,0.226074")

    def test_graph_exec_with_brace_groups(self):
        s = shape_of(self.LINE)
        assert s.component == "graph" and s.operation == "exec" and s.op_class == "graph_exec"
        assert s.status == "ok"
        assert s.engine == "gpu:0"
        assert s.kind == "sdp"
        # the {...} groups hold commas: they must not shift the fields taken from the right
        assert "SoftMax:{id:1,attrs:{axis:-1,mode:inf_as_zero}" in s.detail
        assert s.impl == "sdp_primitive_v1_kernel_t"

    def test_graph_exec_is_not_a_primitive_line(self):
        s = shape_of(self.LINE)
        assert s.op_class not in ("exec", "create", "create_nested", "check", "dispatch")

    def test_graph_compile(self):
        s = shape_of("onednn_verbose,graph,compile,cpu,100002,sdp,mha,in0_f32:0:strided:undef:1x2,fpmath:strict,"
                     "larger_partition_kernel_t,dnnl_backend,12.5")
        assert s.op_class == "graph_compile" and s.engine == "cpu" and s.kind == "sdp"


# --------------------------------------------------------------------------- bad lines
class TestBadLines:
    def test_truncated(self):
        s = g.parse_shape("dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,", whole=True)
        assert s.status == "truncated"
        assert s.kind == "convolution" and s.layout == "v1.1+"
        assert s.reason == "truncated: 5 fields after the operation, layout v1.1+ needs 8 (+1 time)"

    def test_marker_only_is_truncated(self):
        s = g.parse_shape("dnnl_verbose", whole=True)
        assert s.status == "truncated"

    def test_operation_only_is_truncated(self):
        s = g.parse_shape("onednn_verbose,primitive,exec", whole=True)
        assert s.status == "truncated"

    def test_extra_fields_are_malformed(self):
        s = g.parse_shape("dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:a:f0,,,16,1.0,extra", whole=True)
        assert s.status == "malformed" and s.kind == "reorder"

    def test_non_numeric_time_is_malformed(self):
        s = g.parse_shape("dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:a:f0,,,16,fast", whole=True)
        assert s.status == "malformed"
        assert "fast" in s.reason

    @pytest.mark.parametrize("layout,line", [
        ("v0.x", "mkldnn_verbose,exec,reorder,jit:uni,undef,in:f32_x out:f32_x,num:1,16"),
        ("v1.0", "mkldnn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:a:f0 dst_f32::blocked:a:f0,num:1,16"),
        ("v1.1+", "dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:a:f0 dst_f32::blocked:a:f0,,,16"),
    ])
    def test_untimed_lines_are_ok(self, layout, line):
        assert not g.parse_shape(line.rsplit(",", 1)[0]).tail_is_time
        s = g.parse_shape(line, whole=True)
        assert s.status == "ok" and s.layout == layout and s.problem == "16" and s.op_class == "exec"


# --------------------------------------------------------------------------- memory descriptors
MD = g.MemoryDescriptor


@pytest.mark.parametrize(
    "text,expected",
    [
        # v0.x
        ("fsrc:nChw8c", MD(arg="fsrc", tag="nChw8c")),
        ("in:f32_nchw", MD(arg="in", dt="f32", tag="nchw")),
        ("out:f32_OIhw8i8o", MD(arg="out", dt="f32", tag="OIhw8i8o")),
        ("fdiff:undef", MD(arg="fdiff", tag="undef")),
        # v1.x: arg_dt:props:format_kind:tag:flags
        ("src_f32::blocked:aBcd8b:f0", MD(arg="src", dt="f32", format_kind="blocked", tag="aBcd8b", flags="f0")),
        ("bia_undef::undef::f0", MD(arg="bia", dt="undef", format_kind="undef", flags="f0")),
        ("diff_src_f32::blocked:abcd:f0", MD(arg="diff_src", dt="f32", format_kind="blocked", tag="abcd", flags="f0")),
        # v3.x: arg_dt:props:format_kind:tag:strides:flags[:extras]
        ("src_f32:a:blocked:aBcd16b::f0", MD(arg="src", dt="f32", props="a", format_kind="blocked", tag="aBcd16b", flags="f0")),
        ("diff_dst_bf16:p:blocked:aBcd16b::f0",
         MD(arg="diff_dst", dt="bf16", props="p", format_kind="blocked", tag="aBcd16b", flags="f0")),
        ("src_f32::blocked:abcd:1024s32s8s1:f0",
         MD(arg="src", dt="f32", format_kind="blocked", tag="abcd", strides="1024s32s8s1", flags="f0")),
        ("wei_s8:a:blocked:AB16b64a4b::f0:s8m1:zpm2",
         MD(arg="wei", dt="s8", props="a", format_kind="blocked", tag="AB16b64a4b", flags="f0", extra="s8m1:zpm2")),
        ("src_u8:a:any:any::f0", MD(arg="src", dt="u8", props="a", format_kind="any", tag="any", flags="f0")),
        ("src_f8_e5m2::blocked:ab::f0", MD(arg="src", dt="f8_e5m2", format_kind="blocked", tag="ab", flags="f0")),
        # v3.6+: arg:dt:props:format_kind:tag:strides:flags
        ("src:f32::blocked:abcd::f0", MD(arg="src", dt="f32", format_kind="blocked", tag="abcd", flags="f0")),
        ("diff_src:f32::blocked:abcd::f0", MD(arg="diff_src", dt="f32", format_kind="blocked", tag="abcd", flags="f0")),
        ("dst:u8:o:blocked:acdb::f0", MD(arg="dst", dt="u8", props="o", format_kind="blocked", tag="acdb", flags="f0")),
        ("src:f8_e4m3::blocked:ab::f0", MD(arg="src", dt="f8_e4m3", format_kind="blocked", tag="ab", flags="f0")),
        ("bia:undef::undef:::", MD(arg="bia", dt="undef", format_kind="undef")),
    ],
)
def test_memory_descriptor(text, expected):
    assert g.parse_memory_descriptor(text) == expected


def test_memory_descriptor_mask_suffix():
    md = g.parse_memory_descriptor("bia:f16::blocked:ab::f0_mask2")
    assert (md.arg, md.dt, md.format_kind, md.tag) == ("bia", "f16", "blocked", "ab")
    assert md.flags.startswith("f0") and "mask2" in md.flags + md.extra


def test_memory_descriptor_sparse():
    md = g.parse_memory_descriptor("src:f32::sparse:grouped:2:4::f0")
    assert (md.arg, md.dt, md.format_kind, md.flags) == ("src", "f32", "sparse", "f0")


def test_parse_mds_list_and_empty():
    mds = g.parse_mds("src_f32::blocked:abcd:f0 wei_f32::blocked:Acdb16a:f0 bia_undef::undef::f0 dst_f32::blocked:aBcd16b:f0")
    assert [m.arg for m in mds] == ["src", "wei", "bia", "dst"]
    assert g.parse_mds("") == ()


# --------------------------------------------------------------------------- problems, aux, attrs
@pytest.mark.parametrize(
    "text,expected",
    [
        ("mb2_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2",
         dict(mb="2", ic="16", oc="16", ih="7", oh="7", kh="5", sh="1", dh="0", ph="2",
              iw="7", ow="7", kw="5", sw="1", dw="0", pw="2")),
        ("mb128_g32ic256oc256_ih28oh28kh3sh1dh0ph1_iw28ow28kw3sw1dw0pw1",
         dict(mb="128", g="32", ic="256", oc="256", ih="28", oh="28", kh="3", sh="1", dh="0", ph="1",
              iw="28", ow="28", kw="3", sw="1", dw="0", pw="1")),
        ("mb1_ic16oc16_id8od8kd3sd1dd0pd1_ih8oh8kh3sh1dh0ph1_iw8ow8kw3sw1dw0pw1",
         dict(mb="1", ic="16", oc="16", id="8", od="8", kd="3", sd="1", dd="0", pd="1",
              ih="8", oh="8", kh="3", sh="1", dh="0", ph="1", iw="8", ow="8", kw="3", sw="1", dw="0", pw="1")),
        ("2x16x7x7", {"t0": "2x16x7x7"}),
        ("16", {"t0": "16"}),
        ("256x256:256x256", {"t0": "256x256", "t1": "256x256"}),
        ("2x3x4:4x5:2x5", {"t0": "2x3x4", "t1": "4x5", "t2": "2x5"}),
        ("mb2ic1oc1", {"mb": "2", "ic": "1", "oc": "1"}),
        ("mb1ic96ih55iw55ls5beta0.75", {"mb": "1", "ic": "96", "ih": "55", "iw": "55", "ls": "5", "beta": "0.75"}),
        ("", {}),
        ("not a problem", {}),
    ],
)
def test_parse_problem(text, expected):
    assert g.parse_problem(text) == expected


def test_parse_aux_and_attrs():
    assert g.parse_aux("alg:eltwise_relu alpha:0 beta:0") == (("alg", "eltwise_relu"), ("alpha", "0"), ("beta", "0"))
    assert g.parse_aux("num:1") == (("num", "1"),)
    assert g.parse_aux("") == ()
    assert g.parse_attrs("attr-scratchpad:user attr-post-ops:binary_add:f16:3:ab+eltwise_relu") == (
        "attr-scratchpad:user", "attr-post-ops:binary_add:f16:3:ab+eltwise_relu")
    assert g.parse_attrs("") == ()


def test_eltwise_alg_and_lrn_problem_in_a_line():
    s = shape_of("dnnl_verbose,exec,cpu,lrn,jit:avx2,forward_training,data_f32::blocked:aBcd8b:f0 "
                 "ws_f32::blocked:aBcd8b:f0,,alg:lrn_across_channels,mb1ic96ih55iw55ls5beta0.75,0.1")
    assert s.kind == "lrn" and s.alg == "lrn_across_channels" and s.dims["beta"] == "0.75"
    e = shape_of("onednn_verbose,primitive,exec,cpu,eltwise,jit:avx2,forward_training,data_f32::blocked:abcd::f0 "
                 "diff_undef::undef:::,,alg:eltwise_relu alpha:0 beta:0,2x16x7x7,0.003")
    assert e.kind == "eltwise" and e.alg == "eltwise_relu" and e.aux == "alg:eltwise_relu alpha:0 beta:0"
    assert [m["arg"] for m in e.md_list] == ["data", "diff"]


_PROBLEM_TEXT = st.lists(st.sampled_from(["mb", "ic", "g", "beta", "2", "16", "0.75", "-3", "e5", "e-2", "x", ":",
                                          "_", "*", "?", " ", "\n", "\t", "\r", ".", "ls", "a1"]),
                          min_size=1, max_size=9).map("".join)


@given(st.one_of(_PROBLEM_TEXT, st.text(max_size=30)))
@settings(max_examples=400, deadline=None)
def test_problem_descriptors_match_pyparsing(text):
    """``parse_problem`` matches the two alternatives' regexes directly: the same parts as
    pyparsing's ``parse_string`` of the whole descriptor (whitespace around it included)."""
    try:
        res = g._problem_whole.parse_string(text)
    except pp.ParseException:
        want = None
    else:
        name = "named" if "named" in res else "shapes"
        want = (name, [list(x) if isinstance(x, list) else x for x in res[name]])
    got = g._problem_parts(text)
    assert (None if got is None else (got[0], list(got[1]))) == want


_LEAD_TEXT = st.lists(st.sampled_from(["onednn_verbose", "dnnl_verbose", "mkldnn_verbose", "v1", "v", "12.5", "3.",
                                       "primitive", "graph", "exec", "create:cache_miss", "info", "", " ", "\n",
                                       "\r", "x,y", "cpu"]), min_size=1, max_size=7).map(",".join)


@given(st.one_of(_LEAD_TEXT, st.text(max_size=40), _LEAD_TEXT.map(lambda t: " " + t), _LEAD_TEXT.map(lambda t: t + "\n")))
@settings(max_examples=300, deadline=None)
def test_leading_fields_match_pyparsing(text):
    """``parse_shape`` matches the leading fields' regex directly: the same groups as
    pyparsing's ``parse_string(parse_all=True)``, and pyparsing's own error where it fails."""
    got = g._leading(text)
    try:
        want = g.leading_fields.parse_string(text, parse_all=True)
    except pp.ParseException as exc:
        assert isinstance(got, pp.ParseException) and got.msg == exc.msg
        return
    assert not isinstance(got, pp.ParseException)
    for name in ("marker", "version", "timestamp", "component", "operation", "rest"):
        assert got.get(name) == want.get(name), name


def _sample_keys() -> list[str]:
    """Every verbose line of the shipped samples without its last field."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "samples" / "onednn"
    lines = (line for path in sorted(root.glob("*.log")) for line in path.read_text().splitlines())
    return sorted({line.rsplit(",", 1)[0] for line in lines if g.starts_with_marker(line) and "," in line})


_KEYS = _sample_keys()
_LAST_FIELD = st.one_of(st.text(alphabet="mbicodhwgx0123456789:_*?.e- \t", max_size=24),
                        st.text(max_size=12).filter(lambda t: "," not in t))


@given(st.sampled_from(_KEYS), _LAST_FIELD)
@settings(max_examples=500, deadline=None)
def test_shapes_that_differ_in_the_last_field_only_parse_as_a_whole(key, last):
    """``parse_shape`` reads the fields before a profiling line's problem descriptor once per
    text (cached) and the descriptor apart: the same shape as every field read, for any last
    field after any sample line's fields."""
    text = key + "," + last
    assert g.parse_shape(text) == g._parse_shape(text, False)


def test_a_shape_changed_by_its_caller_does_not_change_the_next():
    key = "onednn_verbose,primitive,exec,cpu,eltwise,jit:avx2,forward_training,data_f32::blocked:abcd::f0,,alg:eltwise_relu,"
    first = g.parse_shape(key + "2x16x7x7")
    first.kind = "changed"
    assert g.parse_shape(key + "3x16x7x7").kind == "eltwise"
