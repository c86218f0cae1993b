#!/usr/bin/env python3
"""Generate a large, realistic oneDNN v3.x verbose log for benchmarks.

    python scripts/gen_onednn_log.py --size 1G --out bench-data/onednn_1G.log --seed 1

What the file looks like (oneDNN v3.6+ ``v1`` dialect, as PyTorch / IPEX prints it with
``ONEDNN_VERBOSE=profile``):

* several *runs* of the same application, one after the other (as when a job script runs a
  benchmark a few times into one file).  Each run starts with some application output, then
  the oneDNN header (``info`` version/runtime/isa/gpu/graph lines and the two templates).
  Runs alternate ``ONEDNN_VERBOSE_TIMESTAMP=1`` (``onednn_verbose,v1,<ts>,primitive,...``)
  and no timestamps (``onednn_verbose,v1,primitive,...``) with ``--timestamps mixed``;
* a workload mix: ResNet-50 inference (fp32 with fused post-ops, int8) at several batch
  sizes, ResNet-50 training steps (forward, backward data, backward weights) and BERT-base
  inference at several batch sizes and sequence lengths: convolution, reorder, matmul,
  inner_product, eltwise, pooling, batch_normalization, layer_normalization, softmax,
  binary and sum, about 1,400 distinct primitive descriptors;
* ``create:cache_miss`` the first time a primitive is used in a run, ``create:cache_hit``
  before a share of later executions (``--cache-hit-rate``), weight reorders once per run;
* interleaved application output: Python ``logging`` lines, warnings, and tqdm progress
  bars (``\\r``-separated updates with Unicode block characters, so the file is not pure
  ASCII; ``--ascii`` replaces them);
* times printed with ``%g`` (6 significant digits; short ones on the timer's 1/1024 ms grid,
  so ``0.000976562`` and ``0`` occur, as in real logs), timestamps with ``%.6f``.

It writes ``<out>.json`` beside the log with the exact figures it generated: per kind the
exec count and exec time sum (``math.fsum`` of the values exactly as printed), create
counts and sums, cache hits/misses, line counts, distinct shapes, and the awk field
numbers of the dialects it used, so a benchmark can check any tool's totals.

Deterministic: the same arguments (``--seed`` included) give the same bytes.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

GENERATOR_VERSION = 2
MARKER = "onednn_verbose,v1,"
#: awk fields (-F,) of a primitive line: (operation field, kind field); $NF is the time
AWK_FIELDS = {"timestamps": (5, 7), "no_timestamps": (4, 6)}

KINDS = (
    "convolution", "reorder", "matmul", "inner_product", "eltwise", "pooling",
    "batch_normalization", "layer_normalization", "softmax", "binary", "sum",
)


def parse_size(text: str) -> int:
    """``1G`` = 2**30 bytes, ``512M``, ``100K``, or a plain number of bytes."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if t and t[-1] in mult:
        return int(float(t[:-1]) * mult[t[-1]])
    return int(t)


# --------------------------------------------------------------------------- primitive shapes
@dataclass(frozen=True)
class Prim:
    kind: str
    impl: str
    prop: str
    mds: str
    attrs: str
    aux: str
    problem: str
    exec_ms: float  # mean execution time
    create_ms: float  # mean cache-miss creation time

    def body(self, op: str) -> str:
        """The line after the timestamp, up to and including the comma before the time."""
        return (
            f"primitive,{op},cpu,{self.kind},{self.impl},{self.prop},{self.mds},{self.attrs},"
            f"{self.aux},{self.problem},"
        )


def md(arg: str, dt: str, tag: str, props: str = "", fmt: str = "blocked") -> str:
    return f"{arg}:{dt}:{props}:{fmt}:{tag}::f0"


UNDEF = "undef::undef:::f0"
GFLOPS = 9e10  # fp32 flop/s of the simulated 2-core AVX-512 machine
BW = 1.2e10  # bytes/s


def t_compute(flops: float, speedup: float = 1.0) -> float:
    return 0.004 + flops / (GFLOPS * speedup) * 1e3


def t_memory(nbytes: float) -> float:
    return 0.002 + nbytes / BW * 1e3


def conv_problem(mb, ic, oc, ih, oh, k, s, p, iw=None, ow=None):
    iw = ih if iw is None else iw
    ow = oh if ow is None else ow
    return (
        f"mb{mb}_ic{ic}oc{oc}_ih{ih}oh{oh}kh{k}sh{s}dh0ph{p}_iw{iw}ow{ow}kw{k}sw{s}dw0pw{p}"
    )


def resnet50_convs():
    """(name, ic, oc, ih, oh, k, s, p) of every ResNet-50 convolution, in order, with the
    index of the block output it adds (residual) marked by ``last``."""
    layers = [("conv1", 3, 64, 224, 112, 7, 2, 3, False, False)]
    ih = 56
    ic = 64
    for stage, (blocks, mid) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)]):
        out = mid * 4
        for b in range(blocks):
            s = 2 if (b == 0 and stage > 0) else 1
            oh = ih // s
            layers.append((f"s{stage}b{b}c1", ic, mid, ih, ih, 1, 1, 0, False, False))
            layers.append((f"s{stage}b{b}c2", mid, mid, ih, oh, 3, s, 1, False, False))
            if b == 0:
                layers.append((f"s{stage}b{b}ds", ic, out, ih, oh, 1, s, 0, False, True))
            layers.append((f"s{stage}b{b}c3", mid, out, oh, oh, 1, 1, 0, True, False))
            ic, ih = out, oh
    return layers


class Library:
    """Distinct primitives, and per workload config the exec sequence of one iteration."""

    def __init__(self) -> None:
        self.prims: list[Prim] = []
        self.index: dict[Prim, int] = {}
        #: name -> (prologue shape ids (once per run), iteration shape ids)
        self.configs: dict[str, tuple[list[int], list[int]]] = {}
        self._build()

    def add(self, p: Prim) -> int:
        i = self.index.get(p)
        if i is None:
            i = self.index[p] = len(self.prims)
            self.prims.append(p)
        return i

    # ------------------------------------------------------------------ ResNet-50
    def _resnet_infer(self, mb: int, int8: bool) -> None:
        dt_s, dt_w, dt_d = ("u8", "s8", "u8") if int8 else ("f32", "f32", "f32")
        speed = 3.0 if int8 else 1.0
        isa = "avx512_core_vnni" if int8 else "avx512_core"
        pro: list[int] = []
        seq: list[int] = []
        seq.append(self.add(Prim(
            "reorder", "jit:uni", "undef",
            f"{md('src', 'f32', 'abcd')} {md('dst', dt_s, 'acdb')}",
            "attr-scratchpad:user" + (" attr-scales:dst:0:f32" if int8 else ""), "",
            f"{mb}x3x224x224", t_memory(mb * 3 * 224 * 224 * 8), 0.05)))
        for name, ic, oc, ih, oh, k, s, p, last, ds in resnet50_convs():
            wtag = "AcdB16b16a4b" if int8 else ("Acdb16a" if k > 1 else "BA16a64b")
            pro.append(self.add(Prim(
                "reorder", "jit:blk" if k > 1 else "jit:uni", "undef",
                f"{md('src', 'f32', 'abcd')} {md('dst', dt_w, wtag)}",
                "attr-scratchpad:user" + (" attr-scales:dst:1:f32" if int8 else ""), "",
                f"{oc}x{ic}x{k}x{k}", t_memory(oc * ic * k * k * 8), 0.08)))
            post = "attr-post-ops:sum+eltwise_relu" if last else ("" if ds else "attr-post-ops:eltwise_relu")
            attrs = " ".join(x for x in (
                "attr-scratchpad:user",
                "attr-scales:src0:0:f32+wei:1:f32+dst:0:f32" if int8 else "",
                post) if x)
            flops = 2.0 * mb * oc * oh * oh * ic * k * k
            impl = f"brg_conv_fwd:{isa}" if k > 1 or name == "conv1" else f"brgconv_1x1:{isa}"
            seq.append(self.add(Prim(
                "convolution", impl, "forward_inference",
                f"{md('src', dt_s if name != 'conv1' else ('u8' if int8 else 'f32'), 'acdb')} "
                f"{md('wei', dt_w, wtag, 'a')} {md('bia', 'f32', 'a', 'a')} {md('dst', dt_d, 'acdb')}",
                attrs, "alg:convolution_direct", conv_problem(mb, ic, oc, ih, oh, k, s, p),
                t_compute(flops, speed), 0.3 + 2e-6 * ic * oc * k * k)))
            if name == "conv1":
                seq.append(self.add(Prim(
                    "pooling", f"jit:{isa}", "forward_inference",
                    f"{md('src', dt_d, 'acdb')} {md('dst', dt_d, 'acdb')}", "attr-scratchpad:user",
                    "alg:pooling_max", conv_problem(mb, 64, 64, 112, 56, 3, 2, 1).replace("oc64_", ""),
                    t_memory(mb * 64 * 112 * 112 * (1 if int8 else 4) * 1.25), 0.05)))
        seq.append(self.add(Prim(
            "pooling", f"jit:{isa}", "forward_inference",
            f"{md('src', dt_d, 'acdb')} {md('dst', 'f32', 'acdb')}", "attr-scratchpad:user",
            "alg:pooling_avg_exclude_padding", f"mb{mb}ic2048_ih7oh1kh7sh1dh0ph0_iw7ow1kw7sw1dw0pw0",
            t_memory(mb * 2048 * 49 * 4), 0.05)))
        seq.append(self.add(Prim(
            "inner_product", "brgemm:avx512_core", "forward_inference",
            f"{md('src', 'f32', 'ab')} {md('wei', 'f32', 'AB16b64a', 'a')} {md('bia', 'f32', 'a', 'a')} "
            f"{md('dst', 'f32', 'ab')}", "attr-scratchpad:user", "", f"mb{mb}ic2048oc1000",
            t_compute(2.0 * mb * 2048 * 1000), 0.4)))
        seq.append(self.add(Prim(
            "softmax", "jit:avx512_core", "forward_inference",
            f"{md('src', 'f32', 'ab')} {md('dst', 'f32', 'ab')}", "attr-scratchpad:user",
            "alg:softmax_accurate axis:1", f"{mb}x1000", t_memory(mb * 8000), 0.06)))
        self.configs[f"resnet50-{'int8' if int8 else 'fp32'}-infer-mb{mb}"] = (pro, seq)

    def _resnet_train(self, mb: int) -> None:
        t = "aBcd16b"
        fwd: list[int] = []
        bwd: list[int] = []
        for name, ic, oc, ih, oh, k, s, p, last, ds in resnet50_convs():
            prob = conv_problem(mb, ic, oc, ih, oh, k, s, p)
            flops = 2.0 * mb * oc * oh * oh * ic * k * k
            src_tag = "acdb" if name == "conv1" else t
            fwd.append(self.add(Prim(
                "convolution", "brg_conv_fwd:avx512_core" if k > 1 else "brgconv_1x1:avx512_core",
                "forward_training",
                f"{md('src', 'f32', src_tag)} {md('wei', 'f32', 'ABcd16b16a', 'a')} "
                f"{md('bia', 'f32', 'a', 'a')} {md('dst', 'f32', t)}",
                "attr-scratchpad:user", "alg:convolution_direct", prob, t_compute(flops), 0.5)))
            bn_prob = f"mb{mb}ic{oc}ih{oh}iw{oh}"
            act = mb * oc * oh * oh * 4
            fwd.append(self.add(Prim(
                "batch_normalization", "bnorm_jit:avx512_core", "forward_training",
                f"{md('src', 'f32', t)} {md('dst', 'f32', t)} {md('ws', 'u8', t)}",
                "attr-scratchpad:user", "flags:CHR", bn_prob, t_memory(act * 3), 0.1)))
            bwd.append(self.add(Prim(
                "batch_normalization", "bnorm_jit:avx512_core", "backward",
                f"{md('src', 'f32', t)} {md('diff_dst', 'f32', t)} {md('diff_src', 'f32', t)} "
                f"{md('ws', 'u8', t)}", "attr-scratchpad:user", "flags:CHR", bn_prob, t_memory(act * 4), 0.1)))
            if not ds:
                shp = f"{mb}x{oc}x{oh}x{oh}"
                if last:
                    fwd.append(self.add(Prim(
                        "sum", "simple:any", "undef",
                        f"{md('src', 'f32', t)} {md('src', 'f32', t)} {md('dst', 'f32', t)}",
                        "", "", shp, t_memory(act * 3), 0.03)))
                fwd.append(self.add(Prim(
                    "eltwise", "jit:avx512_core", "forward_training",
                    f"{md('src', 'f32', t)} {md('dst', 'f32', t)}", "attr-scratchpad:user",
                    "alg:eltwise_relu alpha:0 beta:0", shp, t_memory(act * 2), 0.04)))
                bwd.append(self.add(Prim(
                    "eltwise", "jit:avx512_core", "backward_data",
                    f"{md('src', 'f32', t)} {md('diff_src', 'f32', t)} {md('diff_dst', 'f32', t)}",
                    "attr-scratchpad:user", "alg:eltwise_relu alpha:0 beta:0", shp, t_memory(act * 3), 0.04)))
            if name != "conv1":
                bwd.append(self.add(Prim(
                    "convolution", "brgconv_bwd_d:avx512_core", "backward_data",
                    f"{md('diff_src', 'f32', t)} {md('wei', 'f32', 'ABcd16a16b', 'a')} "
                    f"{md('diff_dst', 'f32', t)}", "attr-scratchpad:user", "alg:convolution_direct",
                    prob, t_compute(flops, 0.85), 0.6)))
            bwd.append(self.add(Prim(
                "convolution", "brgconv_bwd_w:avx512_core", "backward_weights",
                f"{md('src', 'f32', src_tag)} {md('diff_wei', 'f32', 'ABcd16b16a', 'a')} "
                f"{md('diff_bia', 'f32', 'a', 'a')} {md('diff_dst', 'f32', t)}",
                "attr-scratchpad:user", "alg:convolution_direct", prob, t_compute(flops, 0.7), 0.7)))
            if name == "conv1":
                pp_ = f"mb{mb}ic64_ih112oh56kh3sh2dh0ph1_iw112ow56kw3sw2dw0pw1"
                fwd.append(self.add(Prim(
                    "pooling", "jit:avx512_core", "forward_training",
                    f"{md('src', 'f32', t)} {md('dst', 'f32', t)} {md('ws', 'u8', t)}",
                    "attr-scratchpad:user", "alg:pooling_max", pp_, t_memory(mb * 64 * 112 * 112 * 5), 0.05)))
                bwd.append(self.add(Prim(
                    "pooling", "jit:avx512_core", "backward_data",
                    f"{md('diff_src', 'f32', t)} {md('diff_dst', 'f32', t)} {md('ws', 'u8', t)}",
                    "attr-scratchpad:user", "alg:pooling_max", pp_, t_memory(mb * 64 * 112 * 112 * 6), 0.05)))
        head = [
            self.add(Prim(
                "reorder", "jit:uni", "undef", f"{md('src', 'f32', 'abcd')} {md('dst', 'f32', 'acdb')}",
                "attr-scratchpad:user", "", f"{mb}x3x224x224", t_memory(mb * 3 * 224 * 224 * 8), 0.05)),
        ]
        tail = [
            self.add(Prim(
                "pooling", "jit:avx512_core", "forward_training", f"{md('src', 'f32', t)} {md('dst', 'f32', 'ab')}",
                "attr-scratchpad:user", "alg:pooling_avg_exclude_padding",
                f"mb{mb}ic2048_ih7oh1kh7sh1dh0ph0_iw7ow1kw7sw1dw0pw0", t_memory(mb * 2048 * 49 * 4), 0.05)),
            self.add(Prim(
                "inner_product", "brgemm:avx512_core", "forward_training",
                f"{md('src', 'f32', 'ab')} {md('wei', 'f32', 'AB16b64a', 'a')} {md('bia', 'f32', 'a', 'a')} "
                f"{md('dst', 'f32', 'ab')}", "attr-scratchpad:user", "", f"mb{mb}ic2048oc1000",
                t_compute(2.0 * mb * 2048 * 1000), 0.4)),
            self.add(Prim(
                "inner_product", "brgemm:avx512_core", "backward_data",
                f"{md('diff_src', 'f32', 'ab')} {md('wei', 'f32', 'AB16b64a', 'a')} {md('diff_dst', 'f32', 'ab')}",
                "attr-scratchpad:user", "", f"mb{mb}ic2048oc1000", t_compute(2.0 * mb * 2048 * 1000), 0.4)),
            self.add(Prim(
                "inner_product", "brgemm:avx512_core", "backward_weights",
                f"{md('src', 'f32', 'ab')} {md('diff_wei', 'f32', 'AB16b64a', 'a')} "
                f"{md('diff_bia', 'f32', 'a', 'a')} {md('diff_dst', 'f32', 'ab')}",
                "attr-scratchpad:user", "", f"mb{mb}ic2048oc1000", t_compute(2.0 * mb * 2048 * 1000), 0.4)),
        ]
        seq = head + fwd + tail[:2] + tail[2:] + bwd[::-1]
        self.configs[f"resnet50-fp32-train-mb{mb}"] = ([], seq)

    # ------------------------------------------------------------------ BERT-base
    def _bert_infer(self, b: int, s: int) -> None:
        bs = b * s
        h, ff, heads, dh = 768, 3072, 12, 64
        ip = lambda ic, oc, post="": self.add(Prim(  # noqa: E731
            "inner_product", "brgemm:avx512_core", "forward_inference",
            f"{md('src', 'f32', 'ab')} {md('wei', 'f32', 'AB16b64a', 'a')} {md('bia', 'f32', 'a', 'a')} "
            f"{md('dst', 'f32', 'ab')}", "attr-scratchpad:user" + (f" attr-post-ops:{post}" if post else ""),
            "", f"mb{bs}ic{ic}oc{oc}", t_compute(2.0 * bs * ic * oc), 0.4))
        qkv = ip(h, h)
        heads_t = self.add(Prim(
            "reorder", "jit:uni", "undef", f"{md('src', 'f32', 'acbd')} {md('dst', 'f32', 'abcd')}",
            "", "", f"{b}x{heads}x{s}x{dh}", t_memory(bs * h * 8), 0.05))
        qk = self.add(Prim(
            "matmul", "brg_matmul:avx512_core", "undef",
            f"{md('src', 'f32', 'abcd')} {md('wei', 'f32', 'abdc')} {md('dst', 'f32', 'abcd')}",
            f"attr-scratchpad:user attr-scales:src0:0:f32 attr-post-ops:binary_add:f32:9:abcd", "",
            f"{b}x{heads}x{s}x{dh}:{b}x{heads}x{dh}x{s}", t_compute(2.0 * b * heads * s * s * dh, 0.8), 0.3))
        sm = self.add(Prim(
            "softmax", "jit:avx512_core", "forward_inference",
            f"{md('src', 'f32', 'abcd')} {md('dst', 'f32', 'abcd')}", "attr-scratchpad:user",
            "alg:softmax_accurate axis:3", f"{b}x{heads}x{s}x{s}", t_memory(b * heads * s * s * 8), 0.06))
        av = self.add(Prim(
            "matmul", "brg_matmul:avx512_core", "undef",
            f"{md('src', 'f32', 'abcd')} {md('wei', 'f32', 'abcd')} {md('dst', 'f32', 'acbd')}",
            "attr-scratchpad:user", "", f"{b}x{heads}x{s}x{s}:{b}x{heads}x{s}x{dh}",
            t_compute(2.0 * b * heads * s * s * dh, 0.8), 0.3))
        add = self.add(Prim(
            "binary", "jit:uni", "undef",
            f"{md('src', 'f32', 'abc')} {md('src', 'f32', 'abc')} {md('dst', 'f32', 'abc')}",
            "attr-scratchpad:user", "alg:binary_add", f"{b}x{s}x{h}:{b}x{s}x{h}", t_memory(bs * h * 12), 0.04))
        ln = self.add(Prim(
            "layer_normalization", "jit:avx512_core", "forward_inference",
            f"{md('src', 'f32', 'abc')} {md('dst', 'f32', 'abc')} stats:{UNDEF} "
            f"{md('scale', 'f32', 'a')} {md('shift', 'f32', 'a')}",
            "attr-scratchpad:user", "flags:CH", f"{b}x{s}x{h}", t_memory(bs * h * 8), 0.05))
        ff1 = ip(h, ff)
        gelu = self.add(Prim(
            "eltwise", "jit:avx512_core", "forward_inference",
            f"{md('src', 'f32', 'ab')} {md('dst', 'f32', 'ab')}", "attr-scratchpad:user",
            "alg:eltwise_gelu_erf alpha:0 beta:0", f"{bs}x{ff}", t_memory(bs * ff * 8) * 2, 0.05))
        ff2 = ip(ff, h)
        layer = [qkv, qkv, qkv, heads_t, heads_t, heads_t, qk, sm, av, heads_t, qkv, add, ln, ff1, gelu, ff2, add, ln]
        emb_add = self.add(Prim(
            "binary", "jit:uni", "undef",
            f"{md('src', 'f32', 'abc')} {md('src', 'f32', 'abc')} {md('dst', 'f32', 'abc')}",
            "attr-scratchpad:user", "alg:binary_add", f"{b}x{s}x{h}:1x{s}x{h}", t_memory(bs * h * 8), 0.04))
        pooler = self.add(Prim(
            "inner_product", "brgemm:avx512_core", "forward_inference",
            f"{md('src', 'f32', 'ab')} {md('wei', 'f32', 'AB16b64a', 'a')} {md('bia', 'f32', 'a', 'a')} "
            f"{md('dst', 'f32', 'ab')}", "attr-scratchpad:user attr-post-ops:eltwise_tanh", "",
            f"mb{b}ic{h}oc{h}", t_compute(2.0 * b * h * h), 0.4))
        pro = [self.add(Prim(
            "reorder", "jit:uni", "undef", f"{md('src', 'f32', 'ab')} {md('dst', 'f32', 'AB16b64a')}",
            "attr-scratchpad:user", "", f"{ic}x{oc}", t_memory(ic * oc * 8), 0.05)) for ic, oc in ((h, h), (h, ff), (ff, h))]
        self.configs[f"bert-base-fp32-infer-b{b}-s{s}"] = (pro, [emb_add, ln] + layer * 12 + [pooler])

    def _build(self) -> None:
        for mb in (1, 2, 4, 8, 16, 32, 64):
            self._resnet_infer(mb, int8=False)
        for mb in (1, 8, 32):
            self._resnet_infer(mb, int8=True)
        for mb in (32, 64):
            self._resnet_train(mb)
        for b in (1, 4, 8, 16):
            for s in (32, 48, 64, 96, 128, 192, 256, 384, 512):
                self._bert_infer(b, s)


# --------------------------------------------------------------------------- application output
LOGGERS = ("bench", "torch.utils.data", "trainer", "root", "bench.metrics")
WARNINGS = (
    "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/conv.py:456: UserWarning: "
    "Plan failed with an OutOfMemoryError: CUDA out of memory (Triggered internally at ../aten/src/ATen/native/Convolution.cpp:1032.)\n"
    "  return F.conv2d(input, weight, bias, self.stride,\n",
    "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader will "
    "create 4 worker processes in total. Our suggested max number of worker in current system is 2, which is smaller "
    "than what this DataLoader is going to create.\n  warnings.warn(_create_warning_msg(\n",
)


class AppOutput:
    def __init__(self, rng: np.random.Generator, ascii_only: bool, t0: float):
        self.rng = rng
        self.ascii_only = ascii_only
        self.clock = t0  # seconds since the epoch, for logging time stamps
        self.step = 0

    def _stamp(self) -> str:
        t = self.clock
        tm = time.gmtime(t)
        return f"{time.strftime('%Y-%m-%d %H:%M:%S', tm)},{int((t % 1) * 1000):03d}"

    def startup(self, run: int, timestamps: bool) -> list[str]:
        lines = [
            f"+ ONEDNN_VERBOSE=profile ONEDNN_VERBOSE_TIMESTAMP={int(timestamps)} python bench.py --suite all --run {run}\n",
            f"{self._stamp()} - root - INFO - torch 2.5.1+cpu, oneDNN 3.7.1, 2 threads, run {run}\n",
            f"{self._stamp()} - bench - INFO - loading models: resnet50, resnet50-int8, bert-base-uncased\n",
            "Some weights of BertModel were not initialized from the model checkpoint at bert-base-uncased "
            "and are newly initialized: ['bert.pooler.dense.bias', 'bert.pooler.dense.weight']\n",
            "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.\n",
        ]
        return lines

    def log(self, config: str, it_ms: float, imgs: int) -> str:
        self.clock += it_ms / 1e3
        self.step += 1
        level = "INFO" if self.rng.random() > 0.02 else "WARNING"
        logger = LOGGERS[self.step % len(LOGGERS)]
        thr = imgs / max(it_ms, 1e-3) * 1e3
        return (
            f"{self._stamp()} - {logger} - {level} - {config} step {self.step}: "
            f"latency={it_ms:.3f} ms throughput={thr:.1f} samples/s, loss={2.5 * math.exp(-self.step / 5e4):.4f}\n"
        )

    def progress(self, done: int, total: int) -> str:
        bar_full, bar_part = ("#", "-") if self.ascii_only else ("\u2588", "\u258c")
        parts = []
        for d in range(max(0, done - 3), done + 1):
            pct = 100 * d // total
            fill = pct // 10
            bar = bar_full * fill + (bar_part if pct % 10 >= 5 else " ") + " " * (9 - fill)
            parts.append(f"Benchmark: {pct:3d}%|{bar[:10]}| {d}/{total} [00:{d % 60:02d}<01:00, {3.2 + d % 7:.2f}it/s]")
        return "\r" + "\r".join(parts) + "\n"

    def warning(self) -> str:
        return WARNINGS[int(self.rng.integers(len(WARNINGS)))]


# --------------------------------------------------------------------------- generation
def quantize_g(x: np.ndarray) -> np.ndarray:
    """The doubles ``float('%g' % v)``: 6 significant digits, exactly as printed and read back.

    ``m / 10**k`` with an integral ``m < 2**53`` and ``10**k`` exact is correctly rounded, so
    it is the double nearest to the decimal ``%g`` prints (and the one ``float()`` returns).
    """
    out = np.zeros_like(x)
    nz = x > 0  # 0 stays 0 (printed "0")
    v = x[nz]
    k = 5 - np.floor(np.log10(v)).astype(np.int64)
    m = np.round(v * np.power(10.0, k))
    pos = k >= 0
    q = np.empty_like(v)
    q[pos] = m[pos] / np.power(10.0, k[pos])
    q[~pos] = m[~pos] * np.power(10.0, -k[~pos])
    out[nz] = q
    return out


def timer_grid(x: np.ndarray) -> np.ndarray:
    """Short times as oneDNN's timer gives them: multiples of 1/1024 ms, often exactly 0
    (real PyTorch logs print ``0.000976562``, ``0.00292969`` and ``0`` for tiny ops)."""
    tiny = x < 0.01
    x = x.copy()
    x[tiny] = np.floor(x[tiny] * 1024.0) / 1024.0
    return x


class Generator:
    def __init__(self, args):
        self.args = args
        self.rng = np.random.default_rng(args.seed)
        self.lib = Library()
        prims = self.lib.prims
        self.n = len(prims)
        self.kind_of = np.array([KINDS.index(p.kind) for p in prims], dtype=np.int64)
        self.exec_mean = np.array([p.exec_ms for p in prims])
        self.create_mean = np.array([p.create_ms for p in prims])
        # bodies[3 * shape + op], op 0 exec, 1 create:cache_miss, 2 create:cache_hit
        bodies = []
        for p in prims:
            bodies += [p.body("exec"), p.body("create:cache_miss"), p.body("create:cache_hit")]
        self.bodies = np.array(bodies, dtype=object)
        names = sorted(self.lib.configs)
        self.config_names = names
        w = np.array([4.0 if "train" in n else (0.6 if "bert" in n else 1.0) for n in names])
        self.config_p = w / w.sum()
        nk = len(KINDS)
        self.exec_vals: list[list[np.ndarray]] = [[] for _ in range(nk)]
        self.create_vals: list[list[np.ndarray]] = [[] for _ in range(nk)]
        self.exec_count = np.zeros(nk, dtype=np.int64)
        self.miss_count = np.zeros(nk, dtype=np.int64)
        self.hit_count = np.zeros(nk, dtype=np.int64)
        self.lines = 0
        self.verbose_lines = 0
        self.bytes = 0
        self.used_shapes = np.zeros(self.n, dtype=bool)
        self.runs: list[dict] = []

    def header(self, timestamps: bool) -> list[str]:
        ts = "timestamp," if timestamps else ""
        return [
            f"{MARKER}info,oneDNN v3.7.1 (commit 8d263e693366ef8db40acc569cc7d8edf644556d)\n",
            f"{MARKER}info,cpu,runtime:OpenMP,nthr:2\n",
            f"{MARKER}info,cpu,isa:Intel AVX-512 with float16, Intel DL Boost and bfloat16 support "
            "and Intel AMX with bfloat16 and 8-bit integer support\n",
            f"{MARKER}info,gpu,runtime:none\n",
            f"{MARKER}info,graph,backend,0:dnnl_backend\n",
            f"{MARKER}primitive,info,template:{ts}operation,engine,primitive,implementation,prop_kind,"
            "memory_descriptors,attributes,auxiliary,problem_desc,exec_time\n",
            f"{MARKER}graph,info,template:{ts}operation,engine,partition_id,partition_kind,op_names,"
            "data_formats,logical_tensors,fpmath_mode,implementation,backend,exec_time\n",
        ]

    def iteration(self, ids: np.ndarray, created: np.ndarray, timestamps: bool, ts0: float):
        """Lines of one pass over ``ids``; returns (lines, verbose line count, end timestamp)."""
        rng = self.rng
        n = len(ids)
        # creates: a miss the first time a shape is used in this run, else a hit now and then
        uniq, first = np.unique(ids, return_index=True)
        ck = np.where(rng.random(n) < self.args.cache_hit_rate, 2, 0)
        new = ~created[uniq]
        ck[first[new]] = 1
        created[uniq] = True
        self.used_shapes[uniq] = True
        ex = quantize_g(timer_grid(self.exec_mean[ids] * rng.lognormal(0.0, 0.12, n)
                                   * np.where(rng.random(n) < 0.005, rng.uniform(2.0, 8.0, n), 1.0)))
        has_c = ck > 0
        cpos = np.flatnonzero(has_c)
        cid = ids[cpos]
        cmiss = ck[cpos] == 1
        cmean = np.where(cmiss, self.create_mean[cid], 0.002 + 0.00002 * (cid % 50))
        ct = quantize_g(timer_grid(cmean * rng.lognormal(0.0, 0.5, len(cpos))))
        # interleave: the create line of an op comes right before its exec line
        m = n + len(cpos)
        exec_at = np.arange(n) + np.cumsum(has_c)
        create_at = exec_at[cpos] - 1
        codes = np.empty(m, dtype=np.int64)
        times = np.empty(m)
        codes[exec_at] = ids * 3
        codes[create_at] = cid * 3 + ck[cpos]
        times[exec_at] = ex
        times[create_at] = ct
        bodies = self.bodies[codes].tolist()
        tl = times.tolist()
        if timestamps:
            gaps = rng.uniform(0.002, 0.03, m)
            starts = ts0 + np.concatenate(([0.0], np.cumsum(times[:-1] + gaps[:-1])))
            end = float(starts[-1] + times[-1] + gaps[-1])
            lines = [f"{MARKER}{a:.6f},{b}{t:g}\n" for a, b, t in zip(starts.tolist(), bodies, tl)]
        else:
            end = ts0 + float(times.sum()) + 0.015 * m
            lines = [f"{MARKER}{b}{t:g}\n" for b, t in zip(bodies, tl)]
        # accounting (per kind), from the exact printed values
        k_exec = self.kind_of[ids]
        self.exec_count += np.bincount(k_exec, minlength=len(KINDS))
        k_c = self.kind_of[cid]
        self.miss_count += np.bincount(k_c[cmiss], minlength=len(KINDS))
        self.hit_count += np.bincount(k_c[~cmiss], minlength=len(KINDS))
        order = np.argsort(k_exec, kind="stable")
        bounds = np.searchsorted(k_exec[order], np.arange(len(KINDS) + 1))
        sv = ex[order]
        for k in range(len(KINDS)):
            if bounds[k + 1] > bounds[k]:
                self.exec_vals[k].append(sv[bounds[k]:bounds[k + 1]])
        if len(cpos):
            order = np.argsort(k_c, kind="stable")
            bounds = np.searchsorted(k_c[order], np.arange(len(KINDS) + 1))
            sv = ct[order]
            for k in range(len(KINDS)):
                if bounds[k + 1] > bounds[k]:
                    self.create_vals[k].append(sv[bounds[k]:bounds[k + 1]])
        return lines, m, end, float(ex.sum())

    def write(self, out) -> None:
        args = self.args
        target = args.size
        nruns = args.runs
        ts_ms = 1747000000000.0 + self.rng.uniform(0, 1e9)
        app = AppOutput(self.rng, args.ascii, ts_ms / 1e3)
        buf: list[str] = []
        buf_chars = 0
        flush_at = 8 << 20

        def emit(lines: list[str], verbose: int = 0) -> None:
            nonlocal buf_chars
            buf.extend(lines)
            self.lines += len(lines)
            self.verbose_lines += verbose
            buf_chars += sum(map(len, lines))
            if buf_chars >= flush_at:
                flush()

        def flush() -> None:
            nonlocal buf_chars
            data = "".join(buf).encode("utf-8")
            out.write(data)
            self.bytes += len(data)
            buf.clear()
            buf_chars = 0

        def written() -> int:
            return self.bytes + buf_chars  # chars ~ bytes: only progress bars are not ASCII

        for run in range(nruns):
            if args.timestamps == "mixed":
                timestamps = run % 2 == 0
            else:
                timestamps = args.timestamps == "all"
            run_end = target * (run + 1) // nruns
            run_info = {"run": run, "timestamps": timestamps, "first_line": self.lines + 1}
            emit(app.startup(run, timestamps))
            hdr = self.header(timestamps)
            emit(hdr, len(hdr))
            created = np.zeros(self.n, dtype=bool)
            prologue_done: set[str] = set()
            it = 0
            total_iters_guess = 1000
            while written() < run_end:
                name = self.config_names[int(self.rng.choice(len(self.config_names), p=self.config_p))]
                pro, seq = self.lib.configs[name]
                if name not in prologue_done and pro:
                    prologue_done.add(name)
                    lines, m, ts_ms, _ = self.iteration(np.array(pro, dtype=np.int64), created, timestamps, ts_ms)
                    emit(lines, m)
                lines, m, ts_ms, it_ms = self.iteration(np.array(seq, dtype=np.int64), created, timestamps, ts_ms)
                emit(lines, m)
                it += 1
                r = self.rng.random()
                if r < 0.5:
                    mb = name.split("-mb")[-1] if "-mb" in name else name.split("-b")[-1].split("-")[0]
                    emit([app.log(name, it_ms, int(mb) if mb.isdigit() else 1)])
                elif r < 0.6:
                    emit([app.progress(it % total_iters_guess, total_iters_guess)])
                elif r < 0.603:
                    w = app.warning()
                    emit([w], 0)
                    self.lines += w.count("\n") - 1
            run_info["last_line"] = self.lines
            self.runs.append(run_info)
        flush()

    def stats(self) -> dict:
        per_kind = {}
        for k, kind in enumerate(KINDS):
            ev = np.concatenate(self.exec_vals[k]) if self.exec_vals[k] else np.empty(0)
            cv = np.concatenate(self.create_vals[k]) if self.create_vals[k] else np.empty(0)
            if not len(ev) and not len(cv):
                continue
            per_kind[kind] = {
                "exec_count": int(self.exec_count[k]),
                "exec_ms": math.fsum(ev.tolist()),
                "create_count": int(self.miss_count[k] + self.hit_count[k]),
                "create_ms": math.fsum(cv.tolist()),
                "cache_misses": int(self.miss_count[k]),
                "cache_hits": int(self.hit_count[k]),
                "distinct_shapes": int(np.count_nonzero(self.used_shapes & (self.kind_of == k))),
            }
        return per_kind


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1G", help="target size, e.g. 1G (2**30 bytes), 200M; the file ends "
                                                 "after the iteration that reaches it (a few hundred KB over)")
    ap.add_argument("--out", required=True, help="log file to write")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=4, help="application runs in the file, each with its header")
    ap.add_argument("--timestamps", choices=("mixed", "all", "none"), default="mixed",
                    help="mixed: runs alternate with and without ONEDNN_VERBOSE_TIMESTAMP (first with)")
    ap.add_argument("--cache-hit-rate", type=float, default=0.3,
                    help="share of execs preceded by a create:cache_hit line")
    ap.add_argument("--ascii", action="store_true", help="ASCII progress bars (default: Unicode blocks, as tqdm)")
    ap.add_argument("--stats", help="JSON sidecar with the generated totals (default: OUT.json)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    args.size = parse_size(args.size)
    t0 = time.perf_counter()
    gen = Generator(args)
    tmp = args.out + ".part"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(tmp, "wb", buffering=0) as f:
        gen.write(f)
    os.replace(tmp, args.out)
    elapsed = time.perf_counter() - t0
    layouts = sorted({"timestamps" if r["timestamps"] else "no_timestamps" for r in gen.runs})
    stats = {
        "generator": "scripts/gen_onednn_log.py",
        "generator_version": GENERATOR_VERSION,
        "args": {"size": args.size, "seed": args.seed, "runs": args.runs, "timestamps": args.timestamps,
                 "cache_hit_rate": args.cache_hit_rate, "ascii": args.ascii},
        "path": os.path.abspath(args.out),
        "bytes": gen.bytes,
        "lines_total": gen.lines,
        "lines_verbose": gen.verbose_lines,
        "lines_other": gen.lines - gen.verbose_lines,
        "distinct_primitives_defined": gen.n,
        "distinct_primitives_used": int(gen.used_shapes.sum()),
        "runs": gen.runs,
        "awk_fields": {k: {"op": AWK_FIELDS[k][0], "kind": AWK_FIELDS[k][1]} for k in layouts},
        "per_kind": gen.stats(),
        "generation_seconds": round(elapsed, 2),
    }
    with open(args.stats or args.out + ".json", "w") as f:
        json.dump(stats, f, indent=1)
    if not args.quiet:
        tot = sum(v["exec_count"] for v in stats["per_kind"].values())
        print(f"wrote {args.out}: {gen.bytes} bytes, {gen.lines} lines ({gen.verbose_lines} verbose, "
              f"{tot} exec), {stats['distinct_primitives_used']} distinct primitives, {elapsed:.1f} s "
              f"({gen.bytes / elapsed / 2**20:.0f} MiB/s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
