"""sort / argsort / msort / topk / unique, and the shape helpers repeat / tile /
roll / diagonal / diag / diag_embed / trace / tril_indices / triu_indices /
cartesian_prod, linspace / logspace, randperm / randint: against numpy always
and PyTorch when installed; odd shapes, 0-dim, empty, non-contiguous;
gradcheck for the differentiable ones."""
import math
import re

import numpy as np
import pytest

import torchlet as tl
from torchlet.autograd import gradcheck

torch = None
try:
    import torch  # noqa: F811
except ImportError:  # pragma: no cover
    pass

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

NAN = float("nan")


def tn(x):
    return np.asarray(x.numpy())


# ---------------------------------------------------------------- sort


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 50), 1), ((50, 3), 0), ((2, 3, 40), 1), ((5, 0), 1)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_numpy_stable(dtype, shape, dim, descending):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 6, size=shape).astype(dtype)   # many ties: stability shows
    v, i = tl.sort(tl.from_numpy(a), dim=dim, descending=descending, stable=True)
    key = -a.astype(np.float64) if descending else a
    ei = np.argsort(key, axis=dim, kind="stable")
    np.testing.assert_array_equal(tn(i), ei)
    np.testing.assert_array_equal(tn(v), np.take_along_axis(a, ei, axis=dim))


def test_sort_nan_and_signed_zero():
    x = tl.tensor([3.0, NAN, -1.0, -0.0, 0.0, -math.inf, NAN, math.inf])
    v, i = x.sort()
    assert tn(i).tolist() == [5, 2, 3, 4, 0, 7, 1, 6]   # NaN last, -0.0 == 0.0 kept in order
    v, i = x.sort(descending=True)
    assert tn(i).tolist() == [1, 6, 7, 0, 3, 4, 2, 5]   # NaN first descending


@pytest.mark.parametrize("dtype", [tl.float16, tl.bfloat16, tl.bool])
def test_sort_small_dtypes(dtype):
    a = np.array([[0.5, -2.0, 1.0, 0.0, -2.0], [1.0, 1.0, 0.0, 0.0, 3.0]], dtype=np.float32)
    x = tl.from_numpy(a).to(dtype)
    v, i = x.sort(dim=1, stable=True)
    ref = a.astype(bool) if dtype == tl.bool else tn(x.float())
    ei = np.argsort(ref, axis=1, kind="stable")
    np.testing.assert_array_equal(tn(i), ei)
    assert v.dtype == dtype


def test_sort_noncontiguous_and_0dim():
    base = tl.randn(6, 8)
    x = base.t()[::2]
    v, i = x.sort(0)
    np.testing.assert_array_equal(tn(v), np.sort(tn(x), axis=0, kind="stable"))
    v, i = tl.tensor(2.5).sort()
    assert v.shape == () and v.item() == 2.5 and i.item() == 0
    with pytest.raises(IndexError):
        tl.ones(3).sort(1)


def test_argsort_msort():
    x = tl.tensor([[3, 1, 2], [0, 5, 4]])
    np.testing.assert_array_equal(tn(x.argsort()), [[1, 2, 0], [0, 2, 1]])
    np.testing.assert_array_equal(tn(tl.argsort(x, dim=0, descending=True)), [[0, 1, 1], [1, 0, 0]])
    np.testing.assert_array_equal(tn(tl.msort(x)), np.sort(tn(x), axis=0))


def test_sort_meta():
    v, i = tl.empty(3, 4, device="meta").sort(0)
    assert v.device.type == "meta" and i.dtype == tl.int64 and tuple(i.shape) == (3, 4)
    v, i = tl.empty(3, 4, device="meta").topk(2)
    assert tuple(v.shape) == (3, 2)


def test_sort_gradcheck():
    x = tl.randn(3, 5, dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda t: t.sort(1)[0], (x,))
    assert gradcheck(lambda t: t.sort(0, descending=True)[0], (x,))
    assert gradcheck(lambda t: t.topk(2, 1)[0], (x,))
    v, i = x.sort()
    assert not i.requires_grad and v.grad_fn.name().startswith("Sort")


# ---------------------------------------------------------------- topk


@pytest.mark.parametrize("largest", [True, False])
def test_topk(largest):
    rng = np.random.default_rng(1)
    a = rng.permutation(60).reshape(4, 15).astype(np.float32)
    v, i = tl.from_numpy(a).topk(4, dim=1, largest=largest)
    o = np.argsort(-a if largest else a, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(tn(i), o)
    np.testing.assert_array_equal(tn(v), np.take_along_axis(a, o, axis=1))
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        tl.ones(3).topk(4)
    assert tl.ones(3).topk(0)[0].shape == (0,)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int16", "uint8"])
@pytest.mark.parametrize("n,k", [(7, 3), (20, 20), (40, 1), (100, 7), (300, 4), (1000, 15), (129, 2), (5, 0),
                                 (20000, 300)])  # the last: the heap fills across key chunks
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("sorted_", [True, False])
def test_topk_ties_like_torch(dtype, n, k, largest, sorted_):
    """Many equal values: which of them topk returns, and in what order, is
    PyTorch's (its partial_sort / nth_element selection); NaN counts as the
    largest."""
    rng = np.random.default_rng(n * 31 + k)
    a = rng.integers(0, 4, size=(3, n)).astype(dtype)
    if dtype.startswith("float"):
        a[1, ::5] = np.nan
        a[2, ::3] = -0.0
    tv, ti = torch.from_numpy(a).topk(k, dim=1, largest=largest, sorted=sorted_)
    v, i = tl.from_numpy(a).topk(k, dim=1, largest=largest, sorted=sorted_)
    np.testing.assert_array_equal(tn(i), ti.numpy())
    np.testing.assert_array_equal(tn(v), tv.numpy())
    v, i = tl.from_numpy(a.T.copy()).topk(k, dim=0, largest=largest, sorted=sorted_)   # along a non-last dim
    np.testing.assert_array_equal(tn(i), ti.numpy().T)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 8, 33])
def test_topk_stream_floats_like_torch(dtype, largest, k):
    """Rows long enough for the streaming selection (k * 64 <= n) on continuous
    values of both signs with infinities, NaN and signed zeros: the blocks
    skipped by the float threshold test change nothing"""
    rng = np.random.default_rng(k * 7 + largest)
    a = rng.standard_normal((5, 4099)).astype(np.float32) * 10
    a[1, ::97] = np.nan
    a[2, ::89] = np.inf
    a[2, 5::71] = -np.inf
    a[3, ::3] = -0.0
    a[3, 1::3] = 0.0
    a[4] = -np.abs(a[4])   # every top negative
    ta = torch.from_numpy(a).to(getattr(torch, dtype))
    tv, ti = ta.topk(k, dim=1, largest=largest)
    v, i = tl.from_numpy(a).to(getattr(tl, dtype)).topk(k, dim=1, largest=largest)
    np.testing.assert_array_equal(tn(i), ti.numpy())
    np.testing.assert_array_equal(tn(v.float()), tv.float().numpy())


# ---------------------------------------------------------------- unique


def test_unique():
    x = tl.tensor([[3, 1, 3], [2, 1, 7]])
    out, inv, cnt = tl.unique(x, return_inverse=True, return_counts=True)
    eo, ei, ec = np.unique(tn(x), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(tn(out), eo)
    np.testing.assert_array_equal(tn(inv), ei.reshape(2, 3))
    np.testing.assert_array_equal(tn(cnt), ec)
    assert x.unique().shape == (4,)
    assert tl.unique(tl.tensor([], dtype=tl.float32)).shape == (0,)
    np.testing.assert_array_equal(tn(tl.unique(x, dim=1)), np.unique(tn(x), axis=1))   # tests/ops/test_unique_dim.py


@needs_torch
def test_unique_nan_like_torch():
    a = [2.0, NAN, NAN, -0.0, 0.0, 2.0]
    got = tn(tl.unique(tl.tensor(a)))
    exp = torch.unique(torch.tensor(a)).numpy()
    np.testing.assert_array_equal(got, exp)


# ---------------------------------------------------------------- shapes


def test_repeat_tile():
    a = np.arange(6).reshape(2, 3)
    x = tl.from_numpy(a)
    np.testing.assert_array_equal(tn(x.repeat(2, 1, 3)), np.tile(a, (2, 1, 3)))
    np.testing.assert_array_equal(tn(tl.tile(x, (2,))), np.tile(a, (1, 2)))
    np.testing.assert_array_equal(tn(x.t().repeat(1, 2)), np.tile(a.T, (1, 2)))
    assert tl.tensor(5).repeat(3).tolist() == [5, 5, 5]
    assert x.repeat(0, 2).shape == (0, 6)
    with pytest.raises(RuntimeError, match="can not be smaller"):
        x.repeat(2)
    g = tl.randn(2, 3, dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda t: t.repeat(2, 1, 3), (g,))
    assert gradcheck(lambda t: tl.tile(t, (2, 2)), (g,))


def test_roll():
    a = np.arange(12).reshape(3, 4)
    x = tl.from_numpy(a)
    np.testing.assert_array_equal(tn(tl.roll(x, 1)), np.roll(a, 1))
    np.testing.assert_array_equal(tn(x.roll(-5, 1)), np.roll(a, -5, 1))
    np.testing.assert_array_equal(tn(x.roll((1, 2), (0, 1))), np.roll(a, (1, 2), (0, 1)))
    np.testing.assert_array_equal(tn(x.t().roll(2, 0)), np.roll(a.T, 2, 0))
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        x.roll((1, 2), 0)
    g = tl.randn(3, 4, dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda t: t.roll((1, -3), (0, 1)), (g,))


@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 3, 7])
def test_diagonal_diag_embed(offset):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = tl.from_numpy(a)
    np.testing.assert_array_equal(tn(x.diagonal(offset, 1, 2)), np.diagonal(a, offset, 1, 2))
    np.testing.assert_array_equal(tn(tl.diagonal(x, offset, -1, 0)), np.diagonal(a, offset, -1, 0))
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(tn(tl.diag(tl.from_numpy(m), offset)), np.diag(m, offset))
    v = np.arange(1.0, 4.0)
    np.testing.assert_array_equal(tn(tl.diag(tl.from_numpy(v), offset)), np.diag(v, offset))


def test_diagonal_is_view_and_grads():
    x = tl.zeros(3, 3)
    x.diagonal().fill_(1)
    assert tn(x).tolist() == np.eye(3).tolist()
    g = tl.randn(3, 4, dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda t: t.diagonal(1), (g,))
    assert gradcheck(lambda t: tl.diag_embed(t, -1), (g,))
    assert gradcheck(lambda t: tl.trace(t), (g,))
    assert gradcheck(lambda t: tl.diag(t), (g,))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        g.diagonal(0, 1, 1)
    with pytest.raises(RuntimeError, match="diag\\(\\): Supports 1D or 2D tensors. Got 3D"):
        tl.diag(tl.ones(1, 1, 1))


@needs_torch
def test_diag_embed_trace_like_torch():
    a = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    for off, d1, d2 in [(0, -2, -1), (1, 0, 2), (-2, 2, 0)]:
        np.testing.assert_array_equal(tn(tl.diag_embed(tl.from_numpy(a), off, d1, d2)),
                                      torch.diag_embed(torch.from_numpy(a), off, d1, d2).numpy())
    i = np.arange(12).reshape(3, 4)
    t = tl.trace(tl.from_numpy(i))
    assert t.dtype == tl.int64 and t.item() == torch.trace(torch.from_numpy(i)).item()
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 1"):
        tl.trace(tl.ones(3))


@pytest.mark.parametrize("row,col,off", [(3, 3, 0), (4, 3, 1), (3, 5, -2), (0, 3, 0), (3, 4, 10), (3, 4, -10)])
def test_tril_triu_indices(row, col, off):
    np.testing.assert_array_equal(tn(tl.tril_indices(row, col, off)), np.stack(np.tril_indices(row, off, col)))
    np.testing.assert_array_equal(tn(tl.triu_indices(row, col, off)), np.stack(np.triu_indices(row, off, col)))
    assert tl.tril_indices(row, col, off).dtype == tl.int64
    assert tl.triu_indices(row, col, off, dtype=tl.int32).dtype == tl.int32
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        tl.tril_indices(-1, 3)


def test_cartesian_prod():
    a, b, c = tl.tensor([1, 2]), tl.tensor([3, 4, 5]), tl.tensor([6])
    import itertools
    exp = list(itertools.product([1, 2], [3, 4, 5], [6]))
    assert tn(tl.cartesian_prod(a, b, c)).tolist() == [list(e) for e in exp]
    assert tl.cartesian_prod(a).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="Expect a 1D vector, but got shape \\[2, 1\\]"):
        tl.cartesian_prod(a, tl.ones(2, 1))


@pytest.mark.parametrize("steps", [0, 1, 2, 5, 50])
def test_linspace_logspace(steps):
    np.testing.assert_allclose(tn(tl.linspace(-1.5, 3, steps, dtype=tl.float64)), np.linspace(-1.5, 3, steps))
    np.testing.assert_allclose(tn(tl.logspace(-1, 2, steps, dtype=tl.float64)), np.logspace(-1, 2, steps))
    np.testing.assert_allclose(tn(tl.logspace(0, 3, steps, base=2.0, dtype=tl.float64)),
                               np.logspace(0, 3, steps, base=2.0))
    assert tl.linspace(0, 1, steps).dtype == tl.float32
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        tl.linspace(0, 1, -1)


SPACE_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"]


def _space_bounds(dtype, rng):
    """start / end pairs that fit dtype: ints and floats, up and down, equal."""
    hi = 100 if dtype in ("int8", "uint8") else 1000
    lo = 0 if dtype == "uint8" else -hi
    out = [(0, 1), (3, 3), (5, -5) if lo < 0 else (9, 2), (-2.5 if lo < 0 else 2.5, 7.75)]
    for _ in range(12):
        out.append((float(rng.uniform(lo, hi)), float(rng.uniform(lo, hi))))
        out.append((int(rng.integers(lo, hi)), int(rng.integers(lo, hi))))
    return out


@needs_torch
@pytest.mark.parametrize("dtype", SPACE_DTYPES)
def test_linspace_like_torch_exactly(dtype):
    """PyTorch's kernel value for value: bounds in the dtype, the step in its
    arithmetic (a double step for integers, truncated), two halves, fused
    multiply-adds; float16 / bfloat16 round every operation."""
    rng = np.random.default_rng(11)
    for s, e in _space_bounds(dtype, rng):
        for n in (1, 2, 3, 7, 50, 101):
            want = torch.linspace(s, e, n, dtype=getattr(torch, dtype))
            got = tl.linspace(s, e, n, dtype=getattr(tl, dtype))
            assert got.dtype == getattr(tl, dtype)
            np.testing.assert_array_equal(tn(got.to(tl.float64)), want.to(torch.float64).numpy(), err_msg=f"{s} {e} {n}")


@needs_torch
@pytest.mark.parametrize("dtype", SPACE_DTYPES)
def test_logspace_like_torch_exactly(dtype):
    rng = np.random.default_rng(12)
    for s, e in _space_bounds(dtype, rng):
        s, e = s / 400 if dtype != "uint8" else s / 50, e / 400 if dtype != "uint8" else e / 50   # exponents
        if dtype != "float64" and not dtype.startswith("float") and not dtype.startswith("bfloat"):
            s, e = int(s), int(e)
        for n in (1, 2, 5, 30):
            for base in (10.0, 2.0):
                want = torch.logspace(s, e, n, base=base, dtype=getattr(torch, dtype))
                got = tl.logspace(s, e, n, base=base, dtype=getattr(tl, dtype))
                np.testing.assert_array_equal(tn(got.to(tl.float64)), want.to(torch.float64).numpy(),
                                              err_msg=f"{s} {e} {n} {base}")
    # float exponents into an integer dtype: truncated to the dtype first
    if dtype.startswith("int") or dtype == "uint8":
        want = torch.logspace(1.5, 2.9, 6, dtype=getattr(torch, dtype))
        np.testing.assert_array_equal(tn(tl.logspace(1.5, 2.9, 6, dtype=getattr(tl, dtype))), want.numpy())


@needs_torch
def test_linspace_logspace_tensor_bounds_like_torch():
    for fn in ("linspace", "logspace"):
        tf, lf = getattr(torch, fn), getattr(tl, fn)
        for s, e in [(torch.tensor(1.5), torch.tensor(3)), (torch.tensor(2, dtype=torch.int16), 7.0),
                     (-1, torch.tensor(2.0, dtype=torch.float64))]:
            ls = tl.tensor(s.numpy()) if isinstance(s, torch.Tensor) else s
            le = tl.tensor(e.numpy()) if isinstance(e, torch.Tensor) else e
            for dt in (None, "int64", "float64", "float16"):
                kw_t = {} if dt is None else {"dtype": getattr(torch, dt)}
                kw_l = {} if dt is None else {"dtype": getattr(tl, dt)}
                want, got = tf(s, e, 6, **kw_t), lf(ls, le, 6, **kw_l)
                assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
                np.testing.assert_array_equal(tn(got.to(tl.float64)), want.to(torch.float64).numpy())
        x = tl.tensor(1.0, requires_grad=True)
        assert not lf(x, 3, 4).requires_grad   # the bounds are a factory's arguments: no graph
        for s, e in [(torch.ones(1), torch.tensor(3)), (torch.tensor(1.0), torch.ones(1)),
                     (torch.ones(2), 3), (1, torch.ones(2, 1))]:
            ls = tl.tensor(s.numpy()) if isinstance(s, torch.Tensor) else s
            le = tl.tensor(e.numpy()) if isinstance(e, torch.Tensor) else e
            with pytest.raises(RuntimeError) as want:
                tf(s, e, 4)
            with pytest.raises(RuntimeError, match="^" + re.escape(str(want.value)) + "$"):
                lf(ls, le, 4)


@needs_torch
@pytest.mark.parametrize("call", [lambda m: m.linspace(0, 1, 5, dtype=m.bool),
                                  lambda m: m.logspace(0, 1, 5, dtype=m.bool),
                                  lambda m: m.linspace(0, 300, 5, dtype=m.int8),
                                  lambda m: m.linspace(0, 1e20, 3, dtype=m.int32),
                                  lambda m: m.linspace(0, -200.7, 3, dtype=m.uint8),
                                  lambda m: m.logspace(3, 3, 1, dtype=m.int8),
                                  lambda m: m.linspace(0, 1, -1)])
def test_linspace_logspace_errors_like_torch(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value), match="^" + re.escape(str(want.value)) + "$"):
        call(tl)


def test_randperm_randint():
    tl.manual_seed(0)
    p = tl.randperm(100)
    assert p.dtype == tl.int64 and sorted(tn(p).tolist()) == list(range(100))
    tl.manual_seed(0)
    assert tn(tl.randperm(100)).tolist() == tn(p).tolist()
    assert tl.randperm(0).shape == (0,)
    r = tl.randint(3, 7, (1000,))
    assert r.dtype == tl.int64 and tn(r).min() == 3 and tn(r).max() == 6
    assert tl.randint(5, (2, 3), dtype=tl.int16).dtype == tl.int16
    g = tl.Generator().manual_seed(1)
    a = tl.randint(0, 100, (10,), generator=g)
    g.manual_seed(1)
    assert tl.randint(0, 100, (10,), generator=g).tolist() == a.tolist()
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=5"):
        tl.randint(5, 5, (2,))
    with pytest.raises(RuntimeError, match="n must be non-negative"):
        tl.randperm(-1)
