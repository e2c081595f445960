"""Reductions on 2^24 float32 (kernels/native/reduce_*.c, kernels/cpu/sum_kernel.c,
reduce_minmax_kernel.c), torchlet beside numpy and PyTorch (when installed),
one thread and two threads, interleaved in one process (each row's
implementations timed round robin, best of several rounds: load from other
processes hits all alike). GB/s counts the bytes read.

    .venv/bin/python benchmarks/bench_reductions.py [--threads 1,2] [--quick]

(--threads defaults to TORCHLET_BENCH_THREADS when set, else 1,2.)
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import Bench, interleaved, machine_info, thread_counts, torch  # noqa: E402

N = 1 << 24
SIDE = 1 << 12   # 4096 x 4096


def run(threads: int, quick: bool):
    tl.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    a2 = a.reshape(SIDE, SIDE)
    ta = tl.from_numpy(a)
    ta2 = ta.view(SIDE, SIDE)
    T = torch is not None
    pa = torch.from_numpy(a) if T else None
    pa2 = pa.view(SIDE, SIDE) if T else None
    B = Bench("reductions, 2^24 float32", threads=threads, cpu=tl.get_cpu_capability())
    # every row timed with _harness.interleaved (round robin, best of 9 rounds)
    B.row = lambda name, nbytes=None, **fns: B.rows.append(
        (name, nbytes, interleaved({k: f for k, f in fns.items() if f is not None}, rounds=9)))
    nb = 4 * N
    B.row("sum(a)", nb, torchlet=lambda: tl.sum(ta), numpy=lambda: a.sum(),
          torch=(lambda: pa.sum()) if T else None)
    B.row("mean(a)", nb, torchlet=lambda: tl.mean(ta), numpy=lambda: a.mean(),
          torch=(lambda: pa.mean()) if T else None)
    B.row("amax(a)", nb, torchlet=lambda: tl.amax(ta), numpy=lambda: a.max(),
          torch=(lambda: pa.amax()) if T else None)
    B.row("sum(a2, dim=1)", nb, torchlet=lambda: tl.sum(ta2, 1), numpy=lambda: a2.sum(1),
          torch=(lambda: pa2.sum(1)) if T else None)
    B.row("sum(a2, dim=0)", nb, torchlet=lambda: tl.sum(ta2, 0), numpy=lambda: a2.sum(0),
          torch=(lambda: pa2.sum(0)) if T else None)
    if not quick:   # the other dtypes' sums (float16 accumulates in float32, as PyTorch)
        a64, a16, ai = a.astype(np.float64), a.astype(np.float16), (a * 100).astype(np.int32)
        t64, t16, ti = tl.from_numpy(a64), tl.from_numpy(a16), tl.from_numpy(ai)
        B.row("sum(a float64)", 2 * nb, torchlet=lambda: tl.sum(t64), numpy=lambda: a64.sum(),
              torch=(lambda p=torch.from_numpy(a64) if T else None: p.sum()) if T else None)
        B.row("sum(a float16)", nb // 2, torchlet=lambda: tl.sum(t16), numpy=lambda: a16.sum(),
              torch=(lambda p=torch.from_numpy(a16) if T else None: p.sum()) if T else None)
        B.row("sum(a int32)", nb, torchlet=lambda: tl.sum(ti), numpy=lambda: ai.sum(),
              torch=(lambda p=torch.from_numpy(ai) if T else None: p.sum()) if T else None)
    B.row("amax(a2, dim=1)", nb, torchlet=lambda: tl.amax(ta2, 1), numpy=lambda: a2.max(1),
          torch=(lambda: pa2.amax(1)) if T else None)
    B.row("amax(a2, dim=0)", nb, torchlet=lambda: tl.amax(ta2, 0), numpy=lambda: a2.max(0),
          torch=(lambda: pa2.amax(0)) if T else None)
    if not quick:
        # var/std, norms, logsumexp, argmax: reduce_stats.c / reduce_minmax.c over reduce_direct.c
        B.row("var(a)", nb, torchlet=lambda: tl.var(ta), numpy=lambda: a.var(ddof=1),
              torch=(lambda: pa.var()) if T else None)
        B.row("std(a2, dim=1)", nb, torchlet=lambda: tl.std(ta2, 1), numpy=lambda: a2.std(1, ddof=1),
              torch=(lambda: pa2.std(1)) if T else None)
        B.row("var(a2, dim=0)", nb, torchlet=lambda: tl.var(ta2, 0), numpy=lambda: a2.var(0, ddof=1),
              torch=(lambda: pa2.var(0)) if T else None)
        B.row("argmax(a)", nb, torchlet=lambda: tl.argmax(ta), numpy=lambda: a.argmax(),
              torch=(lambda: pa.argmax()) if T else None)
        B.row("argmax(a2, 1)", nb, torchlet=lambda: tl.argmax(ta2, 1), numpy=lambda: a2.argmax(1),
              torch=(lambda: pa2.argmax(1)) if T else None)
        B.row("argmin(a2, 0)", nb, torchlet=lambda: tl.argmin(ta2, 0), numpy=lambda: a2.argmin(0),
              torch=(lambda: pa2.argmin(0)) if T else None)
        B.row("max(a2, 1) (values, indices)", nb, torchlet=lambda: tl.max(ta2, 1),
              torch=(lambda: pa2.max(1)) if T else None)
        B.row("logsumexp(a2, 1)", nb, torchlet=lambda: tl.logsumexp(ta2, 1),
              numpy=lambda: np.log(np.exp(a2 - a2.max(1, keepdims=True)).sum(1)) + a2.max(1),
              torch=(lambda: pa2.logsumexp(1)) if T else None)
        B.row("logsumexp(a2, 0)", nb, torchlet=lambda: tl.logsumexp(ta2, 0),
              numpy=lambda: np.log(np.exp(a2 - a2.max(0, keepdims=True)).sum(0)) + a2.max(0),
              torch=(lambda: pa2.logsumexp(0)) if T else None)
        B.row("norm(a)", nb, torchlet=lambda: tl.norm(ta), numpy=lambda: np.linalg.norm(a),
              torch=(lambda: pa.norm()) if T else None)
        B.row("norm(a2, dim=1)", nb, torchlet=lambda: tl.norm(ta2, dim=1), numpy=lambda: np.linalg.norm(a2, axis=1),
              torch=(lambda: pa2.norm(dim=1)) if T else None)
        B.row("norm(a2, dim=0)", nb, torchlet=lambda: tl.norm(ta2, dim=0), numpy=lambda: np.linalg.norm(a2, axis=0),
              torch=(lambda: pa2.norm(dim=0)) if T else None)
        B.row("norm(a, 1)", nb, torchlet=lambda: tl.norm(ta, 1), numpy=lambda: np.linalg.norm(a, 1),
              torch=(lambda: pa.norm(1)) if T else None)
        B.row("norm(a, inf)", nb, torchlet=lambda: tl.norm(ta, float("inf")), numpy=lambda: np.linalg.norm(a, np.inf),
              torch=(lambda: pa.norm(float("inf"))) if T else None)
        B.row("cumsum(a2, 1)", 2 * nb, torchlet=lambda: tl.cumsum(ta2, 1), numpy=lambda: a2.cumsum(1),
              torch=(lambda: pa2.cumsum(1)) if T else None)
        # scan_kernel.c: columns (sequential, across 512-column blocks), one long row (fixed chunks), cumprod
        B.row("cumsum(a2, 0)", 2 * nb, torchlet=lambda: tl.cumsum(ta2, 0), numpy=lambda: a2.cumsum(0),
              torch=(lambda: pa2.cumsum(0)) if T else None)
        B.row("cumsum(a)", 2 * nb, torchlet=lambda: tl.cumsum(ta, 0), numpy=lambda: a.cumsum(),
              torch=(lambda: pa.cumsum(0)) if T else None)
        B.row("cumprod(a2, 1)", 2 * nb, torchlet=lambda: tl.cumprod(ta2, 1), numpy=lambda: a2.cumprod(1),
              torch=(lambda: pa2.cumprod(1)) if T else None)
    B.print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default=None, help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--quick", action="store_true", help="sum / mean / amax rows only")
    args = ap.parse_args()
    print(machine_info())
    for t in thread_counts([1, 2], args.threads):
        run(t, args.quick)


if __name__ == "__main__":
    main()
