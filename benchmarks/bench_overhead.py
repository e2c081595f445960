"""Per-call overhead on 1-element tensors: `a + b`, `torchlet.add(a, b, out=c)`,
`a.add_(b)`, `relu`, ... beside PyTorch and numpy in one run, then where the
time of `a + b` goes (Python binding, cffi call, dispatcher + structured kernel
+ TensorIterator + allocation in C, the Python result object).

Goal: torchlet at most 0.6x PyTorch's time, i.e. "vs torch" >= 1.67.

Timing: the implementations of a row run interleaved, ROUNDS times a batch
each, and the best batch counts (a shared, busy machine slows everything
down by a varying factor; interleaving and taking the minimum keeps the
ratios meaningful).
"""
from __future__ import annotations

import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
from torchlet._C import ffi, lib  # noqa: E402
from torchlet._generated import _ops  # noqa: E402

from _harness import Bench, machine_info, torch  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "9"))
BATCH = int(os.environ.get("BENCH_BATCH", "20000"))


def _batch(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def interleaved(fns: dict) -> dict:
    """Best per-call time of each callable, measured round-robin."""
    for f in fns.values():
        _batch(f, 200)  # warm up
    best = {k: float("inf") for k in fns}
    was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(ROUNDS):
            for k, f in fns.items():
                best[k] = min(best[k], _batch(f, BATCH))
    finally:
        if was:
            gc.enable()
    return best


class _GcHolder:
    """The older result design, kept for comparison: a __slots__ object holding an ffi.gc cdata."""

    __slots__ = ("_h",)

    def __init__(self, h):
        self._h = h


def main():
    tl.set_num_threads(1)
    T = torch is not None
    if T:
        torch.set_num_threads(1)
        pa, pb, pc = torch.ones(1), torch.ones(1), torch.empty(1)
        pm = torch.ones(1) * -1
    a, b, c = tl.ones(1), tl.ones(1), tl.empty(1)
    m = tl.ones(1) * -1
    na, nb, nc = np.ones(1, np.float32), np.ones(1, np.float32), np.empty(1, np.float32)
    nm = -np.ones(1, np.float32)
    rows = [
        ("a + b", lambda: a + b, lambda: na + nb, (lambda: pa + pb) if T else None),
        ("add(a, b, out=c)", lambda: tl.add(a, b, out=c), lambda: np.add(na, nb, out=nc),
         (lambda: torch.add(pa, pb, out=pc)) if T else None),
        ("a.add_(b)", lambda: a.add_(b), lambda: np.add(na, nb, out=na), (lambda: pa.add_(pb)) if T else None),
        ("relu(a)", lambda: tl.relu(m), lambda: np.maximum(nm, 0), (lambda: torch.relu(pm)) if T else None),
        ("a.relu()", lambda: m.relu(), None, (lambda: pm.relu()) if T else None),
        ("a + 2", lambda: a + 2, lambda: na + 2, (lambda: pa + 2) if T else None),
        ("2 - a", lambda: 2 - a, lambda: 2 - na, (lambda: 2 - pa) if T else None),
        ("a * b", lambda: a * b, lambda: na * nb, (lambda: pa * pb) if T else None),
        ("add(a, b, alpha=2)", lambda: tl.add(a, b, alpha=2), None,
         (lambda: torch.add(pa, pb, alpha=2)) if T else None),
        ("a.sum()", lambda: a.sum(), lambda: na.sum(), (lambda: pa.sum()) if T else None),
        ("a.view(1)", lambda: a.view(1), lambda: na.reshape(1), (lambda: pa.view(1)) if T else None),
        ("a[0]", lambda: a[0], lambda: na[0:1], (lambda: pa[0]) if T else None),
        ("a.t()", lambda: a.t(), lambda: na.T, (lambda: pa.t()) if T else None),
    ]
    bench = Bench("per-call overhead, 1-element float32 (best of interleaved batches)", threads=1,
                  machine=machine_info())
    for name, f_tl, f_np, f_torch in rows:
        fns = {"torchlet": f_tl}
        if f_np is not None:
            fns["numpy"] = f_np
        if f_torch is not None:
            fns["torch"] = f_torch
        bench.rows.append((name, None, interleaved(fns)))
    bench.print()
    if T:
        tt = {name: times for name, _, times in bench.rows}
        print("\n  torchlet time / torch time (goal <= 0.60):  " + ", ".join(
            f"{n}: {t['torchlet'] / t['torch']:.2f}" for n, t in tt.items() if "torch" in t))

    # ---------------------------------------------------------- breakdown of a + b
    ah, bh = a._p, b._p
    one = _ops._SC_INT[1]
    entry, release, ndim, alias = lib.tl_ops_add_Tensor, lib.tl_tensor_release, lib.tl_tensor_ndim, lib.tl_alias
    new, Tensor = tl.Tensor.__new__, tl.Tensor

    def wrap_alias():
        t = new(Tensor)
        t._p = alias(ah)

    parts = {
        "empty Python call": lambda: None,
        "cffi call, 1 pointer (tl_tensor_ndim)": lambda: ndim(ah),
        "cffi tl_tensor_release(tl_alias(h))": lambda: release(alias(ah)),
        "cffi tl_alias + Tensor object (+__del__)": wrap_alias,
        "cffi tl_alias + object + ffi.gc (old design)": lambda: _GcHolder(ffi.gc(alias(ah), release)),
        "cffi tl_ops_add_Tensor + release": lambda: release(entry(ah, bh, one)),
        "C test hook: TensorIterator add + release": lambda: release(lib.tl_test_binary_add(ffi.NULL, ah, bh)),
        "cffi tl_empty(1) + release": lambda: release(lib.tl_empty(1, [1], lib.TL_FLOAT32, lib.TL_CPU)),
        "a.add_(b) (generated, no result object)": lambda: a.add_(b),
        "a + b (generated)": lambda: a + b,
    }
    if T:
        parts["torch a + b"] = lambda: pa + pb
    t = interleaved(parts)
    print("\n## where the time of `a + b` goes (1 element, ns per call, best of interleaved batches)")
    for name, v in t.items():
        print(f"  {name:<46} {v * 1e9:7.0f} ns")
    call = t["cffi call, 1 pointer (tl_tensor_ndim)"] - t["empty Python call"]
    c_entry = t["cffi tl_ops_add_Tensor + release"] - 2 * call - t["empty Python call"] - \
        (t["cffi tl_tensor_release(tl_alias(h))"] - 2 * call - t["empty Python call"]) / 2
    obj = t["cffi tl_alias + Tensor object (+__del__)"] - t["cffi tl_tensor_release(tl_alias(h))"]
    total = t["a + b (generated)"] - t["empty Python call"]
    binding = total - call - c_entry - obj - call  # the release in __del__ is a second cffi call
    print(f"\n  a + b = {total * 1e9:.0f} ns: cffi call ~{call * 1e9:.0f} ns, C work of tl_ops_add_Tensor "
          f"(dispatch + structured meta/impl + TensorIterator + allocation) ~{c_entry * 1e9:.0f} ns, "
          f"result object ~{obj * 1e9:.0f} ns + release call ~{call * 1e9:.0f} ns at death, "
          f"generated binding (dunder, type checks, conversion) ~{binding * 1e9:.0f} ns")
    hook = t["C test hook: TensorIterator add + release"] - t["cffi tl_tensor_release(tl_alias(h))"]
    print(f"  (beyond an alias: the C test hook adding through TensorIterator without the dispatcher "
          f"~{hook * 1e9:.0f} ns, the generated path tl_ops_add_Tensor "
          f"~{(t['cffi tl_ops_add_Tensor + release'] - t['cffi tl_tensor_release(tl_alias(h))']) * 1e9:.0f} ns)")
    if T:
        print(f"\n  a + b: torchlet {t['a + b (generated)'] * 1e9:.0f} ns, torch {t['torch a + b'] * 1e9:.0f} ns "
              f"-> {t['a + b (generated)'] / t['torch a + b']:.2f}x torch's time (goal <= 0.6x)")


if __name__ == "__main__":
    main()
