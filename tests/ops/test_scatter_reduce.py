"""scatter_reduce.two, index_reduce (functional, in-place, out=), the sign
predicates signbit / isposinf / isneginf / sgn, the functional random
variants (uniform, cauchy, log_normal, exponential, geometric), the direct
cummax / cummin scans and nansum's NaN-skipping walk: against numpy always,
against PyTorch when installed."""
from __future__ import annotations

import numpy as np
import pytest

import torchlet

# PyTorch's (and torchlet's) warn-once on the first index_reduce call
pytestmark = pytest.mark.filterwarnings(r"ignore:index_reduce\(\) is in beta")

R = np.random.default_rng(29)
REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _np_reduce(vals, reduce, floor):
    if reduce == "sum":
        return sum(vals[1:], vals[0])
    if reduce == "prod":
        out = vals[0]
        for v in vals[1:]:
            out = out * v
        return out
    if reduce == "mean":
        s = sum(vals[1:], vals[0])
        return s // len(vals) if floor else s / len(vals)
    if any(np.isnan(v) for v in vals):
        return np.nan
    return max(vals) if reduce == "amax" else min(vals)


def np_scatter_reduce(self, dim, index, src, reduce, include_self):
    """scatter_reduce by definition: the contributions of each target, reduced"""
    out = self.copy()
    groups = {}
    for pos in np.ndindex(*index.shape):
        tgt = list(pos)
        tgt[dim] = index[pos]
        groups.setdefault(tuple(tgt), []).append(src[pos])
    floor = not np.issubdtype(self.dtype, np.floating)
    for tgt, vals in groups.items():
        vals = ([self[tgt]] if include_self else []) + vals
        out[tgt] = _np_reduce(vals, reduce, floor)
    return out


def np_index_reduce(self, dim, index, source, reduce, include_self):
    out = np.moveaxis(self.copy(), dim, 0)
    src = np.moveaxis(source, dim, 0)
    floor = not np.issubdtype(self.dtype, np.floating)
    for t in set(index.tolist()):
        vals = ([out[t].copy()] if include_self else []) + [src[i] for i in range(len(index)) if index[i] == t]
        if reduce in ("amax", "amin"):
            st = np.stack(vals)
            r = st.max(0) if reduce == "amax" else st.min(0)
            out[t] = np.where(np.isnan(st).any(0), np.nan, r) if np.issubdtype(st.dtype, np.floating) else r
        else:
            out[t] = _np_reduce(vals, reduce, floor)
    return np.moveaxis(out, 0, dim)


def _data(shape, dtype):
    if np.issubdtype(dtype, np.floating):
        return R.uniform(-2, 2, shape).astype(dtype)
    return R.integers(-5, 6, shape).astype(dtype)


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_scatter_reduce_numpy(reduce, include_self, dtype):
    for dim, shape, ishape in [(0, (5, 4), (6, 3)), (1, (3, 6), (2, 9)), (2, (2, 3, 4), (2, 2, 7)), (0, (7,), (10,))]:
        a = _data(shape, dtype)
        src = _data(ishape, dtype)
        idx = R.integers(0, shape[dim], ishape)
        got = torchlet.scatter_reduce(torchlet.tensor(a), dim, torchlet.tensor(idx), torchlet.tensor(src), reduce,
                                      include_self=include_self).numpy()
        want = np_scatter_reduce(a, dim, idx, src, reduce, include_self)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_index_reduce_numpy(reduce, include_self, dtype):
    for dim, shape, n in [(0, (5, 4), 7), (1, (3, 6), 4), (2, (2, 3, 4), 5), (0, (6,), 9)]:
        a = _data(shape, dtype)
        sshape = list(shape)
        sshape[dim] = n
        src = _data(tuple(sshape), dtype)
        idx = R.integers(0, shape[dim], n)
        got = torchlet.index_reduce(torchlet.tensor(a), dim, torchlet.tensor(idx), torchlet.tensor(src), reduce,
                                    include_self=include_self).numpy()
        want = np_index_reduce(a, dim, idx, src, reduce, include_self)
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_nan_propagates():
    a = torchlet.tensor([1.0, np.nan, 3.0])
    s = torchlet.tensor([np.nan, 5.0, 0.5, 7.0])
    i = torchlet.tensor([0, 1, 2, 2])
    np.testing.assert_array_equal(torchlet.scatter_reduce(a, 0, i, s, "amax").numpy(), [np.nan, np.nan, 7.0])
    np.testing.assert_array_equal(torchlet.scatter_reduce(a, 0, i, s, "amin", include_self=False).numpy(),
                                  [np.nan, 5.0, 0.5])


def test_variants_and_views():
    a = R.standard_normal((4, 6))
    src = R.standard_normal((6, 4))
    idx = R.integers(0, 4, (6, 4))
    ta, ts, ti = torchlet.tensor(a), torchlet.tensor(src), torchlet.tensor(idx)
    want = np_scatter_reduce(a, 0, idx.T, src.T, "mean", False)
    # non-contiguous index and src; in-place on a clone; out=
    np.testing.assert_allclose(torchlet.scatter_reduce(ta, 0, ti.t(), ts.t(), "mean", include_self=False).numpy(), want)
    c = ta.clone()
    r = c.scatter_reduce_(0, ti.t(), ts.t(), "mean", include_self=False)
    assert r is c
    np.testing.assert_allclose(c.numpy(), want)
    out = torchlet.empty(4, 6, dtype=torchlet.float64)
    torchlet.scatter_reduce(ta, 0, ti.t(), ts.t(), "mean", include_self=False, out=out)
    np.testing.assert_allclose(out.numpy(), want)
    # index_reduce on a transposed self, in place and out=
    b = R.standard_normal((3, 5))
    s2 = R.standard_normal((4, 3))
    i2 = np.array([4, 0, 4, 1])
    want2 = np_index_reduce(b.T.copy(), 0, i2, s2, "amax", True)
    tb = torchlet.tensor(b).t()
    np.testing.assert_allclose(torchlet.index_reduce(tb, 0, torchlet.tensor(i2), torchlet.tensor(s2), "amax").numpy(),
                               want2)
    out2 = torchlet.empty(5, 3, dtype=torchlet.float64)
    torchlet.index_reduce(tb, 0, torchlet.tensor(i2), torchlet.tensor(s2), "amax", out=out2)
    np.testing.assert_allclose(out2.numpy(), want2)
    c2 = tb.clone()
    c2.index_reduce_(0, torchlet.tensor(i2, dtype=torchlet.int32), torchlet.tensor(s2), "amax")
    np.testing.assert_allclose(c2.numpy(), want2)


def test_empty_and_0dim():
    a = torchlet.tensor([1.0, 2.0])
    e = torchlet.scatter_reduce(a, 0, torchlet.tensor([], dtype=torchlet.int64), torchlet.tensor([]), "prod")
    np.testing.assert_array_equal(e.numpy(), [1.0, 2.0])
    z = torchlet.scatter_reduce(torchlet.tensor(2.0), 0, torchlet.tensor(0), torchlet.tensor(3.0), "prod")
    assert z.shape == () and float(z) == 6.0
    z2 = torchlet.index_reduce(torchlet.tensor(2.0), 0, torchlet.tensor([0]), torchlet.tensor(5.0), "amax")
    assert z2.shape == () and float(z2) == 5.0


def test_errors():
    a = torchlet.zeros(3, 4)
    i = torchlet.tensor([[0, 1]])
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin, got max"):
        torchlet.scatter_reduce(a, 0, i, torchlet.ones(1, 2), "max")
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        torchlet.scatter_reduce(a, 0, i, torchlet.ones(1, 2, dtype=torchlet.float64), "sum")
    with pytest.raises(RuntimeError, match="index 7 is out of bounds for dimension 0 with size 3"):
        torchlet.scatter_reduce(a, 0, torchlet.tensor([[7]]), torchlet.ones(1, 1), "sum")
    with pytest.raises(RuntimeError, match=r"index_reduce\(\): Expected reduce to be one of prod, mean, amax or amin "
                                           r"but got sum\."):
        torchlet.index_reduce(a, 0, torchlet.tensor([0]), torchlet.ones(1, 4), "sum")
    with pytest.raises(RuntimeError, match=r"index_reduce_\(\): self \(Float\) and source \(Double\) must have the same"):
        torchlet.index_reduce(a, 0, torchlet.tensor([0]), torchlet.ones(1, 4, dtype=torchlet.float64), "prod")
    with pytest.raises(IndexError, match="index out of range in self"):
        torchlet.index_reduce(a, 0, torchlet.tensor([3]), torchlet.ones(1, 4), "prod")
    b = torchlet.tensor([True, False])
    with pytest.raises(NotImplementedError, match="\"index_func_\" not implemented for 'Bool'"):
        torchlet.index_reduce(b, 0, torchlet.tensor([0]), torchlet.tensor([True]), "prod")
    with pytest.raises(NotImplementedError, match="\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"):
        torchlet.scatter_reduce(b, 0, torchlet.tensor([1]), torchlet.tensor([True]), "mean")
    np.testing.assert_array_equal(torchlet.scatter_reduce(b, 0, torchlet.tensor([1]), torchlet.tensor([True]), "amin",
                                                          include_self=False).numpy(), [True, True])


def test_sign_predicates_numpy():
    x = np.array([-np.inf, -2.5, -0.0, 0.0, 1.0, np.inf, np.nan, -np.nan], dtype=np.float64)
    for dt in (np.float64, np.float32, np.float16):
        t = torchlet.tensor(x.astype(dt))
        np.testing.assert_array_equal(torchlet.signbit(t).numpy(), np.signbit(x.astype(dt)))
        np.testing.assert_array_equal(torchlet.isposinf(t).numpy(), np.isposinf(x))
        np.testing.assert_array_equal(t.isneginf().numpy(), np.isneginf(x))
        np.testing.assert_array_equal(torchlet.sgn(t).numpy(), np.nan_to_num(np.sign(x.astype(dt)), nan=0.0))
    i = np.array([-3, 0, 4], dtype=np.int64)
    np.testing.assert_array_equal(torchlet.signbit(torchlet.tensor(i)).numpy(), [True, False, False])
    np.testing.assert_array_equal(torchlet.signbit(torchlet.tensor(i.astype(np.uint8))).numpy(), [False] * 3)
    np.testing.assert_array_equal(torchlet.isposinf(torchlet.tensor(i)).numpy(), [False] * 3)
    np.testing.assert_array_equal(torchlet.sgn(torchlet.tensor(i)).numpy(), [-1, 0, 1])
    # non-contiguous input, out=
    m = R.standard_normal((4, 5))
    out = torchlet.empty(5, 4, dtype=torchlet.bool)
    torchlet.signbit(torchlet.tensor(m).t(), out=out)
    np.testing.assert_array_equal(out.numpy(), np.signbit(m.T))
    with pytest.raises(RuntimeError, match="signbit does not support non-boolean outputs."):
        torchlet.signbit(torchlet.tensor(m), out=torchlet.empty(4, 5))
    with pytest.raises(RuntimeError, match="isneginf does not support non-boolean outputs."):
        torchlet.isneginf(torchlet.tensor(m), out=torchlet.empty(4, 5))
    s = torchlet.tensor(m).clone()
    s.sgn_()
    np.testing.assert_array_equal(s.numpy(), np.sign(m))


def test_cummax_cummin_numpy():
    for dt in (np.float32, np.float64, np.int64, np.int16, np.uint8):
        a = (R.integers(0, 5, (6, 7)) if dt != np.float32 else R.standard_normal((6, 7))).astype(dt)
        for dim in (0, 1):
            for fn, acc in ((torchlet.cummax, np.maximum), (torchlet.cummin, np.minimum)):
                v, ix = fn(torchlet.tensor(a).t(), dim)
                want = acc.accumulate(a.T, axis=dim)
                np.testing.assert_array_equal(v.numpy(), want)
                # the index is the last position holding the running value
                np.testing.assert_array_equal(np.take_along_axis(a.T, ix.numpy(), dim), want)


def test_random_functional_variants():
    x = torchlet.empty(20000, dtype=torchlet.float64)
    u = torchlet.ops.aten.uniform(x, -1.0, 3.0)
    assert u.shape == (20000,) and float(u.min()) >= -1.0 and float(u.max()) < 3.0
    assert abs(float(u.mean()) - 1.0) < 0.05
    e = torchlet.ops.aten.exponential(x, 2.0)
    assert float(e.min()) >= 0 and abs(float(e.mean()) - 0.5) < 0.02
    g = torchlet.ops.aten.geometric(x, 0.25)
    assert float(g.min()) >= 1 and abs(float(g.mean()) - 4.0) < 0.15
    ln = torchlet.ops.aten.log_normal(x, 0.0, 0.5)
    assert abs(float(ln.log().mean())) < 0.02 and abs(float(ln.log().std()) - 0.5) < 0.02
    c = torchlet.ops.aten.cauchy(x, 1.0, 2.0)
    assert abs(float(c.median()) - 1.0) < 0.1
    out = torchlet.empty(0)
    r = torchlet.ops.aten.uniform.out(torchlet.zeros(2, 2), 0.0, 1.0, out=out)
    assert r.shape == (2, 2)
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0, but found lambda=-1"):
        torchlet.ops.aten.exponential(x, -1.0)
    with pytest.raises(RuntimeError, match=r"geometric_ expects p to be in \(0, 1\), but got p=1.5"):
        torchlet.ops.aten.geometric(x, 1.5)


# ---------------------------------------------------------------- against torch

def test_against_torch():
    torch = pytest.importorskip("torch")
    for dtype in (np.float64, np.float32, np.float16, np.int64, np.uint8):
        for reduce in REDUCES:
            for inc in (True, False):
                a = _data((5, 6), dtype) if dtype != np.uint8 else R.integers(0, 9, (5, 6)).astype(dtype)
                s = _data((4, 6), dtype) if dtype != np.uint8 else R.integers(0, 9, (4, 6)).astype(dtype)
                i = R.integers(0, 5, (4, 6))
                got = torchlet.scatter_reduce(torchlet.tensor(a), 0, torchlet.tensor(i), torchlet.tensor(s), reduce,
                                              include_self=inc).numpy()
                want = torch.from_numpy(a).scatter_reduce(0, torch.from_numpy(i), torch.from_numpy(s), reduce,
                                                          include_self=inc).numpy()
                np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3)
                if reduce == "sum":
                    continue
                ii = R.integers(0, 6, 5)
                s2 = s[:, :5] if dtype != np.uint8 else s[:, :5]
                got = torchlet.index_reduce(torchlet.tensor(a), 1, torchlet.tensor(ii), torchlet.tensor(
                    np.ascontiguousarray(np.concatenate([s2, s2[:1]], 0))), reduce, include_self=inc).numpy()
                want = torch.from_numpy(a).index_reduce(1, torch.from_numpy(ii), torch.from_numpy(
                    np.ascontiguousarray(np.concatenate([s2, s2[:1]], 0))), reduce, include_self=inc).numpy()
                np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3)


def test_gradients_against_torch():
    torch = pytest.importorskip("torch")
    a = R.permutation(15).reshape(3, 5).astype(np.float64) + 0.5
    s = R.permutation(12).reshape(3, 4).astype(np.float64) + 0.25
    s[0, 1] = 0.0   # one zero of src for prod's exclusive products
    i = np.array([[0, 0, 4, 2], [1, 3, 3, 3], [4, 4, 4, 0]])
    for reduce in REDUCES:
        for inc in (True, False):
            ta, ts = torchlet.tensor(a, requires_grad=True), torchlet.tensor(s, requires_grad=True)
            (torchlet.scatter_reduce(ta, 1, torchlet.tensor(i), ts, reduce, include_self=inc) *
             torchlet.tensor(np.arange(15.0).reshape(3, 5))).sum().backward()
            pa, ps = torch.tensor(a, requires_grad=True), torch.tensor(s, requires_grad=True)
            (pa.scatter_reduce(1, torch.from_numpy(i), ps, reduce, include_self=inc) *
             torch.arange(15.0, dtype=torch.float64).reshape(3, 5)).sum().backward()
            np.testing.assert_allclose(ta.grad.numpy(), pa.grad.numpy(), rtol=1e-12)
            np.testing.assert_allclose(ts.grad.numpy(), ps.grad.numpy(), rtol=1e-12)
    x = np.array([np.nan, 0.0, -2.0, 3.0])
    tx = torchlet.tensor(x, requires_grad=True)
    torchlet.sgn(tx).backward(torchlet.tensor([1.0, np.inf, 2.0, np.nan]))
    np.testing.assert_array_equal(tx.grad.numpy(), [0.0, 0.0, 0.0, 0.0])


def test_predicates_against_torch():
    torch = pytest.importorskip("torch")
    x = np.array([-np.inf, -2.5, -0.0, 0.0, 1.0, np.inf, np.nan], dtype=np.float32)
    for name in ("signbit", "isposinf", "isneginf", "sgn"):
        got = getattr(torchlet, name)(torchlet.tensor(x)).numpy()
        want = getattr(torch, name)(torch.from_numpy(x)).numpy()
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


def _with_nans(shape, dtype, frac=0.2):
    a = R.standard_normal(shape).astype(dtype)
    a[R.random(shape) < frac] = np.nan
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_nansum_layouts(dtype):
    """nansum's walk with NaN read as 0: leaves, column sums, strided runs,
    the threaded long run, the direct many-outputs path, dtype="""
    rtol = 2e-2 if dtype == np.float16 else 1e-5 if dtype == np.float32 else 1e-12
    cases = [((1000,), None), ((64, 300), 0), ((64, 300), 1), ((64, 300), (0, 1)), ((3, 40, 50), (0, 2)),
             ((5000, 8), 0), ((8, 5000), 1), ((9, 4100), 0), ((1 << 19,), None), ((0, 4), 0)]
    for shape, dim in cases:
        a = _with_nans(shape, dtype)
        want = np.nansum(a.astype(np.float64), axis=dim)
        t = torchlet.tensor(a)
        got = (torchlet.nansum(t) if dim is None else torchlet.nansum(t, dim)).numpy()
        assert got.dtype == dtype
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol * np.sqrt(a.size + 1))
        if len(shape) == 2 and dim is not None:   # transposed view, keepdim
            got = torchlet.nansum(t.t(), 1 - dim if isinstance(dim, int) else dim, keepdim=True).numpy()
            np.testing.assert_allclose(got.astype(np.float64).squeeze(),
                                       want, rtol=rtol, atol=rtol * np.sqrt(a.size + 1))
    a = _with_nans((30, 7), np.float32)
    got = torchlet.nansum(torchlet.tensor(a), 1, dtype=torchlet.float64).numpy()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.nansum(a.astype(np.float64), 1), rtol=1e-12)
    allnan = torchlet.tensor(np.full((4, 3), np.nan, dtype=dtype))
    np.testing.assert_array_equal(torchlet.nansum(allnan, 0).numpy(), np.zeros(3, dtype))


def test_nansum_against_torch():
    torch = pytest.importorskip("torch")
    a = _with_nans((257, 129), np.float32)
    for dim in (None, 0, 1):
        got = torchlet.nansum(torchlet.tensor(a)) if dim is None else torchlet.nansum(torchlet.tensor(a), dim)
        want = torch.nansum(torch.from_numpy(a)) if dim is None else torch.nansum(torch.from_numpy(a), dim)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-4)
    b = R.integers(-9, 9, (5, 6))
    np.testing.assert_array_equal(torchlet.nansum(torchlet.tensor(b), 1).numpy(),
                                  torch.nansum(torch.from_numpy(b), 1).numpy())
