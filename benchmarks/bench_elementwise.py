"""Elementwise arithmetic and sum on 2^24 float32 (generated ufunc loops,
kernels/native/reduce_ops.c), plus exp on 2^24 and add on 2^26 float32 (the
large-array rows), torchlet beside numpy and PyTorch (when installed), one thread and
all threads.

Timed round robin (`_harness.interleaved`: one batch of each library per round,
best round counts), so load from other processes hits all three alike: on a
shared machine only the ratios mean something. Ratio = other library's time /
torchlet's (above 1.0 torchlet is faster). GB/s counts bytes read + written
(the memory-bound rows: compare with the bandwidth, not only the ratio)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
from torchlet import _rt  # noqa: E402

from _harness import interleaved, machine_info, thread_counts, torch  # noqa: E402

N = 1 << 24
N26 = 1 << 26
SIDE = 1 << 12   # 4096 x 4096
IMPLS = ("torchlet", "numpy", "torch")


def rows():
    """{case: (bytes moved, {impl: fn})}"""
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
    T = torch is not None
    pt = {}
    if T:
        pt = dict(a=torch.from_numpy(a), b=torch.from_numpy(b), b64=torch.from_numpy(b64), row=torch.from_numpy(row),
                  out=torch.empty(N))
        pt["a2"], pt["b2"] = pt["a"].view(SIDE, SIDE), pt["b"].view(SIDE, SIDE)

    def r(nbytes, torchlet, numpy, torch_fn):
        d = {"torchlet": torchlet, "numpy": numpy}
        if T:
            d["torch"] = torch_fn
        return nbytes, d

    nb3 = 3 * 4 * N
    out = {
        "a + b, out=": r(nb3, lambda: tl.add(ta, tb, out=out_tl), lambda: np.add(a, b, out=out_np),
                         lambda: torch.add(pt["a"], pt["b"], out=pt["out"])),
        "a + b (allocating)": r(nb3, lambda: ta + tb, lambda: a + b, lambda: pt["a"] + pt["b"]),
        "a2 + row (broadcast)": r(2 * 4 * N, lambda: ta2 + trow, lambda: a2 + row, lambda: pt["a2"] + pt["row"]),
        "a2 + b2.T": r(nb3, lambda: ta2 + tb2T, lambda: a2 + b2.T, lambda: pt["a2"] + pt["b2"].T),
        "float32 + float64": r((4 + 8 + 8) * N, lambda: ta + tb64, lambda: a + b64, lambda: pt["a"] + pt["b64"]),
        "a * 2.5": r(2 * 4 * N, lambda: ta * 2.5, lambda: a * np.float32(2.5), lambda: pt["a"] * 2.5),
        "exp(a), out=": r(2 * 4 * N, lambda: tl.exp(ta, out=out_tl), lambda: np.exp(a, out=out_np),
                          lambda: torch.exp(pt["a"], out=pt["out"])),
        "exp(a) (allocating)": r(2 * 4 * N, lambda: tl.exp(ta), lambda: np.exp(a), lambda: torch.exp(pt["a"])),
        "a.copy_(b)": r(2 * 4 * N, lambda: out_tl.copy_(tb), lambda: np.copyto(out_np, b),
                        lambda: pt["out"].copy_(pt["b"])),
        "sum(a)": r(4 * N, lambda: tl.sum(ta), lambda: a.sum(), lambda: pt["a"].sum()),
        "sum(a2, dim=0)": r(4 * N, lambda: tl.sum(ta2, 0), lambda: a2.sum(0), lambda: pt["a2"].sum(0)),
    }
    return out


def rows_2_26():
    """add on 2^26 float32 (256 MiB per array: larger than the caches)"""
    rng = np.random.default_rng(1)
    a = rng.standard_normal(N26, dtype=np.float32)
    b = rng.standard_normal(N26, dtype=np.float32)
    ta, tb = tl.from_numpy(a), tl.from_numpy(b)
    o_np, o_tl = np.empty_like(a), _rt.empty(N26)
    out = {"2^26: a + b, out=": (3 * 4 * N26, {"torchlet": lambda: tl.add(ta, tb, out=o_tl),
                                               "numpy": lambda: np.add(a, b, out=o_np)}),
           "2^26: a + b (allocating)": (3 * 4 * N26, {"torchlet": lambda: ta + tb, "numpy": lambda: a + b})}
    if torch is not None:
        pa, pb, po = torch.from_numpy(a), torch.from_numpy(b), torch.empty(N26)
        out["2^26: a + b, out="][1]["torch"] = lambda: torch.add(pa, pb, out=po)
        out["2^26: a + b (allocating)"][1]["torch"] = lambda: pa + pb
    return out


def rows_transposed():
    """a + b.T beyond 4096^2 (TensorIterator's tiled walk, docs/RUNTIME.md):
    a size that is not a power of two (numpy's and torch's strided reads do not
    thrash one cache set there), odd sizes (tile tails), out=, 3-D"""
    rng = np.random.default_rng(2)
    out = {}
    for m, n in [(1000, 1000), (4097, 4095)]:
        a = rng.standard_normal((m, n), dtype=np.float32)
        b = rng.standard_normal((n, m), dtype=np.float32)
        ta, tbT = tl.from_numpy(a), _rt.transpose(tl.from_numpy(b), 0, 1)
        fns = {"torchlet": lambda ta=ta, tbT=tbT: ta + tbT, "numpy": lambda a=a, b=b: a + b.T}
        if torch is not None:
            pa, pb = torch.from_numpy(a), torch.from_numpy(b)
            fns["torch"] = lambda pa=pa, pb=pb: pa + pb.T
        out[f"a + b.T {m}x{n}"] = (3 * 4 * m * n, fns)
    a = rng.standard_normal((SIDE, SIDE), dtype=np.float32)
    b = rng.standard_normal((SIDE, SIDE), dtype=np.float32)
    ta, tbT, o_tl, o_np = tl.from_numpy(a), _rt.transpose(tl.from_numpy(b), 0, 1), _rt.empty(SIDE, SIDE), np.empty_like(a)
    fns = {"torchlet": lambda: tl.add(ta, tbT, out=o_tl), "numpy": lambda: np.add(a, b.T, out=o_np)}
    x = rng.standard_normal((16, 512, 512), dtype=np.float32)
    y = rng.standard_normal((16, 512, 512), dtype=np.float32)
    tx, ty = tl.from_numpy(x), tl.from_numpy(y)
    fns3 = {"torchlet": lambda: _rt.transpose(tx, 1, 2) + ty, "numpy": lambda: x.transpose(0, 2, 1) + y}
    if torch is not None:
        pa, pb, po, px, py = (torch.from_numpy(v) for v in (a, b, np.empty_like(a), x, y))
        fns["torch"] = lambda: torch.add(pa, pb.T, out=po)
        fns3["torch"] = lambda: px.transpose(1, 2) + py
    out["a + b.T 4096^2, out="] = (3 * 4 * SIDE * SIDE, fns)
    out["x.mT + y 16x512x512"] = (3 * 4 * x.size, fns3)
    return out


def print_rows(title, cases, rounds=5):
    print(f"\n## {title}")
    head = f"{'case':<26}" + "".join(f" {k:>19}" for k in IMPLS) + f" {'vs numpy':>9} {'vs torch':>9}"
    print(head)
    print("-" * len(head))
    for name, (nbytes, fns) in cases.items():
        t = interleaved(fns, rounds=rounds)
        line = f"{name:<26}"
        for k in IMPLS:
            line += f" {t[k] * 1e3:8.2f}ms {nbytes / t[k] / 1e9:5.1f}GB/s" if k in t else f" {'-':>19}"
        for ref in ("numpy", "torch"):
            line += f" {t[ref] / t['torchlet']:8.2f}x" if ref in t else f" {'-':>9}"
        print(line, flush=True)


def run(threads: int):
    tl.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    cap = tl.get_cpu_capability()
    print_rows(f"elementwise, 2^24 float32 (threads={threads}, cpu={cap})", rows())
    print_rows(f"add, 2^26 float32 (threads={threads}, cpu={cap})", rows_2_26(), rounds=3)
    print_rows(f"a + b.T, float32 (threads={threads}, cpu={cap})", rows_transposed())


if __name__ == "__main__":
    print(machine_info())
    # default: one thread and all cores; --threads 1,4,16 (or TORCHLET_BENCH_THREADS) picks others
    for threads in thread_counts([1] + ([os.cpu_count()] if (os.cpu_count() or 1) > 1 else [])):
        run(threads)
