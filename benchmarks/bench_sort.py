"""sort / argsort / topk / unique on 2^20 float32 (kernels/native/sort.c: a
stable LSD radix sort; topk: PyTorch's partial_sort / nth_element selection;
unique(dim=): kernels/native/unique_dim.c, a merge sort of rows), torchlet beside numpy and PyTorch (when installed),
interleaved in one process (round robin, best of several rounds).

    .venv/bin/python benchmarks/bench_sort.py [--threads 1,2]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import Bench, interleaved, machine_info, thread_counts, torch  # noqa: E402

N = 1 << 20


def run(threads: int):
    tl.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    a2 = a.reshape(1024, 1024)
    ai = rng.integers(0, 1000, N).astype(np.int64)
    ar = rng.integers(0, 2, N).astype(np.int64).reshape(N // 16, 16)   # rows repeat: 2^16 of 2^16 possible
    tar, par = tl.from_numpy(ar), (torch.from_numpy(ar) if torch is not None else None)
    ta, ta2, tai = tl.from_numpy(a), tl.from_numpy(a2), tl.from_numpy(ai)
    T = torch is not None
    pa, pa2, pai = (torch.from_numpy(a), torch.from_numpy(a2), torch.from_numpy(ai)) if T else (None,) * 3
    B = Bench("sorting, 2^20 elements", threads=threads, cpu=tl.get_cpu_capability())
    B.row = lambda name, nbytes=None, **fns: B.rows.append(
        (name, nbytes, interleaved({k: f for k, f in fns.items() if f is not None}, rounds=5)))
    nb = 4 * N
    B.row("sort(a float32)", nb, torchlet=lambda: tl.sort(ta), numpy=lambda: np.sort(a, kind="stable"),
          torch=(lambda: torch.sort(pa, stable=True)) if T else None)
    B.row("sort(a) default kind", nb, torchlet=lambda: tl.sort(ta), numpy=lambda: np.sort(a),
          torch=(lambda: torch.sort(pa)) if T else None)
    B.row("argsort(a)", nb, torchlet=lambda: tl.argsort(ta), numpy=lambda: np.argsort(a, kind="stable"),
          torch=(lambda: torch.argsort(pa)) if T else None)
    B.row("sort(a2, dim=1) 1024 rows", nb, torchlet=lambda: tl.sort(ta2, 1), numpy=lambda: np.sort(a2, 1),
          torch=(lambda: torch.sort(pa2, 1)) if T else None)
    B.row("sort(a2, dim=0)", nb, torchlet=lambda: tl.sort(ta2, 0), numpy=lambda: np.sort(a2, 0),
          torch=(lambda: torch.sort(pa2, 0)) if T else None)
    B.row("topk(a, 100)", nb, torchlet=lambda: tl.topk(ta, 100),
          numpy=lambda: np.sort(np.partition(a, N - 100)[N - 100:]),
          torch=(lambda: torch.topk(pa, 100)) if T else None)
    B.row("topk(a2, 8, dim=1) 1024 rows", nb, torchlet=lambda: tl.topk(ta2, 8, 1),
          torch=(lambda: torch.topk(pa2, 8, 1)) if T else None)
    B.row("topk(a, 2^19)", nb, torchlet=lambda: tl.topk(ta, N // 2),
          torch=(lambda: torch.topk(pa, N // 2)) if T else None)
    B.row("unique(int64 (2^16, 16) in [0, 2), dim=0)", 2 * nb, torchlet=lambda: tl.unique(tar, dim=0),
          numpy=lambda: np.unique(ar, axis=0), torch=(lambda: torch.unique(par, dim=0)) if T else None)
    B.row("unique(int64 in [0, 1000))", 2 * nb, torchlet=lambda: tl.unique(tai), numpy=lambda: np.unique(ai),
          torch=(lambda: torch.unique(pai)) if T else None)
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
