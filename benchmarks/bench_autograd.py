"""Autograd overhead on tiny tensors, beside PyTorch in one run.

1. `(a*b + c).sum().backward()` on 3-element float32 tensors (a, b, c leaves
   that require grad): the whole step, forward and backward, and the backward
   alone (a fresh graph each time, built outside the timed region is not
   possible for a one-shot graph, so "backward" = step - forward).
2. A chain of N adds, `y = x + x + ... (N times)`, then `y.sum().backward()`,
   for N = 1, 2, 4, ..., 1024: time per step and per node.

Goal: torchlet at most 0.5x PyTorch's time ("vs torch" >= 2.0).

The "C engine" column runs the same graph through the C API directly
(tl_autograd_backward through cffi, no Python Tensor.backward wrapper) to
show how much of the time is the Python layer.

Timing: implementations of a row run interleaved, ROUNDS batches each, the
best batch counts (a busy shared machine slows everything by a varying
factor; interleaving and the minimum keep the ratios meaningful).
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

from _harness import machine_info, torch  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))
TARGET = float(os.environ.get("BENCH_TARGET_S", "0.02"))  # seconds per batch


def _batch(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def best(fns: dict) -> dict:
    """Interleaved best-of-ROUNDS seconds per call of each callable."""
    sizes = {}
    for k, fn in fns.items():
        fn()
        n = 1
        while _batch(fn, n) * n < TARGET / 4 and n < 1 << 16:
            n *= 4
        sizes[k] = n
    out = {k: float("inf") for k in fns}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(ROUNDS):
            for k, fn in fns.items():
                out[k] = min(out[k], _batch(fn, sizes[k]))
    finally:
        if gc_was:
            gc.enable()
    return out


def fmt(s: float) -> str:
    return f"{s * 1e6:9.2f} us"


def leaves_tl(n=3):
    return [tl.tensor(np.random.rand(n).astype(np.float32)).requires_grad_() for _ in range(3)]


def leaves_torch(n=3):
    return [torch.rand(n, requires_grad=True) for _ in range(3)]


def c_backward(y):
    arr = ffi.new("tl_tensor *[1]", [y._p])
    if lib.tl_autograd_backward(arr, 1, ffi.NULL, 0, 0, ffi.NULL, 0) != 0:
        raise RuntimeError(ffi.string(lib.tl_error_message()).decode())


def main():
    print(machine_info() if callable(machine_info) else "")
    print(f"torch: {torch.__version__ if torch else 'not installed'}")
    a, b, c = leaves_tl()
    fns = {
        "torchlet step": lambda: (a * b + c).sum().backward(),
        "torchlet fwd": lambda: (a * b + c).sum(),
        "C engine step": lambda: c_backward((a * b + c).sum()),
    }
    if torch is not None:
        ta, tb, tc = leaves_torch()
        fns["torch step"] = lambda: (ta * tb + tc).sum().backward()
        fns["torch fwd"] = lambda: (ta * tb + tc).sum()
    r = best(fns)
    print("\n(a*b + c).sum().backward(), 3-element float32 leaves")
    print(f"  {'':16}{'torchlet':>12}{'C engine':>12}{'torch':>12}{'vs torch':>10}")
    rows = [("forward", "torchlet fwd", None, "torch fwd")]
    rows.append(("forward+backward", "torchlet step", "C engine step", "torch step"))
    for name, k1, kc, kt in rows:
        t1 = r[k1]
        tc_ = r.get(kc) if kc else None
        tt = r.get(kt)
        ratio = f"{tt / t1:9.2f}x" if tt else "        -"
        print(f"  {name:16}{fmt(t1)}{fmt(tc_) if tc_ else ' ' * 12}{fmt(tt) if tt else ' ' * 12}{ratio}")
    if torch is not None:
        bt, btt = r["torchlet step"] - r["torchlet fwd"], r["torch step"] - r["torch fwd"]
        print(f"  {'backward only':16}{fmt(bt)}{' ' * 12}{fmt(btt)}{btt / bt:9.2f}x")

    print("\nchain of N adds: y = x + x + ... ; y.sum().backward()  (time per step; per node in brackets)")
    print(f"  {'N':>6}{'torchlet':>12}{'C engine':>12}{'torch':>12}{'vs torch':>10}{'tl/node':>12}{'torch/node':>12}")
    x = tl.tensor(np.random.rand(3).astype(np.float32)).requires_grad_()
    tx = torch.rand(3, requires_grad=True) if torch is not None else None
    ratios = []
    n = 1
    while n <= 1024:
        def chain_tl(n=n):
            y = x
            for _ in range(n):
                y = y + x
            y.sum().backward()

        def chain_c(n=n):
            y = x
            for _ in range(n):
                y = y + x
            c_backward(y.sum())

        fns = {"tl": chain_tl, "c": chain_c}
        if tx is not None:
            def chain_t(n=n):
                y = tx
                for _ in range(n):
                    y = y + tx
                y.sum().backward()

            fns["torch"] = chain_t
        r = best(fns)
        tt = r.get("torch")
        ratio = tt / r["tl"] if tt else None
        if ratio:
            ratios.append(ratio)
        print(f"  {n:6d}{fmt(r['tl'])}{fmt(r['c'])}{fmt(tt) if tt else ' ' * 12}"
              f"{(f'{ratio:9.2f}x' if ratio else '        -')}{fmt(r['tl'] / (n + 1))}"
              f"{fmt(tt / (n + 1)) if tt else ''}")
        n *= 2
    if ratios:
        print(f"\n  vs torch (time ratio, >= 2.0 meets the 0.5x goal): min {min(ratios):.2f}x, max {max(ratios):.2f}x")
    print(f"  live autograd nodes after the run: {lib.tl_autograd_live_nodes()}")


if __name__ == "__main__":
    main()
