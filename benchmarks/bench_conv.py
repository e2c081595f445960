"""conv2d on ResNet-like 3x3 layers (stride 1, padding 1, float32): forward,
and forward + backward (grad_input, grad_weight, grad_bias), torchlet beside
PyTorch (when installed; its CPU convolution is oneDNN), on one thread and on
two. A 1x1 layer (no im2col: the input is the GEMM operand) and a strided 3x3
layer are timed too, and 1x1 layers at each 3x3 shape. No numpy column:
numpy has no convolution.

Where oneDNN is installed (torchlet.backends.mkldnn), the `torchlet` column
is the shipped choice (oneDNN where docs/NN.md keeps it) and `im2col` the
im2col + GEMM path alone (oneDNN off), timed interleaved too.

The two are timed interleaved in one process (round robin, best batch kept:
benchmarks/_harness.py), so load from other processes hits both alike.

    python benchmarks/bench_conv.py [--rounds N] [--threads 1,2] [--quick] [--cpu-time]

(--threads defaults to TORCHLET_BENCH_THREADS when set, else 1 and 2;
--quick: the first two layers only; --cpu-time: process CPU time per call
instead of wall time, for a loaded machine, meaningful on one thread.)

A ratio `vs torch` is torch's time / torchlet's time: above 1.0 torchlet is
faster; `(im2col)` the same ratio for the im2col path alone. The goal is >= 0.9x PyTorch.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import interleaved, machine_info, thread_counts, torch  # noqa: E402

# (name, N, C_in, C_out, H=W, kernel, stride, padding)
LAYERS = [
    ("3x3 N=8 C=64 56x56", 8, 64, 64, 56, 3, 1, 1),
    ("3x3 N=8 C=128 28x28", 8, 128, 128, 28, 3, 1, 1),
    ("3x3 N=8 C=256 14x14", 8, 256, 256, 14, 3, 1, 1),
    ("3x3/2 N=8 C=64->128 56x56", 8, 64, 128, 56, 3, 2, 1),
    ("1x1 N=8 C=256->64 56x56", 8, 256, 64, 56, 1, 1, 0),
    ("1x1 N=8 C=64 56x56", 8, 64, 64, 56, 1, 1, 0),
    ("1x1 N=8 C=128 28x28", 8, 128, 128, 28, 1, 1, 0),
    ("1x1 N=8 C=256 14x14", 8, 256, 256, 14, 1, 1, 0),
]
IMPLS = ("torchlet", "im2col", "torch")


def im2col_only(fn):
    """fn with oneDNN turned off for the call"""
    def run():
        with tl.backends.mkldnn.flags(enabled=False):
            return fn()
    return run


def set_threads(n: int) -> None:
    tl.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)


def cases(layer):
    _, N, C, OC, HW, k, s, p = layer
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, HW, HW)).astype(np.float32)
    w = (rng.standard_normal((OC, C, k, k)) / np.sqrt(C * k * k)).astype(np.float32)
    b = rng.standard_normal(OC).astype(np.float32)
    ho = (HW + 2 * p - k) // s + 1
    g = rng.standard_normal((N, OC, ho, ho)).astype(np.float32)
    flops = 2.0 * N * OC * ho * ho * C * k * k

    tx, tw, tb, tg = (tl.from_numpy(a) for a in (x, w, b, g))
    txr, twr, tbr = (t.detach().requires_grad_() for t in (tx, tw, tb))

    def tl_fwd():
        return tl.conv2d(tx, tw, tb, stride=s, padding=p)

    def tl_fwd_bwd():
        txr.grad = twr.grad = tbr.grad = None
        tl.conv2d(txr, twr, tbr, stride=s, padding=p).backward(tg)

    fwd, fb = {"torchlet": tl_fwd}, {"torchlet": tl_fwd_bwd}
    if tl.backends.mkldnn.is_available():
        fwd["im2col"], fb["im2col"] = im2col_only(tl_fwd), im2col_only(tl_fwd_bwd)
    if torch is not None:
        px, pw, pb, pg = (torch.from_numpy(a) for a in (x, w, b, g))
        pxr, pwr, pbr = (t.detach().requires_grad_() for t in (px, pw, pb))

        def pt_fwd():
            with torch.no_grad():
                return torch.conv2d(px, pw, pb, stride=s, padding=p)

        def pt_fwd_bwd():
            pxr.grad = pwr.grad = pbr.grad = None
            torch.conv2d(pxr, pwr, pbr, stride=s, padding=p).backward(pg)

        fwd["torch"], fb["torch"] = pt_fwd, pt_fwd_bwd
    return flops, fwd, fb


def run(threads: int, rounds: int, layers, clock) -> None:
    set_threads(threads)
    what = "CPU time" if clock is time.process_time else "wall time"
    print(f"\n## conv2d float32, threads={threads}, cpu={tl.get_cpu_capability()}, {what}")
    head = f"{'case':<38}" + "".join(f" {k:>22}" for k in IMPLS) + f" {'vs torch':>9} {'(im2col)':>9}"
    print(head)
    print("-" * len(head))
    for layer in layers:
        flops, fwd, fb = cases(layer)
        for what, fns, fl in (("fwd", fwd, flops), ("fwd+bwd", fb, 3 * flops)):
            t = interleaved(fns, rounds=rounds, min_time=0.05, clock=clock)
            line = f"{layer[0] + ' ' + what:<38}"
            for impl in IMPLS:
                s = t.get(impl)
                line += f" {s * 1e3:9.2f} ms {fl / s / 1e9:6.1f} GF/s" if s else f" {'-':>22}"
            for impl in ("torchlet", "im2col"):
                ok = "torch" in t and impl in t
                line += f" {t['torch'] / t[impl]:8.2f}x" if ok else f" {'-':>9}"
            print(line, flush=True)


def main():
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    layers = LAYERS[:2] if "--quick" in sys.argv else LAYERS
    clock = time.process_time if "--cpu-time" in sys.argv else time.perf_counter
    print(f"bench_conv: {machine_info()}; interleaved, best of {rounds} rounds")
    for threads in thread_counts([1, 2] if (os.cpu_count() or 1) > 1 else [1]):
        run(threads, rounds, layers, clock)


if __name__ == "__main__":
    main()
