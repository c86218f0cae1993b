"""benchdnn reproducer command lines for oneDNN primitives, as verbose_converter prints them."""
from __future__ import annotations

from ..grammars import onednn_verbose as g

DRIVERS = {
    "convolution": "conv", "deconvolution": "deconv", "inner_product": "ip", "matmul": "matmul",
    "reorder": "reorder", "eltwise": "eltwise", "batch_normalization": "bnorm",
    "layer_normalization": "lnorm", "group_normalization": "gnorm", "pooling": "pool",
    "pooling_v2": "pool", "softmax": "softmax", "softmax_v2": "softmax", "logsoftmax": "softmax",
    "sum": "sum", "concat": "concat", "binary": "binary", "lrn": "lrn", "resampling": "resampling",
    "shuffle": "shuffle", "prelu": "prelu", "reduction": "reduction", "rnn": "rnn", "sdpa": "sdpa",
    "layer_normalization_v2": "lnorm",
}

DIRS = {
    "forward_training": "FWD_D", "forward_inference": "FWD_I", "forward": "FWD_D",
    "backward_data": "BWD_D", "backward_weights": "BWD_W", "backward": "BWD_DW",
    "backward_bias": "BWD_B",
}

ALG_PREFIX = {"eltwise": "eltwise_", "binary": "binary_", "pooling": "pooling_", "reduction": "reduction_",
              "convolution": "convolution_", "deconvolution": "deconvolution_", "lrn": "lrn_",
              "resampling": "resampling_"}


def benchdnn_line(engine: str, kind: str, impl: str, prop_kind: str, mds: str, attrs: str, aux: str,
                  problem: str) -> str:
    driver = DRIVERS.get(kind)
    if driver is None:
        return f"# no benchdnn driver known for primitive kind {kind!r}: {problem}"
    args = [f"--{driver}", "--reset"]
    if engine and engine.startswith("gpu"):
        args.append("--engine=gpu")
    try:
        descs = g.parse_mds(mds)
    except Exception:
        descs = ()
    v0_names = {"fsrc": "src", "fwei": "wei", "fbia": "bia", "fdst": "dst", "fdata": "data", "in": "src", "out": "dst"}
    by_arg = {v0_names.get(d.arg, d.arg): d for d in descs}
    has_bias = any(
        (d.arg == "bia" and d.dt not in ("", "undef")) or (d.arg == "fbia" and d.tag not in ("", "undef"))
        for d in descs
    )
    if prop_kind in DIRS and driver not in ("reorder", "sum", "concat", "binary", "matmul", "shuffle"):
        d = DIRS[prop_kind]
        if has_bias and d == "FWD_D" and driver in ("conv", "deconv", "ip"):
            d = "FWD_B"
        if has_bias and d == "BWD_W":
            d = "BWD_WB"
        args.append(f"--dir={d}")
    src = by_arg.get("src") or by_arg.get("data") or by_arg.get("in") or by_arg.get("src0")
    wei = by_arg.get("wei")
    dst = by_arg.get("dst") or by_arg.get("out")
    if driver == "reorder":
        if src and src.dt:
            args.append(f"--sdt={src.dt}")
        if dst and dst.dt:
            args.append(f"--ddt={dst.dt}")
    elif driver in ("conv", "deconv", "ip", "matmul"):
        dts = [x.dt for x in (src, wei, dst) if x is not None and x.dt]
        if dts:
            args.append("--dt=" + ":".join(dts))
    elif src and src.dt:
        args.append(f"--dt={src.dt}")
    if src and src.tag and src.tag != "any":
        args.append(f"--stag={src.tag}")
    if wei and wei.tag and wei.tag != "any":
        args.append(f"--wtag={wei.tag}")
    if dst and dst.tag and dst.tag != "any":
        args.append(f"--dtag={dst.tag}")
    try:
        auxd = dict(g.parse_aux(aux))
    except Exception:
        auxd = {}
    alg = auxd.get("alg")
    if alg:
        prefix = ALG_PREFIX.get(kind, "")
        short = alg[len(prefix):] if prefix and alg.startswith(prefix) else alg
        args.append(f"--alg={short}")
    for key in ("alpha", "beta"):
        if key in auxd and driver == "eltwise":
            args.append(f"--{key}={auxd[key]}")
    for attr in (attrs or "").split():
        if attr.startswith("attr-") and ":" in attr:
            name, value = attr.split(":", 1)
            args.append(f"--{name}={value}")
    args.append(problem)
    return "./benchdnn " + " ".join(args)
