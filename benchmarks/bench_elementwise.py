"""Elementwise arithmetic and sum on 2^24 float32 (generated ufunc loops,
kernels/native/reduce_ops.c), torchlet beside numpy and PyTorch (when
installed), one thread and all threads. GB/s counts bytes read + written."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
from torchlet import _rt  # noqa: E402

from _harness import Bench, machine_info, torch  # noqa: E402

N = 1 << 24
SIDE = 1 << 12   # 4096 x 4096


def run(threads: int):
    tl.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    b64 = b.astype(np.float64)
    row = rng.standard_normal(SIDE).astype(np.float32)
    ta, tb, tb64, trow = (tl.from_numpy(x) for x in (a, b, b64, row))
    a2, b2 = a.reshape(SIDE, SIDE), b.reshape(SIDE, SIDE)
    ta2, tb2 = _rt.view(ta, SIDE, SIDE), _rt.view(tb, SIDE, SIDE)
    tb2T = _rt.transpose(tb2, 0, 1)
    out_np, out_tl = np.empty_like(a), _rt.empty(N)
    B = Bench("elementwise, 2^24 float32", threads=threads, cpu=tl.get_cpu_capability())
    pt = {}
    if torch is not None:
        pt = dict(a=torch.from_numpy(a), b=torch.from_numpy(b), b64=torch.from_numpy(b64), row=torch.from_numpy(row),
                  out=torch.empty(N))
        pt["a2"], pt["b2"] = pt["a"].view(SIDE, SIDE), pt["b"].view(SIDE, SIDE)
    T = torch is not None
    nb3 = 3 * 4 * N
    B.row("a + b, out=", nb3, torchlet=lambda: tl.add(ta, tb, out=out_tl),
          numpy=lambda: np.add(a, b, out=out_np),
          torch=(lambda: torch.add(pt["a"], pt["b"], out=pt["out"])) if T else None)
    B.row("a + b (allocating)", nb3, torchlet=lambda: ta + tb, numpy=lambda: a + b,
          torch=(lambda: pt["a"] + pt["b"]) if T else None)
    B.row("a2 + row (broadcast)", 2 * 4 * N, torchlet=lambda: ta2 + trow, numpy=lambda: a2 + row,
          torch=(lambda: pt["a2"] + pt["row"]) if T else None)
    B.row("a2 + b2.T", nb3, torchlet=lambda: ta2 + tb2T, numpy=lambda: a2 + b2.T,
          torch=(lambda: pt["a2"] + pt["b2"].T) if T else None)
    B.row("float32 + float64", (4 + 8 + 8) * N, torchlet=lambda: ta + tb64, numpy=lambda: a + b64,
          torch=(lambda: pt["a"] + pt["b64"]) if T else None)
    B.row("a * 2.5", 2 * 4 * N, torchlet=lambda: ta * 2.5, numpy=lambda: a * np.float32(2.5),
          torch=(lambda: pt["a"] * 2.5) if T else None)
    B.row("sum(a)", 4 * N, torchlet=lambda: tl.sum(ta), numpy=lambda: a.sum(),
          torch=(lambda: pt["a"].sum()) if T else None)
    B.row("sum(a2, dim=0)", 4 * N, torchlet=lambda: tl.sum(ta2, 0), numpy=lambda: a2.sum(0),
          torch=(lambda: pt["a2"].sum(0)) if T else None)
    B.print()


if __name__ == "__main__":
    print(machine_info())
    run(1)
    if (os.cpu_count() or 1) > 1:
        run(os.cpu_count())
