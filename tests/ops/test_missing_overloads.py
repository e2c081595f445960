"""The overloads of docs/OPS_MISSING.md ("Overloads"):
factory outs (zeros/ones/full/empty/arange/rand/randn .out), hstack/vstack
.out, threshold_backward.grad_input, mse_loss_backward.grad_input,
fill.Scalar/.Tensor + fill_.Tensor, narrow.Tensor, view.dtype, and the
out_dtype products (mm/bmm/addmm/baddbmm .dtype, CUDA-only in PyTorch).

Against numpy always, against torch when installed: values, dtypes, strides,
out= resize behaviour (resize_ without a warning for factories, resize_output
with its warning for the others), strided out=, error types and messages."""
import re
import warnings

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import needs_torch, torch

RESIZE_WARN = "An output with one or more elements was resized"
DTYPES = [tl.uint8, tl.int16, tl.int32, tl.int64, tl.float16, tl.float32, tl.float64]
NP = {tl.bool: np.bool_, tl.uint8: np.uint8, tl.int8: np.int8, tl.int16: np.int16, tl.int32: np.int32,
      tl.int64: np.int64, tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}


def T(a):
    return tl.from_numpy(np.array(a, copy=True, order="C"))


def tdt(dt):
    return getattr(torch, str(dt).split(".")[-1])


def strided_out(shape, dt=tl.float32):
    """a non-contiguous tensor of `shape` (every other column of a wider one)"""
    base = tl.zeros(*shape[:-1], 2 * shape[-1], dtype=dt)
    return base[..., ::2]


def no_warning(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


def raises_like(exc, msg, fn, tfn=None):
    with pytest.raises(exc, match=re.escape(msg)):
        fn()
    if tfn is not None and torch is not None:
        with pytest.raises(exc, match=re.escape(msg.replace("torchlet", "torch"))):
            tfn()


# ------------------------------------------------------------------ factories

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op,np_fn", [("zeros", np.zeros), ("ones", np.ones)])
def test_zeros_ones_out_values_and_resize_without_warning(op, np_fn, dt):
    for old, size in [((0,), (2, 3)), ((5,), (3, 1, 2)), ((2, 3), (2, 3)), ((7,), ()), ((4,), (0, 3))]:
        out = tl.full(old, 9, dtype=dt)
        r = no_warning(lambda: getattr(tl, op)(*size, out=out)) if size else getattr(tl, op)((), out=out)
        assert r is out and out.dtype == dt and out.shape == size
        np.testing.assert_array_equal(out.numpy(), np_fn(size, NP[dt]))


@needs_torch
@pytest.mark.parametrize("op", ["zeros", "ones"])
def test_zeros_ones_out_match_torch(op):
    for dt in (tl.int64, tl.float32):
        out, tout = tl.empty(5, dtype=dt), torch.empty(5, dtype=tdt(dt))
        getattr(tl, op)(2, 3, out=out)
        getattr(torch, op)(2, 3, out=tout)
        assert out.shape == tuple(tout.shape) and out.stride() == tout.stride()
        np.testing.assert_array_equal(out.numpy(), tout.numpy())


def test_factory_out_keeps_strides_of_right_shape():
    x = tl.empty(3, 4).t()  # (4, 3), strides (1, 4)
    assert tl.zeros(4, 3, out=x).stride() == (1, 4)
    np.testing.assert_array_equal(x.numpy(), np.zeros((4, 3), np.float32))
    s = strided_out((2, 3))
    tl.full((2, 3), 2.5, out=s)
    assert s.stride() == (6, 2)
    np.testing.assert_array_equal(s._base.numpy() if hasattr(s, "_base") else s.numpy(), s.numpy())
    np.testing.assert_array_equal(s.numpy(), np.full((2, 3), 2.5, np.float32))
    tl.ones(2, 3, out=s)
    np.testing.assert_array_equal(s.numpy(), np.ones((2, 3), np.float32))
    if torch is not None:
        tx = torch.empty(3, 4).t()
        assert torch.zeros(4, 3, out=tx).stride() == x.stride()


@pytest.mark.parametrize("dt", DTYPES)
def test_full_out_value_in_out_dtype(dt):
    for v in (2.75, -3, True):
        out = tl.empty(0, dtype=dt)
        if dt == tl.uint8 and v == -3:
            continue
        tl.full((2, 2), v, out=out)
        assert out.dtype == dt
        np.testing.assert_array_equal(out.numpy(), np.full((2, 2), v).astype(NP[dt]))
        if torch is not None:
            tout = torch.empty(0, dtype=tdt(dt))
            torch.full((2, 2), v, out=tout)
            np.testing.assert_array_equal(out.numpy(), tout.numpy())


def test_empty_out():
    out = tl.ones(7)
    r = no_warning(lambda: tl.empty(2, 3, out=out))
    assert r is out and out.shape == (2, 3) and out.dtype == tl.float32
    raises_like(RuntimeError, "'memory_format' argument is incompatible with 'out' tensor argument",
                lambda: tl.empty(2, out=out, memory_format="contiguous_format"),
                lambda: torch.empty(2, out=torch.ones(1), memory_format=torch.contiguous_format))
    raises_like(RuntimeError, "Trying to create tensor with negative dimension -1: [2, -1]",
                lambda: tl.empty(2, -1, out=out), lambda: torch.empty(2, -1, out=torch.ones(1)))


def test_factory_out_type_checks_and_requires_grad():
    t = tl.empty(2, dtype=tl.int64)
    raises_like(RuntimeError, "dtype Float does not match dtype of out parameter (Long)",
                lambda: tl.zeros(2, out=t, dtype=tl.float32),
                lambda: torch.zeros(2, out=torch.empty(2, dtype=torch.int64), dtype=torch.float32))
    raises_like(RuntimeError, "device type meta does not match device type of out parameter (cpu)",
                lambda: tl.ones(2, out=t, device="meta"),
                lambda: torch.ones(2, out=torch.empty(2, dtype=torch.int64), device="meta"))
    raises_like(RuntimeError, "dtype Double does not match dtype of out parameter (Float)",
                lambda: tl.arange(3, out=tl.empty(0), dtype=tl.float64),
                lambda: torch.arange(3, out=torch.empty(0), dtype=torch.float64))
    # the matching dtype / device are accepted
    assert tl.zeros(2, out=t, dtype=tl.int64, device="cpu") is t
    f = tl.empty(0)
    r = tl.ones(3, out=f, requires_grad=True)
    assert r is f and f.requires_grad and f.is_leaf
    # meta out: shape only
    m = tl.empty(0, device="meta")
    assert tl.zeros(2, 3, out=m).shape == (2, 3) and tl.arange(4, out=m).shape == (4,)


@pytest.mark.parametrize("dt", [tl.int32, tl.int64, tl.float16, tl.float32, tl.float64])
def test_arange_out_values_dtype_and_shape_rule(dt):
    cases = [((5,), np.arange(5)), ((1, 4), np.arange(1, 4)), ((2, 11, 3), np.arange(2, 11, 3)),
             ((10, 0, -3), np.arange(10, 0, -3))]
    for args, want in cases:
        out = tl.empty(0, dtype=dt)
        assert tl.arange(*args, out=out) is out
        assert out.dtype == dt and out.shape == want.shape
        np.testing.assert_array_equal(out.numpy(), want.astype(NP[dt]))
    # computed in the out's dtype: PyTorch counts int64 ranges with the
    # truncated bounds, narrower integers with the float values
    out = tl.empty(0, dtype=dt)
    if dt in (tl.int32, tl.int64):
        for args, w32, w64 in [((0.5, 4.7, 1.5), [0, 1, 2], [0, 1, 2, 3]), ((-0.5, 3.9, 1.2), [0, 1, 2, 3], [0, 1, 2]),
                               ((5, 0.3, -1.7), [5, 4, 3], [5, 4, 3, 2, 1])]:
            out = tl.empty(0, dtype=dt)
            tl.arange(*args, out=out)
            assert out.numpy().tolist() == (w64 if dt == tl.int64 else w32)
            assert tl.arange(*args, dtype=dt).numpy().tolist() == out.numpy().tolist()
        if dt == tl.int64:
            raises_like(ValueError, "step must be nonzero", lambda: tl.arange(0, 2.5, 0.5, out=out),
                        lambda: torch.arange(0, 2.5, 0.5, out=torch.empty(0, dtype=torch.int64)))
        else:
            assert tl.arange(0, 2.5, 0.5, out=tl.empty(0, dtype=dt)).numpy().tolist() == [0] * 5
        raises_like(RuntimeError, "step must be nonzero", lambda: tl.arange(0, 3, 0.0, out=out),
                    lambda: torch.arange(0, 3, 0.0, out=torch.empty(0, dtype=tdt(dt))))
    else:
        tl.arange(0, 2.5, 0.5, out=out)
        np.testing.assert_array_equal(out.numpy(), np.arange(0, 2.5, 0.5).astype(NP[dt]))
    if torch is not None:
        tout = torch.empty(0, dtype=tdt(dt))
        torch.arange(0.5, 4.7, 1.5, out=tout)
        out = tl.empty(0, dtype=dt)
        tl.arange(0.5, 4.7, 1.5, out=out)
        np.testing.assert_array_equal(out.numpy(), tout.numpy())


def test_arange_out_same_numel_keeps_shape_else_warns():
    out = tl.empty(2, 3)
    no_warning(lambda: tl.arange(6, out=out))
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(out.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    msg = ("The number of elements in the out tensor of shape [2, 3] is 6 which does not match the computed "
           "number of elements 5. Note that this may occur as a result of rounding error. The out tensor will "
           "be resized to a tensor of shape (5,).")
    with pytest.warns(UserWarning, match=re.escape(msg)):
        tl.arange(5, out=out)
    assert out.shape == (5,)
    no_warning(lambda: tl.arange(3, out=tl.empty(0)))  # an empty out is resized silently
    # a strided out of the right numel is written through
    s = strided_out((4,))
    tl.arange(4, out=s)
    np.testing.assert_array_equal(s.numpy(), np.arange(4, dtype=np.float32))
    if torch is not None:
        tout = torch.empty(2, 3)
        torch.arange(6, out=tout)
        assert tuple(tout.shape) == (2, 3)
        with pytest.warns(UserWarning, match=re.escape(msg)):
            torch.arange(5, out=tout)


def test_arange_out_errors():
    raises_like(RuntimeError, "step must be nonzero", lambda: tl.arange(0, 3, 0, out=tl.empty(0)),
                lambda: torch.arange(0, 3, 0, out=torch.empty(0)))
    raises_like(RuntimeError, "upper bound and lower bound inconsistent with step sign",
                lambda: tl.arange(0, 3, -1, out=tl.empty(0)),
                lambda: torch.arange(0, 3, -1, out=torch.empty(0)))
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        tl.arange(3, out=tl.empty(0, dtype=tl.bool))


@pytest.mark.parametrize("op", ["rand", "randn"])
def test_rand_randn_out(op):
    for dt in (tl.float16, tl.bfloat16, tl.float32, tl.float64):
        out = tl.ones(5, dtype=dt)
        r = no_warning(lambda: getattr(tl, op)(3, 4, out=out))
        assert r is out and out.shape == (3, 4) and out.dtype == dt
        v = out.to(tl.float64).numpy()
        if op == "rand":
            assert ((v >= 0) & (v < 1)).all()
        assert len(np.unique(v)) > 6
    # the generator overloads draw what the functional draws with the same seed
    for dt in (tl.float32, tl.float64):
        g1, g2 = tl.Generator().manual_seed(7), tl.Generator().manual_seed(7)
        out = tl.empty(0, dtype=dt)
        getattr(tl, op)(17, generator=g1, out=out)
        want = getattr(tl, op)(17, generator=g2, dtype=dt)
        np.testing.assert_array_equal(out.numpy(), want.numpy())
        # and continue from the same state
        np.testing.assert_array_equal(getattr(tl, op)(3, generator=g1).numpy(),
                                      getattr(tl, op)(3, generator=g2).numpy())
    s = strided_out((2, 5), tl.float64)
    getattr(tl, op)(2, 5, out=s, generator=tl.Generator().manual_seed(1))
    np.testing.assert_array_equal(s.numpy(), getattr(tl, op)(2, 5, generator=tl.Generator().manual_seed(1),
                                                             dtype=tl.float64).numpy())
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        getattr(tl, op)(3, out=tl.empty(0, dtype=tl.int64))


# ------------------------------------------------------------- hstack / vstack

@pytest.mark.parametrize("op", ["hstack", "vstack"])
def test_stack_out(op):
    rng = np.random.default_rng(0)
    groups = [[rng.standard_normal((2, 3)), rng.standard_normal((2, 3))],
              [rng.standard_normal(3), rng.standard_normal(3)],
              [np.float64(1.5), np.float64(-2.0)],
              [rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 3, 2))]]
    for arrs in groups:
        want = getattr(np, op)(arrs)
        for dt in (tl.float32, tl.float64):
            xs = [T(a).to(tl.float32) for a in arrs]
            out = tl.empty(0, dtype=dt)
            assert no_warning(lambda: getattr(tl, op)(xs, out=out)) is out
            assert out.dtype == dt
            np.testing.assert_allclose(out.numpy(), want.astype(np.float32), rtol=1e-6)
    # transposed inputs, strided out of the right shape
    a = T(rng.standard_normal((3, 2)))
    s = strided_out((2, 6) if op == "hstack" else (4, 3), tl.float64)
    getattr(tl, op)([a.t(), a.t()], out=s)
    np.testing.assert_array_equal(s.numpy(), getattr(np, op)([a.numpy().T, a.numpy().T]))
    with pytest.warns(UserWarning, match=RESIZE_WARN):
        getattr(tl, op)([a, a], out=tl.empty(1, dtype=tl.float64))
    raises_like(RuntimeError, f"{op} expects a non-empty TensorList", lambda: getattr(tl, op)([], out=tl.empty(0)),
                lambda: getattr(torch, op)([], out=torch.empty(0)))
    if torch is not None:
        b = rng.standard_normal((2, 3)).astype(np.float32)
        tout, out = torch.empty(0, dtype=torch.float64), tl.empty(0, dtype=tl.float64)
        getattr(torch, op)([torch.from_numpy(b), torch.from_numpy(b)], out=tout)
        getattr(tl, op)([T(b), T(b)], out=out)
        np.testing.assert_array_equal(out.numpy(), tout.numpy())


# ------------------------------------------------------ backward operators' outs

def test_threshold_backward_grad_input():
    rng = np.random.default_rng(1)
    g, x = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    want = np.where(x > 0.25, g, 0)
    out = tl.empty(0)
    assert no_warning(lambda: tl.threshold_backward(T(g), T(x), 0.25, out=out)) is out
    np.testing.assert_array_equal(out.numpy(), want)
    # broadcast (self [3] against grad [2, 3]), float64 out, strided out
    out64 = tl.empty(0, dtype=tl.float64)
    tl.threshold_backward(T(g), T(x[0]), 0.0, out=out64)
    np.testing.assert_array_equal(out64.numpy(), np.where(x[0] > 0, g, 0).astype(np.float64))
    s = strided_out((2, 3))
    tl.threshold_backward(T(g).t().contiguous().t(), T(x), 0.0, out=s)
    np.testing.assert_array_equal(s.numpy(), np.where(x > 0, g, 0))
    with pytest.warns(UserWarning, match=RESIZE_WARN):
        tl.threshold_backward(T(g), T(x), 0.0, out=tl.empty(5))
    raises_like(RuntimeError, "result type Float can't be cast to the desired output type Long",
                lambda: tl.threshold_backward(T(g), T(x), 0.0, out=tl.empty(0, dtype=tl.int64)),
                lambda: torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x), 0.0,
                                                          grad_input=torch.empty(0, dtype=torch.int64)))
    if torch is not None:
        tout = torch.empty(0)
        torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x), 0.25, grad_input=tout)
        np.testing.assert_array_equal(out.numpy(), tout.numpy())


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_mse_loss_backward_grad_input(reduction):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    g = rng.standard_normal((3, 4)) if reduction == 0 else np.float64(rng.standard_normal())
    k = 2.0 / x.size if reduction == 1 else 2.0
    want = k * (x - y) * g
    out = tl.empty(0, dtype=tl.float64)
    mlb = tl._C._nn.mse_loss_backward
    assert no_warning(lambda: mlb(T(g), T(x), T(y), reduction, out=out)) is out
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    s = strided_out((3, 4), tl.float64)
    mlb(T(g), T(x).t().contiguous().t(), T(y), reduction, out=s)
    np.testing.assert_allclose(s.numpy(), want, rtol=1e-12)
    with pytest.warns(UserWarning, match=RESIZE_WARN):
        mlb(T(g), T(x), T(y), reduction, out=tl.empty(2, dtype=tl.float64))
    if torch is not None:
        tout = torch.empty(0, dtype=torch.float64)
        torch.ops.aten.mse_loss_backward(torch.from_numpy(np.asarray(g)), torch.from_numpy(x), torch.from_numpy(y),
                                         reduction, grad_input=tout)
        np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-12)


def test_mse_loss_backward_grad_input_promotes_and_casts_safely():
    x, y = tl.full((2, 3), 1.5), tl.zeros(2, 3)
    mlb = tl._C._nn.mse_loss_backward
    for g, a, out_dt in [(tl.tensor(1.0), x, tl.float64), (tl.tensor(1.0, dtype=tl.float64), x, tl.float32),
                         (tl.tensor(1.0), x.to(tl.float64), tl.float32)]:
        out = tl.empty(0, dtype=out_dt)
        mlb(g, a, y, 2, out=out)
        assert out.dtype == out_dt
        np.testing.assert_allclose(out.numpy(), np.full((2, 3), 3.0))
        if torch is not None:
            tout = torch.empty(0, dtype=tdt(out_dt))
            torch.ops.aten.mse_loss_backward(torch.from_numpy(g.numpy()), torch.from_numpy(a.numpy()),
                                             torch.zeros(2, 3), 2, grad_input=tout)
            np.testing.assert_array_equal(out.numpy(), tout.numpy())
    raises_like(RuntimeError, "result type Float can't be cast to the desired output type Long",
                lambda: mlb(tl.tensor(1.0), x, y, 2, out=tl.empty(0, dtype=tl.int64)),
                lambda: torch.ops.aten.mse_loss_backward(torch.tensor(1.0), torch.ones(2), torch.ones(2), 2,
                                                         grad_input=torch.empty(0, dtype=torch.int64)))


# ------------------------------------------------------------------- fill

@pytest.mark.parametrize("dt", DTYPES + [tl.bool])
def test_fill__tensor_values(dt):
    for v, vdt in ((2.75, tl.float64), (3, tl.int64), (True, tl.bool), (1.5, tl.float16)):
        x = tl.zeros(2, 3, dtype=dt)
        ver = x._version
        assert x.fill_(tl.tensor(v, dtype=vdt)) is x
        assert x._version > ver and x.dtype == dt
        want = np.full((2, 3), np.asarray(v).astype(NP[vdt] if vdt != tl.float16 else np.float16)).astype(NP[dt])
        np.testing.assert_array_equal(x.numpy(), want)
        if torch is not None:
            tx = torch.zeros(2, 3, dtype=tdt(dt)).fill_(torch.tensor(v, dtype=tdt(vdt)))
            np.testing.assert_array_equal(x.numpy(), tx.numpy())


def test_fill_tensor_forms_strides_alias_and_errors():
    x = tl.zeros(3, 4)
    s = x[:, ::2]
    tl.fill_(s, tl.tensor(5.0))
    np.testing.assert_array_equal(x.numpy(), np.tile([5.0, 0.0], (3, 2)).astype(np.float32))
    # the value is an element of self: read before it is overwritten
    y = T(np.arange(6.0).reshape(2, 3))
    y.fill_(y[1, 2])
    np.testing.assert_array_equal(y.numpy(), np.full((2, 3), 5.0))
    # fill.Scalar / fill.Tensor: new tensors with self's (dense) strides
    z = tl.ones(4, 3).t()
    for r in (tl.fill(z, 2), tl.fill(z, tl.tensor(2))):
        assert r.stride() == z.stride() and r.dtype == z.dtype
        np.testing.assert_array_equal(r.numpy(), np.full((3, 4), 2.0, np.float32))
        assert z.numpy().max() == 1
    raises_like(RuntimeError, "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.",
                lambda: x.fill_(tl.ones(1)), lambda: torch.zeros(2).fill_(torch.ones(1)))
    m = tl.empty(2, device="meta")
    assert m.fill_(tl.tensor(1.0)) is m


@needs_torch
def test_fill_autograd_names_and_grads_match_torch():
    for mod in (tl, torch):
        v = mod.zeros(3, requires_grad=True)
        w = mod.tensor(2.0, requires_grad=True)
        names = [type(f.grad_fn).__name__ for f in
                 (mod.fill(v, 1), mod.fill(v, w), v.clone().fill_(1), v.clone().fill_(w))]
        assert names == ["FillBackward0", "FillBackward1", "FillBackward2", "FillBackward3"], mod
        (v.clone().fill_(w) * mod.arange(3.0)).sum().backward()
        assert w.grad.item() == 3.0 and v.grad.numpy().tolist() == [0.0, 0.0, 0.0]


# ----------------------------------------------------------------- narrow

def test_narrow_tensor_start():
    a = T(np.arange(24.0).reshape(4, 6))
    for dim, st, ln in [(0, 1, 2), (1, -4, 3), (1, 0, 0), (-1, 6, 0)]:
        for sdt in (tl.int64, tl.int32, tl.uint8 if st >= 0 else tl.int8):
            r = a.narrow(dim, tl.tensor(st, dtype=sdt), ln)
            want = tl.narrow(a, dim, st, ln)
            assert r.shape == want.shape and r.stride() == want.stride()
            assert r.storage_offset() == want.storage_offset()
            np.testing.assert_array_equal(r.numpy(), want.numpy())
    v = tl.narrow(a, 1, tl.tensor(2), 2)
    v.fill_(-1.0)  # a view
    assert (a.numpy()[:, 2:4] == -1).all()
    for bad in (tl.tensor(2.0), tl.tensor([2]), tl.tensor(True)):
        raises_like(RuntimeError, "start must be an 0-dim integral Tensor.", lambda: a.narrow(0, bad, 1),
                    lambda: torch.ones(4).narrow(0, torch.from_numpy(bad.numpy()), 1))
    raises_like(IndexError, "start out of range (expected to be in range of [-4, 4], but got 9)",
                lambda: a.narrow(0, tl.tensor(9), 1), lambda: torch.ones(4, 6).narrow(0, torch.tensor(9), 1))


# ------------------------------------------------------------------- view.dtype

VIEW_CASES = [  # (shape, slicer, dtype)
    ((3, 4), lambda x: x, tl.int32), ((3, 4), lambda x: x, tl.float16), ((3, 4), lambda x: x, tl.float64),
    ((3, 4), lambda x: x, tl.uint8), ((3, 4), lambda x: x, tl.bool), ((3, 4), lambda x: x[:, 1:], tl.float16),
    ((3, 4), lambda x: x[:, 1:], tl.int8), ((2, 3, 4), lambda x: x[:, 1:, 2:], tl.float64),
    ((5, 2), lambda x: x[::2], tl.float64), ((4,), lambda x: x, tl.int16), ((), lambda x: x, tl.int32),
    ((0, 4), lambda x: x, tl.float64), ((3, 4), lambda x: x[1:, :], tl.float64),
]


@pytest.mark.parametrize("case", range(len(VIEW_CASES)))
def test_view_dtype_matches_numpy_and_torch(case):
    shape, sl, dt = VIEW_CASES[case]
    base = np.random.default_rng(case).standard_normal(shape).astype(np.float32)
    x = sl(T(base) if base.size else tl.zeros(shape))  # (from_numpy gives an empty array numpy's strides)
    r = x.view(dt)
    assert r.dtype == dt
    want = sl(base).view(NP[dt])  # numpy: the last axis is split / merged
    assert r.shape == want.shape
    np.testing.assert_array_equal(r.numpy(), want)
    if torch is not None:
        tr = sl(torch.from_numpy(base.copy()) if base.size else torch.zeros(shape)).view(tdt(dt))
        assert r.stride() == tr.stride() and r.storage_offset() == tr.storage_offset()


def test_view_dtype_shares_storage_and_is_not_differentiable():
    x = tl.zeros(2, 4)
    v = x.view(tl.int32)
    v[0, 1] = 1065353216  # the bits of 1.0f
    assert x.numpy()[0, 1] == 1.0
    assert x._version == v._version
    y = tl.ones(3, requires_grad=True)
    assert not y.view(tl.int32).requires_grad and not y.view(tl.float32).requires_grad
    assert x.view(dtype=tl.float16).shape == (2, 8)
    assert x.view(-1).shape == (8,) and x.view(2, 2, 2).shape == (2, 2, 2)  # the size overload still wins for ints
    m = tl.empty(2, 4, device="meta").view(tl.float64)
    assert m.shape == (2, 2) and m.device.type == "meta"


VIEW_ERRORS = [
    (lambda x: x[:, 1:3], tl.float64,
     "self.storage_offset() must be divisible by 2 to view Float as Double (different element sizes), but got 1"),
    (lambda x: x[:, :3], tl.float64,
     "self.size(-1) must be divisible by 2 to view Float as Double (different element sizes), but got 3"),
    (lambda x: x.t(), tl.float16,
     "self.stride(-1) must be 1 to view Float as Half (different element sizes), but got 4"),
    (lambda x: x[0, 0], tl.int16, "self.dim() cannot be 0 to view Float as Short (different element sizes)"),
    (lambda x: x[::2, ::2], tl.uint8,
     "self.stride(-1) must be 1 to view Float as Byte (different element sizes), but got 2"),
    (lambda x: x[:, :2].t(), tl.float64,
     "self.size(-1) must be divisible by 2 to view Float as Double (different element sizes), but got 3"),
    (lambda x: x.as_strided((2, 2), (3, 1)), tl.float64,
     "self.stride(0) must be divisible by 2 to view Float as Double (different element sizes), but got 3"),
    (lambda x: x[:, :1].expand(3, 2), tl.float64,
     "self.stride(-1) must be 1 to view Float as Double (different element sizes), but got 0"),
]


@pytest.mark.parametrize("case", range(len(VIEW_ERRORS)))
def test_view_dtype_errors(case):
    sl, dt, msg = VIEW_ERRORS[case]
    raises_like(RuntimeError, msg, lambda: sl(tl.zeros(3, 4)).view(dt),
                lambda: sl(torch.zeros(3, 4)).view(tdt(dt)))


# ------------------------------------------------------- out_dtype products

@pytest.mark.parametrize("call", [
    lambda m, a, b, dt: m.mm(a, b, dt),
    lambda m, a, b, dt: m.mm(a, b, out_dtype=dt, out=m.empty(0)),
    lambda m, a, b, dt: m.bmm(a[None], b[None], dt),
    lambda m, a, b, dt: m.addmm(m.zeros(2, 2), a, b, dt),
    lambda m, a, b, dt: m.baddbmm(m.zeros(1, 2, 2), a[None], b[None], dt, beta=0.5),
])
def test_out_dtype_products_are_cuda_only_as_in_pytorch(call):
    a = tl.ones(2, 3).to(tl.float16)
    with pytest.raises(NotImplementedError, match=r"Could not run 'aten::\w+\.dtype(_out)?' with arguments from the "
                                                  r"'CPU' backend"):
        call(tl, a, a.t(), tl.float32)
    if torch is not None:
        ta = torch.ones(2, 3, dtype=torch.float16)
        with pytest.raises(NotImplementedError, match=r"Could not run 'aten::\w+\.dtype(_out)?' with arguments "
                                                      r"from the 'CPU' backend"):
            call(torch, ta, ta.t(), torch.float32)
    # the signatures are bound (an int is not a dtype: the parser's TypeError)
    with pytest.raises(TypeError, match=re.escape("(Tensor input, Tensor mat2, torchlet.dtype out_dtype, *, "
                                                  "Tensor out = None)")):
        tl.mm(a, a.t(), "x")


# ------------------------------------ torchlet.linalg from python_module: linalg

def test_linalg_module_is_generated_like_torch_C_linalg():
    from torchlet._generated import _linalg

    assert tl._C._linalg is _linalg
    names = sorted(_linalg.__all__)
    assert {"linalg_matrix_norm", "linalg_norm", "linalg_svd", "linalg_svdvals", "linalg_vector_norm"} <= set(names)
    for n in names:
        if n.startswith("_"):  # a private operator of the module (_linalg_eigvals), as in torch._C._linalg
            assert torch is None or hasattr(torch._C._linalg, n), n
            continue
        assert n.startswith("linalg_"), n
        assert getattr(tl.linalg, n[len("linalg_"):]) is getattr(_linalg, n)
        if torch is not None:  # torch.linalg_svd does not exist either
            assert hasattr(torch._C._linalg, n) and hasattr(tl, n) == hasattr(torch, n), n
        else:
            assert not hasattr(tl, n), n
    assert tl._linalg_svd is not None  # _linalg_svd has no python_module (torch._linalg_svd)


def test_linalg_signatures_and_overloads():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 3))
    x = T(a)
    np.testing.assert_allclose(tl.linalg.matrix_norm(x).item(), np.linalg.norm(a, "fro"), rtol=1e-12)
    np.testing.assert_allclose(tl.linalg.matrix_norm(x, ord="nuc").item(), np.linalg.norm(a, "nuc"), rtol=1e-12)
    np.testing.assert_allclose(tl.linalg.matrix_norm(x, -2).item(), np.linalg.norm(a, -2), rtol=1e-12)
    np.testing.assert_allclose(tl.linalg.norm(x).item(), np.linalg.norm(a), rtol=1e-12)
    np.testing.assert_allclose(tl.linalg.norm(x, 1, dim=0).numpy(), np.linalg.norm(a, 1, axis=0), rtol=1e-12)
    np.testing.assert_allclose(tl.linalg.vector_norm(x, 3, dim=(0, 1)).item(),
                               (np.abs(a) ** 3).sum() ** (1 / 3), rtol=1e-12)
    np.testing.assert_allclose(tl.linalg.svdvals(A=x).numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    out = tl.empty(0, dtype=tl.float64)
    assert tl.linalg.norm(x, "fro", out=out) is out and out.shape == ()
    raises_like(TypeError, "linalg_svd(): argument 'full_matrices' (position 2) must be bool, not str",
                lambda: tl.linalg.svd(x, "a"), lambda: torch.linalg.svd(torch.ones(2, 2), "a"))
    if torch is not None:
        ta = torch.from_numpy(a)
        assert tl.linalg.matrix_norm.__doc__ == "(Tensor input, Number ord, tuple of ints dim = [-2, -1], bool " \
            "keepdim = False, *, torchlet.dtype dtype = None, Tensor out = None) | (Tensor input, str ord = 'fro', " \
            "tuple of ints dim = [-2, -1], bool keepdim = False, *, torchlet.dtype dtype = None, Tensor out = None)"
        for ord_ in ("fro", "nuc", 2, -1, float("inf")):
            np.testing.assert_allclose(tl.linalg.matrix_norm(x, ord_).item(),
                                       torch.linalg.matrix_norm(ta, ord_).item(), rtol=1e-12)


def test_linalg_svd_out_and__linalg_svd_U():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 5, 3))
    x = T(a)
    for full in (True, False):
        outs = (tl.empty(0, dtype=tl.float64), tl.empty(7, dtype=tl.float64), tl.empty(0, dtype=tl.float64))
        with pytest.warns(UserWarning, match=RESIZE_WARN):  # S had elements
            r = tl.linalg.svd(x, full_matrices=full, out=outs)
        assert type(r).__name__ == "linalg_svd_out" and all(r[i] is outs[i] for i in range(3))
        U, S, Vh = (t.numpy() for t in outs)
        assert U.shape == ((2, 5, 5) if full else (2, 5, 3)) and S.shape == (2, 3)
        k = 3
        np.testing.assert_allclose((U[..., :k] * S[:, None, :]) @ Vh[:, :k, :], a, atol=1e-12)
        np.testing.assert_allclose(S, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    # _linalg_svd.U without compute_uv: U and Vh come back empty, as the functional's
    U, S, Vh = (tl.empty(0, dtype=tl.float64) for _ in range(3))
    tl._linalg_svd(x, False, False, out=(U, S, Vh))
    fU, fS, fVh = tl._linalg_svd(x, False, False)
    assert U.shape == fU.shape and Vh.shape == fVh.shape
    np.testing.assert_array_equal(S.numpy(), fS.numpy())
    # strided outs of the right shapes are written through
    Ss = strided_out((2, 3), tl.float64)
    tl.linalg.svd(x, False, out=(tl.empty(0, dtype=tl.float64), Ss, tl.empty(0, dtype=tl.float64)))
    np.testing.assert_allclose(Ss.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    raises_like(RuntimeError, "Expected out tensor to have dtype double, but got float instead",
                lambda: tl.linalg.svd(x, out=(tl.empty(0), tl.empty(0), tl.empty(0))))
    with pytest.raises(TypeError, match=re.escape("expected tuple of 3 elements but got 2")):
        tl.linalg.svd(x, out=(tl.empty(0), tl.empty(0)))
    if torch is not None:
        touts = tuple(torch.empty(0, dtype=torch.float64) for _ in range(3))
        torch.linalg.svd(torch.from_numpy(a), full_matrices=False, out=touts)
        np.testing.assert_allclose(outs[1].numpy(), touts[1].numpy(), rtol=1e-12)
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double, but got float instead"):
            torch.linalg.svd(torch.from_numpy(a), out=(torch.empty(0), torch.empty(0), torch.empty(0)))


@needs_torch
def test_one_plausible_overload_gives_its_own_error_like_torch():
    x, tx = tl.ones(2, 2), torch.ones(2, 2)
    calls = [lambda m, t: m.mm(t, 1), lambda m, t: m.mm(t, t, 1), lambda m, t: m.mm(t, mat2=1),
             lambda m, t: m.mm(t, t, foo=1), lambda m, t: m.sum(t, "a"), lambda m, t: m.narrow(t, 0, 1.5, 1),
             lambda m, t: m.fill(t, "a"), lambda m, t: t.view("a")]
    for c in calls:
        with pytest.raises(TypeError) as got:
            c(tl, x)
        with pytest.raises(TypeError) as want:
            c(torch, tx)
        assert str(got.value).split("\n")[0].replace("torchlet.", "torch.") == str(want.value).split("\n")[0]
