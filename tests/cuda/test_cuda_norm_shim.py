"""layer_norm's CUDA kernels run on the CPU (host shim) against the CPU operators.

generated/cuda/reduce.cu's tl_layer_norm_* kernels (kernels/cuda/
tl_cuda_reduce.cuh) are compiled as C++ with tests/cuda/shim/host_shim.h,
each block's threads as fibers switching at every barrier. The host path is
the real one (kernels/cuda/tl_cuda_norm.c): tl_native_layer_norm_cuda and
tl_cuda_layer_norm_backward over CPU tensors (their memory stands in for
device memory) make the inputs contiguous, allocate the outputs, pack
tl_cuda_reduce_params and call tl_cuda_launch, which the shim implements.
Compared with torchlet's CPU layer_norm in float64: every floating dtype,
rows of 0, 1, odd, more than a block, more than 2^16 rows, several
normalized dims, with and without weight / bias, non-contiguous inputs.
"""

from __future__ import annotations

import ctypes
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

if shutil.which("g++") is None:
    pytest.skip("the host shim needs g++", allow_module_level=True)

import torchlet as tl  # noqa: E402
from torchlet._C import ffi  # noqa: E402
from torchlet._errors import check  # noqa: E402
from torchlet._tensor import _wrap  # noqa: E402

import shim_build  # noqa: E402

FLOATS = [tl.float16, tl.bfloat16, tl.float32, tl.float64]
SUFFIX = {tl.float16: "f16", tl.bfloat16: "bf16", tl.float32: "f32", tl.float64: "f64"}
TOL = {tl.float16: 4e-3, tl.bfloat16: 3e-2, tl.float32: 2e-5, tl.float64: 1e-12}
P = ctypes.c_void_p


@pytest.fixture(scope="module")
def shim():
    lib = shim_build.load(["reduce"])
    lib.tl_native_layer_norm_cuda.argtypes = [ctypes.c_uint64, P, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64,
                                              P, P, ctypes.c_double, P, P, P]
    lib.tl_cuda_layer_norm_backward.argtypes = [P, P, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, P, P, P, P,
                                                ctypes.POINTER(ctypes.c_bool), P, P, P]
    lib.tl_shim_log_name.restype = ctypes.c_char_p
    lib.tl_shim_coop_divergent.restype = ctypes.c_long
    return lib


def _ptr(t):
    return None if t is None else int(ffi.cast("uintptr_t", t._p))


def _adopt(slot):
    return None if not slot.value else _wrap(ffi.cast("tl_tensor *", slot.value))


def _names(shim):
    return [shim.tl_shim_log_name(i).decode() for i in range(shim.tl_shim_log_size())]


def forward(shim, x, ns, w, b, eps=1e-5):
    shape = (ctypes.c_int64 * len(ns))(*ns)
    r = [P(), P(), P()]
    shim.tl_shim_log_clear()
    before = shim.tl_shim_coop_divergent()
    check(shim.tl_native_layer_norm_cuda(0, _ptr(x), shape, len(ns), _ptr(w), _ptr(b), eps,
                                         *[ctypes.byref(v) for v in r]))
    assert shim.tl_shim_coop_divergent() == before, "threads of a block stopped at different barriers"
    return [_adopt(v) for v in r], _names(shim)


def backward(shim, g, x, ns, mean, rstd, w, b, mask=(True, True, True)):
    k = len(ns)
    M = int(np.prod(x.shape[:x.dim() - k])) if x.dim() > k else 1
    N = int(np.prod(ns))
    r = [P(), P(), P()]
    shim.tl_shim_log_clear()
    before = shim.tl_shim_coop_divergent()
    check(shim.tl_cuda_layer_norm_backward(_ptr(g), _ptr(x), k, M, N, _ptr(mean), _ptr(rstd), _ptr(w), _ptr(b),
                                           (ctypes.c_bool * 3)(*mask), *[ctypes.byref(v) for v in r]))
    assert shim.tl_shim_coop_divergent() == before, "threads of a block stopped at different barriers"
    return [_adopt(v) for v in r], _names(shim)


def rand(shape, dtype, seed, lo=-3, hi=3):
    return tl.from_numpy(np.random.default_rng(seed).uniform(lo, hi, size=shape)).to(dtype)


def close(got, want, tol):
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape), (got.dtype, got.shape, want.shape)
    np.testing.assert_allclose(got.to(tl.float64).numpy(), want.to(tl.float64).numpy(), rtol=tol, atol=tol,
                               equal_nan=True)


def reference(x, ns, w, b, g, eps=1e-5):
    """the CPU operators in float64: (y, mean, rstd) and (dx, dw, db)"""
    d = tl.float64
    x64, w64, b64 = x.to(d), None if w is None else w.to(d), None if b is None else b.to(d)
    y, mean, rstd = tl.native_layer_norm(x64, ns, w64, b64, eps)
    grads = tl.native_layer_norm_backward(g.to(d), x64, ns, mean, rstd, w64, b64, [True, True, True])
    return (y, mean, rstd), grads


CASES = [([3, 7], [7]), ([5, 1000], [1000]), ([4, 6, 9], [6, 9]), ([2, 3, 5], [5]), ([1], [1]), ([0, 4], [4]),
         ([3, 1025], [1025]), ([6], [6])]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(shim, dtype, affine):
    acc = tl.float64 if dtype == tl.float64 else tl.float32
    for shape, ns in CASES:
        x = rand(shape, dtype, 1)
        w = rand(ns, dtype, 2, 0.5, 1.5) if affine else None
        b = rand(ns, dtype, 3) if affine else None
        g = rand(shape, dtype, 4)
        (y, mean, rstd), names = forward(shim, x, ns, w, b)
        (wy, wm, wr), (wdx, wdw, wdb) = reference(x, ns, w, b, g)
        tol = TOL[dtype]
        close(y, wy.to(dtype), tol)
        close(mean, wm.to(acc), tol)       # statistics in the accumulator type, as PyTorch's CUDA kernel
        close(rstd, wr.to(acc), tol * max(1.0, float(wr.abs().max()) if wr.numel() else 1.0))
        rows = x.numel() // max(int(np.prod(ns)), 1) if x.numel() else 0
        assert names == ([f"tl_layer_norm_{SUFFIX[dtype]}"] if rows else [])
        (dx, dw, db), names = backward(shim, g, x, ns, mean, rstd, w, b)
        close(dx, wdx.to(dtype), tol * 4)
        if affine:
            close(dw, wdw.to(dtype), tol * 8)
            close(db, wdb.to(dtype), tol * 8)
        else:
            assert dw is None and db is None


def test_layer_norm_layouts_and_sizes(shim):
    x = rand([40, 33], tl.float32, 5).t()                # non-contiguous input, rows of 40
    w, b, g = rand([40], tl.float32, 6), rand([40], tl.float32, 7), rand([40, 33], tl.float32, 8).t()
    (y, mean, rstd), _ = forward(shim, x, [40], w, b, 1e-3)
    (wy, wm, wr), (wdx, wdw, wdb) = reference(x, [40], w, b, g, 1e-3)
    close(y, wy.to(tl.float32), 2e-5)
    (dx, dw, db), names = backward(shim, g, x, [40], mean, rstd, w, b)
    close(dx, wdx.to(tl.float32), 1e-4)
    close(dw, wdw.to(tl.float32), 1e-4)
    close(db, wdb.to(tl.float32), 1e-4)
    assert names == ["tl_layer_norm_backward_f32", "tl_layer_norm_backward_wb_f32"]
    many = rand([70000, 3], tl.float32, 9)               # more than 2^16 rows: the grid-stride loops
    gm = rand([70000, 3], tl.float32, 10)
    wm3 = rand([3], tl.float32, 11)
    (y, mean, rstd), _ = forward(shim, many, [3], wm3, None)
    (wy, _, _), (wdx, wdw, _) = reference(many, [3], wm3, None, gm)
    close(y, wy.to(tl.float32), 5e-5)
    (dx, dw, db), _ = backward(shim, gm, many, [3], mean, rstd, wm3, None, (True, True, False))
    close(dx, wdx.to(tl.float32), 5e-4)
    close(dw, wdw.to(tl.float32), 1e-3)
    assert db is None
    wide = rand([2, 3000], tl.float32, 12)                 # more columns than one block of the column kernel
    gw_ = rand([2, 3000], tl.float32, 13)
    w3 = rand([3000], tl.float32, 14)
    (y, mean, rstd), _ = forward(shim, wide, [3000], w3, w3)
    (_, _, _), (wdx, wdw, wdb) = reference(wide, [3000], w3, w3, gw_)
    (dx, dw, db), _ = backward(shim, gw_, wide, [3000], mean, rstd, w3, w3, (False, True, True))
    assert dx is None
    close(dw, wdw.to(tl.float32), 1e-5)
    close(db, wdb.to(tl.float32), 1e-5)
    # a row of 0 elements: NaN statistics, as the CPU's
    (y, mean, rstd), names = forward(shim, tl.ones([3, 0]), [0], None, None)
    assert tuple(y.shape) == (3, 0) and np.isnan(mean.numpy()).all() and np.isnan(rstd.numpy()).all()
    with pytest.raises(NotImplementedError, match="\"LayerNormKernelImpl\" not implemented for 'Long'"):
        forward(shim, tl.ones([2, 3], dtype=tl.int64), [3], None, None)
    with pytest.raises(RuntimeError, match="Given normalized_shape=\\[4\\], expected input with shape"):
        forward(shim, tl.ones([2, 3]), [4], None, None)
