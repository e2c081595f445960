"""hypot and copysign.Tensor: declared in yaml/native_functions.yaml with a
ufunc formula (kernels/ufunc/hypot.h, copysign.h) and no hand-written C at
all -- the generator derives their meta functions (hypot: binary op, an
integral common dtype refused as PyTorch's hypot_cpu does; copysign: binary
float op through the promotes_int_to_float tag) -- and their derivatives are
PyTorch's derivatives.yaml entries (copysign's through
copysign_tensor_self_backward, autograd/autograd_formulas.c).

Against numpy always, against torch when installed: dtypes and dtype pairs,
broadcasting, views, 0-dim, empty, special values (-0.0, nan, inf),
functional / method / in-place / out=, Meta shapes, gradcheck, forward AD."""
import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from ops_helpers import needs_torch, torch

FLOATS = [tl.float16, tl.bfloat16, tl.float32, tl.float64]
NP = {tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}
TOL = {tl.float16: 2e-3, tl.bfloat16: 1.6e-2, tl.float32: 2e-6, tl.float64: 1e-13}
SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3e38, -1e-30])


def T(a, dt=None):
    t = tl.from_numpy(np.array(a, copy=True))
    return _rt.to(t, dtype=dt) if dt is not None else t


def as_np(t):
    return (_rt.to(t, dtype=tl.float32) if t.dtype is tl.bfloat16 else t).numpy()


def close(got, want, dt):
    g = as_np(got).astype(np.float64)
    w = np.asarray(want, np.float64)
    assert g.shape == w.shape
    np.testing.assert_allclose(g, w, rtol=TOL[dt], atol=0, equal_nan=True)


def np_ref(op, a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.hypot(a, b) if op == "hypot" else np.copysign(a, b)


def rounded(a, dt):
    """a as stored in dt (the inputs the kernel really sees)"""
    return as_np(T(a, dt)).astype(np.float64)


@pytest.mark.parametrize("op", ["hypot", "copysign"])
@pytest.mark.parametrize("dt", FLOATS)
def test_values_against_numpy(op, dt, cpu_capability):
    rng = np.random.default_rng(0)
    for shape_a, shape_b in [((7, 33), (7, 33)), ((3, 1, 5), (4, 1)), ((), ()), ((0, 3), (3,)), ((1031,), ())]:
        a = rng.standard_normal(shape_a) * 3
        b = rng.standard_normal(shape_b) * 3
        got = getattr(tl, op)(T(a, dt), T(b, dt))
        assert got.dtype is dt and tuple(got.shape) == np.broadcast_shapes(shape_a, shape_b)
        close(got, np_ref(op, rounded(a, dt), rounded(b, dt)), dt)


@pytest.mark.parametrize("op", ["hypot", "copysign"])
def test_special_values(op):
    a = np.repeat(SPECIAL, SPECIAL.size)
    b = np.tile(SPECIAL, SPECIAL.size)
    got = getattr(tl, op)(T(a), T(b)).numpy()
    want = np.hypot(a, b) if op == "hypot" else np.copysign(a, b)
    np.testing.assert_array_equal(got, want)
    if op == "copysign":  # the sign of -0.0 and of nan counts
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_views_and_variants():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 8)).astype(np.float32)
    b = rng.standard_normal((8, 6)).astype(np.float32)
    ta, tb = T(a), T(b)
    for op in ("hypot", "copysign"):
        want = np_ref(op, a[:, ::2], b.T[:, ::2])
        close(getattr(tl, op)(ta[:, ::2], tb.t()[:, ::2]), want, tl.float32)
        close(getattr(ta[:, ::2], op)(tb.t()[:, ::2]), want, tl.float32)           # method
        out = tl.empty((6, 4))
        r = getattr(tl, op)(ta[:, ::2], tb.t()[:, ::2], out=out)                    # out=
        assert r is out
        close(out, want, tl.float32)
        c = T(a)
        r = getattr(c, op + "_")(tb.t())                                            # in-place
        assert r is c
        close(c, np_ref(op, a, b.T), tl.float32)


def test_integer_inputs():
    i = T(np.array([3, -4, 0], np.int64))
    j = T(np.array([4, 3, -5], np.int32))
    # copysign promotes integers to the default float dtype (binary float op)
    r = tl.copysign(i, j)
    assert r.dtype is tl.float32
    np.testing.assert_array_equal(r.numpy(), np.copysign([3.0, -4.0, 0.0], [4.0, 3.0, -5.0]).astype(np.float32))
    assert tl.copysign(i, T(np.array([1.5], np.float64))).dtype is tl.float64
    # hypot keeps the common dtype and has floating loops only (PyTorch: hypot_cpu)
    with pytest.raises(RuntimeError, match="\"hypot_cpu\" not implemented for 'Long'"):
        tl.hypot(i, i)
    assert tl.hypot(i, T(np.array([1.0], np.float32))).dtype is tl.float32


def test_meta_shapes():
    a = tl.empty((3, 1, 5), device="meta")
    b = tl.empty((4, 1), device="meta", dtype=tl.float64)
    for op in ("hypot", "copysign"):
        r = getattr(tl, op)(a, b)
        assert r.device.type == "meta" and tuple(r.shape) == (3, 4, 5) and r.dtype is tl.float64
    r = tl.copysign(tl.empty((2,), device="meta", dtype=tl.int64), tl.empty((2,), device="meta", dtype=tl.int64))
    assert r.dtype is tl.float32
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        tl.empty((4, 1), device="meta").hypot_(tl.empty((3, 4, 5), device="meta"))


@pytest.mark.parametrize("op", ["hypot", "copysign"])
def test_gradcheck(op):
    rng = np.random.default_rng(2)
    a = T(rng.standard_normal((3, 4)) + np.where(rng.random((3, 4)) < 0.5, 0.5, -0.5)).requires_grad_()
    b = T(rng.standard_normal((4,))).requires_grad_()
    assert tl.autograd.gradcheck(getattr(tl, op), (a, b))


def test_copysign_gradient_at_zero():
    a = T(np.array([0.0, 2.0, -3.0])).requires_grad_()
    b = T(np.array([-1.0, -1.0, 1.0])).requires_grad_()
    tl.copysign(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, -1.0, -1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.0, 0.0, 0.0])


@needs_torch
@pytest.mark.parametrize("op", ["hypot", "copysign"])
def test_against_torch(op):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 6))
    b = rng.standard_normal((6,))
    for dt, tdt in [(tl.float32, torch.float32), (tl.float64, torch.float64)]:
        got = getattr(tl, op)(T(a, dt), T(b, dt))
        want = getattr(torch, op)(torch.from_numpy(a).to(tdt), torch.from_numpy(b).to(tdt))
        close(got, want.double().numpy(), dt)
    # gradients against torch's (PyTorch's derivatives.yaml formulas)
    ta, tb = T(a).requires_grad_(), T(b).requires_grad_()
    getattr(tl, op)(ta, tb).sum().backward()
    xa, xb = torch.from_numpy(a).requires_grad_(), torch.from_numpy(b).requires_grad_()
    getattr(torch, op)(xa, xb).sum().backward()
    np.testing.assert_allclose(ta.grad.numpy(), xa.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tb.grad.numpy(), xb.grad.numpy(), rtol=1e-12, atol=1e-15)
    # integer inputs: the same result dtype or the same error
    ia = torch.tensor([3, -4]), torch.tensor([4, 3])
    try:
        want = getattr(torch, op)(*ia)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e).replace('"', '.')):
            getattr(tl, op)(T(np.array([3, -4])), T(np.array([4, 3])))
    else:
        got = getattr(tl, op)(T(np.array([3, -4])), T(np.array([4, 3])))
        assert str(got.dtype) == str(want.dtype).replace("torch.", "torchlet.")
        np.testing.assert_array_equal(got.numpy(), want.numpy())
