"""var / std (with the mean), logsumexp, max / min with values and indices,
any / all, linalg_vector_norm and the whole-tensor prod: the CUDA reduction
kernels on the CPU through the host shim (test_cuda_reduce_shim.py's
harness: fibers per block, the real host path over CPU tensors) against
torchlet's CPU operators. Sizes 0, 1, odd, more than a block, the two-pass
split, more than 2^16 rows, a thread per output, transposed / stepped
inputs, keepdim and strided outputs, every dtype each kernel accepts, NaN,
infinities and ties."""

from __future__ import annotations

import ctypes
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_cuda_reduce_shim as base  # noqa: E402  (skips without g++)
import torchlet as tl  # noqa: E402
from torchlet._errors import check  # noqa: E402

shim = base.shim   # the fixture
ALL, FLOATS, rand, poison, _ptr = base.ALL, base.FLOATS, base.rand, base.poison, base._ptr
#: TL_CUDA_REDUCE_<OP> (kernels/cuda/tl_cuda_reduce.h)
OP = {"nansum": 18, "amax": 2, "amin": 3, "argmax": 4, "argmin": 5, "prod": 6, "var": 7, "std": 8, "logsumexp": 9, "any": 10,
      "all": 11, 2: 12, 1: 13, float("inf"): 14, float("-inf"): 15, 0: 16, "p": 17}
RTOL = {tl.float16: 2e-3, tl.bfloat16: 1.6e-2, tl.float32: 2e-5, tl.float64: 1e-12}


def run(shim, op, x, dims, out, out2=None, scalar=0.0, convert=True):
    """tl_cuda_reduce_into over dims (None: every dim); the kernels it ran"""
    shim.tl_cuda_reduce_into.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64,
                                         ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p]
    mask = (1 << x.dim()) - 1 if dims is None else sum(1 << (d % max(x.dim(), 1)) for d in dims)
    shim.tl_shim_log_clear()
    before = shim.tl_shim_coop_divergent()
    check(shim.tl_cuda_reduce_into(OP[op], _ptr(x), int(convert), mask, scalar, _ptr(out),
                                   _ptr(out2) if out2 is not None else None))
    assert shim.tl_shim_coop_divergent() == before, "threads of a block stopped at different barriers"
    return [shim.tl_shim_log_name(i).decode() for i in range(shim.tl_shim_log_size())]


def close(got, want, rtol=0.0):
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape), (got.dtype, got.shape, want.shape)
    if want.dtype.is_floating_point:
        np.testing.assert_allclose(got.to(tl.float64).numpy(), want.to(tl.float64).numpy(), rtol=rtol, atol=rtol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def out_like(want, strided=False):
    if strided:   # every other element of a wider tensor
        return poison(list(want.shape) + [2], want.dtype)[..., 0]
    return poison(list(want.shape), want.dtype)


# ---- var / std / var_mean / std_mean (Welford)

def check_var(shim, x, dims, correction=1.0, keepdim=False, std=False, strided=False, tol=None):
    """against the CPU's float64 var_mean of the same values, rounded to x's dtype"""
    x64 = x.to(tl.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # degrees of freedom <= 0
        wv, wm = (tl.std_mean if std else tl.var_mean)(x64, dims, correction=correction, keepdim=keepdim)
    wv, wm = wv.to(x.dtype), wm.to(x.dtype)
    v, m = out_like(wv, strided), out_like(wm)
    names = run(shim, "std" if std else "var", x, dims, v, m, correction)
    close(v, wv, tol or RTOL[x.dtype])
    close(m, wm, tol or RTOL[x.dtype])
    return names


@pytest.mark.parametrize("n", [0, 1, 2, 3, 33, 513, 5000, 100003])
def test_var_sizes(shim, n):
    x = rand([n], tl.float32, n, -2, 6)
    names = check_var(shim, x, None, tol=1e-4)
    if n >= 100003:
        assert names == ["tl_reduce_var_f32", "tl_reduce_var_f32_combine"]   # Chan's merge across chunks
    check_var(shim, x.to(tl.float64), None, correction=0, std=True)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_var_dtypes_and_layouts(shim, dtype):
    x = rand([5, 37, 3], dtype, 1)
    for dims, corr, kd in (([1], 1.0, False), ([0, 2], 0.0, True), (None, 2.5, False), ([2], -1.0, True)):
        check_var(shim, x, dims, corr, kd)
        check_var(shim, x, dims, corr, kd, std=True)
    t = rand([41, 67], dtype, 2).t()   # transposed
    check_var(shim, t, [0])
    check_var(shim, t, [1], keepdim=True, strided=True)   # a strided var, a contiguous mean: temporaries
    s = rand([20, 9, 30], dtype, 3)[::3, :, 1::2]   # stepped
    check_var(shim, s, [0, 2], std=True)
    assert check_var(shim, rand([50, 1500], dtype, 4), [0]) == [f"tl_reduce_var_{base_suffix(dtype)}_cols"]
    assert check_var(shim, rand([70001, 3], dtype, 5), [1], std=True) == [f"tl_reduce_std_{base_suffix(dtype)}"]


def base_suffix(dtype):
    return {tl.float16: "f16", tl.bfloat16: "bf16", tl.float32: "f32", tl.float64: "f64"}[dtype]


def test_var_values(shim):
    # a large offset: Welford keeps the small variance (a naive sum of squares in float loses it)
    x = tl.from_numpy((1e4 + np.random.default_rng(6).standard_normal(4099)).astype(np.float32))
    check_var(shim, x, None, tol=1e-3)
    n = tl.from_numpy(np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 2.0], [3.0, 3.0, 3.0]]))
    check_var(shim, n, [1])
    check_var(shim, tl.zeros([0, 4]), [0])    # empty rows: NaN var and mean
    check_var(shim, tl.tensor(2.5), None)     # 0-dim: one element, correction 1: NaN
    with pytest.raises(RuntimeError, match="\"var_cuda\" not implemented for 'Long'"):
        run(shim, "var", tl.ones([3], dtype=tl.int64), None, tl.empty([], dtype=tl.int64), convert=False)


# ---- logsumexp (row maxima by amax into out, then the exp-sum)

def check_lse(shim, x, dims, keepdim=False, strided=False):
    want = tl.logsumexp(x.to(tl.float64), dims if dims is not None else list(range(x.dim())), keepdim)
    dt = x.dtype if x.dtype.is_floating_point else tl.float32
    want = want.to(dt)
    out = out_like(want, strided)
    shim.tl_cuda_logsumexp_into.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p]
    mask = (1 << x.dim()) - 1 if dims is None else sum(1 << (d % max(x.dim(), 1)) for d in dims)
    shim.tl_shim_log_clear()
    check(shim.tl_cuda_logsumexp_into(_ptr(x), mask, _ptr(out)))
    close(out, want, RTOL.get(x.dtype, 2e-5))
    return [shim.tl_shim_log_name(i).decode() for i in range(shim.tl_shim_log_size())]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_logsumexp(shim, dtype):
    for n in (0, 1, 3, 513, 5000):
        check_lse(shim, rand([n], dtype, n, -20, 20), None)
    x = rand([5, 37, 3], dtype, 7, -30, 30)
    check_lse(shim, x, [1])
    check_lse(shim, x, [0, 2], keepdim=True, strided=True)
    check_lse(shim, rand([41, 67], dtype, 8).t(), [0])
    s = check_lse(shim, rand([90001], dtype, 9), None)
    assert s == [f"tl_reduce_amax_{base_suffix(dtype)}", f"tl_reduce_amax_{base_suffix(dtype)}_combine",
                 f"tl_reduce_logsumexp_{base_suffix(dtype)}", f"tl_reduce_logsumexp_{base_suffix(dtype)}_combine"]
    check_lse(shim, rand([50, 1500], dtype, 10), [0])     # a thread per output
    check_lse(shim, rand([70001, 3], dtype, 11), [1])     # more rows than the grid


def test_logsumexp_infinities_and_integers(shim):
    inf, nan = float("inf"), float("nan")
    x = tl.from_numpy(np.array([[-inf, -inf, -inf], [1.0, inf, 2.0], [1.0, nan, inf], [-inf, 0.0, 1.0],
                                [inf, inf, -inf], [1e30, 1e30, 1e30]], dtype=np.float32))
    check_lse(shim, x, [1])
    check_lse(shim, x.to(tl.float16), [1])
    check_lse(shim, tl.from_numpy(np.arange(-6, 6, dtype=np.int32).reshape(3, 4)), [1])   # int -> float32
    check_lse(shim, tl.zeros([0, 3]), [0])   # no elements: log(0) = -inf


# ---- max / min with values and indices (max.dim's MaxOps), whole-tensor values

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_max_min_dim(shim, dtype):
    x = rand([5, 37, 3], dtype, 12)
    for fn, op in ((tl.max, "argmax"), (tl.min, "argmin")):
        for dim, kd in ((1, False), (0, True), (2, False)):
            wv, wi = fn(x, dim, kd)
            v, i = out_like(wv), out_like(wi)
            run(shim, op, x, [dim], i, v, convert=False)
            close(v, wv)
            close(i, wi)
        wv, wi = fn(x, 1)
        v, i = out_like(wv, strided=True), out_like(wi)   # different strides: temporaries copied back
        run(shim, op, x, [1], i, v, convert=False)
        close(v, wv)
        close(i, wi)
        w = fn(x)
        o = out_like(w)
        run(shim, "amax" if op == "argmax" else "amin", x, None, o, convert=False)
        close(o, w)


def test_max_min_nan_ties_and_big(shim):
    x = tl.from_numpy(np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, -1.0, -1.0], [np.inf, 0, np.inf, -np.inf]]))
    for fn, op in ((tl.max, "argmax"), (tl.min, "argmin")):
        for t, dims in ((x, 1), (x.t(), 0), (rand([70001, 3], tl.int16, 13), 1), (rand([50, 1500], tl.float32, 14), 0),
                        (rand([3, 40000], tl.bfloat16, 15), 1)):
            wv, wi = fn(t, dims)
            v, i = out_like(wv), out_like(wi)
            run(shim, op, t, [dims], i, v, convert=False)
            close(v, wv)
            close(i, wi)


# ---- any / all

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_any_all(shim, dtype):
    x = rand([5, 37, 3], dtype, 16)
    x[1] = 0
    x[:, 2] = 1
    for fn in (tl.any, tl.all):
        for dims in ([1], [0, 2], None, []):
            want = fn(x, dims) if dims is not None else fn(x)
            out = out_like(want)
            run(shim, fn.__name__, x, dims, out, convert=False)
            close(out, want)
    z = tl.zeros([0, 4], dtype=dtype)
    for fn in (tl.any, tl.all):
        out = out_like(fn(z, 0))
        run(shim, fn.__name__, z, [0], out, convert=False)
        close(out, fn(z, 0))


def test_any_all_nan_big_strided(shim):
    f = tl.zeros([3, 90001])
    f[1, 80000] = float("nan")   # NaN is true
    f[2] = 1
    for fn in (tl.any, tl.all):
        for t, dims in ((f, [1]), (f, None), (f.t(), [1]), (rand([50, 1500], tl.uint8, 17), [0])):
            want = fn(t, dims) if dims is not None else fn(t)
            out = out_like(want, strided=True)
            run(shim, fn.__name__, t, dims, out, convert=False)
            close(out, want)


# ---- linalg_vector_norm

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("ordv", [2, 1, float("inf"), float("-inf"), 0, 3, 0.5, -1.5])
def test_vector_norm(shim, dtype, ordv):
    op = ordv if ordv in (2, 1, 0) or ordv in (float("inf"), float("-inf")) else "p"
    x = rand([5, 37, 3], dtype, 18)
    x[0, 0, 0] = 0
    for t, dims in ((x, [1]), (x, None), (x.t() if x.dim() == 2 else x.permute(2, 0, 1), [0, 1]),
                    (rand([50, 1500], dtype, 19), [0]), (rand([100003], dtype, 20), None)):
        want = tl.linalg.vector_norm(t.to(tl.float64), ordv, dims).to(dtype)
        out = out_like(want)
        run(shim, op, t, dims, out, scalar=float(ordv))
        rtol = RTOL[dtype] * (20 if ordv not in (2, 1, 0) and dtype == tl.float32 else 1)
        close(out, want, rtol)


def test_vector_norm_nan_and_empty(shim):
    x = tl.from_numpy(np.array([[1.0, np.nan, -3.0], [-0.0, 0.0, 0.0]], dtype=np.float32))
    for ordv in (2, 1, float("inf"), float("-inf"), 0, 3):
        want = tl.linalg.vector_norm(x, ordv, [1])
        out = out_like(want)
        run(shim, ordv if ordv != 3 else "p", x, [1], out, scalar=float(ordv))
        close(out, want, 1e-6)
    out = out_like(tl.zeros([3]))
    run(shim, 2, tl.zeros([0, 3]), [0], out, scalar=2.0)   # empty: 0
    close(out, tl.zeros([3]))


# ---- nansum (floating dtypes; integers are sum's)

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nansum(shim, dtype):
    for shape, dims in (([0], None), ([1], None), ([5, 37, 3], [1]), ([5, 37, 3], [0, 2]), ([3, 40000], [1]),
                        ([50, 1500], [0]), ([70001, 3], [1])):
        x = rand(shape, dtype, 39)
        if x.numel():
            x.view([-1])[::7] = float("nan")
        want = tl.nansum(x.to(tl.float64), dims if dims is not None else []).to(dtype)
        out = out_like(want)
        run(shim, "nansum", x, dims, out)
        close(out, want, RTOL[dtype] * 4)
        assert not np.isnan(out.to(tl.float64).numpy()).any()


# ---- the whole-tensor prod (every dim, the result dtype's accumulator)

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_prod_all(shim, dtype):
    x = rand([7, 3], dtype, 21, -1.5, 1.5)
    want = tl.prod(x)
    out = out_like(want)
    shim.tl_cuda_prod_into.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p]
    check(shim.tl_cuda_prod_into(_ptr(x), 3, _ptr(out)))
    close(out, want, RTOL.get(dtype, 0))
    big = rand([40000], tl.float64, 22, 0.9999, 1.0001)   # two passes
    out = out_like(tl.prod(big))
    check(shim.tl_cuda_prod_into(_ptr(big), 1, _ptr(out)))
    close(out, tl.prod(big), 1e-12)


# ---- reductions past 32-bit offsets: the kept dims split (a small forced limit)

@pytest.fixture
def limit(shim):
    shim.tl_cuda_set_index_limit.argtypes = [ctypes.c_int64]
    yield lambda n: shim.tl_cuda_set_index_limit(n)
    shim.tl_cuda_set_index_limit(0)   # back to INT32_MAX


def test_split_kept_dims(shim, limit):
    limit(4096)   # bytes: a [300, 50] float64 input is 120,000
    x = rand([300, 50], tl.float64, 23)
    names = check_var(shim, x, [1])
    assert len(names) > 30 and set(names) == {"tl_reduce_var_f64"}   # pieces of <= 4096 bytes of x
    check_var(shim, x.t(), [0], std=True, strided=True)    # transposed, strided out: the temporaries split too
    check_var(shim, rand([7, 40, 9], tl.float32, 24), [1])   # the middle dim reduced, both kept dims split
    names = check_lse(shim, rand([300, 4, 5], tl.float32, 25), [1, 2], keepdim=True)
    assert len(names) > 2
    for fn, op in ((tl.max, "argmax"), (tl.min, "argmin")):
        t = rand([301, 17], tl.int16, 26)
        wv, wi = fn(t, 1)
        v, i = out_like(wv), out_like(wi)
        assert len(run(shim, op, t, [1], i, v, convert=False)) > 1
        close(v, wv)
        close(i, wi)
    w = tl.any(rand([5000, 2], tl.bool, 27), 1)
    out = out_like(w)
    run(shim, "any", rand([5000, 2], tl.bool, 27), [1], out, convert=False)
    close(out, w)


def test_split_reduced_dims(shim, limit):
    limit(4096)   # each output's row past the limit: pieces along the reduced dims, one combine
    x = rand([2, 1000], tl.float64, 28)   # a row of 8,000 bytes
    names = check_var(shim, x, [1])
    assert names.count("tl_reduce_var_f64") >= 2 and names[-1] == "tl_reduce_var_f64_combine", names
    check_var(shim, rand([100003], tl.float32, 29, 5, 9), None, std=True, tol=1e-4)   # Chan's merge of pieces
    check_var(shim, rand([30, 40, 5], tl.float32, 30), [0, 2], correction=0)   # two reduced dims, a kept middle one
    check_lse(shim, rand([90001], tl.float32, 31), None)
    check_lse(shim, rand([3, 3000], tl.float16, 32), [1], keepdim=True)
    for fn, op in ((tl.max, "argmax"), (tl.min, "argmin")):   # indices past the first piece, ties across pieces
        t = rand([4, 5000], tl.int8, 33)
        t[1] = 3
        t[2, 4000] = 127 if op == "argmax" else -128
        for dims, tt in (([1], t), ([0], t.t()), ([1], rand([3, 9000], tl.float32, 34))):
            wv, wi = fn(tt, dims[0])
            v, i = out_like(wv), out_like(wi)
            run(shim, op, tt, dims, i, v, convert=False)
            close(v, wv)
            close(i, wi)
        whole = rand([7, 3000], tl.float64, 35)
        whole[5, 2999] = float("nan")
        want = getattr(tl, op)(whole)
        out = out_like(want)
        run(shim, op, whole, None, out, convert=False)
        close(out, want)
    for name, ordv in (("p", 3), (2, 2), (float("inf"), float("inf"))):
        y = rand([5, 3000], tl.float32, 36)
        want = tl.linalg.vector_norm(y.to(tl.float64), ordv, [1]).to(tl.float32)
        out = out_like(want)
        run(shim, name, y, [1], out, scalar=float(ordv))
        close(out, want, 1e-4)
    for fn in (tl.any, tl.all):
        z = tl.zeros([2, 20000], dtype=tl.bool)
        z[0, 19999] = True
        z[1] = True
        out = out_like(fn(z, 1))
        run(shim, fn.__name__, z, [1], out, convert=False)
        close(out, fn(z, 1))
    out = out_like(tl.mean(x, 1))
    shim.tl_cuda_reduce_run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p]
    check(shim.tl_cuda_reduce_run(1, _ptr(x), 2, _ptr(out)))   # mean: the factor of the whole row
    close(out, tl.mean(x, 1), 1e-12)


def test_split_both(shim, limit):
    limit(4096)   # rows of 8,000 bytes, 8,000 bytes apart: the kept dim split to single rows, then each row
    x = rand([6, 1000], tl.float64, 37)
    names = check_var(shim, x, [1])
    assert names.count("tl_reduce_var_f64_combine") == 6, names
    check_var(shim, x.t(), [0], std=True)
    check_lse(shim, rand([5, 2000], tl.float32, 38), [1])
