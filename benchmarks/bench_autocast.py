"""Autocast: a Linear forward (and forward + backward) in float32 and under
CPU autocast (bfloat16 matrix products), torchlet beside PyTorch (when
installed), one thread by default.

    python benchmarks/bench_autocast.py [--threads N] [--quick]

(--quick: the first size only.)

Rows: `fp32` runs F.linear(x, W, b) in float32; `autocast` runs it inside
autocast("cpu") (x and W cast to bfloat16; W from the cast cache after the
first call of a region, as in training); `+bwd` adds backward of the sum.
A ratio `vs torch` is PyTorch's time / torchlet's time: above 1.0 torchlet
is faster. torchlet's bfloat16 product converts the operands to float32,
runs OpenBLAS sgemm and rounds the result once (scipy-openblas32 exports no
bfloat16 GEMM), so it costs about an fp32 product plus the conversions;
PyTorch uses oneDNN's native bfloat16 kernels where the CPU has them.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import Bench, machine_info, thread_counts, torch  # noqa: E402

SIZES = [  # (batch dims of x, in_features, out_features)
    ((256,), 1024, 1024),
    ((4, 128), 4096, 4096),
]


def cases(lib, F, x, w, b, autocast):
    def fwd():
        return F.linear(x, w, b)

    def fwd_ac():
        with autocast("cpu"):
            return F.linear(x, w, b)

    def fwd_bwd():
        w.grad = None
        F.linear(x, w, b).sum().backward()

    def fwd_bwd_ac():
        w.grad = None
        with autocast("cpu"):
            y = F.linear(x, w, b)
        y.sum().backward()

    return {"fp32 fwd": fwd, "autocast fwd": fwd_ac, "fp32 fwd+bwd": fwd_bwd, "autocast fwd+bwd": fwd_bwd_ac}


def main() -> None:
    threads = thread_counts([1])[0]
    tl.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    print(f"# bench_autocast: {machine_info()}, threads={threads}")
    for batch, k, n in SIZES[:1] if "--quick" in sys.argv else SIZES:
        rng = np.random.default_rng(0)
        xs = rng.standard_normal((*batch, k)).astype(np.float32)
        ws = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
        bs = rng.standard_normal(n).astype(np.float32)
        ours = cases(tl, tl.nn.functional, tl.tensor(xs), tl.tensor(ws).requires_grad_(), tl.tensor(bs),
                     tl.autocast)
        theirs = {}
        if torch is not None:
            theirs = cases(torch, torch.nn.functional, torch.tensor(xs), torch.tensor(ws).requires_grad_(),
                           torch.tensor(bs), torch.autocast)
        shape = "x".join(map(str, batch)) + f"x{k} @ {n}x{k}^T"
        bench = Bench(f"linear {shape}", threads=threads)
        for name, fn in ours.items():
            bench.row(name, torchlet=fn, torch=theirs.get(name))
        bench.print()


if __name__ == "__main__":
    main()
