"""kthvalue, median / nanmedian, mode, cummax / cummin, aminmax, nansum /
nanmean, masked_select, take, take_along_dim: against numpy always and
PyTorch when installed (values, indices on ties, NaNs, errors); odd shapes,
0-dim, empty, non-contiguous."""
import numpy as np
import pytest

import torchlet as tl

torch = None
try:
    import torch  # noqa: F811
except ImportError:  # pragma: no cover
    pass

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

NAN = float("nan")
RNG = np.random.default_rng(20261205)


def tn(x):
    return np.asarray(x.numpy())


def ties(*shape, dtype="float64"):
    return RNG.integers(-3, 4, size=shape).astype(dtype)


def assert_same(a, b):
    np.testing.assert_array_equal(tn(a), np.asarray(b))


# ---------------------------------------------------------------- numpy


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8"])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 11), 1), ((11, 3), 0), ((2, 5, 9), -2)])
def test_kthvalue_and_median_values_numpy(dtype, shape, dim):
    a = RNG.permutation(np.arange(int(np.prod(shape)))).reshape(shape).astype(dtype)
    n = shape[dim]
    for k in (1, (n + 1) // 2, n):
        v, i = tl.kthvalue(tl.from_numpy(a), k, dim)
        np.testing.assert_array_equal(tn(v), np.sort(a, axis=dim).take(k - 1, axis=dim))
        np.testing.assert_array_equal(np.take_along_axis(a, np.expand_dims(tn(i), dim), dim).squeeze(dim), tn(v))
    v, i = tl.median(tl.from_numpy(a), dim)
    np.testing.assert_array_equal(tn(v), np.sort(a, axis=dim).take((n - 1) // 2, axis=dim))
    assert tl.median(tl.from_numpy(a)).item() == np.sort(a.ravel())[(a.size - 1) // 2]


def test_median_nan_and_nanmedian_numpy():
    a = RNG.standard_normal((4, 9))
    a[1, 3] = a[1, 6] = NAN
    a[3, :] = NAN
    v, i = tl.median(tl.from_numpy(a), 1)
    assert np.isnan(tn(v)[1]) and tn(i)[1] == 3 and tn(i)[3] == 0
    w, _ = tl.nanmedian(tl.from_numpy(a), 1)
    rows = [np.sort(r[~np.isnan(r)]) for r in a[:3]]
    np.testing.assert_array_equal(tn(w)[:3], [r[(len(r) - 1) // 2] for r in rows])
    assert np.isnan(tn(w)[3])
    assert np.isnan(tl.median(tl.from_numpy(a)).item())
    b = a[:3].ravel()
    b = np.sort(b[~np.isnan(b)])
    assert tl.nanmedian(tl.from_numpy(a[:3])).item() == b[(len(b) - 1) // 2]
    assert np.isnan(tl.median(tl.tensor([])).item())


def test_median_noncontiguous_keepdim_0dim():
    a = RNG.standard_normal((5, 6))
    t = tl.from_numpy(a).t()
    v, i = tl.median(t, 0, keepdim=True)
    assert v.shape == (1, 5) and i.shape == (1, 5)
    np.testing.assert_array_equal(tn(v)[0], np.sort(a.T, 0)[2])
    v, i = tl.kthvalue(tl.tensor(2.5), 1)
    assert v.shape == () and v.item() == 2.5 and i.item() == 0
    v, i = tl.mode(tl.tensor(3))
    assert v.item() == 3 and i.item() == 0


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_mode_numpy(dtype):
    a = ties(6, 13, dtype=dtype)
    v, i = tl.mode(tl.from_numpy(a), 1)
    for r in range(6):
        vals, counts = np.unique(a[r], return_counts=True)
        assert tn(v)[r] == vals[np.argmax(counts)]
        assert a[r, tn(i)[r]] == tn(v)[r]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8"])
def test_cummax_cummin_numpy(dtype):
    a = ties(4, 9, dtype=dtype) if dtype != "uint8" else RNG.integers(0, 5, (4, 9)).astype(dtype)
    for dim in (0, 1, -1):
        v, i = tl.cummax(tl.from_numpy(a), dim)
        np.testing.assert_array_equal(tn(v), np.maximum.accumulate(a, axis=dim))
        np.testing.assert_array_equal(np.take_along_axis(a, tn(i), dim), tn(v))
        v, i = tl.cummin(tl.from_numpy(a).t(), dim)
        np.testing.assert_array_equal(tn(v), np.minimum.accumulate(a.T, axis=dim))


def test_cummax_nan_sticks():
    v, i = tl.cummax(tl.tensor([1.0, NAN, 3.0, NAN]), 0)
    assert tn(i).tolist() == [0, 1, 1, 3]   # a later NaN takes its own index, as PyTorch
    v, i = tl.cummin(tl.tensor([2.0, 1.0, 1.0, 0.5]), 0)
    assert tn(i).tolist() == [0, 1, 2, 3]
    v, i = tl.cummax(tl.zeros(0, 3), 0)
    assert v.shape == (0, 3) and i.dtype == tl.int64


def test_aminmax_numpy():
    a = RNG.standard_normal((4, 7))
    mn, mx = tl.aminmax(tl.from_numpy(a))
    assert mn.item() == a.min() and mx.item() == a.max() and mn.shape == ()
    mn, mx = tl.aminmax(tl.from_numpy(a).t(), dim=1, keepdim=True)
    np.testing.assert_array_equal(tn(mn), a.T.min(1, keepdims=True))
    np.testing.assert_array_equal(tn(mx), a.T.max(1, keepdims=True))
    mn, mx = tl.aminmax(tl.from_numpy(a), keepdim=True)
    assert mn.shape == (1, 1)


def test_nansum_nanmean_numpy():
    a = RNG.standard_normal((5, 6))
    a[a > 1] = NAN
    for dim in (None, 0, 1, (0, 1)):
        np.testing.assert_allclose(tn(tl.nansum(tl.from_numpy(a), dim)), np.nansum(a, axis=dim), rtol=1e-12)
        np.testing.assert_allclose(tn(tl.nanmean(tl.from_numpy(a).t(), dim)), np.nanmean(a.T, axis=dim), rtol=1e-12)
    assert tl.nansum(tl.tensor([1, 2, 3])).item() == 6
    assert tl.nansum(tl.tensor([1, 2, 3]), dtype=tl.float32).dtype == tl.float32


def test_masked_select_take_numpy():
    a = RNG.standard_normal((3, 5))
    m = RNG.random((3, 5)) > 0.5
    assert_same(tl.masked_select(tl.from_numpy(a), tl.from_numpy(m)), a[m])
    assert_same(tl.masked_select(tl.from_numpy(a).t(), tl.from_numpy(m.T.copy())), a.T[m.T])
    assert_same(tl.masked_select(tl.from_numpy(a[0]), tl.from_numpy(m)), np.broadcast_to(a[0], m.shape)[m])
    idx = np.array([[0, 14], [-1, 7]])
    assert_same(tl.take(tl.from_numpy(a), tl.from_numpy(idx)), a.ravel()[idx])
    assert_same(tl.take(tl.from_numpy(a).t(), tl.from_numpy(idx)), a.T.ravel()[idx])
    ind = RNG.integers(0, 5, (3, 2))
    assert_same(tl.take_along_dim(tl.from_numpy(a), tl.from_numpy(ind), 1), np.take_along_axis(a, ind, 1))
    assert_same(tl.take_along_dim(tl.from_numpy(a), tl.tensor([0, 14])), a.ravel()[[0, 14]])


@pytest.mark.parametrize("fn,msg,exc", [
    (lambda: tl.kthvalue(tl.zeros(3, 4), 5, 1), "kthvalue(): selected number k out of range for dimension 1",
     RuntimeError),
    (lambda: tl.kthvalue(tl.zeros(0, 3), 1, 0), "kthvalue(): Expected reduction dim 0 to have non-zero size.",
     IndexError),
    (lambda: tl.median(tl.zeros(0, 3), 0), "median(): Expected reduction dim 0 to have non-zero size.", IndexError),
    (lambda: tl.nanmedian(tl.zeros(0, 3), 0), "median(): Expected reduction dim 0 to have non-zero size.",
     IndexError),
    (lambda: tl.mode(tl.zeros(0, 3), 0), "mode(): Expected reduction dim 0 to have non-zero size.", IndexError),
    (lambda: tl.aminmax(tl.zeros(0)), "aminmax(): cannot compute aminmax over an empty dimension as the operation "
     "has no identity.", RuntimeError),
    (lambda: tl.aminmax(tl.zeros(0, 3), dim=0), "aminmax: Expected reduction dim 0 to have non-zero size.",
     IndexError),
    (lambda: tl.masked_select(tl.zeros(3), tl.ones(3)), "masked_select: expected BoolTensor for mask", RuntimeError),
    (lambda: tl.take(tl.zeros(3, 4), tl.tensor([12])),
     "out of range: tried to access index 12 on a tensor of 12 elements.", IndexError),
    (lambda: tl.take(tl.zeros(3), tl.tensor([1.0])), "take(): Expected a long tensor for index, but got Float",
     RuntimeError),
    (lambda: tl.take(tl.zeros(0), tl.tensor([0])), "take(): tried to take from an empty tensor", IndexError),
    (lambda: tl.nanmean(tl.tensor([1, 2])),
     "nanmean(): expected input to have floating point or complex dtype but got Long", RuntimeError),
    (lambda: tl.take_along_dim(tl.zeros(3, 4), tl.tensor([0]), 1),
     "torch.take_along_dim(): input and indices should have the same number of dimensions, but got 2 dimensions "
     "for input, and 1 dimensions for indices", RuntimeError),
])
def test_errors(fn, msg, exc):
    with pytest.raises(exc) as e:
        fn()
    assert msg in str(e.value)


def test_empty_reductions_keep_shape():
    v, i = tl.kthvalue(tl.zeros(0, 3), 1, 1)
    assert v.shape == (0,) and i.dtype == tl.int64
    v, i = tl.mode(tl.zeros(2, 0), 0)
    assert v.shape == (0,)
    mn, mx = tl.aminmax(tl.zeros(0, 3), dim=1)
    assert mn.shape == (0,)


def test_out_variants():
    a = tl.from_numpy(RNG.standard_normal((3, 5)))
    v, i = tl.empty(0, dtype=tl.float64), tl.empty(0, dtype=tl.int64)
    r = tl.kthvalue(a, 2, 1, out=(v, i))
    assert r[0] is v or r[0].shape == (3,)
    np.testing.assert_array_equal(tn(v), tn(tl.kthvalue(a, 2, 1)[0]))
    tl.median(a, 0, out=(v, i))
    np.testing.assert_array_equal(tn(i), tn(tl.median(a, 0)[1]))
    tl.cummax(a, 1, out=(v, i))
    assert v.shape == (3, 5)
    o = tl.empty(0, dtype=tl.float64)
    tl.nansum(a, 1, out=o)
    np.testing.assert_allclose(tn(o), tn(a).sum(1))


# ---------------------------------------------------------------- torch


def _both(a):
    return tl.from_numpy(a.copy()), torch.from_numpy(a.copy())


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8"])
@pytest.mark.parametrize("shape", [(9,), (4, 7), (3, 16), (2, 3, 5), (1, 40), (2, 100)])
def test_ties_against_torch(dtype, shape):
    a = ties(*shape, dtype=dtype)
    if dtype.startswith("float"):
        a.ravel()[::7] = NAN
    x, y = _both(a)
    for dim in range(-len(shape), len(shape)):
        n = shape[dim]
        for k in sorted({1, (n + 1) // 2, n}):
            r, e = tl.kthvalue(x, k, dim), torch.kthvalue(y, k, dim)
            np.testing.assert_array_equal(tn(r[0]), e[0].numpy())
            np.testing.assert_array_equal(tn(r[1]), e[1].numpy())
        for f in ("median", "nanmedian", "cummax", "cummin"):
            r, e = getattr(tl, f)(x, dim), getattr(torch, f)(y, dim)
            np.testing.assert_array_equal(tn(r[0]), e[0].numpy(), err_msg=f)
            np.testing.assert_array_equal(tn(r[1]), e[1].numpy(), err_msg=f)
        r, e = tl.mode(x, dim), torch.mode(y, dim)
        np.testing.assert_array_equal(tn(r[0]), e[0].numpy())
        np.testing.assert_array_equal(tn(r[1]), e[1].numpy())
    for f in ("median", "nanmedian"):
        np.testing.assert_array_equal(tn(getattr(tl, f)(x)), getattr(torch, f)(y).numpy())
    mn, mx = tl.aminmax(x)
    emn, emx = torch.aminmax(y)
    np.testing.assert_array_equal(tn(mn), emn.numpy())
    np.testing.assert_array_equal(tn(mx), emx.numpy())


@needs_torch
def test_nan_reductions_and_indexing_against_torch():
    a = RNG.standard_normal((4, 5, 3)).astype(np.float32)
    a[a > 1.2] = NAN
    x, y = _both(a)
    for dim in (None, 1, (0, 2)):
        for keepdim in (False, True):
            # float32 sums of O(1) terms in another order: cancellation leaves ~1 ulp of the terms
            np.testing.assert_allclose(tn(tl.nansum(x, dim, keepdim)), torch.nansum(y, dim, keepdim).numpy(),
                                       rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(tn(tl.nanmean(x, dim, keepdim)), torch.nanmean(y, dim, keepdim).numpy(),
                                       rtol=1e-6, atol=1e-6)
    m = a > 0
    assert_same(tl.masked_select(x, tl.from_numpy(m)), torch.masked_select(y, torch.from_numpy(m)).numpy())
    ind = RNG.integers(0, 5, (4, 1, 3))
    assert_same(tl.take_along_dim(x, tl.from_numpy(ind), 1),
                torch.take_along_dim(y, torch.from_numpy(ind), 1).numpy())
    ind = RNG.integers(0, 3, (1, 5, 2))
    assert_same(tl.take_along_dim(x, tl.from_numpy(ind), -1),
                torch.take_along_dim(y, torch.from_numpy(ind), -1).numpy())


# ---------------------------------------------------------------- searching, counting, shapes


def test_searchsorted_bucketize_numpy():
    bd = np.sort(RNG.standard_normal(9))
    v = RNG.standard_normal((4, 5))
    for side in ("left", "right"):
        assert_same(tl.searchsorted(tl.from_numpy(bd), tl.from_numpy(v), side=side), np.searchsorted(bd, v, side=side))
        assert_same(tl.bucketize(tl.from_numpy(v).t(), tl.from_numpy(bd), right=side == "right"),
                    np.searchsorted(bd, v.T, side=side))
    perm = RNG.permutation(9)
    unsorted = bd[perm]
    sorter = np.argsort(unsorted)
    assert_same(tl.searchsorted(tl.from_numpy(unsorted), tl.from_numpy(v), sorter=tl.from_numpy(sorter)),
                np.searchsorted(bd, v))
    r = tl.searchsorted(tl.from_numpy(bd), 0.0, out_int32=True)
    assert r.dtype == tl.int32 and r.shape == () and r.item() == np.searchsorted(bd, 0.0)
    rows = np.sort(RNG.standard_normal((3, 6)), 1)
    q = RNG.standard_normal((3, 4))
    assert_same(tl.searchsorted(tl.from_numpy(rows), tl.from_numpy(q), right=True),
                np.stack([np.searchsorted(rows[i], q[i], side="right") for i in range(3)]))
    assert tl.searchsorted(tl.tensor([1.0, 2.0]), tl.tensor([NAN])).item() == 2


def test_bincount_histc_isin_numpy():
    x = RNG.integers(0, 7, 50)
    w = RNG.standard_normal(50)
    assert_same(tl.bincount(tl.from_numpy(x)), np.bincount(x))
    np.testing.assert_allclose(tn(tl.bincount(tl.from_numpy(x), tl.from_numpy(w), minlength=10)),
                               np.bincount(x, w, minlength=10))
    assert tl.bincount(tl.from_numpy(x), tl.from_numpy(w.astype(np.float32))).dtype == tl.float32
    a = RNG.standard_normal(200)
    np.testing.assert_array_equal(tn(tl.histc(tl.from_numpy(a), bins=7, min=-1, max=1)),
                                  np.histogram(a, bins=7, range=(-1, 1))[0].astype(np.float64))
    np.testing.assert_array_equal(tn(tl.histc(tl.from_numpy(a), bins=5)),
                                  np.histogram(a, bins=5)[0].astype(np.float64))
    e = RNG.integers(0, 10, (3, 4))
    t = RNG.integers(0, 10, 5)
    assert_same(tl.isin(tl.from_numpy(e), tl.from_numpy(t)), np.isin(e, t))
    assert_same(tl.isin(tl.from_numpy(e), tl.from_numpy(t), invert=True), np.isin(e, t, invert=True))
    assert_same(tl.isin(tl.from_numpy(e), 3), e == 3)
    assert tl.isin(3, tl.from_numpy(t)).item() == (3 in t)
    assert not tl.isin(tl.tensor([NAN]), tl.tensor([NAN])).item()


def test_repeat_interleave_block_diag_unique_consecutive_numpy():
    a = RNG.standard_normal((2, 3))
    assert_same(tl.repeat_interleave(tl.tensor([2, 0, 1])), np.repeat(np.arange(3), [2, 0, 1]))
    assert_same(tl.repeat_interleave(tl.from_numpy(a), 2), np.repeat(a, 2))
    assert_same(tl.repeat_interleave(tl.from_numpy(a), 2, dim=1), np.repeat(a, 2, axis=1))
    assert_same(tl.repeat_interleave(tl.from_numpy(a).t(), tl.tensor([1, 3]), dim=1), np.repeat(a.T, [1, 3], axis=1))
    assert_same(tl.from_numpy(a).repeat_interleave(tl.tensor([2]), dim=0), np.repeat(a, 2, axis=0))
    b = RNG.standard_normal(4)
    expect = np.zeros((4, 8))
    expect[:2, :3] = a
    expect[2, 3:7] = b
    expect[3, 7] = 5.0
    assert_same(tl.block_diag(tl.from_numpy(a), tl.from_numpy(b), tl.tensor(5.0)), expect)
    x = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    out, inv, cnt = tl.unique_consecutive(tl.from_numpy(x), return_inverse=True, return_counts=True)
    assert tn(out).tolist() == [1, 2, 3, 1, 2] and tn(inv).tolist() == [0, 0, 1, 1, 2, 3, 3, 4]
    assert tn(cnt).tolist() == [2, 2, 1, 2, 1]
    m = np.array([[1, 1], [1, 1], [2, 2]])
    out, inv = tl.from_numpy(m).unique_consecutive(return_inverse=True, dim=0)
    assert tn(out).tolist() == [[1, 1], [2, 2]] and tn(inv).tolist() == [0, 0, 1]


def test_quantile_numpy():
    a = RNG.standard_normal((4, 7))
    for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
        q = np.array([0.0, 0.3, 0.5, 1.0])
        np.testing.assert_allclose(tn(tl.quantile(tl.from_numpy(a), tl.from_numpy(q), dim=1, interpolation=mode)),
                                   np.quantile(a, q, axis=1, method=mode), rtol=1e-12)
        np.testing.assert_allclose(tl.quantile(tl.from_numpy(a), 0.25, interpolation=mode).item(),
                                   np.quantile(a, 0.25, method=mode), rtol=1e-12)
    b = a.copy()
    b[1, 2] = NAN
    np.testing.assert_allclose(tn(tl.nanquantile(tl.from_numpy(b), 0.4, dim=1)), np.nanquantile(b, 0.4, axis=1),
                               rtol=1e-12)
    assert np.isnan(tn(tl.quantile(tl.from_numpy(b), 0.4, dim=1))[1])


def test_logcumsumexp_masked_scatter_numpy():
    a = RNG.standard_normal((3, 6))
    np.testing.assert_allclose(tn(tl.logcumsumexp(tl.from_numpy(a).t(), 0)),
                               np.logaddexp.accumulate(a.T, axis=0), rtol=1e-12)
    m = RNG.random((3, 6)) > 0.5
    src = RNG.standard_normal(20)
    expect = a.copy()
    expect[m] = src[:m.sum()]
    assert_same(tl.masked_scatter(tl.from_numpy(a), tl.from_numpy(m), tl.from_numpy(src)), expect)


@pytest.mark.parametrize("fn,msg,exc", [
    (lambda: tl.searchsorted(tl.zeros(4), tl.zeros(2), side="middle"),
     "torch.searchsorted(): side can only be 'left' or 'right' but got middle", RuntimeError),
    (lambda: tl.searchsorted(tl.zeros(3, 4), tl.zeros(2, 2)),
     "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
     "and input value tensor must match, but we got boundaries tensor [3, 4] and input value tensor [2, 2]",
     RuntimeError),
    (lambda: tl.searchsorted(tl.zeros(4), tl.zeros(2), sorter=tl.tensor([0, 1, 2, 7])),
     "torch.searchsorted(): sorter index out of range", RuntimeError),
    (lambda: tl.bucketize(tl.zeros(2), tl.zeros(2, 2)), "boundaries tensor must be 1 dimension, but got dim(2)",
     RuntimeError),
    (lambda: tl.bincount(tl.tensor([1, -1])), "bincount only supports 1-d non-negative integral inputs.",
     RuntimeError),
    (lambda: tl.bincount(tl.tensor([1, 2]), tl.tensor([1.0])), "weights should be 1-d and have the same length as "
     "input", RuntimeError),
    (lambda: tl.histc(tl.tensor([1.0, 2.0]), min=3, max=2), "torch.histc: max must be larger than min", RuntimeError),
    (lambda: tl.repeat_interleave(tl.tensor([1, -2])), "repeats can not be negative", RuntimeError),
    (lambda: tl.repeat_interleave(tl.tensor([1, 2]), output_size=4), "allocated size does not match required size",
     RuntimeError),
    (lambda: tl.block_diag(tl.zeros(2, 2, 2)),
     "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions", RuntimeError),
    (lambda: tl.quantile(tl.zeros(3), 1.5), "quantile() q must be in the range [0, 1] but got 1.5", RuntimeError),
    (lambda: tl.quantile(tl.zeros(3), 0.5, interpolation="foo"),
     "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got foo", RuntimeError),
    (lambda: tl.masked_scatter(tl.zeros(2, 3), tl.ones(2, 3, dtype=tl.bool), tl.zeros(3)),
     "Number of elements of source < number of ones in mask", RuntimeError),
])
def test_search_errors(fn, msg, exc):
    with pytest.raises(exc) as e:
        fn()
    assert msg in str(e.value)


def test_histogram_numpy():
    a = RNG.standard_normal(300)
    w = RNG.random(300)
    h, e = tl.histogram(tl.from_numpy(a), 7, range=(-1.0, 2.0), weight=tl.from_numpy(w))
    eh, ee = np.histogram(a, 7, range=(-1.0, 2.0), weights=w)
    np.testing.assert_allclose(tn(h), eh, rtol=1e-12)
    np.testing.assert_allclose(tn(e), ee, rtol=1e-12)
    h, e = tl.histogram(tl.from_numpy(a), tl.tensor([-2.0, -0.5, 0.0, 3.0], dtype=tl.float64), density=True)
    np.testing.assert_allclose(tn(h), np.histogram(a, [-2.0, -0.5, 0.0, 3.0], density=True)[0], rtol=1e-12)
    h, e = tl.histogram(tl.ones(3), 2)
    assert tn(e).tolist() == [0.5, 1.0, 1.5] and tn(h).tolist() == [0.0, 3.0]


@needs_torch
def test_histogram_against_torch():
    for trial in range(60):
        a = RNG.standard_normal(int(RNG.integers(0, 40))).astype(np.float32 if trial % 2 else np.float64)
        w = RNG.random(a.shape).astype(a.dtype)
        bins = int(RNG.integers(1, 12))
        rng_ = (-1.0, 1.5) if trial % 3 == 0 else None
        wt = trial % 5 == 0
        e = torch.histogram(torch.from_numpy(a), bins, range=rng_, weight=torch.from_numpy(w) if wt else None,
                            density=trial % 4 == 0)
        r = tl.histogram(tl.from_numpy(a), bins, range=rng_, weight=tl.from_numpy(w) if wt else None,
                         density=trial % 4 == 0)
        np.testing.assert_allclose(tn(r[0]), e[0].numpy(), rtol=1e-5)
        np.testing.assert_array_equal(tn(r[1]), e[1].numpy())
