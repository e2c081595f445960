"""The indexing kernels run on the CPU (host shim) against the CPU operators.

generated/cuda/index.cu (kernels/cuda/tl_cuda_index.cuh) is compiled as C++
with tests/cuda/shim/host_shim.h; the host side is the real one
(kernels/cuda/tl_cuda_index.c): its entry points over CPU tensors (their
memory stands in for device memory) check, lay out the launch, pack
tl_cuda_index_params, call tl_cuda_launch (the shim's) and read the
bad-index flag back. Compared with torchlet's CPU operators: every dtype the
kernels take, empty, one element, odd sizes and more than a block,
non-contiguous and 0-dim operands, int32 / int64 indices, negative indices
(wrapped where PyTorch wraps them, errors where it does not), repeated
indices accumulating, and the errors of out-of-range indices.
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
from torchlet._errors import check, check_ptr  # noqa: E402
from torchlet._tensor import _wrap  # noqa: E402

import shim_build  # noqa: E402

NN = tl._C._nn   # nll_loss_forward / nll_loss_backward (python_module: nn)

P = ctypes.c_void_p
I64 = ctypes.c_int64
ALL = [tl.bool, tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64, tl.float16, tl.bfloat16, tl.float32, tl.float64]
FLOATS = [tl.float16, tl.bfloat16, tl.float32, tl.float64]
TOL = {tl.float16: 2e-3, tl.bfloat16: 2e-2, tl.float32: 1e-5, tl.float64: 1e-12}
SIGS = {
    "tl_native_index_select_cuda": (P, [ctypes.c_uint64, P, I64, P]),
    "tl_native_index_select_out_cuda": (P, [ctypes.c_uint64, P, I64, P, P]),
    "tl_impl_gather_out_cuda": (ctypes.c_int, [P, P, I64, P, ctypes.c_bool, P]),
    "tl_impl_scatter_add_cuda": (ctypes.c_int, [P, P, I64, P, P, P]),
    "tl_impl_scatter_src_out_cuda": (ctypes.c_int, [P, P, I64, P, P, P]),
    "tl_impl_index_copy_out_cuda": (ctypes.c_int, [P, P, I64, P, P, P]),
    "tl_native_masked_fill__tensor_cuda": (P, [ctypes.c_uint64, P, P, P]),
    "tl_native_embedding_dense_backward_cuda": (P, [ctypes.c_uint64, P, P, I64, I64, ctypes.c_bool]),
    "tl_native_nll_loss_forward_cuda": (ctypes.c_int, [ctypes.c_uint64, P, P, P, I64, I64, P, P]),
    "tl_impl_nll_loss_backward_out_cuda": (ctypes.c_int, [P, P, P, P, P, I64, I64, P, P]),
    "tl_native_index_cuda": (P, [ctypes.c_uint64, P, P, I64]),
    "tl_native__index_put_impl_cuda_": (P, [ctypes.c_uint64, P, P, I64, P, ctypes.c_bool, ctypes.c_bool]),
}


@pytest.fixture(scope="module")
def shim():
    lib = shim_build.load(["index", "where"])
    for name, (res, args) in SIGS.items():
        getattr(lib, name).restype = res
        getattr(lib, name).argtypes = args
    lib.tl_shim_log_name.restype = ctypes.c_char_p
    return lib


_KEEP: list = []   # tensors passed by address stay alive until the test ends


@pytest.fixture(autouse=True)
def _keep_alive():
    yield
    _KEEP.clear()


def _p(t):
    if t is None:
        return None
    _KEEP.append(t)
    return int(ffi.cast("uintptr_t", t._p))


def _adopt(p):
    return _wrap(ffi.cast("tl_tensor *", check_ptr(p)))


def _names(shim):
    return [shim.tl_shim_log_name(i).decode() for i in range(shim.tl_shim_log_size())]


def rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == tl.bool:
        return tl.from_numpy(rng.integers(0, 2, size=shape).astype(np.bool_))
    if dtype.is_floating_point:
        return tl.from_numpy(rng.uniform(-3, 3, size=shape)).to(dtype)
    return tl.from_numpy(rng.integers(0, 100, size=shape)).to(dtype)


def ints(shape, hi, seed, dtype=tl.int64, lo=0):
    return tl.from_numpy(np.random.default_rng(seed).integers(lo, hi, size=shape)).to(dtype)


def same(got, want, tol=0.0):
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape), (got.dtype, got.shape, want.shape)
    if got.dtype.is_floating_point:
        np.testing.assert_allclose(got.to(tl.float64).numpy(), want.to(tl.float64).numpy(), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


# ------------------------------------------------------------ index_select

SELECT_CASES = [((7, 5), 0, 4), ((7, 5), 1, 9), ((7, 5), -1, 0), ((3, 300, 17), 1, 257), ((1,), 0, 1), ((0, 4), 1, 3),
                ((5, 0), 0, 2), ((2, 3, 4, 5), 2, 6)]


@pytest.mark.parametrize("dtype", ALL + [tl.complex64, tl.complex128], ids=str)
def test_index_select(shim, dtype):
    for shape, dim, n in SELECT_CASES:
        x = rand(shape, dtype, 1)
        size = shape[dim]
        for idt in (tl.int64, tl.int32):
            ix = ints([n], size, 2, idt) if size else ints([0], 1, 2, idt)
            shim.tl_shim_log_clear()
            got = _adopt(shim.tl_native_index_select_cuda(0, _p(x), dim, _p(ix)))
            same(got, tl.index_select(x, dim, ix))
            elems = got.numel()
            assert _names(shim) == ([f"tl_index_gather_{x.element_size()}"] if elems else [])


def test_index_select_layouts(shim):
    x = rand((40, 33), tl.float32, 3).t()                       # non-contiguous self
    ix = ints([50], 40, 4)[::2]                                 # a stepped index
    same(_adopt(shim.tl_native_index_select_cuda(0, _p(x), 1, _p(ix))), tl.index_select(x, 1, ix))
    out = tl.empty([25, 33]).t()                                # a strided out=
    r = _adopt(shim.tl_native_index_select_out_cuda(0, _p(x), 1, _p(ix), _p(out)))
    same(r, tl.index_select(x, 1, ix))
    assert r.stride() == (1, 33)
    big = tl.arange(3 * 6000000, dtype=tl.int64).to(tl.uint8).reshape(3, 6000000)
    bix = tl.tensor([2, 0, 2])                                  # 18M positions: more than 65536 blocks (grid-stride)
    same(_adopt(shim.tl_native_index_select_cuda(0, _p(big), 0, _p(bix))), tl.index_select(big, 0, bix))
    s = tl.tensor(2.5)                                          # 0-dim self
    same(_adopt(shim.tl_native_index_select_cuda(0, _p(s), 0, _p(tl.tensor([0])))), tl.index_select(s, 0, tl.tensor([0])))
    for bad in (7, -1):                                        # out of range, negative: the CPU's IndexError
        with pytest.raises(IndexError, match="index out of range in self"):
            _adopt(shim.tl_native_index_select_cuda(0, _p(rand((7, 5), tl.float32, 5)), 0, _p(tl.tensor([0, bad]))))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        _adopt(shim.tl_native_index_select_cuda(0, _p(rand((7, 5), tl.float32, 5)), 0, _p(tl.zeros([2, 2], dtype=tl.int64))))


# --------------------------------------------------------- gather, scatter_add

def _gather(shim, x, dim, ix):
    out = tl.empty(list(ix.shape), dtype=x.dtype)
    check(shim.tl_impl_gather_out_cuda(None, _p(x), dim, _p(ix), False, _p(out)))
    return out


def _scatter_add(shim, x, dim, ix, src, fn="tl_impl_scatter_add_cuda"):
    out = x.clone()
    check(getattr(shim, fn)(None, _p(out), dim, _p(ix), _p(src), _p(out)))
    return out


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_gather_scatter_add(shim, dtype):
    for shape, dim, ishape in (((7, 5), 1, (7, 9)), ((7, 5), 0, (3, 4)), ((300, 4), 0, (600, 3)), ((6,), 0, (13,)),
                               ((4, 5, 6), -2, (4, 2, 6)), ((3, 4), 1, (0, 2))):
        x = rand(shape, dtype, 1)
        ix = ints(ishape, shape[dim], 2)
        same(_gather(shim, x, dim, ix), tl.gather(x, dim, ix))
        src = rand(ishape, dtype, 3)
        # repeated indices accumulate; integers wrap as on the CPU
        same(_scatter_add(shim, x, dim, ix, src), tl.scatter_add(x, dim, ix, src), TOL.get(dtype, 0) * 40)
        # scatter_: the shim runs positions in order, so a repeated index keeps the CPU's (last) value
        same(_scatter_add(shim, x, dim, ix, src, "tl_impl_scatter_src_out_cuda"), tl.scatter(x, dim, ix, src))


def test_gather_scatter_layouts_and_errors(shim):
    x = rand((30, 20), tl.float64, 4).t()
    ix = ints((25, 40), 20, 5).t()[::2]                        # non-contiguous index [20, 25], smaller than self
    same(_gather(shim, x, 0, ix), tl.gather(x, 0, ix))
    src = rand((21, 26), tl.float64, 6)
    same(_scatter_add(shim, x.contiguous(), 0, ix, src), tl.scatter_add(x.contiguous(), 0, ix, src), 1e-12)
    i32 = ints((20, 30), 20, 7, tl.int32)
    same(_gather(shim, x, 0, i32), tl.gather(x, 0, i32))
    s = tl.tensor(1.5, dtype=tl.float64)                        # 0-dim self and index
    same(_gather(shim, s, 0, tl.tensor(0)), tl.gather(s, 0, tl.tensor(0)))
    for bad in (20, -1):
        with pytest.raises(RuntimeError, match=f"index {bad} is out of bounds for dimension 0 with size 20"):
            _gather(shim, x, 0, tl.tensor([[0, bad]]))
        with pytest.raises(RuntimeError, match=f"index {bad} is out of bounds for dimension 0 with size 20"):
            _scatter_add(shim, x.contiguous(), 0, tl.tensor([[bad]]), tl.ones([1, 1], dtype=tl.float64))
    with pytest.raises(NotImplementedError, match="\"scatter_add_cuda_\" not implemented for 'ComplexFloat'"):
        z = tl.zeros([3], dtype=tl.complex64)
        _scatter_add(shim, z, 0, tl.tensor([0]), z[:1])


# --------------------------------------------------------------- index_copy

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_index_copy(shim, dtype):
    for shape, dim, n in (((7, 5), 0, 3), ((7, 5), 1, 5), ((3, 300, 4), 1, 257), ((6,), 0, 0), ((2, 3, 4), -1, 2)):
        x = rand(shape, dtype, 1)
        size = shape[dim]
        ix = tl.from_numpy(np.random.default_rng(2).permutation(size)[:n].copy())   # distinct indices
        sshape = list(shape)
        sshape[dim] = n
        src = rand(sshape, dtype, 3)
        out = x.clone()
        check(shim.tl_impl_index_copy_out_cuda(None, _p(out), dim, _p(ix), _p(src), _p(out)))
        same(out, tl.index_copy(x, dim, ix, src))
    with pytest.raises(IndexError, match="index_copy_\\(\\): index 7 is out of bounds for dimension 0 with size 7"):
        x = rand((7, 5), dtype, 1)
        check(shim.tl_impl_index_copy_out_cuda(None, _p(x), 0, _p(tl.tensor([7])), _p(x[:1].clone()), _p(x)))


# ------------------------------------------------------------- masked_fill_

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_masked_fill(shim, dtype):
    for shape, mshape in (((7, 5), (7, 5)), ((3, 300), (300,)), ((4, 1, 6), (5, 6)[1:]), ((0, 3), (3,)), ((), ())):
        x = rand(shape, dtype, 1)
        m = rand(mshape, tl.bool, 2)
        v = tl.tensor(1, dtype=dtype)
        want = x.clone().masked_fill_(m, v)
        got = x.clone()
        _adopt(shim.tl_native_masked_fill__tensor_cuda(0, _p(got), _p(m), _p(v)))
        same(got, want)


def test_masked_fill_errors_and_layouts(shim):
    x = rand((20, 30), tl.float32, 3).t()                       # a non-contiguous self, written in place
    m = rand((30, 20), tl.bool, 4)
    want = x.contiguous().masked_fill_(m, tl.tensor(-2.0))
    _adopt(shim.tl_native_masked_fill__tensor_cuda(0, _p(x), _p(m), _p(tl.tensor(-2.0))))
    same(x.contiguous(), want)
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks, but got mask with dtype long"):
        _adopt(shim.tl_native_masked_fill__tensor_cuda(0, _p(x), _p(tl.zeros([30, 20], dtype=tl.int64)),
                                                       _p(tl.tensor(0.0))))
    with pytest.raises(RuntimeError, match="only supports a 0-dimensional value tensor, but got tensor with 1 dimension"):
        _adopt(shim.tl_native_masked_fill__tensor_cuda(0, _p(x), _p(m), _p(tl.zeros([1]))))
    with pytest.raises(RuntimeError):                          # the mask may not broadcast self
        _adopt(shim.tl_native_masked_fill__tensor_cuda(0, _p(tl.zeros([3])), _p(rand((2, 3), tl.bool, 5)),
                                                       _p(tl.tensor(0.0))))


# ----------------------------------------------------- embedding backward

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_embedding_dense_backward(shim, dtype):
    for ishape, nw, pad, freq in (((13,), 10, -1, False), ((4, 7), 5, 2, False), ((4, 7), 5, -1, True),
                                  ((300,), 3, 1, True), ((0,), 4, -1, False), ((2, 3), 6, 5, True)):
        ix = ints(ishape, nw, 1)
        g = rand(ishape + (9,), dtype, 2)
        want = tl.embedding_dense_backward(g, ix, nw, pad, freq)
        for idx in (ix, ix.to(tl.int32)):
            got = _adopt(shim.tl_native_embedding_dense_backward_cuda(0, _p(g), _p(idx), nw, pad, freq))
            same(got, want, TOL[dtype] * 30)
    g = rand((6, 4), tl.float32, 3).t().contiguous().t()        # a non-contiguous gradient
    ix = ints((6,), 3, 4)
    same(_adopt(shim.tl_native_embedding_dense_backward_cuda(0, _p(g), _p(ix), 3, -1, False)),
         tl.embedding_dense_backward(g, ix, 3, -1, False), 1e-6)
    with pytest.raises(IndexError, match="index out of range in self"):
        _adopt(shim.tl_native_embedding_dense_backward_cuda(0, _p(tl.ones([2, 3])), _p(tl.tensor([0, 3])), 3, -1, True))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following"):
        _adopt(shim.tl_native_embedding_dense_backward_cuda(0, _p(tl.ones([2, 3])), _p(tl.tensor([0.0, 1.0])), 3, -1,
                                                            False))


# ------------------------------------------------------------- nll_loss

def _nll(shim, x, t, w, red, ign):
    o, tw = P(), P()
    check(shim.tl_native_nll_loss_forward_cuda(0, _p(x), _p(t), _p(w), red, ign, ctypes.byref(o), ctypes.byref(tw)))
    return _adopt(o.value), _adopt(tw.value)


def _nll_bwd(shim, g, x, t, w, red, ign, tw):
    gi = tl.empty(list(x.shape), dtype=x.dtype)
    check(shim.tl_impl_nll_loss_backward_out_cuda(None, _p(g), _p(x), _p(t), _p(w), red, ign, _p(tw), _p(gi)))
    return gi


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nll_loss(shim, dtype):
    for B, C in ((6, 5), (1, 3), (300, 7), (0, 4)):
        x = rand((B, C), dtype, 1)
        w = rand((C,), dtype, 3).abs()
        for weight in (None, w):
            for red in (0, 1, 2):
                for ign in (-100, 2):
                    t = ints((B,), C, 2)
                    if B > 2:
                        t[1] = ign                             # an ignored target
                    o, tw = _nll(shim, x, t, weight, red, ign)
                    wo, wtw = NN.nll_loss_forward(x, t, weight, red, ign)
                    same(o, wo, TOL[dtype] * 10)
                    same(tw, wtw, TOL[dtype] * 10)
                    g = rand(tuple(wo.shape), dtype, 4)
                    same(_nll_bwd(shim, g, x, t, weight, red, ign, wtw),
                         NN.nll_loss_backward(g, x, t, weight, red, ign, wtw), TOL[dtype] * 10)


def test_nll_loss_layouts_and_errors(shim):
    x = rand((5, 8), tl.float32, 5).t()                         # non-contiguous input [8, 5]
    t = ints((16,), 5, 6)[::2]                                  # a stepped target
    for red in (0, 1, 2):
        o, tw = _nll(shim, x, t, None, red, -100)
        wo, wtw = NN.nll_loss_forward(x, t, None, red, -100)
        same(o, wo, 1e-6)
        g = rand(tuple(wo.shape), tl.float32, 7)
        same(_nll_bwd(shim, g, x, t, None, red, -100, wtw), NN.nll_loss_backward(g, x, t, None, red, -100, wtw), 1e-6)
    one = rand((5,), tl.float64, 8)                              # 1-D input, 0-dim target
    for red in (0, 1, 2):
        o, tw = _nll(shim, one, tl.tensor(3), None, red, -100)
        wo, wtw = NN.nll_loss_forward(one, tl.tensor(3), None, red, -100)
        same(o, wo, 1e-12)
        same(tw, wtw)
    u8 = tl.tensor([1, 0, 4], dtype=tl.uint8)                   # Byte targets
    same(_nll(shim, x[:3], u8, None, 1, -100)[0], NN.nll_loss_forward(x[:3], u8, None, 1, -100)[0], 1e-6)
    for bad in (5, -1):
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            _nll(shim, x[:2], tl.tensor([0, bad]), None, 1, -100)
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            _nll_bwd(shim, tl.tensor(1.0), x[:2], tl.tensor([0, bad]), None, 1, -100, tl.tensor(2.0))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte"):
        _nll(shim, x, t.to(tl.int32), None, 1, -100)


# ------------------------------------------------------ index, index_put_

def _index(shim, x, idx):
    arr = (P * len(idx))(*[_p(i) for i in idx])
    return _adopt(shim.tl_native_index_cuda(0, _p(x), arr, len(idx)))


def _index_put(shim, x, idx, v, acc):
    arr = (P * len(idx))(*[_p(i) for i in idx])
    return _adopt(shim.tl_native__index_put_impl_cuda_(0, _p(x), arr, len(idx), _p(v), acc, False))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_index_and_index_put(shim, dtype):
    x = rand((6, 5, 4), dtype, 1)
    i1 = tl.tensor([4, 0, -1, 2, 2])
    cases = [(i1,), (None, i1[:3]), (i1[:2], None, tl.tensor([[1], [3]])), (rand((6,), tl.bool, 2),),
             (None, tl.tensor([1, 3]), tl.tensor([0, -4])), (rand((6, 5), tl.bool, 3),), (tl.tensor([], dtype=tl.int64),),
             (i1.to(tl.int32), tl.tensor(1))]
    for idx in cases:
        want = tl.index(x, list(idx))
        same(_index(shim, x, idx), want)
        v = rand(tuple(want.shape), dtype, 4)
        for acc in (False, True):
            if not acc and dtype != tl.bool and i1 is idx[0]:
                continue   # repeated indices without accumulate: which value wins is unspecified
            got = _index_put(shim, x.clone(), idx, v, acc)
            same(got, tl.index_put(x, list(idx), v, acc), TOL.get(dtype, 0) * 20)


def test_index_layouts_and_errors(shim):
    x = rand((8, 9), tl.float32, 5).t()                         # non-contiguous self
    idx = (tl.tensor([0, 8, 3]), None)
    same(_index(shim, x, idx), tl.index(x, list(idx)))
    y = x.contiguous()
    same(_index_put(shim, y.clone(), (None, tl.tensor([7, 1])), tl.tensor(2.5), False),
         tl.index_put(y, [None, tl.tensor([7, 1])], tl.tensor(2.5)))         # a broadcast value
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 9"):
        _index(shim, x, (tl.tensor([9]),))
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        _index(shim, x, (tl.tensor([0]), tl.tensor([0]), tl.tensor([0])))
    with pytest.raises(RuntimeError, match="shape mismatch: value tensor of shape \\[2\\] cannot be broadcast"):
        _index_put(shim, y.clone(), (tl.tensor([0, 1, 2]),), tl.ones([2]), False)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        _index_put(shim, y.clone(), (tl.tensor([0]),), tl.ones([8], dtype=tl.float64), False)
