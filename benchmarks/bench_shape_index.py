"""Shape and indexing operators beside numpy and PyTorch (when installed), one
thread: cat of 8 float32 tensors of 2^21 elements (dim 0, and dim 1 of
[2048, 1024] pieces), index_select and gather on a 4096 x 1024 float32 matrix,
advanced indexing (x[idx] of 2^20 elements by 100k indices, 100k rows of 64,
index_put_ accumulating 100k values).

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

from _harness import interleaved, machine_info, torch  # noqa: E402

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
    print(f"shape/index ops, float32, 1 thread, cpu={tl.get_cpu_capability()} ({machine_info()})")

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

    # advanced indexing (index.Tensor through Tensor.__getitem__): a 1M-element
    # vector gathered by a 100k long index, 100k rows of 64 by a row index, and
    # index_put_ accumulating 100k values (np.add.at)
    def row(name, tl_fn, np_fn, torch_fn):
        impls = {"torchlet": tl_fn, "numpy": np_fn}
        if torch is not None:
            impls["torch"] = torch_fn
        report(name, interleaved(impls, rounds=ROUNDS))

    pt = torch.from_numpy if torch is not None else (lambda a: None)
    v = rng.standard_normal(1 << 20).astype(np.float32)
    vi = rng.integers(-(1 << 20), 1 << 20, size=100_000)
    tv, tvi, pv, pvi = tl.from_numpy(v), tl.from_numpy(vi), pt(v), pt(vi)
    row("x[idx] 2^20 by 100k (getitem)", lambda: tv[tvi], lambda: v[vi], lambda: pv[pvi])
    r = rng.standard_normal((1 << 14, 64)).astype(np.float32)
    ri = rng.integers(0, 1 << 14, size=100_000)
    tr, tri, pr, pri = tl.from_numpy(r), tl.from_numpy(ri), pt(r), pt(ri)
    row("x[idx] [16384, 64] by 100k rows", lambda: tr[tri], lambda: r[ri], lambda: pr[pri])
    acc = np.zeros(1 << 20, np.float32)
    vals_ = rng.standard_normal(100_000).astype(np.float32)
    tacc, tvals, pacc, pvals = tl.from_numpy(acc.copy()), tl.from_numpy(vals_), pt(acc.copy()), pt(vals_)
    row("index_put_ accumulate 100k into 2^20", lambda: tacc.index_put_((tvi,), tvals, accumulate=True),
        lambda: np.add.at(acc, vi, vals_), lambda: pacc.index_put_((pvi,), pvals, accumulate=True))

if __name__ == "__main__":
    main()
