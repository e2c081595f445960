"""The generated CUDA kernels run on the CPU (host shim) against the CPU loops.

Each generated program (generated/cuda/ufunc_<op>.cu) is compiled as C++ with
tests/cuda/shim/host_shim.h; the real host path runs unchanged: a torchlet
TensorIterator over CPU tensors (their memory stands in for device memory) ->
the generated launcher tl_ufunc_<op>_cuda_run -> view, CPU-scalar operands,
variant choice, 32-bit split, parameter packing -> tl_cuda_launch, which the
shim implements by running the kernel over grid x block on the host. Results
are compared with torchlet's CPU operators on the same inputs: edge sizes
around the vector width, strides, broadcasts, mixed dtypes (the casting
kernel), CPU scalars, every dtype, and the 32-bit split with a lowered limit.
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
from torchlet._C import ffi, lib as C  # noqa: E402
from torchlet._errors import check  # noqa: E402

import shim_build  # noqa: E402

OPS = ["add", "eq", "where", "clamp_scalar", "exp", "bitwise_and",
       "lgamma", "digamma", "polygamma", "erfinv", "i0", "special_i1", "logaddexp", "fmax", "gcd"]


class Scalar(ctypes.Structure):   # tl_scalar (runtime/include/tl_dtype.h)
    _fields_ = [("kind", ctypes.c_int), ("i", ctypes.c_int64), ("d", ctypes.c_double), ("im", ctypes.c_double)]


def scalar(v) -> Scalar:
    if isinstance(v, bool):
        return Scalar(0, int(v), 0.0, 0.0)
    if isinstance(v, int):
        return Scalar(1, v, 0.0, 0.0)
    return Scalar(2, 0, float(v), 0.0)


@pytest.fixture(scope="module")
def shim():
    lib = shim_build.load(OPS)
    for op in OPS:
        fn = getattr(lib, f"tl_ufunc_{op}_cuda_run")
        fn.restype = ctypes.c_int
    lib.tl_shim_log_name.restype = ctypes.c_char_p
    lib.tl_cuda_set_index_limit.argtypes = [ctypes.c_int64]
    yield lib
    lib.tl_cuda_set_index_limit(0)


def _ptr(t) -> int:
    return int(ffi.cast("uintptr_t", t._p))


def run(shim, op, out, inputs, args=(), flags=0, common=None):
    """builds a TensorIterator (outputs first) like the meta function would,
    then runs the generated CUDA launcher over it; returns the kernel names"""
    it = C.tl_iter_new(flags)
    try:
        check(C.tl_iter_add_output(it, out._p))
        for x in inputs:
            check(C.tl_iter_add_input(it, x._p))
        if common is not None:
            check(C.tl_iter_set_common_dtype(it, common))
        check(C.tl_iter_build(it))
        shim.tl_shim_log_clear()
        fn = getattr(shim, f"tl_ufunc_{op}_cuda_run")
        check(fn(ctypes.c_void_p(int(ffi.cast("uintptr_t", it))), *[scalar(a) for a in args]))
        return [shim.tl_shim_log_name(i).decode() for i in range(shim.tl_shim_log_size())]
    finally:
        C.tl_iter_free(it)


def poison(shape, dtype):
    t = tl.empty(shape, dtype=dtype)
    t.view(tl.uint8).fill_(0x5A) if t.numel() else None
    return t


def rand(shape, dtype, seed=0, lo=-4, hi=4):
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi, size=shape)
    if dtype == tl.bool:
        return tl.from_numpy(a > 0)
    return tl.from_numpy(a).to(dtype)


def same(got, want, dtype):
    g = got.to(tl.float64).numpy() if dtype in (tl.float16, tl.bfloat16) else got.numpy()
    w = want.to(tl.float64).numpy() if dtype in (tl.float16, tl.bfloat16) else want.numpy()
    if dtype in (tl.float16, tl.bfloat16, tl.float32, tl.float64):
        rtol = {tl.float16: 1e-3, tl.bfloat16: 8e-3, tl.float32: 1e-6, tl.float64: 1e-15}[dtype]
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


SIZES = [0, 1, 3, 4, 5, 7, 8, 9, 1023, 1024, 1025, 4099]


@pytest.mark.parametrize("n", SIZES)
def test_add_contiguous_sizes(shim, n):
    a, b = rand([n], tl.float32, 1), rand([n], tl.float32, 2)
    out = poison([n], tl.float32)
    names = run(shim, "add", out, [a, b], [2.5])
    same(out, tl.add(a, b, alpha=2.5), tl.float32)
    assert names == ([] if n == 0 else ["ufunc_add_f32_vec"])


ALL = [tl.bool, tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64, tl.float16, tl.bfloat16, tl.float32, tl.float64]


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("n", [5, 17, 4099])
def test_add_every_dtype(shim, dtype, n):
    a, b = rand([n], dtype, 3), rand([n], dtype, 4)
    alpha = True if dtype == tl.bool else (3 if dtype not in (tl.float16, tl.bfloat16, tl.float32, tl.float64) else 0.5)
    out = poison([n], dtype)
    names = run(shim, "add", out, [a, b], [alpha])
    same(out, tl.add(a, b, alpha=alpha), dtype)
    assert set(names) == {names[0]} and names[0].endswith("_vec")


def test_add_strided_and_broadcast(shim):
    a = rand([37, 41], tl.float32, 5)
    b = rand([41, 37], tl.float32, 6).t()          # transposed
    out = poison([37, 41], tl.float32)
    assert run(shim, "add", out, [a, b], [1]) == ["ufunc_add_f32_strided"]
    same(out, tl.add(a, b), tl.float32)
    c = rand([80, 41], tl.float64, 7)[::2]         # stepped rows
    r = rand([41], tl.float64, 8)                  # broadcast row
    out = poison([40, 41], tl.float64)
    assert run(shim, "add", out, [c, r], [-1.5]) == ["ufunc_add_f64_strided"]
    same(out, tl.add(c, r, alpha=-1.5), tl.float64)


def test_add_misaligned_takes_strided(shim):
    base = rand([101], tl.float32, 9)
    a, b = base[1:], rand([100], tl.float32, 10)  # a is 4 bytes off a 16-byte boundary
    out = poison([100], tl.float32)
    assert run(shim, "add", out, [a, b], [1]) == ["ufunc_add_f32_strided"]
    same(out, tl.add(a, b), tl.float32)


def test_add_cpu_scalar_operand(shim):
    a = rand([1000], tl.float32, 11)
    s = tl.tensor(2.25)
    out = poison([1000], tl.float32)
    assert run(shim, "add", out, [a, s], [2]) == ["ufunc_add_f32_vec"]
    same(out, tl.add(a, s, alpha=2), tl.float32)
    out = poison([1000], tl.float32)
    run(shim, "add", out, [s, a], [2])             # lhs scalar
    same(out, tl.add(s, a, alpha=2), tl.float32)


def test_add_mixed_dtypes_cast_kernel(shim):
    a = rand([7, 9], tl.int32, 12)
    b = rand([7, 9], tl.float16, 13)
    out = poison([7, 9], tl.float32)
    # no promotion in the iterator: every operand keeps its dtype, the
    # casting kernel converts per element
    assert run(shim, "add", out, [a, b], [1], common=tl.float32._id) == [
        "ufunc_add_f32_cast"]
    same(out, tl.add(a.to(tl.float32), b.to(tl.float32)), tl.float32)
    out64 = poison([7, 9], tl.float64)             # out= of another dtype
    run(shim, "add", out64, [a, b], [1], common=tl.float32._id)
    same(out64, tl.add(a.to(tl.float32), b.to(tl.float32)).to(tl.float64), tl.float64)


@pytest.mark.parametrize("limit", [64, 1000, 4096])
def test_32bit_split(shim, limit):
    shim.tl_cuda_set_index_limit(limit)
    try:
        a = rand([4099], tl.float32, 14)
        b = rand([67, 61], tl.float32, 15).t()
        out = poison([4099], tl.float32)
        names = run(shim, "add", out, [a, a], [1])
        assert len(names) >= 4099 * 4 // limit
        same(out, tl.add(a, a), tl.float32)
        out2 = poison([61, 67], tl.float32)
        names = run(shim, "add", out2, [b, b.contiguous()], [3])
        assert len(names) > 1
        same(out2, tl.add(b, b, alpha=3), tl.float32)
    finally:
        shim.tl_cuda_set_index_limit(0)


@pytest.mark.parametrize("dtype", [tl.float32, tl.int64, tl.float16, tl.uint8], ids=str)
def test_eq_bool_result(shim, dtype):
    a = rand([1031], dtype, 16, -2, 2)
    b = rand([1031], dtype, 17, -2, 2)
    b[::3] = a[::3]
    out = poison([1031], tl.bool)
    run(shim, "eq", out, [a, b], common=dtype._id)
    same(out, tl.eq(a, b), tl.bool)


def test_where_fixed_bool_input(shim):
    c = rand([513], tl.bool, 18)
    x, y = rand([513], tl.float32, 19), rand([513], tl.float32, 20)
    out = poison([513], tl.float32)
    # the condition keeps its dtype (the meta function's keep_dtype input)
    assert run(shim, "where", out, [c, x, y], common=tl.float32._id) == ["ufunc_where_f32_vec"]
    same(out, tl.where(c, x, y), tl.float32)
    out = poison([513], tl.float32)
    run(shim, "where", out, [c, x, tl.tensor(0.5)], common=tl.float32._id)   # CPU scalar third operand
    same(out, tl.where(c, x, tl.tensor(0.5)), tl.float32)


@pytest.mark.parametrize("dtype", [tl.int8, tl.int32, tl.float32, tl.bfloat16], ids=str)
def test_clamp_scalar_args(shim, dtype):
    a = rand([777], dtype, 21, -100, 100)
    out = poison([777], dtype)
    run(shim, "clamp_scalar", out, [a], [-20, 30], common=dtype._id)
    same(out, tl.clamp(a, -20, 30), dtype)


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.float16, tl.bfloat16], ids=str)
def test_exp_unary(shim, dtype):
    a = rand([2053], dtype, 22, -10, 10)
    out = poison([2053], dtype)
    run(shim, "exp", out, [a], common=dtype._id)
    got, want = out.to(tl.float64).numpy(), tl.exp(a).to(tl.float64).numpy()
    np.testing.assert_allclose(got, want, rtol={tl.float32: 2e-6, tl.float64: 1e-14}.get(dtype, 1e-2))


# the special functions (kernels/ufunc/tl_special.h) as CUDA C++: the device
# lgamma, the general algorithms (no libmvec), the same values as the CPU loops
SPECIAL_UNARY = {"lgamma": tl.lgamma, "digamma": tl.digamma, "erfinv": tl.erfinv, "i0": tl.i0,
                 "special_i1": tl.special.i1}


@pytest.mark.parametrize("op", list(SPECIAL_UNARY))
@pytest.mark.parametrize("dtype", [tl.float32, tl.float64], ids=str)
def test_special_unary(shim, op, dtype):
    lo, hi = (-0.999, 0.999) if op == "erfinv" else (-20, 40)
    a = rand([1031], dtype, 24, lo, hi)
    out = poison([1031], dtype)
    run(shim, op, out, [a], common=dtype._id)
    got, want = out.to(tl.float64).numpy(), SPECIAL_UNARY[op](a).to(tl.float64).numpy()
    np.testing.assert_allclose(got, want, rtol={tl.float32: 2e-6, tl.float64: 1e-13}[dtype], atol=1e-12)


def test_special_polygamma_and_binary(shim):
    a = rand([517], tl.float64, 25, -6, 9)
    out = poison([517], tl.float64)
    run(shim, "polygamma", out, [a], [3], common=tl.float64._id)
    np.testing.assert_allclose(out.numpy(), tl.polygamma(3, a).numpy(), rtol=1e-13)
    b = rand([517], tl.float64, 26, -6, 9)
    for op, fn in [("logaddexp", tl.logaddexp), ("fmax", tl.fmax)]:
        run(shim, op, out, [a, b], common=tl.float64._id)
        np.testing.assert_allclose(out.numpy(), fn(a, b).numpy(), rtol=1e-15, atol=1e-15)   # libmvec vs libm
    i, j = rand([517], tl.int64, 27, -90, 90), rand([517], tl.int64, 28, -90, 90)
    outi = poison([517], tl.int64)
    run(shim, "gcd", outi, [i, j], common=tl.int64._id)
    np.testing.assert_array_equal(outi.numpy(), tl.gcd(i, j).numpy())


def test_unsupported_dtype_message(shim):
    a = rand([4], tl.float32, 23)
    out = poison([4], tl.float32)
    with pytest.raises(NotImplementedError, match="\"ufunc_bitwise_and_cuda\" not implemented for 'Float'"):
        run(shim, "bitwise_and", out, [a, a], common=tl.float32._id)


def test_bitwise_and_ints(shim):
    a, b = rand([999], tl.int16, 24, -3000, 3000), rand([999], tl.int16, 25, -3000, 3000)
    out = poison([999], tl.int16)
    run(shim, "bitwise_and", out, [a, b], common=tl.int16._id)
    same(out, tl.bitwise_and(a, b), tl.int16)
