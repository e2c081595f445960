"""Tensor.T / .mT / .H / .mH (PyTorch 2.13's numpy-style transposes).

T reverses every dim (t() for 2-D; a once-per-process UserWarning for ndim not
in (0, 2), another for 0-D), mT / mH swap the last two dims (RuntimeError
below 2-D, a warning and the identity at 0-D), H is T for matrices only. No
complex dtypes in torchlet: H / mH are T / mT. Checked against numpy always and
against PyTorch when installed; autograd flows through them (they are views).
"""
import warnings

import numpy as np
import pytest

import torchlet as tl
from torchlet import _tensor
from api_helpers import needs_torch, torch

SHAPES = [(), (5,), (2, 3), (2, 3, 4), (2, 1, 3, 4)]


def _np_T(a):
    return a.transpose(tuple(range(a.ndim - 1, -1, -1)))


def _np_mT(a):
    return np.swapaxes(a, -2, -1)


def _data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _fresh(name, x):
    """The property's result and warnings, with the once-per-process record cleared."""
    _tensor._WARNED.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = getattr(x, name)
    return r, [str(m.message) for m in w if issubclass(m.category, UserWarning)]


@pytest.mark.parametrize("shape", SHAPES)
def test_T_matches_numpy(shape):
    a = _data(shape)
    r, w = _fresh("T", tl.tensor(a))
    np.testing.assert_array_equal(r.numpy(), _np_T(a))
    assert len(w) == (0 if len(shape) == 2 else 1)


@pytest.mark.parametrize("shape", [s for s in SHAPES if len(s) >= 2 or len(s) == 0])
@pytest.mark.parametrize("name", ["mT", "mH"])
def test_mT_mH_match_numpy(shape, name):
    a = _data(shape)
    r, w = _fresh(name, tl.tensor(a))
    np.testing.assert_array_equal(r.numpy(), a if a.ndim == 0 else _np_mT(a))
    assert len(w) == (1 if a.ndim == 0 else 0)


def test_H_matches_numpy_and_errors():
    a = _data((2, 3))
    np.testing.assert_array_equal(tl.tensor(a).H.numpy(), a.T)
    r, w = _fresh("H", tl.tensor(np.float32(2.5)))
    assert r.item() == 2.5 and w == ["Tensor.H is deprecated on 0-D tensors. Consider using x.conj()."]
    with pytest.raises(RuntimeError, match=r"tensor.H is only supported on matrices \(2-D tensors\). Got 1-D tensor.$"):
        tl.ones(3).H
    with pytest.raises(RuntimeError, match="Got 3-D tensor. For batches of matrices, consider using tensor.mH"):
        tl.ones(2, 3, 4).H
    for name in ("mT", "mH"):
        with pytest.raises(RuntimeError, match=f"tensor.{name} is only supported on matrices or batches of "
                                               "matrices. Got 1-D tensor."):
            getattr(tl.ones(3), name)


def test_warnings_once_per_process():
    _tensor._WARNED.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tl.ones(2, 3, 4).T
        tl.ones(5).T
        tl.ones(2, 3).T
    assert len(w) == 1 and "The use of `x.T` on tensors of dimension other than 2" in str(w[0].message)


@pytest.mark.parametrize("name", ["T", "mT", "H", "mH"])
def test_views_and_int_dtypes(name):
    x = tl.tensor(np.arange(6, dtype=np.int64).reshape(2, 3))
    r = getattr(x, name)
    assert r.dtype == tl.int64 and r.shape == (3, 2)
    assert r.data_ptr() == x.data_ptr() and r.stride() == (1, 3)


@pytest.mark.parametrize("name,shape", [("T", (2, 3)), ("T", (2, 3, 4)), ("mT", (2, 3, 4)), ("H", (3, 4)),
                                        ("mH", (2, 3, 4))])
def test_autograd_through(name, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = _data(shape, 1)
        x = tl.tensor(a, requires_grad=True)
        g = _data((_np_T(a) if name in ("T", "H") else _np_mT(a)).shape, 2)
        y = getattr(x, name)
        (y * tl.tensor(g)).sum().backward()
        back = _np_T(g) if name in ("T", "H") else _np_mT(g)
        np.testing.assert_array_equal(x.grad.numpy(), back)


@needs_torch
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["T", "mT", "H", "mH"])
def test_vs_torch(shape, name):
    a = _data(shape, 3)
    g_t = torch.tensor(a, requires_grad=True)
    x = tl.tensor(a, requires_grad=True)
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        try:
            ref = getattr(g_t, name)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as ei:
                getattr(x, name)
            assert str(ei.value) == str(e)
            return
    r, w = _fresh(name, x)
    assert tuple(r.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(r.detach().numpy(), ref.detach().numpy())
    # torch's text plus its "(Triggered internally at ...)" suffix; torch warns once per process
    for m in w:
        assert any(str(t.message).startswith(m) for t in wt) or not wt
    gr = np.random.default_rng(4).standard_normal(tuple(ref.shape)).astype(np.float32)
    (ref * torch.tensor(gr)).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (getattr(x, name) * tl.tensor(gr)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), g_t.grad.numpy())
