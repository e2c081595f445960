"""torchlet.masked: reductions and normalizations over an explicit mask,
against numpy (masked arrays / explicit fills) always and torch.masked when
installed; broadcast masks, fully masked-out slices, keepdim, dtype=,
non-contiguous inputs, gradients."""
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


def tn(x):
    return np.asarray(x.numpy())


def data(shape=(4, 5), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    m = rng.random(shape) > 0.4
    m[0] = False  # one fully masked-out row
    return x, m


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_prod_amax_amin(dim, keepdim):
    x, m = data()
    tx, tm = tl.from_numpy(x), tl.from_numpy(m)
    ax = None if dim is None else dim
    for name, fill, ref in (("sum", 0.0, np.sum), ("prod", 1.0, np.prod), ("amax", -np.inf, np.max),
                            ("amin", np.inf, np.min)):
        got = getattr(tl.masked, name)(tx, dim, keepdim=keepdim, mask=tm)
        want = ref(np.where(m, x, fill), axis=ax, keepdims=keepdim)
        np.testing.assert_allclose(tn(got), want, rtol=1e-12, err_msg=name)


def test_mean_var_std_nan_on_empty_slices():
    x, m = data()
    tx, tm = tl.from_numpy(x), tl.from_numpy(m)
    mx = np.ma.masked_array(x, ~m)
    np.testing.assert_allclose(tn(tl.masked.mean(tx, 1, mask=tm))[1:], mx.mean(1).data[1:], rtol=1e-12)
    assert np.isnan(tn(tl.masked.mean(tx, 1, mask=tm))[0])
    for c in (0, 1):
        v = tn(tl.masked.var(tx, 1, correction=c, mask=tm))
        s = tn(tl.masked.std(tx, 1, unbiased=bool(c), mask=tm))
        for r in range(1, 4):
            sel = x[r][m[r]]
            if sel.size > c:
                np.testing.assert_allclose(v[r], sel.var(ddof=c), rtol=1e-12)
                np.testing.assert_allclose(s[r], sel.std(ddof=c), rtol=1e-12)
        assert np.isnan(v[0])
    with pytest.raises(ValueError, match="mean\\(\\): Could not infer output dtype. Input dtype must be either a "
                                         "floating point or complex dtype. Got: torchlet.int64|Got: torch.int64"):
        tl.masked.mean(tl.ones(3, dtype=tl.int64), mask=tl.ones(3, dtype=tl.bool))


def test_argmax_cum_softmax_family():
    x, m = data((3, 6), seed=1)
    m[0] = True
    tx, tm = tl.from_numpy(x), tl.from_numpy(m)
    np.testing.assert_array_equal(tn(tl.masked.argmax(tx, 1, mask=tm)), np.argmax(np.where(m, x, -np.inf), 1))
    np.testing.assert_array_equal(tn(tl.masked.argmin(tx, 1, mask=tm)), np.argmin(np.where(m, x, np.inf), 1))
    np.testing.assert_allclose(tn(tl.masked.cumsum(tx, 1, mask=tm)), np.cumsum(np.where(m, x, 0), 1), rtol=1e-12)
    np.testing.assert_allclose(tn(tl.masked.cumprod(tx, 1, mask=tm)), np.cumprod(np.where(m, x, 1), 1), rtol=1e-12)
    e = np.exp(np.where(m, x, -np.inf) - np.where(m, x, -np.inf).max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(tn(tl.masked.softmax(tx, 1, mask=tm)), sm, rtol=1e-12)
    np.testing.assert_allclose(tn(tl.masked.log_softmax(tx, 1, mask=tm))[m], np.log(sm)[m], rtol=1e-12)
    np.testing.assert_allclose(tn(tl.masked.logsumexp(tx, 1, mask=tm)),
                               np.log(np.sum(np.where(m, np.exp(x), 0), 1)), rtol=1e-12)
    n2 = np.sqrt(np.sum(np.where(m, x, 0) ** 2, 1, keepdims=True))
    np.testing.assert_allclose(tn(tl.masked.norm(tx, 2.0, 1, keepdim=True, mask=tm)), n2, rtol=1e-12)
    np.testing.assert_allclose(tn(tl.masked.normalize(tx, 2.0, 1, mask=tm)), np.where(m, x, 0) / n2, rtol=1e-12)


def test_broadcast_mask_dtype_and_noncontiguous():
    x = np.arange(12.0).reshape(3, 4)
    tx = tl.from_numpy(x).t()  # non-contiguous 4x3
    mrow = np.array([True, False, True])
    got = tl.masked.sum(tx, 1, mask=tl.from_numpy(mrow))
    np.testing.assert_allclose(tn(got), np.where(mrow, x.T, 0).sum(1))
    xi = np.arange(6, dtype=np.int32).reshape(2, 3)
    r = tl.masked.sum(tl.from_numpy(xi), mask=tl.from_numpy(xi > 1))
    assert r.dtype == tl.int64 and int(r.item()) == 2 + 3 + 4 + 5
    with pytest.raises(IndexError, match="mask dimensionality higher than of the input"):
        tl.masked.sum(tl.ones(3), mask=tl.ones(2, 3, dtype=tl.bool))
    with pytest.raises(RuntimeError, match="dim=0 appears multiple times in the list of dims"):
        tl.masked.sum(tl.ones(3, 3), (0, 0), mask=tl.ones(3, 3, dtype=tl.bool))


def test_logaddexp_and_no_mask():
    x, m = data((5,), seed=2)
    y = x[::-1].copy()
    got = tl.masked.logaddexp(tl.from_numpy(x), tl.from_numpy(y), input_mask=tl.from_numpy(m),
                              other_mask=tl.from_numpy(m))
    np.testing.assert_allclose(tn(got), np.logaddexp(np.where(m, x, -np.inf), np.where(m, y, -np.inf)))
    np.testing.assert_allclose(tn(tl.masked.sum(tl.from_numpy(x))), x.sum(), rtol=1e-12)


def test_grads():
    x, m = data((3, 4), seed=3)
    m[:, :2] = True  # two masked-in elements a row: var and softmax are finite
    tm = tl.from_numpy(m)
    tx = tl.from_numpy(x).requires_grad_()
    for fn in (lambda t: tl.masked.sum(t, 1, mask=tm), lambda t: tl.masked.mean(t, 1, mask=tm),
               lambda t: tl.masked.softmax(t, 1, mask=tm), lambda t: tl.masked.var(t, 1, mask=tm),
               lambda t: tl.masked.normalize(t, 2.0, 1, mask=tm), lambda t: tl.masked.prod(t, 1, mask=tm)):
        assert gradcheck(fn, (tx,))


@needs_torch
@pytest.mark.parametrize("name,kw", [("sum", {"dim": 1}), ("prod", {"dim": 0}), ("amax", {"dim": 1}),
                                     ("amin", {}), ("mean", {"dim": 1}), ("var", {"dim": 1}), ("std", {"dim": 0}),
                                     ("logsumexp", {"dim": 1}), ("norm", {"ord": 1.0, "dim": 1}),
                                     ("softmax", {"dim": 1}), ("log_softmax", {"dim": 0}), ("softmin", {"dim": 1}),
                                     ("cumsum", {"dim": 1}), ("cumprod", {"dim": 0}), ("argmax", {"dim": 1}),
                                     ("normalize", {"ord": 2.0, "dim": 1}), ("median", {"dim": 1}),
                                     ("median", {"dim": 0, "keepdim": True})])
def test_against_torch_masked(name, kw):
    x, m = data((4, 5), seed=4)
    got = getattr(tl.masked, name)(tl.from_numpy(x), mask=tl.from_numpy(m), **kw)
    want = getattr(torch.masked, name)(torch.from_numpy(x), mask=torch.from_numpy(m), **kw)
    np.testing.assert_allclose(tn(got), want.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("keepdim", [False, True])
def test_median_skips_masked_out_elements(keepdim):
    x, m = data((5, 7), seed=9)
    got = tl.masked.median(tl.from_numpy(x), 1, keepdim=keepdim, mask=tl.from_numpy(m))
    # the lower median of the masked-in elements (nanmedian's rule); NaN for the empty row
    rows = [np.sort(r[k]) for r, k in zip(x, m)]
    want = np.array([r[(len(r) - 1) // 2] if len(r) else np.nan for r in rows])
    np.testing.assert_array_equal(tn(got).reshape(-1), want)
    assert tuple(got.shape) == ((5, 1) if keepdim else (5,))
    xi = tl.from_numpy((x * 10).astype(np.int64))
    with pytest.raises(ValueError, match="no fully masked out rows if dtype is not floating point"):
        tl.masked.median(xi, 1, mask=tl.from_numpy(m))
    m[0] = True
    assert tl.masked.median(xi, 1, mask=tl.from_numpy(m)).dtype == tl.int64
