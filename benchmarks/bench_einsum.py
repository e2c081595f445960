"""einsum, tensordot (kernels/native/einsum.c, products.c: permute + reshape
to one batched BLAS product) and cdist (kernels/native/cdist.c: the mm-based
Euclidean path), torchlet beside numpy (np.einsum with optimize=True,
np.tensordot, the same expansion of |x - y|^2 in numpy) and PyTorch (when
installed), interleaved in one process (round robin, best of several rounds).

    .venv/bin/python benchmarks/bench_einsum.py [--threads 1,2]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import Bench, interleaved, machine_info, thread_counts, torch  # noqa: E402


def run(threads: int):
    tl.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    T = torch is not None
    a = rng.standard_normal((64, 128, 96)).astype(np.float32)
    b = rng.standard_normal((64, 96, 112)).astype(np.float32)
    c = rng.standard_normal((32, 64, 256)).astype(np.float32)
    d = rng.standard_normal((256, 192)).astype(np.float32)
    e = rng.standard_normal((64, 48, 40)).astype(np.float32)
    f = rng.standard_normal((48, 40, 300)).astype(np.float32)
    ta, tb, tc, td, te, tf = (tl.from_numpy(x) for x in (a, b, c, d, e, f))
    pa, pb, pc, pd, pe, pf = (torch.from_numpy(x) for x in (a, b, c, d, e, f)) if T else (None,) * 6
    B = Bench("einsum / tensordot / cdist, float32", threads=threads, cpu=tl.get_cpu_capability())
    B.row = lambda name, nbytes=None, **fns: B.rows.append(
        (name, nbytes, interleaved({k: v for k, v in fns.items() if v is not None}, rounds=5)))
    B.row("einsum bij,bjk->bik 64x128x96x112", 4 * (a.size + b.size),
          torchlet=lambda: tl.einsum("bij,bjk->bik", ta, tb),
          numpy=lambda: np.einsum("bij,bjk->bik", a, b, optimize=True),
          torch=(lambda: torch.einsum("bij,bjk->bik", pa, pb)) if T else None)
    B.row("einsum abc,cd->abd 32x64x256x192", 4 * (c.size + d.size),
          torchlet=lambda: tl.einsum("abc,cd->abd", tc, td),
          numpy=lambda: np.einsum("abc,cd->abd", c, d, optimize=True),
          torch=(lambda: torch.einsum("abc,cd->abd", pc, pd)) if T else None)
    B.row("tensordot dims=2 64x48x40 . 48x40x300", 4 * (e.size + f.size),
          torchlet=lambda: tl.tensordot(te, tf, dims=2),
          numpy=lambda: np.tensordot(e, f, axes=2),
          torch=(lambda: torch.tensordot(pe, pf, dims=2)) if T else None)
    x1 = rng.standard_normal((1000, 64)).astype(np.float32)
    x2 = rng.standard_normal((2000, 64)).astype(np.float32)
    t1, t2 = tl.from_numpy(x1), tl.from_numpy(x2)
    p1, p2 = (torch.from_numpy(x1), torch.from_numpy(x2)) if T else (None, None)

    def np_cdist():  # the same mm-based expansion, in numpy
        d = (x1 * x1).sum(1)[:, None] - 2.0 * (x1 @ x2.T) + (x2 * x2).sum(1)[None, :]
        return np.sqrt(np.maximum(d, 1e-30))

    B.row("cdist p=2 1000x64 vs 2000x64", 4 * (x1.size + x2.size),
          torchlet=lambda: tl.cdist(t1, t2), numpy=np_cdist,
          torch=(lambda: torch.cdist(p1, p2)) if T else None)
    B.print()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", default=None)
    args = p.parse_args()
    print(machine_info())
    for t in thread_counts([1, 2], args.threads):
        run(t)


if __name__ == "__main__":
    main()
