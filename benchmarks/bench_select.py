"""searchsorted, kthvalue / median, bincount, masked_select, cummax, nansum on
2^20 float32 (kernels/native/select*.c), torchlet beside numpy and PyTorch
(when installed), interleaved in one process (round robin, best of several
rounds).

    .venv/bin/python benchmarks/bench_select.py [--threads 1,2]
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
    bd = np.sort(rng.standard_normal(4096).astype(np.float32))
    ai = rng.integers(0, 1000, N).astype(np.int64)
    m = a > 0
    an = a.copy()
    an[::17] = np.nan
    ta, ta2, tbd, tai, tm, tan = (tl.from_numpy(x) for x in (a, a2, bd, ai, m, an))
    T = torch is not None
    pa, pa2, pbd, pai, pm, pan = (torch.from_numpy(x) for x in (a, a2, bd, ai, m, an)) if T else (None,) * 6
    B = Bench("selection, 2^20 elements", threads=threads, cpu=tl.get_cpu_capability())
    B.row = lambda name, nbytes=None, **fns: B.rows.append(
        (name, nbytes, interleaved({k: f for k, f in fns.items() if f is not None}, rounds=5)))
    nb = 4 * N
    B.row("searchsorted(4096 sorted, a)", nb, torchlet=lambda: tl.searchsorted(tbd, ta),
          numpy=lambda: np.searchsorted(bd, a), torch=(lambda: torch.searchsorted(pbd, pa)) if T else None)
    B.row("kthvalue(a2, 512, dim=1)", nb, torchlet=lambda: tl.kthvalue(ta2, 512, 1),
          numpy=lambda: np.partition(a2, 511, axis=1)[:, 511],
          torch=(lambda: torch.kthvalue(pa2, 512, 1)) if T else None)
    B.row("median(a)", nb, torchlet=lambda: tl.median(ta), numpy=lambda: np.partition(a, (N - 1) // 2)[(N - 1) // 2],
          torch=(lambda: torch.median(pa)) if T else None)
    B.row("bincount(int64 in [0, 1000))", 2 * nb, torchlet=lambda: tl.bincount(tai), numpy=lambda: np.bincount(ai),
          torch=(lambda: torch.bincount(pai)) if T else None)
    B.row("masked_select(a, a > 0)", nb, torchlet=lambda: tl.masked_select(ta, tm), numpy=lambda: a[m],
          torch=(lambda: torch.masked_select(pa, pm)) if T else None)
    B.row("cummax(a2, dim=1)", nb, torchlet=lambda: tl.cummax(ta2, 1),
          numpy=lambda: np.maximum.accumulate(a2, axis=1), torch=(lambda: torch.cummax(pa2, 1)) if T else None)
    B.row("cummin(a2, dim=0)", nb, torchlet=lambda: tl.cummin(ta2, 0),
          numpy=lambda: np.minimum.accumulate(a2, axis=0), torch=(lambda: torch.cummin(pa2, 0)) if T else None)
    B.row("nansum(a with NaNs)", nb, torchlet=lambda: tl.nansum(tan), numpy=lambda: np.nansum(an),
          torch=(lambda: torch.nansum(pan)) if T else None)
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
