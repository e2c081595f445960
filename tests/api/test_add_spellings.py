"""`c = a + b` through every Python spelling: numpy's numbers, PyTorch's dtypes.

torchlet.add(a, b), a + b, a.add(b), a.add_(b), torchlet.add(a, b, alpha=2,
out=c), 2 + a, a + 2.5, a - 2, 2 - a, a * b, ... on int and float tensors,
with broadcasting, non-contiguous inputs, 0-dim and empty tensors.
"""
import numpy as np
import pytest

import torchlet as tl
from api_helpers import needs_torch, torch

SHAPES = [((), ()), ((0,), (0,)), ((1,), (5,)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((7, 5), ()), ((5,), (2, 5))]
DTYPES = [np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_]


def data(rng, shape, dt):
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(dt)
    if np.issubdtype(dt, np.integer):
        return rng.integers(0, 50, size=shape).astype(dt)
    return (rng.standard_normal(size=shape) * 3).astype(dt)


def T(a):
    return tl.from_numpy(np.array(a, copy=True, order="C"))  # own memory; 0-dim stays 0-dim


def tl_dtype_name(t):
    return repr(t.dtype).split(".")[1]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dt", [np.float32, np.int64, np.int32])
def test_add_function_method_dunder(rng, sa, sb, dt):
    a, b = data(rng, sa, dt), data(rng, sb, dt)
    ta, tb = T(a), T(b)
    want = a + b
    for got in (tl.add(ta, tb), ta + tb, ta.add(tb), tl.add(input=ta, other=tb)):
        assert got.shape == want.shape
        assert got.dtype.to_numpy() == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(tl.add(ta, tb, alpha=2).numpy(), a + 2 * b, rtol=1e-6)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64, np.int32])
def test_out_and_inplace(rng, dt):
    a, b = data(rng, (3, 4), dt), data(rng, (4,), dt)
    ta, tb = T(a), T(b)
    c = tl.empty(3, 4, dtype=tl.as_tensor(a).dtype)
    r = tl.add(ta, tb, alpha=2, out=c)
    assert r is c
    np.testing.assert_allclose(c.numpy(), a + 2 * b, rtol=1e-6)
    v = ta._version
    r = ta.add_(tb)
    assert r is ta and ta._version > v
    np.testing.assert_allclose(ta.numpy(), a + b, rtol=1e-6)
    t2 = T(a)
    t2 += tb
    np.testing.assert_allclose(t2.numpy(), a + b, rtol=1e-6)


def test_out_resized_with_warning(rng):
    a = T(np.ones((2, 3), np.float32))
    c = tl.empty(5)
    with pytest.warns(UserWarning):
        tl.add(a, a, out=c)
    assert c.shape == (2, 3)


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64, np.int32, np.int16, np.uint8, np.bool_])
@pytest.mark.parametrize("num", [2, 2.5, True, -3])
def test_python_numbers_match_torch_dtypes(rng, dt, num):
    """2 + a, a + 2.5, a - 2, 2 - a, a * 2: wrapped numbers promote as scalars."""
    a = data(rng, (4,), dt)
    ta, pa = T(a), torch.from_numpy(a)
    cases = [
        (lambda x: num + x), (lambda x: x + num), (lambda x: x * num), (lambda x: num * x),
    ]
    if dt != np.bool_ and not isinstance(num, bool):
        cases += [(lambda x: x - num), (lambda x: num - x)]
    for f in cases:
        want = f(pa)
        got = f(ta)
        assert repr(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], (num, dt)
        np.testing.assert_allclose(got.numpy().astype(np.float64), want.numpy().astype(np.float64), rtol=1e-6)


def test_python_numbers_numpy_values(rng):
    a = np.arange(5, dtype=np.int64)
    ta = T(a)
    assert (2 + ta).dtype is tl.int64 and (ta + 2.5).dtype is tl.float32
    np.testing.assert_array_equal((2 + ta).numpy(), a + 2)
    np.testing.assert_allclose((ta + 2.5).numpy(), a + 2.5)
    np.testing.assert_array_equal((2 - ta).numpy(), 2 - a)
    f = T(np.arange(5, dtype=np.float32))
    assert (f + 2).dtype is tl.float32 and (f * True).dtype is tl.float32


def test_zero_dim_tensor_vs_number():
    """A 0-dim tensor promotes like a number only when it is of a higher category."""
    i = T(np.arange(3, dtype=np.int32))
    assert (i + tl.tensor(5)).dtype is tl.int32           # 0-dim int64: int32 wins
    assert (i + tl.tensor(5.0)).dtype is tl.float32       # 0-dim float: category wins
    assert (tl.tensor(5) + tl.tensor(2)).dtype is tl.int64


def test_non_contiguous(rng):
    a = data(rng, (6, 5), np.float32)
    ta = T(a)
    got = ta.t() + ta.t()
    np.testing.assert_allclose(got.numpy(), a.T + a.T, rtol=1e-6)
    got = ta[::2, 1:] + 1
    np.testing.assert_allclose(got.numpy(), a[::2, 1:] + 1, rtol=1e-6)


def test_meta_tensors():
    m = tl.empty(3, 1, device="meta")
    n = tl.empty(4, device="meta")
    r = m + n
    assert r.is_meta and r.shape == (3, 4) and r.dtype is tl.float32
    assert (m + 2).shape == (3, 1)
    assert tl.add(m, n, alpha=2).is_meta
    assert tl.zeros(2, 3, device="meta").is_meta


def test_other_ops_via_bindings(rng):
    a, b = data(rng, (4, 3), np.float32), data(rng, (3, 2), np.float32)
    ta, tb = T(a), T(b)
    np.testing.assert_allclose((ta * ta).numpy(), a * a, rtol=1e-6)
    np.testing.assert_allclose((ta / 2).numpy(), a / 2, rtol=1e-6)
    np.testing.assert_allclose((-ta).numpy(), -a)
    np.testing.assert_allclose(tl.relu(ta).numpy(), np.maximum(a, 0))
    np.testing.assert_allclose(ta.relu().numpy(), np.maximum(a, 0))
    np.testing.assert_allclose(tl.mm(ta, tb).numpy(), a @ b, rtol=1e-5)
    np.testing.assert_allclose(ta.sum().item(), a.sum(), rtol=1e-5)
    np.testing.assert_allclose(ta.sum(0).numpy(), a.sum(0), rtol=1e-5)
    np.testing.assert_allclose(tl.sum(ta, (0, 1), keepdim=True).numpy(), a.sum((0, 1), keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(ta.sum(dim=1, dtype=tl.float64).numpy(), a.sum(1), rtol=1e-5)
    r = tl.relu_(ta)
    assert r is ta


def test_numbers_through_c_shims_and_identity():
    """Numbers for Tensor parameters cross as tl_scalar (wrapped in C) on every path."""
    a = tl.tensor([1.0, 2.0])
    assert a.add_(1).tolist() == [2.0, 3.0]
    c = tl.empty(2)
    assert tl.add(a, 2, alpha=3, out=c) is c and c.tolist() == [8.0, 9.0]
    i = tl.tensor([1, 2], dtype=tl.int32)
    assert (i * 2).dtype is tl.int32 and (i / 2).dtype is tl.float32
    assert (i - 1).tolist() == [0, 1] and (1 - i).tolist() == [0, -1]
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
        i - True                                  # as in PyTorch
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.add_(1.5)
    x = tl.ones(2, 3)
    assert x.contiguous() is x and x.to(tl.float32) is x
    assert x.t().contiguous() is not x


def test_factories_dtype_device():
    assert tl.zeros(2, 3, dtype=tl.int64).dtype is tl.int64
    assert tl.ones((2,), device="meta").is_meta
    assert tl.full((2,), 7).dtype is tl.int64 and tl.full((2,), 1.5).dtype is tl.float32
    assert tl.full((2,), True).dtype is tl.bool
    assert tl.arange(5).tolist() == [0, 1, 2, 3, 4]
    z = tl.zeros(2, requires_grad=True)  # a leaf that requires grad (torchlet.autograd)
    assert z.requires_grad and z.is_leaf
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        tl.zeros(2, dtype=tl.int64, requires_grad=True)
    with pytest.raises(TypeError, match="got multiple values for argument 'size'"):
        tl.zeros(2, size=(2,))


@pytest.mark.parametrize("num", [np.float32(2.5), np.float64(2), np.int64(3), np.int32(-2), np.bool_(True)])
def test_numpy_scalars_are_numbers(num):
    """PyTorch takes numpy scalars as Python numbers (both operand orders)."""
    for dt in (tl.float32, tl.int32):
        x = tl.ones(2, dtype=dt)
        for got, want in ((x + num, 1 + num.item()), (num + x, num.item() + 1), (x * num, num.item())):
            assert isinstance(got, tl.Tensor)
            assert got.tolist() == [want, want]
            if torch is not None and not isinstance(num, np.bool_):  # (PyTorch makes np.bool_ a float)
                ref = torch.ones(2, dtype=getattr(torch, repr(dt).split(".")[1])) + num
                assert repr((x + num).dtype).split(".")[1] == str(ref.dtype).split(".")[1]
