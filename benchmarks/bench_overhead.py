"""Per-call overhead on 1-element tensors: `a + b`, `torchlet.add(a, b, out=c)`,
`a.add_(b)`, `relu`, ... beside PyTorch and numpy in one run, then where the
time of `a + b` goes (cffi call, argument conversion, dispatcher + structured
kernel + TensorIterator + allocation in C, Python wrapper creation).

Goal (issue 4): torchlet at most 0.6x PyTorch's time, i.e. "vs torch" >= 1.67.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
from torchlet._C import ffi, lib  # noqa: E402
from torchlet._generated import _ops  # noqa: E402

from _harness import Bench, machine_info, timeit, torch  # noqa: E402


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    a, b, c = tl.ones(1), tl.ones(1), tl.empty(1)
    na, nb, nc = np.ones(1, np.float32), np.ones(1, np.float32), np.empty(1, np.float32)
    if torch is not None:
        pa, pb, pc = torch.ones(1), torch.ones(1), torch.empty(1)
        pm = torch.ones(1) * -1
    m = tl.ones(1) * -1
    nm = -np.ones(1, np.float32)
    T = torch is not None
    bench = Bench("per-call overhead, 1-element float32", threads=1, machine=machine_info())
    bench.row("a + b", torchlet=lambda: a + b, numpy=lambda: na + nb, torch=(lambda: pa + pb) if T else None)
    bench.row("add(a, b, out=c)", torchlet=lambda: tl.add(a, b, out=c),
              numpy=lambda: np.add(na, nb, out=nc), torch=(lambda: torch.add(pa, pb, out=pc)) if T else None)
    bench.row("a.add_(b)", torchlet=lambda: a.add_(b), numpy=lambda: np.add(na, nb, out=na),
              torch=(lambda: pa.add_(pb)) if T else None)
    bench.row("relu(a)", torchlet=lambda: tl.relu(m), numpy=lambda: np.maximum(nm, 0),
              torch=(lambda: torch.relu(pm)) if T else None)
    bench.row("a.relu()", torchlet=lambda: m.relu(), torch=(lambda: pm.relu()) if T else None)
    bench.row("a + 2", torchlet=lambda: a + 2, numpy=lambda: na + 2, torch=(lambda: pa + 2) if T else None)
    bench.row("a * b", torchlet=lambda: a * b, numpy=lambda: na * nb, torch=(lambda: pa * pb) if T else None)
    bench.row("add(a, b, alpha=2)", torchlet=lambda: tl.add(a, b, alpha=2),
              torch=(lambda: torch.add(pa, pb, alpha=2)) if T else None)
    bench.row("a.sum()", torchlet=lambda: a.sum(), numpy=lambda: na.sum(), torch=(lambda: pa.sum()) if T else None)
    bench.row("x.view(1)", torchlet=lambda: a.view(1), numpy=lambda: na.reshape(1),
              torch=(lambda: pa.view(1)) if T else None)
    bench.row("x[0]", torchlet=lambda: a[0], numpy=lambda: na[0:1], torch=(lambda: pa[0]) if T else None)
    bench.print()

    # ---------------------------------------------------------- breakdown of a + b
    ah, bh = a._h, b._h
    one = _ops._SC_INT[1]
    entry = lib.tl_ops_add_Tensor
    release = lib.tl_tensor_release
    wrap = _ops._wrap
    ndim = lib.tl_tensor_ndim
    rows = []

    def add(name, fn):
        rows.append((name, timeit(fn)))

    add("empty Python call  f()", lambda: None)
    add("cffi call, 1 pointer arg  tl_tensor_ndim(h)", lambda: ndim(ah))
    add("cffi: tl_ops_add_Tensor(h, h, alpha) + release", lambda: release(entry(ah, bh, one)))
    add("cffi: tl_tensor_release(tl_alias(h))", lambda: release(lib.tl_alias(ah)))
    add("cffi: tl_alias(h) + Python wrapper (_wrap)", lambda: wrap(lib.tl_alias(ah)))
    add("generated: a.add_(b) (no result object)", lambda: a.add_(b))
    add("generated: a + b", lambda: a + b)
    if hasattr(lib, "tl_test_binary_add"):
        add("C: TensorIterator add test hook + release", lambda: release(lib.tl_test_binary_add(ffi.NULL, ah, bh)))
    print("\n## where the time of `a + b` goes (1 element, ns per call)")
    for name, t in rows:
        print(f"{name:<52} {t * 1e9:8.0f} ns")
    d = dict(rows)
    t_all = d["generated: a + b"]
    t_c = d["cffi: tl_ops_add_Tensor(h, h, alpha) + release"]
    t_rel = d["cffi: tl_tensor_release(tl_alias(h))"]
    t_wrap = d["cffi: tl_alias(h) + Python wrapper (_wrap)"] - d["cffi: tl_tensor_release(tl_alias(h))"]
    print(f"\n  C entry (cffi + dispatcher + structured kernel + iterator + alloc) ~ {(t_c - t_rel / 2) * 1e9:.0f} ns")
    print(f"  Python result object (Tensor + ffi.gc, incl. its later release)  ~ {t_wrap * 1e9 + t_rel / 2 * 1e9:.0f} ns")
    print(f"  generated binding (dunder call, type checks, argument conversion)  ~ "
          f"{(t_all - t_c - t_wrap) * 1e9:.0f} ns")
    if torch is not None:
        tt = timeit(lambda: pa + pb)
        print(f"\n  a + b: torchlet {t_all * 1e9:.0f} ns, torch {tt * 1e9:.0f} ns -> {t_all / tt:.2f}x torch's time "
              f"(goal <= 0.6x)")


if __name__ == "__main__":
    main()
