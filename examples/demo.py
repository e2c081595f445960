"""torchlet demo: what the runtime does today, step by step.

Builds tensors, shows the CPU capability the kernels were chosen for, casts
and copies (through TensorIterator and the per-ISA copy kernel), round-trips
through numpy without copying, and times a clone beside numpy and PyTorch.
Later issues extend it to walk `c = a + b` through the generated bindings,
the dispatcher and the ufunc kernels.
"""
from __future__ import annotations

import time

import numpy as np

import torchlet as tl
from torchlet import _rt

try:
    import torch
except ImportError:
    torch = None


def step(title):
    print(f"\n== {title}")


def best_of(fn, n=5):
    fn()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main():
    print(f"torchlet {tl.__version__}: kernels compiled for {tl._supported_cpu_capabilities()}, "
          f"using '{tl.get_cpu_capability()}' on this CPU; {tl.get_num_threads()} thread(s)")

    step("tensors from Python data (dtype inferred like PyTorch)")
    a = tl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]])
    print("a =", a)
    print("a.shape", a.shape, "a.stride()", a.stride(), "a.dtype", a.dtype, "a.device", a.device)
    print("tl.tensor([1, 2, 3]) ->", tl.tensor([1, 2, 3]))
    print("tl.tensor([True, False]) ->", tl.tensor([True, False]))

    step("views share storage (C runtime functions; the dispatcher will route to them)")
    at = _rt.transpose(a, 0, 1)
    print("a.T =", at, "strides", at.stride(), "contiguous:", at.is_contiguous())
    _rt.fill_(_rt.select(a, 0, 0), 0.0)
    print("after filling row 0 of a, a.T shows it:", at.tolist())

    step("cast and copy: any dtype to any dtype, any strides (TensorIterator + copy kernel)")
    h = _rt.to(at, tl.float16)
    print("a.T.to(float16) =", h, "strides", h.stride(), "(dense layout kept)")
    c = _rt.contiguous(at)
    print("a.T.contiguous() strides", c.stride())
    x = tl.tensor([0.1, 1 / 3, 65519.0, 1e-8], dtype=tl.float64)
    print("float64", x.tolist(), "-> float16", _rt.to(x, tl.float16).tolist(),
          "(rounded once, bit-exact with numpy)")
    print("type promotion: int32 + 2.5 ->", tl.result_type(tl.tensor([1], dtype=tl.int32), 2.5),
          "; uint8 + int8 ->", tl.promote_types(tl.uint8, tl.int8))

    step("numpy round trip without copies")
    n = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tl.from_numpy(n)
    n[0, 0] = 42
    print("from_numpy sees numpy's writes:", t.tolist()[0])
    back = t.numpy()
    print("t.numpy() shares memory:", np.shares_memory(back, n), "; base is the tensor:", back.base is t)

    step("meta tensors: shapes and dtypes, no data")
    m = _rt.empty(1 << 20, 1 << 20, device="meta")
    print(m, "->", m.numel(), "elements, no memory")

    step("clone of 2^24 float32 (64 MiB), best of 5")
    big = np.random.default_rng(0).standard_normal(1 << 24).astype(np.float32)
    tb = tl.from_numpy(big)
    gb = 2 * big.nbytes / 1e9
    rows = [("torchlet clone", best_of(lambda: _rt.clone(tb))), ("numpy copy", best_of(lambda: big.copy()))]
    if torch is not None:
        pt = torch.from_numpy(big)
        rows.append(("torch clone", best_of(lambda: pt.clone())))
    for name, s in rows:
        print(f"  {name:<16} {s * 1e3:7.2f} ms  {gb / s:6.1f} GB/s")
    if torch is None:
        print("  (install torch with `make torch` to compare with PyTorch)")
    print("\nDone: built tensors, cast/copied through TensorIterator, shared memory with numpy, timed clone.")


if __name__ == "__main__":
    main()
