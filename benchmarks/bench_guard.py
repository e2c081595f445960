"""A short regression guard for the CPU kernels on whatever machine you have:
add(out=), c = a + b, sum, exp(out=) and a + b.T (a transposed operand: the
tiled walk) at 2^20 and 2^24 float32 (and 2^26 for the two adds), torchlet beside
numpy and PyTorch in one process, timed round robin, one thread by default
(`--threads 1,2`). It prints the machine (vendor, caches, huge pages, the
store policy torchlet derived from them) and the ratios, other library's time /
torchlet's: above 1.0 torchlet is faster. Not a test: the figures are for the
person reading them (README's table, docs/UFUNC.md "Stores").

    .venv/bin/python benchmarks/bench_guard.py [--threads 1,2] [--rounds 7]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import interleaved, machine_info, thread_counts, torch  # noqa: E402


def cases(logn: int) -> dict:
    """{case: (bytes moved, {impl: fn})} at 2^logn float32"""
    n = 1 << logn
    side = 1 << (logn // 2)
    rng = np.random.default_rng(logn)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    # each library works on memory it allocated itself (the same values), as a
    # user's tensors are: which pages back an array (huge or 4 KiB) is the
    # allocator's doing, and part of what is measured
    ta, tb = tl.from_numpy(a).clone(), tl.from_numpy(b).clone()
    out_np, out_tl = np.empty_like(a), tl.empty(n)
    a2, b2 = a[: side * side].reshape(side, side), b[: side * side].reshape(side, side)
    ta2, tb2 = ta[: side * side].view(side, side), tb[: side * side].view(side, side)
    T = torch is not None
    if T:
        pa, pb, pout = torch.from_numpy(a).clone(), torch.from_numpy(b).clone(), torch.empty(n)
        pa2, pb2 = pa[: side * side].view(side, side), pb[: side * side].view(side, side)

    def row(nbytes, torchlet, numpy, torch_fn):
        fns = {"torchlet": torchlet, "numpy": numpy}
        if T:
            fns["torch"] = torch_fn
        return nbytes, fns

    k = f"2^{logn}"
    out = {
        f"add(out=) {k}": row(12 * n, lambda: tl.add(ta, tb, out=out_tl), lambda: np.add(a, b, out=out_np),
                              lambda: torch.add(pa, pb, out=pout)),
        f"c = a + b {k}": row(12 * n, lambda: ta + tb, lambda: a + b, lambda: pa + pb),
    }
    if logn <= 24:
        out.update({
            f"sum {k}": row(4 * n, lambda: ta.sum(), lambda: a.sum(), lambda: pa.sum()),
            f"exp(out=) {k}": row(8 * n, lambda: tl.exp(ta, out=out_tl), lambda: np.exp(a, out=out_np),
                                  lambda: torch.exp(pa, out=pout)),
            f"a + b.T {side}x{side}": row(12 * side * side, lambda: ta2 + tb2.T, lambda: a2 + b2.T,
                                          lambda: pa2 + pb2.T),
        })
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default=None)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sizes", default="20,24,26", help="log2 sizes, comma-separated")
    args = ap.parse_args()
    print(f"# bench_guard: {machine_info()}")
    for threads in thread_counts([1], args.threads):
        tl.set_num_threads(threads)
        if torch is not None:
            torch.set_num_threads(threads)
        print(f"\n## {threads} thread{'s' if threads > 1 else ''} (GB/s = bytes read + written / time; "
              f"ratio = other / torchlet)")
        head = f"{'case':<22}" + "".join(f" {k:>17}" for k in ("torchlet", "numpy", "torch")) \
            + f" {'vs numpy':>9} {'vs torch':>9}"
        print(head)
        print("-" * len(head))
        for logn in (int(x) for x in args.sizes.split(",")):
            for name, (nbytes, fns) in cases(logn).items():
                t = interleaved(fns, rounds=args.rounds)
                line = f"{name:<22}"
                for impl in ("torchlet", "numpy", "torch"):
                    line += (f" {t[impl] * 1e3:8.3f}ms {nbytes / t[impl] / 1e9:5.1f}GB/s" if impl in t
                             else f" {'-':>17}")
                for ref in ("numpy", "torch"):
                    line += f" {t[ref] / t['torchlet']:8.2f}x" if ref in t else f" {'-':>9}"
                print(line, flush=True)


if __name__ == "__main__":
    main()
