"""What one operator call costs: FLOPs and bytes from its name and tensor shapes.

Per-operator GPU time (``summary --by op``) attributes kernels to operators: through the
enclosing NVTX range (the ``gpu_activity_nvtx`` view, docs/schema.md) or as the input
names them (PyProf's ``gpu_kernel_ops``).  PyTorch ``emit_nvtx`` range names are parsed at
ingest into ``op``, ``seq``, ``direction`` and ``shapes`` (:mod:`loganalyze.grammars.pyprof`);
:func:`op_cost` gives the operator's FLOPs (and bytes, when element sizes are known), as
PyProf did, and :func:`cost_from_pyprof_marker` does the same for PyProf's argument markers.
The importers compute these at ingest; the model imports nothing of the package.
"""
from __future__ import annotations

from math import prod

#: bytes per element of PyTorch / numpy dtype names
DTYPE_BYTES = {"float32": 4, "float": 4, "fp32": 4, "float16": 2, "half": 2, "fp16": 2, "bfloat16": 2,
               "bf16": 2, "float64": 8, "double": 8, "fp64": 8, "int64": 8, "long": 8, "int32": 4,
               "int": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1}

GEMM_OPS = {"mm", "matmul", "addmm", "bmm", "baddbmm", "linear", "addmv", "mv", "dot", "addbmm"}
CONV_OPS = {"conv1d", "conv2d", "conv3d", "convolution", "_convolution", "cudnn_convolution",
            "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "miopen_convolution",
            "mkldnn_convolution", "thnn_conv2d", "_conv_depthwise2d", "conv_depthwise2d"}
ELEMENTWISE_OPS = {
    "add", "sub", "mul", "div", "rsub", "relu", "relu6", "leaky_relu", "sigmoid", "tanh", "gelu", "silu",
    "threshold", "hardtanh", "elu", "exp", "log", "sqrt", "rsqrt", "pow", "neg", "abs", "clamp", "clamp_min",
    "clamp_max", "maximum", "minimum", "where", "addcmul", "addcdiv", "dropout", "sin", "cos", "reciprocal",
    "square", "softplus", "hardswish", "hardsigmoid", "mish", "lerp", "fill", "copy", "zero",
}
REDUCTION_OPS = {"sum", "mean", "max", "min", "amax", "amin", "prod", "norm", "var", "std"}


def canonical_op(op: str | None) -> str:
    """``aten::add_`` -> ``add``; ``torch.nn.functional.conv2d`` -> ``conv2d``."""
    if not op:
        return ""
    s = op.rsplit("::", 1)[-1].rsplit(".", 1)[-1].strip()
    if s.endswith("_") and not s.startswith("_"):
        s = s[:-1]
    return s.lower()


def _numel(shape) -> int:
    return prod(shape) if shape else 1


def _broadcast(shapes) -> tuple:
    dims = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(1, dims + 1):
        out.append(max((s[-i] if len(s) >= i else 1) for s in shapes))
    return tuple(reversed(out))


def _is_shape(s) -> bool:
    return isinstance(s, tuple) and all(isinstance(x, int) for x in s)


def op_cost(op: str | None, shapes, dtype: str | None = None, args: dict | None = None
            ) -> tuple[float | None, float | None]:
    """(FLOPs, bytes) of one call of ``op`` on tensors of ``shapes`` (a tuple of shapes, ``()``
    for non-tensor arguments), or None where the operator or shapes do not allow it.
    Bytes need the element size (``dtype``).  ``args`` may give conv ``stride``, ``padding``,
    ``dilation``, ``groups``."""
    name = canonical_op(op)
    if not shapes:
        return None, None
    tensors = [s for s in shapes if _is_shape(s) and len(s) > 0]
    esize = DTYPE_BYTES.get((dtype or "").lower().replace("torch.", ""))
    flops = out_numel = None
    try:
        if name in GEMM_OPS:
            flops, out_numel = _gemm(name, tensors)
        elif name in CONV_OPS:
            flops, out_numel = _conv(tensors, args or {}, transposed="transpose" in name)
        elif name in ELEMENTWISE_OPS:
            if tensors:
                out = _broadcast(tensors)
                out_numel = _numel(out)
                flops = float(out_numel) * (2 if name in ("addcmul", "addcdiv", "lerp") else 1)
                if name in ("fill", "copy", "zero", "dropout"):
                    flops = 0.0 if name != "dropout" else float(out_numel)
        elif name in REDUCTION_OPS:
            if tensors:
                flops = float(_numel(tensors[0]))
                out_numel = 1
    except (ValueError, IndexError, TypeError, ZeroDivisionError):
        return None, None
    if flops is None:
        return None, None
    nbytes = None
    if esize and out_numel is not None:
        nbytes = float(esize * (sum(_numel(t) for t in tensors) + out_numel))
    return float(flops), nbytes


def _gemm(name: str, t: list[tuple]) -> tuple[float, int]:
    if name in ("mm",):
        (m, k), (k2, n) = t[0], t[1]
        return 2.0 * m * n * k, m * n
    if name in ("addmm",):
        (m, k), (k2, n) = t[-2], t[-1]
        return 2.0 * m * n * k + m * n, m * n
    if name in ("bmm",):
        (b, m, k), (b2, k2, n) = t[0], t[1]
        return 2.0 * b * m * n * k, b * m * n
    if name in ("baddbmm", "addbmm"):
        (b, m, k), (b2, k2, n) = t[-2], t[-1]
        return 2.0 * b * m * n * k + b * m * n, b * m * n
    if name in ("mv", "addmv"):
        (m, k) = t[-2] if name == "addmv" else t[0]
        return 2.0 * m * k, m
    if name == "dot":
        return 2.0 * t[0][0], 1
    if name == "linear":
        x, w = t[0], t[1]
        n, k = w[0], w[-1]
        rows = _numel(x[:-1])
        return 2.0 * rows * n * k + (rows * n if len(t) > 2 else 0), rows * n
    if name == "matmul":
        a, b = t[0], t[1]
        if len(a) == 1 and len(b) == 1:
            return 2.0 * a[0], 1
        if len(b) == 1:
            return 2.0 * _numel(a[:-1]) * a[-1], _numel(a[:-1])
        if len(a) == 1:
            return 2.0 * _numel(b[:-2]) * b[-1] * a[0], _numel(b[:-2]) * b[-1]
        batch = _broadcast([a[:-2], b[:-2]])
        m, k, n = a[-2], a[-1], b[-1]
        return 2.0 * _numel(batch) * m * n * k, _numel(batch) * m * n
    raise ValueError(name)


def _pair(v, n: int) -> tuple:
    if v is None:
        raise ValueError("unknown")
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


def _conv(t: list[tuple], args: dict, transposed: bool = False) -> tuple[float, int]:
    """2 * N * K * prod(output spatial) * C/groups * prod(kernel) (PyProf's formula); needs
    stride and padding, which NVTX sizes do not carry."""
    x, w = t[0], t[1]
    nsp = len(x) - 2
    if nsp < 1 or len(w) != len(x):
        raise ValueError("shapes")
    stride = _pair(args.get("stride"), nsp)
    padding = _pair(args.get("padding"), nsp)
    dilation = _pair(args.get("dilation", 1), nsp)
    groups = int(args.get("groups", 1) or 1)
    n, c = x[0], x[1]
    if transposed:
        k = w[1] * groups
        out_sp = [(x[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w[2 + i] - 1) + 1 for i in range(nsp)]
        flops = 2.0 * n * c * (w[1]) * _numel(x[2:]) * _numel(w[2:])
        return flops, n * k * _numel(out_sp)
    k = w[0]
    out_sp = [(x[2 + i] + 2 * padding[i] - dilation[i] * (w[2 + i] - 1) - 1) // stride[i] + 1 for i in range(nsp)]
    flops = 2.0 * n * k * _numel(out_sp) * (c // groups) * _numel(w[2:])
    return flops, n * k * _numel(out_sp)


# --------------------------------------------------------------------------- pyprof args
def cost_from_pyprof_marker(op: str | None, marker: dict | None) -> tuple[float | None, float | None, str | None]:
    """(FLOPs, bytes, shapes text) from a PyProf argument marker
    ``{'mod', 'op', 'args': [{'type': 'tensor', 'shape': ..., 'dtype': ...}, ...]}``."""
    if not marker:
        return None, None, None
    args = marker.get("args") or []
    shapes, dtype, extra = [], None, {}
    scalars = []
    for a in args:
        if not isinstance(a, dict):
            continue
        if a.get("type") == "tensor":
            shapes.append(tuple(int(x) for x in a.get("shape", ())))
            dtype = dtype or a.get("dtype")
        else:
            shapes.append(())
            scalars.append(a.get("value"))
            if a.get("name"):
                extra[a["name"]] = a.get("value")
    name = canonical_op(op or marker.get("op"))
    if name in CONV_OPS and not extra:
        # torch.nn.functional.convNd(input, weight, bias, stride, padding, dilation, groups)
        keys = ["stride", "padding", "dilation", "groups"]
        extra = dict(zip(keys, scalars))
    flops, nbytes = op_cost(name, tuple(shapes), dtype, extra)
    text = "[" + ", ".join("[" + ", ".join(map(str, s)) + "]" for s in shapes) + "]" if shapes else None
    return flops, nbytes, text
