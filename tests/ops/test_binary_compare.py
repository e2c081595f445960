"""Comparison operators generated from ufunc formulas with
`ufunc_result_dtype: Bool` (eq, ne, lt, le, gt, ge): Tensor and Scalar
overloads, functional / in-place / out=, the comparison dunders. Checked
against torch (values and result dtypes) when installed, else numpy, over all
dtypes and dtype pairs, Python scalars, broadcasting, non-contiguous views,
0-dim, empty, out= of other dtypes, in-place on non-bool tensors, Meta
tensors; kernel tests run once per CPU capability level."""
import operator

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from ops_helpers import ALL, BF16, FLOATS, NAMES, needs_torch, torch

OPS = ["eq", "ne", "lt", "le", "gt", "ge"]
NP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
      "ge": np.greater_equal}
DUNDER = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
          "ge": operator.ge}


def rand(rng, shape, dt):
    """small values so that equal elements occur and every dtype holds them exactly"""
    if dt is tl.bool:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt is tl.uint8:
        return rng.integers(0, 4, size=shape).astype(np.uint8)
    if dt in (tl.int8, tl.int16, tl.int32, tl.int64):
        return rng.integers(-3, 4, size=shape).astype({tl.int8: np.int8, tl.int16: np.int16, tl.int32: np.int32,
                                                       tl.int64: np.int64}[dt])
    return (rng.integers(-6, 7, size=shape) / 2).astype(np.float64)


def T(a, dt):
    """a torchlet copy of a (from_numpy shares memory: in-place tests must not write into a)"""
    return _rt.to(tl.from_numpy(np.array(a, copy=True)), dtype=dt)


def np_of(t):
    x = t.numpy()
    return x.astype(np.float32) if BF16 is not None and x.dtype == BF16 else np.asarray(x)


def TT(a, dt):
    t = torch.from_numpy(np.ascontiguousarray(a))
    return t.to(getattr(torch, NAMES[dt]))


def ref(op, a, b):
    """numpy reference on values that every dtype holds exactly"""
    return NP[op](a.astype(np.float64) if a.dtype != np.bool_ else a,
                  b.astype(np.float64) if isinstance(b, np.ndarray) and b.dtype != np.bool_ else b)


# ------------------------------------------------------------ dtype pairs
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("da", ALL, ids=lambda d: NAMES[d])
def test_tensor_tensor_all_dtype_pairs(op, da, cpu_capability):
    rng = np.random.default_rng(0)
    for db in ALL:
        a, b = rand(rng, (5, 7), da), rand(rng, (5, 7), db)
        r = getattr(tl, op)(T(a, da), T(b, db))
        assert r.dtype is tl.bool and tuple(r.shape) == (5, 7)
        np.testing.assert_array_equal(np_of(r), ref(op, a, b))
        if torch is not None:
            np.testing.assert_array_equal(np_of(r), getattr(torch, op)(TT(a, da), TT(b, db)).numpy())


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_long_contiguous_and_scalar_paths(op, dt, cpu_capability):
    rng = np.random.default_rng(1)
    n = 1037   # vector body + tail
    a, b = rand(rng, (n,), dt), rand(rng, (n,), dt)
    ta, tb = T(a, dt), T(b, dt)
    np.testing.assert_array_equal(np_of(getattr(tl, op)(ta, tb)), ref(op, a, b))
    # one operand broadcast (stride 0) on either side
    np.testing.assert_array_equal(np_of(getattr(tl, op)(ta, tb[3:4])), ref(op, a, b[3:4]))
    np.testing.assert_array_equal(np_of(getattr(tl, op)(ta[5:6], tb)), ref(op, a[5:6], b))
    # strided
    np.testing.assert_array_equal(np_of(getattr(tl, op)(ta[::3], tb[1::3])), ref(op, a[::3], b[1::3]))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_python_scalars(op, dt):
    rng = np.random.default_rng(2)
    a = rand(rng, (4, 6), dt)
    ta = T(a, dt)
    for s in (True, 0, 1, -1, 2, 1.5, -0.5, 300):
        if dt is tl.uint8 and torch is None and s == -1:
            continue
        r = getattr(tl, op)(ta, s)
        assert r.dtype is tl.bool
        m = getattr(ta, op)(s)
        np.testing.assert_array_equal(np_of(m), np_of(r))
        if torch is not None:
            np.testing.assert_array_equal(np_of(r), getattr(torch, op)(TT(a, dt), s).numpy(), err_msg=f"{op} {s}")
        else:
            np.testing.assert_array_equal(np_of(r), ref(op, a, s))


def test_scalar_promotion_examples():
    # int tensor against a float scalar compares in float, not truncated
    assert np_of(tl.eq(tl.tensor([2, 3]), 2.5)).tolist() == [False, False]
    assert np_of(tl.lt(tl.tensor([2, 3]), 2.5)).tolist() == [True, False]
    # uint8 against -1: the scalar does not promote the tensor; -1 wraps to 255 like PyTorch
    u = tl.tensor([0, 255], dtype=tl.uint8)
    r = np_of(tl.eq(u, -1)).tolist()
    if torch is not None:
        assert r == torch.eq(torch.tensor([0, 255], dtype=torch.uint8), -1).tolist()
    # float16 rounding of the common dtype: float16 vs a float32 0-dim tensor compare in float16
    h = tl.tensor([0.1], dtype=tl.float16)
    z = tl.tensor(0.1, dtype=tl.float32)
    out = np_of(tl.eq(h, z)).tolist()
    if torch is not None:
        assert out == torch.eq(torch.tensor([0.1], dtype=torch.float16), torch.tensor(0.1)).tolist()
    # 0-dim tensor of a higher category promotes
    assert np_of(tl.lt(tl.tensor([1, 2]), tl.tensor(1.5))).tolist() == [True, False]


def test_nan_and_inf():
    a = tl.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    b = tl.tensor([float("nan"), float("inf"), 0.0, float("nan")])
    x = np.array([np.nan, np.inf, -np.inf, 1.0])
    y = np.array([np.nan, np.inf, 0.0, np.nan])
    for op in OPS:
        for dt in (tl.float16, tl.bfloat16, tl.float32, tl.float64):
            np.testing.assert_array_equal(np_of(getattr(tl, op)(_rt.to(a, dtype=dt), _rt.to(b, dtype=dt))),
                                          NP[op](x, y))


# ------------------------------------------------------------ shapes
@pytest.mark.parametrize("op", OPS)
def test_broadcasting_noncontiguous_0dim_empty(op):
    rng = np.random.default_rng(3)
    a, b = rand(rng, (4, 1, 3), tl.float32), rand(rng, (5, 1), tl.int32)
    r = getattr(tl, op)(T(a, tl.float32), T(b, tl.int32))
    assert tuple(r.shape) == (4, 5, 3)
    np.testing.assert_array_equal(np_of(r), ref(op, a, b))
    # transposed
    c, d = rand(rng, (6, 8), tl.float64), rand(rng, (8, 6), tl.float64)
    tc, td = T(c, tl.float64), T(d, tl.float64)
    np.testing.assert_array_equal(np_of(getattr(tl, op)(tc, td.t())), ref(op, c, d.T))
    # 0-dim with 0-dim
    r0 = getattr(tl, op)(tl.tensor(1.0), tl.tensor(2))
    assert tuple(r0.shape) == () and r0.dtype is tl.bool
    assert bool(np_of(r0)) == bool(NP[op](1.0, 2))
    # empty
    e = getattr(tl, op)(_rt.empty(0, 3), _rt.empty(3, dtype=tl.int64))
    assert tuple(e.shape) == (0, 3) and e.dtype is tl.bool
    if torch is not None:
        t = getattr(torch, op)(torch.tensor(a).float(), torch.tensor(b))
        np.testing.assert_array_equal(np_of(r), t.numpy())


def test_broadcast_error():
    with pytest.raises(RuntimeError, match="must match the size"):
        tl.eq(_rt.empty(3), _rt.empty(4))


# ------------------------------------------------------------ out= and in-place
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("odt", [tl.bool, tl.uint8, tl.int32, tl.float16, tl.float32, tl.float64],
                         ids=lambda d: NAMES[d])
def test_out_any_dtype(op, odt):
    rng = np.random.default_rng(4)
    a, b = rand(rng, (3, 5), tl.float32), rand(rng, (3, 5), tl.int64)
    out = _rt.empty(3, 5, dtype=odt)
    r = getattr(tl, op)(T(a, tl.float32), T(b, tl.int64), out=out)
    assert r is out or r._h == out._h or r.data_ptr() == out.data_ptr()
    assert out.dtype is odt
    np.testing.assert_array_equal(np_of(out), ref(op, a, b).astype(np.float64))
    if torch is not None:
        to = torch.empty(3, 5, dtype=getattr(torch, NAMES[odt]))
        getattr(torch, op)(torch.tensor(a), torch.tensor(b), out=to)
        np.testing.assert_array_equal(np_of(out), to.float().numpy())


def test_out_resize_and_noncontiguous_out():
    rng = np.random.default_rng(5)
    a, b = rand(rng, (4, 6), tl.float32), rand(rng, (4, 6), tl.float32)
    out = _rt.empty(0, dtype=tl.bool)
    tl.lt(T(a, tl.float32), T(b, tl.float32), out=out)
    assert tuple(out.shape) == (4, 6)
    np.testing.assert_array_equal(np_of(out), a < b)
    big = _rt.zeros(6, 4, dtype=tl.float32)
    o = big.t()
    tl.ge(T(a, tl.float32), T(b, tl.float32), out=o)
    np.testing.assert_array_equal(np_of(big), (a >= b).T.astype(np.float32))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", [tl.bool, tl.uint8, tl.int32, tl.int64, tl.float16, tl.bfloat16, tl.float32,
                                tl.float64], ids=lambda d: NAMES[d])
def test_inplace_keeps_dtype(op, dt):
    rng = np.random.default_rng(6)
    a, b = rand(rng, (3, 4), dt), rand(rng, (3, 4), tl.float64)
    ta = T(a, dt)
    v0 = ta._version
    r = getattr(ta, op + "_")(T(b, tl.float64))
    assert r.dtype is dt and ta._version > v0
    np.testing.assert_array_equal(np_of(ta), ref(op, a, b).astype(np.float64))
    ts = T(a, dt)
    getattr(ts, op + "_")(1.5)
    np.testing.assert_array_equal(np_of(ts), ref(op, a, 1.5).astype(np.float64))
    if torch is not None:
        t = TT(a, dt)
        getattr(t, op + "_")(torch.tensor(b))
        np.testing.assert_array_equal(np_of(ta), t.float().numpy())


def test_inplace_broadcast_refused():
    with pytest.raises(RuntimeError):
        _rt.empty(3).lt_(_rt.empty(2, 3))


# ------------------------------------------------------------ dunders, meta, autograd
@pytest.mark.parametrize("op", OPS)
def test_dunders(op):
    a = tl.tensor([1.0, 2.0, 3.0])
    b = tl.tensor([3, 2, 1])
    f = DUNDER[op]
    np.testing.assert_array_equal(np_of(f(a, b)), f(np.array([1.0, 2.0, 3.0]), np.array([3, 2, 1])))
    np.testing.assert_array_equal(np_of(f(a, 2)), f(np.array([1.0, 2.0, 3.0]), 2))
    # reflected: 2 < a is a > 2
    np.testing.assert_array_equal(np_of(f(2, a)), f(2, np.array([1.0, 2.0, 3.0])))
    assert f(a, b).dtype is tl.bool


def test_tensors_stay_hashable():
    a = tl.tensor([1.0])
    assert {a: 1}[a] == 1


def test_meta():
    a = _rt.empty(4, 1, 3, device="meta")
    b = _rt.empty(5, 1, dtype=tl.int32, device="meta")
    for op in OPS:
        r = getattr(tl, op)(a, b)
        assert tuple(r.shape) == (4, 5, 3) and r.dtype is tl.bool and str(r.device) == "meta"
        r = getattr(tl, op)(a, 2.5)
        assert tuple(r.shape) == (4, 1, 3) and r.dtype is tl.bool and str(r.device) == "meta"


def test_no_grad_through_comparisons():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for op in OPS:
        r = getattr(tl, op)(x, 2.0)
        assert r.dtype is tl.bool and not r.requires_grad
        r = getattr(tl, op)(x, x)
        assert not r.requires_grad
    # the mask still feeds differentiable code
    y = (x * (x > 1.5)).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0])


# ------------------------------------------------------------ maximum / minimum
MM = {"maximum": np.maximum, "minimum": np.minimum}


@pytest.mark.parametrize("op", ["maximum", "minimum"])
@pytest.mark.parametrize("da", ALL, ids=lambda d: NAMES[d])
def test_maximum_minimum_dtype_pairs(op, da, cpu_capability):
    rng = np.random.default_rng(7)
    for db in ALL:
        a, b = rand(rng, (5, 7), da), rand(rng, (7,), db)
        r = getattr(tl, op)(T(a, da), T(b, db))
        if torch is not None:
            t = getattr(torch, op)(TT(a, da), TT(b, db))
            assert NAMES[r.dtype] == str(t.dtype).split(".")[-1]
            np.testing.assert_array_equal(np_of(r), t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy())
        else:
            np.testing.assert_array_equal(np_of(r).astype(np.float64), MM[op](a.astype(np.float64),
                                                                              b.astype(np.float64)))


@pytest.mark.parametrize("op", ["maximum", "minimum"])
@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16, tl.float32, tl.float64], ids=lambda d: NAMES[d])
def test_maximum_minimum_nan_long_strided(op, dt, cpu_capability):
    rng = np.random.default_rng(8)
    n = 1037
    a, b = rand(rng, (n,), dt), rand(rng, (n,), dt)
    a[::7] = np.nan
    b[::5] = np.nan
    ta, tb = T(a, dt), T(b, dt)
    np.testing.assert_array_equal(np_of(getattr(tl, op)(ta, tb)), MM[op](a, b))
    np.testing.assert_array_equal(np_of(getattr(tl, op)(ta[::3], tb[1::3])), MM[op](a[::3], b[1::3]))
    np.testing.assert_array_equal(np_of(getattr(tl, op)(ta, tb[2:3])), MM[op](a, b[2:3]))
    np.testing.assert_array_equal(np_of(getattr(ta, op)(tb)), MM[op](a, b))   # method


def test_maximum_minimum_out_meta_empty_0dim():
    a, b = np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.5, 4.0])
    out = _rt.empty(0, dtype=tl.float64)
    tl.maximum(T(a, tl.float64), T(b, tl.float64), out=out)
    np.testing.assert_array_equal(np_of(out), np.maximum(a, b))
    with pytest.raises(RuntimeError, match="can't be cast"):
        tl.minimum(T(a, tl.float64), T(b, tl.float64), out=_rt.empty(3, dtype=tl.int64))
    m = tl.maximum(_rt.empty(4, 1, device="meta"), _rt.empty(3, dtype=tl.float64, device="meta"))
    assert tuple(m.shape) == (4, 3) and m.dtype is tl.float64 and str(m.device) == "meta"
    assert tuple(tl.minimum(_rt.empty(0, 2), _rt.empty(2)).shape) == (0, 2)
    z = tl.maximum(tl.tensor(2), tl.tensor(3.5))
    assert tuple(z.shape) == () and float(np_of(z)) == 3.5


def test_maximum_minimum_grad_ties_split():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = tl.tensor([2.0, 2.0, 1.0], requires_grad=True)
    tl.maximum(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 0.5, 0.0])
