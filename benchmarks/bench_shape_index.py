"""Shape and indexing operators beside numpy and PyTorch (when installed), one
thread: cat of 8 float32 tensors of 2^21 elements (dim 0, and dim 1 of
[2048, 1024] pieces), index_select and gather on a 4096 x 1024 float32 matrix.

Timing: the implementations of a row run interleaved (round robin, ROUNDS
batches each) and each keeps its best batch, so machine load hits all of them
alike; the ratio `vs X` is X's time / torchlet's (above 1.0 torchlet is faster).
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import interleaved, torch  # noqa: E402

ROUNDS = 7


def fmt(s):
    return f"{s * 1e3:8.3f} ms" if s >= 1e-3 else f"{s * 1e6:8.1f} us"


def report(name, t):
    cols = [f"{k} {fmt(v)}" for k, v in t.items()]
    ratios = [f"vs {k} {t[k] / t['torchlet']:.2f}x" for k in t if k != "torchlet"]
    print(f"{name:34s} " + "  ".join(cols) + "   " + "  ".join(ratios))


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"shape/index ops, float32, 1 thread, cpu={tl.get_cpu_capability()}")

    parts = [rng.standard_normal(1 << 21).astype(np.float32) for _ in range(8)]
    tp = [tl.from_numpy(p) for p in parts]
    impls = {"torchlet": lambda: tl.cat(tp), "numpy": lambda: np.concatenate(parts)}
    if torch is not None:
        pp = [torch.from_numpy(p) for p in parts]
        impls["torch"] = lambda: torch.cat(pp)
    report("cat 8 x 2^21 (dim 0)", interleaved(impls, rounds=ROUNDS))

    parts2 = [p.reshape(2048, 1024) for p in parts]
    tp2 = [tl.from_numpy(p) for p in parts2]
    impls = {"torchlet": lambda: tl.cat(tp2, 1), "numpy": lambda: np.concatenate(parts2, 1)}
    if torch is not None:
        pp2 = [torch.from_numpy(p) for p in parts2]
        impls["torch"] = lambda: torch.cat(pp2, 1)
    report("cat 8 x [2048, 1024] (dim 1)", interleaved(impls, rounds=ROUNDS))

    m = rng.standard_normal((4096, 1024)).astype(np.float32)
    tm = tl.from_numpy(m)
    rows = rng.integers(0, 4096, size=4096)
    cols = rng.integers(0, 1024, size=1024)
    trows, tcols = tl.from_numpy(rows), tl.from_numpy(cols)
    for name, dim, ix, tix in (("index_select 4096x1024, dim 0", 0, rows, trows),
                               ("index_select 4096x1024, dim 1", 1, cols, tcols)):
        impls = {"torchlet": lambda dim=dim, tix=tix: tl.index_select(tm, dim, tix),
                 "numpy": lambda dim=dim, ix=ix: np.take(m, ix, dim)}
        if torch is not None:
            pm, pix = torch.from_numpy(m), torch.from_numpy(ix)
            impls["torch"] = lambda dim=dim, pm=pm, pix=pix: torch.index_select(pm, dim, pix)
        report(name, interleaved(impls, rounds=ROUNDS))

    g = rng.integers(0, 1024, size=(4096, 1024))
    tg = tl.from_numpy(g)
    impls = {"torchlet": lambda: tl.gather(tm, 1, tg), "numpy": lambda: np.take_along_axis(m, g, 1)}
    if torch is not None:
        pm, pg = torch.from_numpy(m), torch.from_numpy(g)
        impls["torch"] = lambda: torch.gather(pm, 1, pg)
    report("gather 4096x1024, dim 1", interleaved(impls, rounds=ROUNDS))
    g0 = rng.integers(0, 4096, size=(4096, 1024))
    tg0 = tl.from_numpy(g0)
    impls = {"torchlet": lambda: tl.gather(tm, 0, tg0), "numpy": lambda: np.take_along_axis(m, g0, 0)}
    if torch is not None:
        pg0 = torch.from_numpy(g0)
        impls["torch"] = lambda: torch.gather(pm, 0, pg0)
    report("gather 4096x1024, dim 0", interleaved(impls, rounds=ROUNDS))


if __name__ == "__main__":
    main()
