#!/usr/bin/env python
"""A tiny PyTorch CPU workload that makes oneDNN print verbose lines.

Run it with a CPU build of PyTorch (never install torch into the project's own environment; it
is not a dependency of loganalyze), under ONEDNN_VERBOSE=1/2/all, and capture stdout:

    ONEDNN_VERBOSE=2 ONEDNN_VERBOSE_TIMESTAMP=1 /path/to/torchvenv/bin/python \
        scripts/torch_onednn_workload.py --iterations 2 > out.log

`scripts/make_onednn_samples.py` does exactly that for the files in `samples/onednn/`.

The workload prints its own progress lines ("app: ...") to stdout and flushes each one, so they
end up interleaved with oneDNN's lines (which the library prints with printf + fflush) in the
order they happened, as in a real application log.

Which ops reach oneDNN in a CPU build of PyTorch 2.x (checked with torch 2.13.0 / oneDNN v3.12):

- dense `F.conv2d` (NCHW and channels_last), forward and backward: `convolution` plus the
  `reorder`s around it. This is the only op of the list below that the default dense path
  sends to oneDNN.
- dense `F.linear`/`matmul` in f32, `relu`, `batch_norm`, `max_pool2d`, `softmax`: ATen/MKL
  kernels, no oneDNN line.
- the same ops on MKL-DNN tensors (`x.to_mkldnn()`, `torch.utils.mkldnn.to_mkldnn(module)`):
  `convolution`, `batch_normalization`, `eltwise`, `pooling`, `inner_product`, `softmax`,
  `sum`, `reorder`.
- `torch.ops.mkldnn._linear_pointwise(..., "relu", ...)`: `inner_product` with an
  `attr-post-ops:eltwise_relu` attribute.
- bf16 `matmul`: oneDNN `matmul` when the CPU has bf16 support (AVX512-BF16/AMX); otherwise
  ATen may use another kernel and print nothing.
"""

from __future__ import annotations

import argparse
import sys


def say(msg: str) -> None:
    # flush each line so that it lands between oneDNN's own (flushed) lines in order
    print(f"app: {msg}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2, help="passes over the ops (default 2)")
    ap.add_argument("--no-backward", action="store_true", help="skip the conv backward pass")
    ap.add_argument("--no-bf16", action="store_true", help="skip the bf16 matmul")
    args = ap.parse_args(argv)

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.utils.mkldnn as mkldnn_utils

    torch.manual_seed(0)
    say(f"torch {torch.__version__}, mkldnn available: {torch.backends.mkldnn.is_available()}")
    torch.backends.mkldnn.enabled = True

    conv = nn.Conv2d(3, 8, 3, padding=1).eval()
    bn = nn.BatchNorm2d(8).eval()
    fc = nn.Linear(8 * 4 * 4, 10).eval()
    fc_w = torch.randn(10, 32)

    with torch.no_grad():
        say("converting modules to MKL-DNN layout")
        mconv = mkldnn_utils.to_mkldnn(conv)
        mbn = mkldnn_utils.to_mkldnn(bn)
        mfc = mkldnn_utils.to_mkldnn(fc)

    for it in range(args.iterations):
        say(f"iteration {it + 1}/{args.iterations}")
        x = torch.randn(2, 3, 16, 16)

        # 1. dense path: conv2d goes to oneDNN, the rest stays in ATen
        w = torch.randn(8, 3, 3, 3, requires_grad=not args.no_backward)
        y = F.conv2d(x, w, padding=1)
        say(f"dense conv2d -> {tuple(y.shape)}")
        if not args.no_backward:
            y.sum().backward()
            say("dense conv2d backward done")
        with torch.no_grad():
            y = F.max_pool2d(F.relu(F.batch_norm(y, torch.zeros(8), torch.ones(8))), 2)
            z = F.softmax(F.linear(y.flatten(1), torch.randn(10, 8 * 8 * 8)), dim=1)
            say(f"dense relu/bn/maxpool/linear/softmax (ATen) -> {tuple(z.shape)}")

            xcl = x.contiguous(memory_format=torch.channels_last)
            ycl = conv(xcl)
            say(f"channels_last conv2d -> {tuple(ycl.shape)}")

            # 2. MKL-DNN tensor path: every op is a oneDNN primitive
            xm = x.to_mkldnn()
            ym = F.max_pool2d(torch.relu(mbn(mconv(xm))), 2)
            ym = F.avg_pool2d(ym, 2)
            ym = ym + ym
            flat = ym.to_dense().flatten(1)
            logits = mfc(flat.to_mkldnn())
            probs = torch.softmax(logits, dim=1).to_dense()
            say(f"mkldnn conv/bn/relu/pool/add/linear/softmax -> sum {probs.sum().item():.4f}")

            # 3. fused linear + relu (post-op attribute)
            out = torch.ops.mkldnn._linear_pointwise(torch.randn(4, 32), fc_w, None, "relu", [], "")
            say(f"mkldnn _linear_pointwise(relu) -> {tuple(out.shape)}")

            # 4. bf16 matmul
            if not args.no_bf16:
                a = torch.randn(32, 48).bfloat16()
                b = torch.randn(48, 16).bfloat16()
                say(f"bf16 matmul -> {tuple((a @ b).shape)}")

    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
