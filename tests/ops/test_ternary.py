"""Three-input pointwise operators: addcmul, addcdiv,
where (Tensor and Scalar overloads, the method), lerp (Scalar and Tensor
weight), clamp (Scalar and Tensor bounds), clamp_min / clamp_max, clip.

Every case is checked against numpy (always) and against torch when it is
installed (values and result dtypes, error types and messages): dtypes and
promotion, broadcasting among all three inputs, non-contiguous views, 0-dim,
empty, NaN, in-place and out= behaviour; kernel tests run once per CPU
capability level."""
import warnings

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from ops_helpers import ALL, BF16, FLOATS, NAMES, needs_torch, torch

NPT = {tl.bool: np.bool_, tl.uint8: np.uint8, tl.int8: np.int8, tl.int16: np.int16, tl.int32: np.int32,
       tl.int64: np.int64, tl.float16: np.float16, tl.bfloat16: np.float32, tl.float32: np.float32,
       tl.float64: np.float64}
INTS = [tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64]
TOL = {tl.float16: 2e-3, tl.bfloat16: 1.6e-2, tl.float32: 2e-6, tl.float64: 1e-12}


def rand(rng, shape, dt):
    """small values every dtype holds exactly (no integer overflow in the ops)"""
    if dt is tl.bool:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt is tl.uint8:
        return rng.integers(0, 6, size=shape).astype(np.uint8)
    if dt in INTS:
        return rng.integers(-5, 6, size=shape).astype(NPT[dt])
    v = rng.integers(-16, 17, size=shape) / 4   # exact in bfloat16 too
    return v.astype(np.float32 if dt is tl.bfloat16 else NPT[dt])


def T(a, dt):
    """a torchlet copy of a (never aliases it)"""
    a = np.asarray(a)
    if dt is tl.bfloat16:
        return _rt.to(tl.from_numpy(np.array(a, np.float32, copy=True, order="C")), dtype=dt)
    return _rt.to(tl.from_numpy(np.array(a, copy=True, order="C")), dtype=dt)


def np_of(t):
    x = t.numpy()
    return x.astype(np.float32) if BF16 is not None and x.dtype == BF16 else np.asarray(x)


def TT(a, dt):
    t = torch.from_numpy(np.array(a, copy=True).astype(np.float32 if dt is tl.bfloat16 else np.asarray(a).dtype))
    return t.to(getattr(torch, NAMES[dt]))


def torch_np(t):
    return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()


def close(got, want, dt=None):
    """got: torchlet tensor, want: numpy values (floats within the dtype's
    tolerance, NaN where want is NaN; exact otherwise)"""
    g = np_of(got)
    want = np.asarray(want)
    assert g.shape == want.shape, (g.shape, want.shape)
    if g.dtype.kind == "f":
        tol = TOL[dt or got.dtype]
        np.testing.assert_allclose(g, want.astype(np.float64), rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want)


def same_as_torch(got, want_t):
    assert NAMES[got.dtype] == str(want_t.dtype).split(".")[-1], (got.dtype, want_t.dtype)
    close(got, torch_np(want_t))


def raises_like_torch(tl_call, torch_call, exc, match):
    with pytest.raises(exc, match=match):
        tl_call()
    if torch is not None:
        with pytest.raises(exc, match=match):
            torch_call()


def result_dtype(*dts):
    """torch.result_type over tensors of the same dimension category: floats
    win over integers (int32 + float16 -> float16, not numpy's float32);
    float16 + bfloat16 -> float32; integers and bool as numpy promotes them"""
    fl = [d for d in dts if d in FLOATS]
    if fl:
        if tl.float16 in fl and tl.bfloat16 in fl:
            fl.append(tl.float32)
        return max(fl, key=lambda d: (tl.float16, tl.bfloat16, tl.float32, tl.float64).index(d))
    r = np.result_type(*[NPT[d] for d in dts])
    return {np.dtype(v): k for k, v in NPT.items() if k not in FLOATS}[r]


# ================================================================ addcmul / addcdiv
def np_addc(op, s, a, b, value, dt):
    f = np.float64
    if op == "addcmul":
        r = s.astype(f) + value * a.astype(f) * b.astype(f)
    else:
        r = s.astype(f) + value * a.astype(f) / b.astype(f)
    if dt in INTS:
        return r.astype(np.int64).astype(NPT[dt])   # small values: no wrap
    return r


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_addc_dtypes(cpu_capability, op, dt):
    rng = np.random.default_rng(1)
    s, a, b = rand(rng, (37,), dt), rand(rng, (37,), dt), rand(rng, (37,), dt)
    if op == "addcdiv" and dt in FLOATS:
        b = np.where(b == 0, 1, b).astype(b.dtype)
    value = 2 if dt in INTS else 0.5
    fn = getattr(tl, op)
    if dt is tl.bool or (op == "addcdiv" and dt in INTS):
        exc, match = ((NotImplementedError, f'"{op}_cpu_out" not implemented for \'Bool\'') if op == "addcmul"
                      else (RuntimeError, "Integer division with addcdiv is no longer supported"))
        raises_like_torch(lambda: fn(T(s, dt), T(a, dt), T(b, dt), value=value),
                          lambda: getattr(torch, op)(TT(s, dt), TT(a, dt), TT(b, dt), value=value), exc, match)
        return
    r = fn(T(s, dt), T(a, dt), T(b, dt), value=value)
    assert r.dtype is dt
    close(r, np_addc(op, s, a, b, value, dt))
    if torch is not None:
        same_as_torch(r, getattr(torch, op)(TT(s, dt), TT(a, dt), TT(b, dt), value=value))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("shapes", [((4, 1, 3), (5, 1), (3,)), ((), (2, 3), ()), ((2, 1), (), (1, 7)),
                                    ((0, 3), (3,), (1, 3)), ((), (), ())], ids=str)
def test_addc_broadcast_all_three(cpu_capability, op, shapes):
    rng = np.random.default_rng(2)
    s, a, b = (rand(rng, sh, tl.float32) for sh in shapes)
    b = np.where(b == 0, 1, b).astype(np.float32)
    r = getattr(tl, op)(T(s, tl.float32), T(a, tl.float32), T(b, tl.float32), value=-1.5)
    close(r, np_addc(op, s, a, b, -1.5, tl.float32))
    if torch is not None:
        same_as_torch(r, getattr(torch, op)(TT(s, tl.float32), TT(a, tl.float32), TT(b, tl.float32), value=-1.5))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addc_promotion_and_non_contiguous(cpu_capability, op):
    rng = np.random.default_rng(3)
    s = rand(rng, (6, 5), tl.int32)
    a = rand(rng, (5, 6), tl.float64)
    b = rand(rng, (6, 10), tl.float32)
    b = np.where(b == 0, 1, b).astype(np.float32)
    ts, ta, tb = T(s, tl.int32), T(a, tl.float64).t(), T(b, tl.float32)[:, ::2]
    r = getattr(tl, op)(ts, ta, tb, value=3)
    assert r.dtype is tl.float64
    close(r, np_addc(op, s, a.T, b[:, ::2], 3, tl.float64))
    if torch is not None:
        same_as_torch(r, getattr(torch, op)(TT(s, tl.int32), TT(a, tl.float64).t(), TT(b, tl.float32)[:, ::2],
                                            value=3))


def test_addc_integer_wraps_and_value_truncates():
    a = np.array([100, -100, 7], np.int8)
    r = tl.addcmul(T(a, tl.int8), T(a, tl.int8), T(a, tl.int8), value=3)
    want = (a.astype(np.int64) + 3 * a.astype(np.int64) * a.astype(np.int64)).astype(np.int8)
    np.testing.assert_array_equal(r.numpy(), want)
    # a float value on integers: converted to the integer type (0.5 -> 0), as PyTorch
    i = np.array([1, 2, 3])
    r = tl.addcmul(T(i, tl.int64), T(i, tl.int64), T(i, tl.int64), value=0.5)
    assert r.dtype is tl.int64
    np.testing.assert_array_equal(r.numpy(), i)
    if torch is not None:
        np.testing.assert_array_equal(torch.addcmul(TT(a, tl.int8), TT(a, tl.int8), TT(a, tl.int8), value=3).numpy(),
                                      want)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addc_inplace_and_out(op):
    rng = np.random.default_rng(4)
    s, a, b = rand(rng, (3, 4), tl.float32), rand(rng, (4,), tl.float32), rand(rng, (3, 1), tl.float32)
    b = np.where(b == 0, 2, b).astype(np.float32)
    x = T(s, tl.float32)
    v0 = x._version
    r = getattr(x, op + "_")(T(a, tl.float32), T(b, tl.float32), value=2)
    assert r is x and x._version > v0
    close(x, np_addc(op, s, a, b, 2, tl.float32))
    # out= of a wider dtype: the result cast into it; resized when empty
    out = _rt.empty(0, dtype=tl.float64)
    getattr(tl, op)(T(s, tl.float32), T(a, tl.float32), T(b, tl.float32), value=2, out=out)
    assert tuple(out.shape) == (3, 4) and out.dtype is tl.float64
    close(out, np_addc(op, s, a, b, 2, tl.float64), tl.float32)   # computed in float32
    # in-place may not broadcast self, nor change its dtype
    raises_like_torch(lambda: getattr(T(b, tl.float32), op + "_")(T(s, tl.float32), T(s, tl.float32)),
                      lambda: getattr(TT(b, tl.float32), op + "_")(TT(s, tl.float32), TT(s, tl.float32)),
                      RuntimeError, r"output with shape \[3, 1\] doesn't match the broadcast shape \[3, 4\]")
    i = np.array([1, 2, 3])
    raises_like_torch(lambda: getattr(T(i, tl.int64), op + "_")(T(s[0, :3], tl.float32), T(b[:, 0], tl.float32)),
                      lambda: getattr(TT(i, tl.int64), op + "_")(TT(s[0, :3], tl.float32), TT(b[:, 0], tl.float32)),
                      RuntimeError, "result type Float can't be cast to the desired output type Long")


# ================================================================ where
@pytest.mark.parametrize("da", ALL, ids=lambda d: NAMES[d])
def test_where_dtype_pairs(cpu_capability, da):
    rng = np.random.default_rng(5)
    c = rng.integers(0, 2, size=(4, 9)).astype(bool)
    for db in ALL:
        a, b = rand(rng, (4, 9), da), rand(rng, (4, 9), db)
        r = tl.where(T(c, tl.bool), T(a, da), T(b, db))
        want_dt = result_dtype(da, db)
        assert r.dtype is want_dt, (da, db, r.dtype)
        close(r, np.where(c, a.astype(np.float64), b.astype(np.float64)).astype(np.float64)
              if want_dt in FLOATS else np.where(c, a, b).astype(NPT[want_dt]))
        if torch is not None:
            same_as_torch(r, torch.where(TT(c, tl.bool), TT(a, da), TT(b, db)))


@pytest.mark.parametrize("shapes", [((4, 1, 3), (5, 1), (3,)), ((), (2, 3), ()), ((2, 1), (), (1, 7)),
                                    ((3,), (), ()), ((0, 3), (3,), (1, 3)), ((), (), ())], ids=str)
@pytest.mark.parametrize("dt", [tl.float32, tl.float16, tl.int64, tl.bool], ids=lambda d: NAMES[d])
def test_where_broadcast_all_three(cpu_capability, shapes, dt):
    rng = np.random.default_rng(6)
    c = rng.integers(0, 2, size=shapes[0]).astype(bool)
    a, b = rand(rng, shapes[1], dt), rand(rng, shapes[2], dt)
    r = tl.where(T(c, tl.bool), T(a, dt), T(b, dt))
    close(r, np.where(c, a, b))
    if torch is not None:
        same_as_torch(r, torch.where(TT(c, tl.bool), TT(a, dt), TT(b, dt)))


def test_where_long_runs_and_views(cpu_capability):
    rng = np.random.default_rng(7)
    n = 1037   # vector body + tail; half chunks of 256
    c = rng.integers(0, 2, size=n).astype(bool)
    for dt in (tl.float32, tl.float64, tl.float16, tl.bfloat16, tl.int8, tl.int64):
        a, b = rand(rng, n, dt), rand(rng, n, dt)
        close(tl.where(T(c, tl.bool), T(a, dt), T(b, dt)), np.where(c, a, b))
        # one or two of the three inputs broadcast scalars (stride 0)
        close(tl.where(T(c, tl.bool), T(a[:1], dt), T(b, dt)), np.where(c, a[0], b))
        close(tl.where(T(c, tl.bool), T(a, dt), T(b[0], dt)), np.where(c, a, b[0]))
        close(tl.where(T(c[:1], tl.bool), T(a, dt), T(b[:1], dt)), np.where(c[0], a, b[0]))
        close(tl.where(T(c, tl.bool), T(a[0], dt), T(b[0], dt)), np.where(c, a[0], b[0]))
    # transposed and stepped inputs
    c2 = rng.integers(0, 2, size=(8, 6)).astype(bool)
    a2, b2 = rand(rng, (6, 8), tl.float32), rand(rng, (8, 12), tl.float32)
    r = tl.where(T(c2, tl.bool), T(a2, tl.float32).t(), T(b2, tl.float32)[:, ::2])
    close(r, np.where(c2, a2.T, b2[:, ::2]))


def test_where_scalar_overloads_and_method():
    c = np.array([True, False, True])
    a = np.array([1.0, 2.0, 3.0], np.float32)
    i = np.array([1, 2, 3])
    cases = [
        (lambda m: m.where(cond(m), m.tensor(a), 2.5), np.where(c, a, 2.5), "float32"),
        (lambda m: m.where(cond(m), m.tensor(i), 2.5), np.where(c, i, 2.5), "float32"),
        (lambda m: m.where(cond(m), 7, m.tensor(a).to(m.float16)), np.where(c, 7, a), "float16"),
        (lambda m: m.where(cond(m), 1, 0.5), np.where(c, 1, 0.5), "float32"),
        (lambda m: m.where(cond(m), 1, 0), np.where(c, 1, 0), "int64"),
        (lambda m: m.where(cond(m), True, False), c, "bool"),
        (lambda m: m.tensor(a).where(cond(m), 0), np.where(c, a, 0), "float32"),
        (lambda m: m.tensor(a).where(cond(m), m.tensor(i)), np.where(c, a, i), "float32"),
    ]

    def cond(m):
        return m.tensor(c)

    for k, (f, want, dtn) in enumerate(cases):
        r = f(tl)
        assert NAMES[r.dtype] == dtn, (k, r.dtype)
        close(r, want)
        if torch is not None:
            same_as_torch(r, f(torch))


def test_where_nan_and_meta():
    a = np.array([np.nan, 1.0, -np.inf], np.float32)
    c = np.array([True, True, False])
    r = tl.where(T(c, tl.bool), T(a, tl.float32), T(-a, tl.float32))
    close(r, np.where(c, a, -a))
    m = tl.where(_rt.empty(4, 1, dtype=tl.bool, device="meta"), _rt.empty(3, device="meta"),
                 _rt.empty(1, dtype=tl.float64, device="meta"))
    assert str(m.device) == "meta" and tuple(m.shape) == (4, 3) and m.dtype is tl.float64


def test_where_errors_and_out():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    i = np.array([1, 2, 3])
    c = np.array([True, False, True])
    raises_like_torch(lambda: tl.where(T(i, tl.int64), T(a, tl.float32), T(a, tl.float32)),
                      lambda: torch.where(TT(i, tl.int64), TT(a, tl.float32), TT(a, tl.float32)),
                      RuntimeError, "where expected condition to be a boolean tensor, but got a tensor with dtype Long")
    raises_like_torch(lambda: tl.where(T(c, tl.bool), T(a, tl.float32), T(a, tl.float32),
                                       out=_rt.empty(3, dtype=tl.float64)),
                      lambda: torch.where(TT(c, tl.bool), TT(a, tl.float32), TT(a, tl.float32),
                                          out=torch.empty(3, dtype=torch.float64)),
                      RuntimeError, "Expected out type to be Float but got Double")
    raises_like_torch(lambda: tl.where(T(c, tl.bool), T(a[:2], tl.float32), T(a, tl.float32)),
                      lambda: torch.where(TT(c, tl.bool), TT(a[:2], tl.float32), TT(a, tl.float32)),
                      RuntimeError, "must match the size of tensor")
    out = _rt.empty(0, dtype=tl.float32)
    r = tl.where(T(c, tl.bool), T(i, tl.int64), T(a, tl.float32), out=out)
    assert r is out and tuple(out.shape) == (3,)
    close(out, np.where(c, i, a))
    # a uint8 condition still works, with PyTorch's deprecation warning
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = tl.where(T(c.astype(np.uint8) * 7, tl.uint8), T(a, tl.float32), T(-a, tl.float32))
        assert tl._C.lib.tl_has_warning() == 0  # the call raised its warning
    close(r, np.where(c, a, -a))
    assert any("where received a uint8 condition tensor" in str(x.message) for x in w)


# ================================================================ lerp
def np_lerp(s, e, w):
    s, e, w = (np.asarray(x, np.float64) for x in (s, e, w))
    return np.where(np.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w))


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: NAMES[d])
def test_lerp_scalar_and_tensor_weight(cpu_capability, dt):
    rng = np.random.default_rng(8)
    s, e = rand(rng, (5, 7), dt), rand(rng, (7,), dt)
    w = rng.choice([-0.75, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5], size=(5, 1)).astype(NPT[dt])
    for wv in (0.0, 0.25, 0.5, 0.7, 1.0, -1.5):
        r = tl.lerp(T(s, dt), T(e, dt), wv)
        assert r.dtype is dt
        close(r, np_lerp(s, e, wv))
        if torch is not None:
            same_as_torch(r, torch.lerp(TT(s, dt), TT(e, dt), wv))
    r = tl.lerp(T(s, dt), T(e, dt), T(w, dt))
    close(r, np_lerp(s, e, w))
    if torch is not None:
        same_as_torch(r, torch.lerp(TT(s, dt), TT(e, dt), TT(w, dt)))
    # weight 0 and 1 give the ends exactly (the two-branch formula)
    np.testing.assert_array_equal(np_of(tl.lerp(T(s, dt), T(e, dt), 1.0)), np.broadcast_to(e, s.shape))
    np.testing.assert_array_equal(np_of(tl.lerp(T(s, dt), T(e, dt), 0.0)), s)


def test_lerp_broadcast_views_0dim_weight(cpu_capability):
    rng = np.random.default_rng(9)
    s = rand(rng, (6, 4), tl.float32)
    e = rand(rng, (4, 6), tl.float32)
    w = rng.random((1, 12)).astype(np.float32)
    r = tl.lerp(T(s, tl.float32), T(e, tl.float32).t(), T(w, tl.float32)[:, ::3])
    close(r, np_lerp(s, e.T, w[:, ::3]))
    # a 0-dim weight of another dtype is converted like a Scalar weight
    w0 = np.array(0.25)
    r = tl.lerp(T(s, tl.float32), T(e.T, tl.float32), T(w0, tl.float64))
    assert r.dtype is tl.float32
    close(r, np_lerp(s, e.T, 0.25))
    r = tl.lerp(T(s[0, 0], tl.float32), T(e[:, 0], tl.float32), T(w[0, :4], tl.float32))
    close(r, np_lerp(s[0, 0], e[:, 0], w[0, :4]))
    close(tl.lerp(T(s[:0], tl.float32), T(s[:0], tl.float32), 0.3), np.zeros((0, 4)))
    if torch is not None:
        same_as_torch(tl.lerp(T(s, tl.float32), T(e.T, tl.float32), T(w0, tl.float64)),
                      torch.lerp(TT(s, tl.float32), TT(e.T, tl.float32), TT(w0, tl.float64)))


def test_lerp_errors_inplace_out():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    raises_like_torch(lambda: tl.lerp(T(a, tl.float32), T(a, tl.float64), 0.5),
                      lambda: torch.lerp(TT(a, tl.float32), TT(a, tl.float64), 0.5),
                      RuntimeError, "expected dtype float for `end` but got dtype double")
    raises_like_torch(lambda: tl.lerp(T(a, tl.float32), T(a, tl.float32), T(a, tl.float64)),
                      lambda: torch.lerp(TT(a, tl.float32), TT(a, tl.float32), TT(a, tl.float64)),
                      RuntimeError, "expected dtype float for `weight` but got dtype double")
    i = np.array([1, 2, 3])
    raises_like_torch(lambda: tl.lerp(T(i, tl.int64), T(i, tl.int64), 0.5),
                      lambda: torch.lerp(TT(i, tl.int64), TT(i, tl.int64), 0.5),
                      NotImplementedError, "\"lerp_kernel_scalar\" not implemented for 'Long'")
    raises_like_torch(lambda: tl.lerp(T(i, tl.int64), T(i, tl.int64), T(i, tl.int64)),
                      lambda: torch.lerp(TT(i, tl.int64), TT(i, tl.int64), TT(i, tl.int64)),
                      NotImplementedError, "\"lerp_kernel_tensor\" not implemented for 'Long'")
    raises_like_torch(lambda: tl.lerp(T(a, tl.float32), T(a, tl.float32), T(a, tl.float32),
                                      out=_rt.empty(3, dtype=tl.float64)),
                      lambda: torch.lerp(TT(a, tl.float32), TT(a, tl.float32), TT(a, tl.float32),
                                         out=torch.empty(3, dtype=torch.float64)),
                      RuntimeError, "Found dtype Double but expected Float")
    # Scalar weight: out= of a wider dtype gets the result cast (build_binary_op)
    out = _rt.empty(3, dtype=tl.float64)
    tl.lerp(T(a, tl.float32), T(2 * a, tl.float32), 0.25, out=out)
    close(out, np_lerp(a, 2 * a, 0.25))
    x = T(a, tl.float32)
    v0 = x._version
    assert x.lerp_(T(2 * a, tl.float32), 0.75) is x and x._version > v0
    close(x, np_lerp(a, 2 * a, 0.75))
    x.lerp_(T(a, tl.float32), T(np.array([0.0, 0.5, 1.0], np.float32), tl.float32))
    close(x, np_lerp(np_lerp(a, 2 * a, 0.75), a, [0.0, 0.5, 1.0]))


# ================================================================ clamp
def np_clamp(x, lo=None, hi=None):
    """PyTorch's results: NaN in x or in a bound gives NaN; min > max gives max"""
    r = np.asarray(x, np.float64)
    if lo is not None:
        lo = np.asarray(lo, np.float64)
        r = np.where(np.isnan(r) | np.isnan(lo), np.nan, np.maximum(r, lo))
    if hi is not None:
        hi = np.asarray(hi, np.float64)
        r = np.where(np.isnan(r) | np.isnan(hi), np.nan, np.minimum(r, hi))
    return r


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_clamp_scalar_bounds(cpu_capability, dt):
    rng = np.random.default_rng(10)
    x = rand(rng, (6, 7), dt)
    for lo, hi in ((-1, 2), (None, 1), (0, None), (3, 1)):
        if dt is tl.bool or (dt is tl.uint8 and lo is not None and lo < 0):
            continue
        r = tl.clamp(T(x, dt), lo, hi)
        assert r.dtype is dt
        want = np_clamp(x, lo, hi)
        close(r, want if dt in FLOATS else want.astype(NPT[dt]))
        if torch is not None:
            same_as_torch(r, torch.clamp(TT(x, dt), lo, hi))
            same_as_torch(tl.clip(T(x, dt), lo, hi), torch.clip(TT(x, dt), lo, hi))
    if dt is not tl.bool:
        close(tl.clamp_min(T(x, dt), 1), np.maximum(x, np.array(1, x.dtype)))
        close(tl.clamp_max(T(x, dt), 1), np.minimum(x, np.array(1, x.dtype)))
    else:
        raises_like_torch(lambda: tl.clamp(T(x, dt), False, True), lambda: torch.clamp(TT(x, dt), False, True),
                          NotImplementedError, "\"clamp_scalar_cpu\" not implemented for 'Bool'")
        raises_like_torch(lambda: tl.clamp_max(T(x, dt), True), lambda: torch.clamp_max(TT(x, dt), True),
                          NotImplementedError, "\"clamp_max_scalar_cpu\" not implemented for 'Bool'")
        # an int bound promotes a bool tensor to int64
        r = tl.clamp(T(x, dt), 0)
        assert r.dtype is tl.int64
        close(r, x.astype(np.int64))


def test_clamp_scalar_promotion_and_nan():
    i = np.array([-3, 1, 5])
    r = tl.clamp(T(i, tl.int64), 0.5)
    assert r.dtype is tl.float32
    close(r, np.maximum(i, 0.5))
    r = tl.clamp_max(T(i, tl.int32), 1.5)
    assert r.dtype is tl.float32
    close(r, np.minimum(i, 1.5))
    n = np.array([np.nan, 1.0, 5.0, -np.inf], np.float32)
    for lo, hi in ((0, 2), (float("nan"), 2), (0, float("nan")), (float("nan"), None), (None, float("nan"))):
        r = tl.clamp(T(n, tl.float32), lo, hi)
        close(r, np_clamp(n, lo, hi))
        if torch is not None:
            same_as_torch(r, torch.clamp(TT(n, tl.float32), lo, hi))
    close(tl.clamp_min(T(n, tl.float32), float("nan")), np.full(4, np.nan))
    for dt in (tl.float16, tl.bfloat16, tl.float64):
        close(tl.clamp(T(n, dt), -1, 2), np_clamp(n, -1, 2))


def test_clamp_scalar_errors_inplace_out():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    i = np.array([1, 2, 3])
    raises_like_torch(lambda: tl.clamp(T(a, tl.float32)), lambda: torch.clamp(TT(a, tl.float32)),
                      RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None")
    raises_like_torch(lambda: T(i, tl.int64).clamp_(0.5), lambda: TT(i, tl.int64).clamp_(0.5),
                      RuntimeError, "result type Float can't be cast to the desired output type long int")
    raises_like_torch(lambda: T(i, tl.int64).clamp_max_(1.5), lambda: TT(i, tl.int64).clamp_max_(1.5),
                      RuntimeError, "result type Float can't be cast to the desired output type long int")
    raises_like_torch(lambda: tl.clamp(T(a, tl.float32), 0, 1, out=_rt.empty(3, dtype=tl.float64)),
                      lambda: torch.clamp(TT(a, tl.float32), 0, 1, out=torch.empty(3, dtype=torch.float64)),
                      RuntimeError, "Found dtype Double but expected Float")
    raises_like_torch(lambda: tl.clamp(T(i, tl.int64), 0.5, out=_rt.empty(3, dtype=tl.int64)),
                      lambda: torch.clamp(TT(i, tl.int64), 0.5, out=torch.empty(3, dtype=torch.int64)),
                      RuntimeError, "Found dtype Long but expected Float")
    x = T(a, tl.float32)
    v0 = x._version
    assert x.clamp_(1.5, 2.5) is x and x._version > v0
    close(x, np.clip(a, 1.5, 2.5))
    assert x.clamp_min_(2) is x and x.clamp_max_(2.25) is x
    close(x, np.clip(np.clip(a, 1.5, 2.5), 2, 2.25))
    assert tl.clip_(x, None, 2) is x
    out = _rt.empty(0, dtype=tl.float32)
    assert tl.clamp(T(a, tl.float32), max=2, out=out) is out
    close(out, np.minimum(a, 2))
    out = _rt.empty(0, dtype=tl.float32)
    tl.clip(T(a, tl.float32), 2, out=out)
    close(out, np.maximum(a, 2))
    m = tl.clamp(_rt.empty(2, 3, dtype=tl.int32, device="meta"), 0.5)
    assert str(m.device) == "meta" and m.dtype is tl.float32 and tuple(m.shape) == (2, 3)


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_clamp_tensor_bounds(cpu_capability, dt):
    rng = np.random.default_rng(11)
    x, lo, hi = rand(rng, (4, 1, 5), dt), rand(rng, (3, 1), dt), rand(rng, (5,), dt)
    if dt is tl.bool:
        raises_like_torch(lambda: tl.clamp(T(x, dt), T(lo, dt), T(hi, dt)),
                          lambda: torch.clamp(TT(x, dt), TT(lo, dt), TT(hi, dt)),
                          NotImplementedError, "\"clamp_cpu\" not implemented for 'Bool'")
    else:
        r = tl.clamp(T(x, dt), T(lo, dt), T(hi, dt))
        assert r.dtype is dt and tuple(r.shape) == (4, 3, 5)
        want = np_clamp(x, lo, hi)
        close(r, want if dt in FLOATS else want.astype(NPT[dt]))
        if torch is not None:
            same_as_torch(r, torch.clamp(TT(x, dt), TT(lo, dt), TT(hi, dt)))
    # one bound: maximum / minimum (bool included, as PyTorch)
    for kw, fn, npf in (("min", tl.clamp_min, np.maximum), ("max", tl.clamp_max, np.minimum)):
        b = lo if kw == "min" else hi
        r = tl.clamp(T(x, dt), **{kw: T(b, dt)})
        close(r, npf(x, b))
        close(fn(T(x, dt), T(b, dt)), npf(x, b))
        close(tl.clip(T(x, dt), **{kw: T(b, dt)}), npf(x, b))
        if torch is not None:
            same_as_torch(r, torch.clamp(TT(x, dt), **{kw: TT(b, dt)}))


def test_clamp_tensor_promotion_nan_views_out():
    rng = np.random.default_rng(12)
    i = rand(rng, (6, 4), tl.int32)
    lo = rand(rng, (4, 6), tl.float64)
    hi = rand(rng, (6, 8), tl.float32)
    r = tl.clamp(T(i, tl.int32), T(lo, tl.float64).t(), T(hi, tl.float32)[:, ::2])
    assert r.dtype is tl.float64
    close(r, np_clamp(i, lo.T, hi[:, ::2]))
    n = np.array([np.nan, 1.0, 3.0, 0.5], np.float32)
    lo_n = np.array([0.0, np.nan, 0.0, 2.0], np.float32)
    hi_n = np.array([5.0, 5.0, np.nan, 1.0], np.float32)
    r = tl.clamp(T(n, tl.float32), T(lo_n, tl.float32), T(hi_n, tl.float32))
    close(r, np_clamp(n, lo_n, hi_n))
    close(tl.clamp(T(n, tl.float32), T(np.array(2.0), tl.float32), T(np.array(1.0), tl.float32)),
          np.where(np.isnan(n), np.nan, 1.0))
    if torch is not None:
        same_as_torch(r, torch.clamp(TT(n, tl.float32), TT(lo_n, tl.float32), TT(hi_n, tl.float32)))
    raises_like_torch(lambda: tl.clamp(T(n, tl.float32), None, None), lambda: torch.clamp(TT(n, tl.float32), None, None),
                      RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None")
    # out= of a wider dtype: cast (PyTorch's CLAMP_CONFIG); in-place: safe casting only
    out = _rt.empty(4, dtype=tl.float64)
    tl.clamp(T(n, tl.float32), T(np.array(0.75), tl.float32), out=out)
    close(out, np_clamp(n, 0.75))
    raises_like_torch(lambda: T(i, tl.int32).clamp_(T(lo.T, tl.float64)),
                      lambda: TT(i, tl.int32).clamp_(TT(lo.T, tl.float64)),
                      RuntimeError, "result type Double can't be cast to the desired output type Int")
    x = T(n, tl.float32)
    assert x.clamp_(T(lo_n, tl.float32), T(hi_n, tl.float32)) is x
    close(x, np_clamp(n, lo_n, hi_n))
    close(tl.clamp(T(n[:0], tl.float32), T(n[:0], tl.float32)), np.zeros(0))


# ================================================================ Scalar conversion
def test_scalars_that_do_not_fit_the_dtype():
    """PyTorch's Scalar::to<scalar_t> check, in every generated runner"""
    i8 = np.array([1, -2], np.int8)
    f = np.array([1.0, 2.0], np.float32)
    cases = [
        (lambda m, t: m.clamp(t(i8, tl.int8), 1000), "int8_t"),
        (lambda m, t: m.clamp(t(i8, tl.int8), max=-129), "int8_t"),
        (lambda m, t: m.clamp_min(t(i8.astype(np.int32), tl.int32), 2 ** 40), "int"),
        (lambda m, t: m.clamp(t(f, tl.float32), 1e300), "float"),
        (lambda m, t: m.clamp(t(f, tl.float16), 1e6), "c10::Half"),
        (lambda m, t: m.addcmul(t(i8, tl.int8), t(i8, tl.int8), t(i8, tl.int8), value=1000), "int8_t"),
        (lambda m, t: m.addcmul(t(f, tl.float32), t(f, tl.float32), t(f, tl.float32), value=1e300), "float"),
        (lambda m, t: m.clamp(t(i8.astype(np.uint8), tl.uint8), 300), "uint8_t"),
    ]
    for k, (f_, name) in enumerate(cases):
        raises_like_torch(lambda: f_(tl, T), (lambda: f_(torch, TT)) if torch is not None else None,
                          RuntimeError, f"value cannot be converted to type {name} without overflow")
    # what fits: infinities into floats, negatives wrapping into uint8, empty tensors never convert
    close(tl.clamp(T(f, tl.float32), float("-inf"), float("inf")), f)
    close(tl.clamp(T(np.array([1, 7], np.uint8), tl.uint8), -1), np.array([255, 255], np.uint8))
    close(tl.clamp(T(i8[:0], tl.int8), 1000), np.zeros(0, np.int8))
    if torch is not None:
        np.testing.assert_array_equal(torch.clamp(TT(np.array([1, 7], np.uint8), tl.uint8), -1).numpy(), [255, 255])
