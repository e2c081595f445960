"""bool[N] in the operator ABI: native_layer_norm_backward
declared with PyTorch's schema (`bool[3] output_mask`), called directly,
boxed, from native_layer_norm's derivative, and against torch."""
import numpy as np
import pytest

import torchlet as tl
from torchlet import library

from ops_helpers import needs_torch, torch

RNG = np.random.default_rng(33)


def _inputs():
    x = tl.tensor(RNG.standard_normal((4, 6)))
    w = tl.tensor(RNG.standard_normal(6))
    b = tl.tensor(RNG.standard_normal(6))
    g = tl.tensor(RNG.standard_normal((4, 6)))
    _, mean, rstd = tl.native_layer_norm(x, [6], w, b, 1e-5)
    return g, x, mean, rstd, w, b


def test_signature_and_mask():
    g, x, mean, rstd, w, b = _inputs()
    gi, gw, gb = tl.native_layer_norm_backward(g, x, [6], mean, rstd, w, b, [True, True, True])
    assert gi.shape == x.shape and gw.shape == w.shape and gb.shape == b.shape
    np.testing.assert_allclose(gb.numpy(), g.numpy().sum(0))              # d/dbias = sum of grad
    r = tl.native_layer_norm_backward(g, x, [6], mean, rstd, w, b, (False, True, False))
    assert r[0] is None and r[2] is None and np.allclose(r[1].numpy(), gw.numpy())


def test_errors():
    g, x, mean, rstd, w, b = _inputs()
    with pytest.raises(RuntimeError, match="output_mask must have 3 elements, got 2"):
        tl.native_layer_norm_backward(g, x, [6], mean, rstd, w, b, [True, True])
    with pytest.raises(TypeError):
        tl.native_layer_norm_backward(g, x, [6], mean, rstd, w, b, [True, "no", False])
    with pytest.raises(TypeError):
        tl.native_layer_norm_backward(g, x, [6], mean, rstd, w, b, True)


def test_boxed_call_carries_the_bool_list():
    g, x, mean, rstd, w, b = _inputs()
    boxed = library.call("aten::native_layer_norm_backward", g, x, [6], mean, rstd, w, b, [True, False, True])
    direct = tl.native_layer_norm_backward(g, x, [6], mean, rstd, w, b, [True, False, True])
    assert boxed[1] is None and direct[1] is None
    np.testing.assert_array_equal(boxed[0].numpy(), direct[0].numpy())
    np.testing.assert_array_equal(boxed[2].numpy(), direct[2].numpy())


def test_layer_norm_gradients_go_through_the_operator():
    x = tl.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
    w = tl.tensor(RNG.standard_normal(5), requires_grad=True)
    y = tl.native_layer_norm(x, [5], w, None, 1e-5)[0]
    g = tl.tensor(RNG.standard_normal((3, 5)))
    y.backward(g)
    _, mean, rstd = tl.native_layer_norm(x.detach(), [5], w.detach(), None, 1e-5)
    gi, gw, _ = tl.native_layer_norm_backward(g, x.detach(), [5], mean, rstd, w.detach(), None, [True, True, False])
    np.testing.assert_allclose(x.grad.numpy(), gi.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), gw.numpy(), rtol=1e-10, atol=1e-12)


@needs_torch
def test_like_torch():
    g, x, mean, rstd, w, b = _inputs()
    got = tl.native_layer_norm_backward(g, x, [6], mean, rstd, w, b, [True, True, False])
    T = lambda t: torch.from_numpy(t.numpy())  # noqa: E731
    want = torch.ops.aten.native_layer_norm_backward(T(g), T(x), [6], T(mean), T(rstd), T(w), T(b), [True, True, False])
    assert got[2] is None and want[2] is None
    for a, e in zip(got[:2], want[:2]):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)
