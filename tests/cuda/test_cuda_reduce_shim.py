"""The CUDA reduction kernels run on the CPU (host shim) against the CPU operators.

generated/cuda/reduce.cu (kernels/cuda/tl_cuda_reduce.cuh) is compiled as C++
with tests/cuda/shim/host_shim.h: each block's threads run as fibers that
switch at every barrier, so shared memory, __syncthreads and the warp
shuffles of the block tree run as on the device. The host path is the real
one: tl_cuda_reduce_run over CPU tensors (their memory stands in for device
memory) builds the kept / reduced dims, merges them, plans threads and
splits, packs tl_cuda_reduce_params and calls tl_cuda_launch, which the shim
implements. Results are compared with torchlet's CPU sum / mean / amax /
amin / argmax / argmin: sizes 0, 1, odd, more than a block, the two-pass
split, more than 2^16 rows (the grid-stride loop), transposed and stepped
inputs, keepdim, a strided out, every dtype, NaN and ties.
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

import shim_build  # noqa: E402

OPS = {"sum": 0, "mean": 1, "amax": 2, "amin": 3, "argmax": 4, "argmin": 5, "prod": 6}
ALL = [tl.bool, tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64, tl.float16, tl.bfloat16, tl.float32, tl.float64]
FLOATS = [tl.float16, tl.bfloat16, tl.float32, tl.float64]


class Plan(ctypes.Structure):
    _fields_ = [("threads", ctypes.c_uint), ("grid", ctypes.c_uint), ("splits", ctypes.c_uint32),
                ("chunk", ctypes.c_uint32), ("combine_threads", ctypes.c_uint), ("combine_grid", ctypes.c_uint)]


@pytest.fixture(scope="module")
def shim():
    lib = shim_build.load(["reduce"])
    lib.tl_cuda_reduce_run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p]
    lib.tl_shim_log_name.restype = ctypes.c_char_p
    lib.tl_shim_coop_divergent.restype = ctypes.c_long
    return lib


def _ptr(t) -> int:
    return int(ffi.cast("uintptr_t", t._p))


def plan(shim, nout, nred) -> Plan:
    p = Plan()
    shim.tl_cuda_reduce_make_plan(ctypes.c_int64(nout), ctypes.c_int64(nred), ctypes.byref(p))
    return p


def launch(shim, op, x, dims, out):
    """out = op over dims of x on the shim; the kernels it ran"""
    mask = 0 if dims else (1 << x.dim()) - 1   # no dims: every dim (sum / mean / amax's convention)
    for d in dims:
        mask |= 1 << (d % max(x.dim(), 1))
    shim.tl_shim_log_clear()
    before = shim.tl_shim_coop_divergent()
    check(shim.tl_cuda_reduce_run(OPS[op], _ptr(x), mask, _ptr(out)))
    assert shim.tl_shim_coop_divergent() == before, "threads of a block stopped at different barriers"
    return [shim.tl_shim_log_name(i).decode() for i in range(shim.tl_shim_log_size())]


def rand(shape, dtype, seed=0, lo=-4, hi=4):
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi, size=shape)
    if dtype == tl.bool:
        return tl.from_numpy(a > 0)
    if not dtype.is_floating_point:
        a = np.round(a * 8)   # repeated values: argmax ties
    return tl.from_numpy(a).to(dtype)


def poison(shape, dtype):
    t = tl.empty(shape, dtype=dtype)
    if t.numel():
        t.reshape([-1]).view(tl.uint8).fill_(0x5A)   # a view of the same memory (also 0-dim)
    return t


def expected(op, x, dims, keepdim):
    if op in ("argmax", "argmin"):
        assert len(dims) <= 1
        return getattr(tl, op)(x, dims[0] if dims else None, keepdim)
    if op == "mean":
        return tl.mean(x, dims, keepdim)
    if op == "prod":
        assert len(dims) == 1
        return tl.prod(x, dims[0], keepdim)
    return getattr(tl, op)(x, dims, keepdim)


def same(got, want, nred=1):
    dt = want.dtype
    if dt.is_floating_point:
        g, w = got.to(tl.float64).numpy(), want.to(tl.float64).numpy()
        # float accumulation in another order than the CPU's double sum
        rtol = {tl.float16: 2e-3, tl.bfloat16: 1.6e-2, tl.float32: 1e-5 * max(1.0, np.log2(nred + 1)),
                tl.float64: 1e-12}[dt]
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def check_op(shim, op, x, dims, keepdim=False, out_strided=False):
    want = expected(op, x, dims, keepdim)
    src = x.to(want.dtype) if op in ("sum", "mean", "prod") else x
    if out_strided:   # every other element of a wider tensor
        base = poison(list(want.shape) + [2], want.dtype)
        out = base[..., 0]
    else:
        out = poison(list(want.shape), want.dtype)
    names = launch(shim, op, src, dims, out)
    nred = max(1, x.numel() // max(1, want.numel()))
    same(out, want, nred)
    return names


# ---- launch geometry (pure)

def test_plan(shim):
    p = plan(shim, 10, 3)
    assert (p.threads, p.splits, p.chunk, p.grid) == (32, 1, 3, 10)
    p = plan(shim, 1, 1 << 20)   # whole-tensor: two passes
    assert p.threads == 512 and p.splits > 1 and p.chunk % 512 == 0
    assert p.splits * p.chunk >= 1 << 20 and (p.splits - 1) * p.chunk < 1 << 20
    assert p.combine_threads >= min(512, p.splits) and p.combine_grid == 1
    p = plan(shim, 100000, 8)    # more rows than the grid: the blocks loop
    assert p.grid == 65536 and p.splits == 1
    p = plan(shim, 4096, 4096)   # enough outputs: one pass
    assert p.splits == 1 and p.threads == 512
    p = plan(shim, 3, 0)
    assert p.splits == 1 and p.grid == 3


# ---- values against the CPU operators

@pytest.mark.parametrize("n", [0, 1, 3, 31, 33, 513, 2049, 5000])
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "argmax", "argmin"])
def test_sizes_whole_tensor(shim, op, n):
    if n == 0 and op != "sum" and op != "mean":
        return   # no identity: the meta function raises before any launch
    x = rand([n], tl.float32, n)
    names = check_op(shim, op, x, [0] if op.startswith("arg") else [])
    assert names and all(k.startswith(f"tl_reduce_{op}_f32") for k in names)


def test_two_pass(shim):
    x = rand([3, 40000], tl.float32, 1)
    names = check_op(shim, "sum", x, [1])
    assert names == ["tl_reduce_sum_f32", "tl_reduce_sum_f32_combine"]
    x = rand([100003], tl.float64, 2)
    assert check_op(shim, "amax", x, []) == ["tl_reduce_amax_f64", "tl_reduce_amax_f64_combine"]
    # argmax across chunks: the maximum twice, in different chunks -> the first
    a = rand([90001], tl.float32, 3, -1, 1)
    a[70000] = 5.0
    a[1234] = 5.0
    check_op(shim, "argmax", a, [])
    check_op(shim, "argmin", a, [0])
    check_op(shim, "mean", rand([2, 50000], tl.bfloat16, 4), [1])


def test_many_rows(shim):
    x = rand([70001, 3], tl.float32, 5)
    assert check_op(shim, "sum", x, [1]) == ["tl_reduce_sum_f32"]
    check_op(shim, "argmin", rand([66000, 2], tl.int32, 6), [1])


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "argmax", "argmin"])
def test_every_dtype(shim, op, dtype):
    if op == "mean" and dtype not in FLOATS:
        return   # mean's meta refuses integers
    if op.startswith("arg") and dtype == tl.bool:
        return   # argmax's meta refuses bool
    x = rand([5, 37, 3], dtype, 7)
    dims = [1] if op.startswith("arg") else [0, 2]
    check_op(shim, op, x, dims)
    check_op(shim, op, x, dims, keepdim=True)
    check_op(shim, op, x, [] if not op.startswith("arg") else [2])


def test_sum_dtypes_promote(shim):
    # integers and bool sum as int64 (the input converted first, as the impl does)
    for dt in (tl.bool, tl.uint8, tl.int8, tl.int32):
        check_op(shim, "sum", rand([9, 130], dt, 8), [1])
    check_op(shim, "sum", rand([9, 130], tl.float16, 9, 0, 100), [1])   # float accumulator, half result


@pytest.mark.parametrize("op", ["sum", "amax", "argmax", "mean"])
def test_strided_inputs(shim, op):
    t = rand([41, 67], tl.float32, 10).t()                 # transposed
    check_op(shim, op, t, [0])
    check_op(shim, op, t, [1], keepdim=True)
    s = rand([20, 9, 30], tl.float64, 11)[::3, :, 1::2]    # stepped
    for dims in ([2], [0], [1]) if op.startswith("arg") else ([0, 2], [1], [2], []):
        check_op(shim, op, s, dims)
    p = rand([4, 5, 6, 7], tl.float32, 12).permute(2, 0, 3, 1)
    check_op(shim, op, p, [1] if op.startswith("arg") else [1, 3])
    check_op(shim, op, p, [3], out_strided=True)


def test_zero_dim_and_empty(shim):
    z = tl.tensor(2.5)
    check_op(shim, "sum", z, [])
    check_op(shim, "amax", z, [])
    check_op(shim, "argmax", z, [])
    e = tl.zeros([0, 4])
    check_op(shim, "sum", e, [0])       # four zeros
    check_op(shim, "mean", e, [0])      # four NaNs
    check_op(shim, "sum", tl.zeros([4, 0]), [0])   # no outputs: no launch


def test_nan_and_ties(shim):
    x = tl.from_numpy(np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, -1.0, -1.0], [np.inf, 0, np.inf, -np.inf]]))
    for op in ("amax", "amin", "argmax", "argmin"):
        check_op(shim, op, x, [1])
    assert tl.equal(expected("argmax", x, [1], False), tl.tensor([1, 0, 0]))
    # NaN in the second chunk of a two-pass reduction wins
    y = rand([80000], tl.float32, 13)
    y[65000] = float("nan")
    for op in ("amax", "argmin", "sum"):
        check_op(shim, op, y, [0] if op.startswith("arg") else [])
    # every element the identity: argmax is 0, argmin too
    for dt in (tl.float32, tl.int8, tl.uint8):
        lo = tl.full([3, 7], -float("inf") if dt == tl.float32 else (-128 if dt == tl.int8 else 0), dtype=dt)
        check_op(shim, "argmax", lo, [1])
        check_op(shim, "amax", lo, [1])


def test_unsupported_dtype_error(shim):
    x = rand([4], tl.int32, 14)
    out = tl.empty([], dtype=tl.int32)
    with pytest.raises(RuntimeError, match="\"mean_cuda\" not implemented for 'Int'"):
        launch(shim, "mean", x, [], out)


# ---- softmax / log_softmax (one block per row, three passes over it)

def softmax(shim, log, x, dim, out=None):
    shim.tl_cuda_softmax_run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
    out = poison(list(x.shape), x.dtype) if out is None else out
    shim.tl_shim_log_clear()
    check(shim.tl_cuda_softmax_run(int(log), _ptr(x), dim % max(x.dim(), 1), _ptr(out)))
    names = [shim.tl_shim_log_name(i).decode() for i in range(shim.tl_shim_log_size())]
    return out, names


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("log", [False, True])
def test_softmax(shim, log, dtype):
    fn = tl.log_softmax if log else tl.softmax
    for shape, dim in (([3, 7], 1), ([5, 1000], -1), ([4, 6, 9], 1), ([2, 3], 0), ([1], 0), ([0, 4], 1)):
        x = rand(shape, dtype, 15)
        got, names = softmax(shim, log, x, dim)
        want = fn(x.to(tl.float64), dim).to(dtype)
        rtol = {tl.float16: 2e-3, tl.bfloat16: 1.6e-2, tl.float32: 1e-5, tl.float64: 1e-12}[dtype]
        np.testing.assert_allclose(got.to(tl.float64).numpy(), want.to(tl.float64).numpy(), rtol=rtol, atol=rtol)
        suffix = {tl.float16: "f16", tl.bfloat16: "bf16", tl.float32: "f32", tl.float64: "f64"}[dtype]
        kernel = f"tl_{'log_softmax' if log else 'softmax'}_{suffix}"
        assert names == ([] if x.numel() == 0 else [kernel])


def test_softmax_strided_and_nan(shim):
    t = rand([33, 70], tl.float32, 16).t()            # transposed input, softmax over its (strided) last dim
    got, _ = softmax(shim, False, t, 1)
    np.testing.assert_allclose(got.numpy(), tl.softmax(t, 1).numpy(), rtol=1e-5, atol=1e-6)
    base = poison([70, 33, 2], tl.float32)              # a strided out
    got, _ = softmax(shim, True, t, 0, base[..., 0])
    np.testing.assert_allclose(got.numpy(), tl.log_softmax(t, 0).numpy(), rtol=1e-5, atol=1e-5)
    big = rand([2, 70000], tl.float32, 17, -30, 30)    # rows longer than a block; large values
    got, _ = softmax(shim, False, big, 1)
    np.testing.assert_allclose(got.numpy(), tl.softmax(big, 1).numpy(), rtol=1e-4, atol=1e-9)
    n = tl.from_numpy(np.array([[1.0, float("nan"), 2.0], [1.0, 2.0, 3.0]], dtype=np.float32))
    got, _ = softmax(shim, False, n, 1)
    np.testing.assert_allclose(got.numpy(), tl.softmax(n, 1).numpy(), rtol=1e-6, equal_nan=True)
    with pytest.raises(RuntimeError, match="\"host_softmax\" not implemented for 'Long'"):
        softmax(shim, True, tl.ones([3], dtype=tl.int64), 0)


# ---- softmax / log_softmax backward (one block per row: a sum, then the write)

def softmax_bwd(shim, log, grad, y, dim, out=None):
    shim.tl_cuda_softmax_backward_run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                                  ctypes.c_void_p]
    out = poison(list(grad.shape), grad.dtype) if out is None else out
    shim.tl_shim_log_clear()
    before = shim.tl_shim_coop_divergent()
    check(shim.tl_cuda_softmax_backward_run(int(log), _ptr(grad), _ptr(y), dim % max(grad.dim(), 1), _ptr(out)))
    assert shim.tl_shim_coop_divergent() == before, "threads of a block stopped at different barriers"
    return out, [shim.tl_shim_log_name(i).decode() for i in range(shim.tl_shim_log_size())]


def bwd_want(log, grad, y, dim):
    """the CPU operator in float64, rounded to the dtype"""
    fn = tl._log_softmax_backward_data if log else tl._softmax_backward_data
    return fn(grad.to(tl.float64), y.to(tl.float64), dim, tl.float64).to(grad.dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_backward(shim, log, dtype):
    fwd = tl.log_softmax if log else tl.softmax
    for shape, dim in (([3, 7], 1), ([5, 1000], -1), ([4, 6, 9], 1), ([2, 3], 0), ([1], 0), ([0, 4], 1), ([], 0),
                       ([3, 1025], 1)):
        x = rand(shape, dtype, 21)
        y = fwd(x, dim) if x.dim() else fwd(x, 0)
        g = rand(shape, dtype, 22)
        got, names = softmax_bwd(shim, log, g, y, dim)
        want = bwd_want(log, g, y, dim)
        tol = {tl.float16: 4e-3, tl.bfloat16: 3e-2, tl.float32: 1e-5, tl.float64: 1e-12}[dtype]
        np.testing.assert_allclose(got.to(tl.float64).numpy(), want.to(tl.float64).numpy(), rtol=tol, atol=tol)
        suffix = {tl.float16: "f16", tl.bfloat16: "bf16", tl.float32: "f32", tl.float64: "f64"}[dtype]
        kernel = f"tl_{'log_softmax' if log else 'softmax'}_backward_{suffix}"
        assert names == ([] if x.numel() == 0 else [kernel])


def test_softmax_backward_layouts(shim):
    x = rand([33, 70], tl.float32, 23).t()               # transposed: the row is strided
    y = tl.softmax(x, 1)                                  # contiguous: strides differ from the gradient's
    g = rand([33, 70], tl.float32, 24).t()
    got, names = softmax_bwd(shim, False, g, y, 1)
    np.testing.assert_allclose(got.numpy(), bwd_want(False, g, y, 1).numpy(), rtol=1e-5, atol=1e-6)
    base = poison([70, 33, 2], tl.float32)               # a strided out, over the outer dim
    yl = tl.log_softmax(x, 0)
    got, _ = softmax_bwd(shim, True, g.contiguous(), yl, 0, base[..., 0])
    np.testing.assert_allclose(got.numpy(), bwd_want(True, g, yl, 0).numpy(), rtol=1e-5, atol=1e-6)
    big = rand([2, 70000], tl.float32, 25)               # rows longer than a block
    yb, gb = tl.softmax(big, 1), rand([2, 70000], tl.float32, 26)
    got, _ = softmax_bwd(shim, False, gb, yb, 1)
    np.testing.assert_allclose(got.numpy(), bwd_want(False, gb, yb, 1).numpy(), rtol=1e-4, atol=1e-9)
    many = rand([70000, 3], tl.float32, 27)              # more than 2^16 rows: the grid-stride loop
    ym, gm = tl.log_softmax(many, 1), rand([70000, 3], tl.float32, 28)
    got, _ = softmax_bwd(shim, True, gm, ym, 1)
    np.testing.assert_allclose(got.numpy(), bwd_want(True, gm, ym, 1).numpy(), rtol=1e-5, atol=1e-6)
    n = tl.from_numpy(np.array([[0.2, float("nan"), 0.8], [0.1, 0.2, 0.7]], dtype=np.float32))
    got, _ = softmax_bwd(shim, False, tl.ones([2, 3]), n, 1)
    np.testing.assert_allclose(got.numpy(), bwd_want(False, tl.ones([2, 3]), n, 1).numpy(), rtol=1e-6,
                               atol=1e-7, equal_nan=True)
    with pytest.raises(RuntimeError, match="\"host_softmax_backward\" not implemented for 'Long'"):
        softmax_bwd(shim, True, tl.ones([3], dtype=tl.int64), tl.ones([3], dtype=tl.int64), 0)


# ---- outer-dim reductions: a thread per output (the _cols kernels)

ALL_OPS = ["sum", "mean", "amax", "amin", "argmax", "argmin"]


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_cols(shim, dtype):
    x = rand([37, 1100], dtype, 40)                      # sum(0) of a row-major matrix: 1100 outputs
    for op in ALL_OPS:
        if (op == "mean" and not dtype.is_floating_point) or (op.startswith("arg") and dtype == tl.bool):
            continue
        names = check_op(shim, op, x, [0])
        run = tl.int64 if op == "sum" and not dtype.is_floating_point else dtype   # sum's integer result: int64
        sfx = {tl.bool: "b", tl.uint8: "u8", tl.int8: "i8", tl.int16: "i16", tl.int32: "i32", tl.int64: "i64",
               tl.float16: "f16", tl.bfloat16: "bf16", tl.float32: "f32", tl.float64: "f64"}[run]
        assert names == [f"tl_reduce_{op}_{sfx}_cols"], names


def test_cols_layouts(shim):
    x = rand([5, 7, 300], tl.float32, 41)                # two reduced dims (0, 1) over 300 outputs: too few
    assert check_op(shim, "sum", x, [0, 1]) == ["tl_reduce_sum_f32"]
    y = rand([6, 9, 1200], tl.float32, 42)               # two reduced dims under 1200 outputs; keepdim; strided out
    assert check_op(shim, "sum", y, [0, 1], keepdim=True, out_strided=True) == ["tl_reduce_sum_f32_cols"]
    z = rand([40, 1100], tl.float32, 43).t()             # [1100, 40] transposed: dim 1 is the outer one in memory
    assert check_op(shim, "amax", z, [1]) == ["tl_reduce_amax_f32_cols"]
    assert check_op(shim, "amax", z, [0]) == ["tl_reduce_amax_f32"]   # reduced dim contiguous: block per row
    big = rand([3, 70001], tl.float32, 44)               # more outputs than one grid of 256-thread blocks covers
    assert check_op(shim, "mean", big, [0]) == ["tl_reduce_mean_f32_cols"]
    t = rand([50, 1024], tl.float32, 45, -1, 1)          # ties and NaN: the first index, as the block kernels
    t[7, 3] = 9.0
    t[40, 3] = 9.0
    t[11, 5] = float("nan")
    t[30, 5] = float("nan")
    check_op(shim, "argmax", t, [0])
    check_op(shim, "argmin", t, [0])
    check_op(shim, "amax", t, [0])
    e = rand([0, 2000], tl.float32, 46)                  # nothing to reduce: the identity (no reduced dim left)
    assert check_op(shim, "sum", e, [0]) == ["tl_reduce_sum_f32"]


# ---- prod over one dim (int64 for bool and integers, wrapping; float for half)

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_prod(shim, dtype):
    lo, hi = (0.5, 1.6) if dtype.is_floating_point else (-2, 2)
    for shape, dim, kernel in (([7, 33], 1, ""), ([40, 5], 0, ""), ([2, 3000], 1, ""), ([3, 70000], 1, "combine"),
                               ([30, 1100], 0, "cols"), ([0, 3], 0, ""), ([4, 0], 1, "")):
        x = rand(shape, dtype, 50 + dim, lo, hi)
        names = check_op(shim, "prod", x, [dim], keepdim=dim == 0)
        rt = tl.int64 if not dtype.is_floating_point else dtype
        sfx = {tl.int64: "i64", tl.float16: "f16", tl.bfloat16: "bf16", tl.float32: "f32", tl.float64: "f64"}[rt]
        if kernel == "cols":
            assert names == [f"tl_reduce_prod_{sfx}_cols"]
        elif kernel == "combine":
            assert names == [f"tl_reduce_prod_{sfx}", f"tl_reduce_prod_{sfx}_combine"]
        else:   # an empty output launches nothing; an empty dim gives the identity 1
            assert names == ([f"tl_reduce_prod_{sfx}"] if tl.prod(x, dim).numel() else [])
    big = rand([5, 64], tl.int64, 51, -1000, 1000)         # int64 products wrap, as the CPU's
    check_op(shim, "prod", big, [1])


# ---- cumsum / cumprod (one block per row, chunks of a block carried along)

def scan(shim, op, x, dim, out):
    fn = getattr(shim, f"tl_impl_{op}_out_cuda")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_void_p]
    shim.tl_shim_log_clear()
    before = shim.tl_shim_coop_divergent()
    check(fn(None, _ptr(x), dim, 0, _ptr(out)))
    assert shim.tl_shim_coop_divergent() == before, "threads of a block stopped at different barriers"
    return [shim.tl_shim_log_name(i).decode() for i in range(shim.tl_shim_log_size())]


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan(shim, op, dtype):
    lo, hi = (0.6, 1.5) if dtype.is_floating_point else (-0.2, 0.2)   # integers: -2..2, products wrap as the CPU's
    for shape, dim in (([7, 33], 1), ([40, 5], 0), ([3, 1500], 1), ([5000], 0), ([], 0), ([0, 3], 0), ([4, 1], 1),
                       ([2, 3, 700], 2), ([6, 600, 2], 1)):
        x = rand(shape or [1], dtype, 60, lo, hi).reshape(shape)
        want = getattr(tl, op)(x, dim)
        out = poison(list(want.shape), want.dtype)
        names = scan(shim, op, x, dim, out)
        n = x.shape[dim] if x.dim() else 1
        same(out, want, n)
        sfx = {tl.int64: "i64", tl.float16: "f16", tl.bfloat16: "bf16", tl.float32: "f32", tl.float64: "f64"}
        assert names == ([] if x.numel() == 0 else [f"tl_{op}_{sfx[want.dtype]}"])


def test_scan_layouts(shim):
    t = rand([700, 30], tl.float32, 61).t()              # transposed: the scanned dim is strided
    base = poison([30, 700, 2], tl.float32)              # a strided out
    scan(shim, "cumsum", t, 1, base[..., 0])
    same(base[..., 0], tl.cumsum(t, 1), 700)
    many = rand([70000, 3], tl.float64, 62)               # more than 2^16 rows: the grid-stride loop
    out = poison([70000, 3], tl.float64)
    scan(shim, "cumprod", many, 1, out)
    same(out, tl.cumprod(many, 1))
    n = tl.from_numpy(np.array([1.0, float("nan"), 2.0, 3.0], dtype=np.float32))
    out = poison([4], tl.float32)
    scan(shim, "cumsum", n, 0, out)
    same(out, tl.cumsum(n, 0))
