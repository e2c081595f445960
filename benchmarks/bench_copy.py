"""Copy and cast throughput on 2^24 float32: out=-style copy, allocating clone,
dtype casts and transposed copies, torchlet beside numpy and PyTorch (when
installed), one thread (like the tests) and all threads. Also shows what the
allocator's block cache is worth for allocating ops."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
from torchlet import _rt  # noqa: E402
from torchlet._C import lib  # noqa: E402

from _harness import Bench, machine_info, thread_counts, torch  # noqa: E402

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

N = 1 << 24
SIDE = 1 << 12    # 4096 x 4096 = 2^24 for the transposed cases


def run(threads: int):
    tl.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    ta = tl.from_numpy(a)
    dst_np = np.empty_like(a)
    dst_tl = _rt.empty(N)
    b = Bench("copy / cast, 2^24 float32", threads=threads, cpu=tl.get_cpu_capability())
    if torch is not None:
        pa = torch.from_numpy(a)
        pdst = torch.empty(N)
    nb = a.nbytes
    b.row("copy out= (f32 -> f32)", 2 * nb,
          torchlet=lambda: _rt.copy_(dst_tl, ta),
          numpy=lambda: np.copyto(dst_np, a),
          torch=(lambda: pdst.copy_(pa)) if torch is not None else None)
    b.row("clone (allocating)", 2 * nb,
          torchlet=lambda: _rt.clone(ta),
          numpy=lambda: a.copy(),
          torch=(lambda: pa.clone()) if torch is not None else None)
    casts = [("float16", tl.float16, np.float16, "float16", 2),
             ("float64", tl.float64, np.float64, "float64", 8),
             ("int32", tl.int32, np.int32, "int32", 4)]
    if ml_dtypes is not None:
        casts.insert(1, ("bfloat16", tl.bfloat16, ml_dtypes.bfloat16, "bfloat16", 2))
    for name, tdt, ndt, pname, isz in casts:
        b.row(f"cast f32 -> {name} (allocating)", nb + N * isz,
              torchlet=lambda tdt=tdt: _rt.to(ta, tdt),
              numpy=lambda ndt=ndt: a.astype(ndt),
              torch=(lambda pname=pname: pa.to(getattr(torch, pname))) if torch is not None else None)
    h = a.astype(np.float16)
    th = tl.from_numpy(h)
    b.row("cast f16 -> f32 (allocating)", N * 2 + nb,
          torchlet=lambda: _rt.to(th, tl.float32),
          numpy=lambda: h.astype(np.float32),
          torch=(lambda: torch.from_numpy(h).to(torch.float32)) if torch is not None else None)
    m = a.reshape(SIDE, SIDE)
    tm = tl.from_numpy(m)
    tmT = _rt.transpose(tm, 0, 1)
    outT = _rt.empty(SIDE, SIDE)
    outT_np = np.empty_like(m)
    b.row("transposed copy out= (x.T -> dense)", 2 * nb,
          torchlet=lambda: _rt.copy_(outT, tmT),
          numpy=lambda: np.copyto(outT_np, m.T),
          torch=(lambda: torch.from_numpy(outT_np).copy_(pa.view(SIDE, SIDE).T)) if torch is not None else None)
    b.row("contiguous(x.T)", 2 * nb,
          torchlet=lambda: _rt.contiguous(tmT),
          numpy=lambda: np.ascontiguousarray(m.T),
          torch=(lambda: pa.view(SIDE, SIDE).T.contiguous()) if torch is not None else None)
    outT16 = _rt.empty(SIDE, SIDE, dtype=tl.float16)
    outT16_np = np.empty((SIDE, SIDE), np.float16)
    b.row("cast copy out= (f16 <- x.T)", nb + N * 2,
          torchlet=lambda: _rt.copy_(outT16, tmT),
          numpy=lambda: np.copyto(outT16_np, m.T, casting="same_kind"),
          torch=(lambda: torch.from_numpy(outT16_np).copy_(pa.view(SIDE, SIDE).T)) if torch is not None else None)
    m2 = rng.standard_normal((SIDE, SIDE)).astype(np.float32)
    tm2 = tl.from_numpy(m2)
    b.row("a + b.T (test hook loop)", 3 * nb,
          torchlet=lambda: _rt.test_binary_add(tm2, tmT),
          numpy=lambda: m2 + m.T,
          torch=(lambda: torch.from_numpy(m2) + pa.view(SIDE, SIDE).T) if torch is not None else None)
    b.print()

    # what the allocator cache is worth for allocating ops (clone of 64 MiB)
    c = Bench("allocator block cache, clone of 2^24 float32", threads=threads)
    c.row("clone, cache on", 2 * nb, torchlet=lambda: _rt.clone(ta))
    lib.tl_allocator_set_cache(1 << 20, 0)      # cache off
    c.row("clone, cache off (page faults)", 2 * nb, torchlet=lambda: _rt.clone(ta))
    lib.tl_allocator_set_cache(1 << 20, -1)     # default again
    c.row("copy out= (no allocation)", 2 * nb, torchlet=lambda: _rt.copy_(dst_tl, ta))
    c.print()

    # c = a + b allocating vs out= (TensorIterator test hook loop; the real add is generated later)
    bb = rng.standard_normal(N).astype(np.float32)
    tb = tl.from_numpy(bb)
    out_np = np.empty_like(a)
    d = Bench("c = a + b vs out=, 2^24 float32 (test hook loop)", threads=threads)
    if torch is not None:
        pb = torch.from_numpy(bb)
        pout = torch.empty(N)
    d.row("a + b (allocating)", 3 * nb,
          torchlet=lambda: _rt.test_binary_add(ta, tb),
          numpy=lambda: a + bb,
          torch=(lambda: pa + pb) if torch is not None else None)
    d.row("add(a, b, out=c)", 3 * nb,
          torchlet=lambda: _rt.test_binary_add(ta, tb, out=dst_tl),
          numpy=lambda: np.add(a, bb, out=out_np),
          torch=(lambda: torch.add(pa, pb, out=pout)) if torch is not None else None)
    d.print()


def main():
    print(f"bench_copy: {machine_info()}; torch {'%s' % torch.__version__ if torch else 'not installed'}; "
          f"numpy {np.__version__}")
    # default: one thread and all cores; --threads 1,4,16 (or TORCHLET_BENCH_THREADS) picks others
    for threads in thread_counts([1] + ([os.cpu_count()] if (os.cpu_count() or 1) > 1 else [])):
        run(threads)


if __name__ == "__main__":
    main()
