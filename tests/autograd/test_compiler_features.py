"""End-to-end behaviour of the formula-compiler features (docs/AUTOGRAD.md,
"The formula compiler"): several outputs, one formula for several inputs,
Tensor[] inputs, ternaries -- beyond the finite-difference checks of
test_gradcheck_yaml.py: which outputs get a history, undefined gradients,
inputs that do not require grad, node names, and torch's values when torch
is installed."""
from __future__ import annotations

import numpy as np
import pytest

torchlet = pytest.importorskip("torchlet")

from _gradcheck_util import get_grad, grad_fn_name, leaf, requires_grad  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

R = np.random.default_rng(6067)


def test_only_the_first_output_of_a_single_grad_formula_requires_grad():
    """PyTorch's uses_single_grad: max.dim's indices, layer norm's mean/rstd and
    nll_loss's total_weight never require grad; var_mean (grads[0], grads[1]) both do"""
    x = leaf(R.standard_normal((3, 4)))
    v, i = torchlet.max(x, 1)
    assert grad_fn_name(v) == "MaxBackward0" and not requires_grad(i)
    y, mean, rstd = torchlet.native_layer_norm(x, [4], None, None, 1e-5)
    assert grad_fn_name(y) == "NativeLayerNormBackward0"
    assert not requires_grad(mean) and not requires_grad(rstd)
    out, tw = torchlet._C._nn.nll_loss_forward(x, torchlet.tensor([0, 1, 3]), None, 1, -100)
    assert grad_fn_name(out) == "NllLossBackward0" and not requires_grad(tw)
    var, m = torchlet.var_mean(x, 1)
    assert grad_fn_name(var) == grad_fn_name(m) == "VarMeanBackward0"
    y, mask = torchlet.native_dropout(x, 0.5, True)
    assert grad_fn_name(y) == "NativeDropoutBackward0" and not requires_grad(mask)


def test_an_output_without_gradient_arrives_undefined():
    """var_mean: only the mean used -> the var gradient is NULL inside the node"""
    a = R.standard_normal((3, 4))
    x = leaf(a)
    torchlet.var_mean(x, 1)[1].sum().backward()
    np.testing.assert_allclose(get_grad(x).numpy(), np.full((3, 4), 0.25))


def test_weight_and_bias_none_and_partial_requires_grad():
    """one formula for input, weight, bias: grad_input_mask follows which require grad"""
    a, w = R.standard_normal((2, 5)), R.standard_normal(5)
    x = leaf(a)
    wt = torchlet.tensor(w)  # does not require grad: its slot is not computed
    b = leaf(R.standard_normal(5))
    y = torchlet.native_layer_norm(x, [5], wt, b, 1e-5)[0]
    (y * y).sum().backward()
    assert get_grad(b) is not None and get_grad(x) is not None and get_grad(wt) is None
    if torch is not None:
        tx = torch.tensor(a, requires_grad=True)
        tb = torch.tensor(b.detach().numpy(), requires_grad=True)
        ty = torch.native_layer_norm(tx, [5], torch.tensor(w), tb, 1e-5)[0]
        (ty * ty).sum().backward()
        np.testing.assert_allclose(get_grad(x).numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(get_grad(b).numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cat_mixed_requires_grad_dtypes_and_skipped_empty():
    a = leaf(R.standard_normal((2, 3)))
    c = torchlet.tensor(R.standard_normal((1, 3)))  # no grad: no edge
    e = leaf(np.zeros(0))  # a 1-D empty tensor, which cat skips: an empty gradient
    y = torchlet.cat([a, c, e, a])
    assert grad_fn_name(y) == "CatBackward0"
    w = R.standard_normal((5, 3))
    (y * torchlet.tensor(w)).sum().backward()
    np.testing.assert_allclose(get_grad(a).numpy(), w[:2] + w[3:])
    assert get_grad(c) is None and get_grad(e).shape == (0,)
    f32 = torchlet.tensor(R.standard_normal((2, 3)).astype(np.float32))
    f32.requires_grad_(True)
    y = torchlet.cat([a, f32], 1)  # promoted to float64; f32's gradient comes back as float32
    y.sum().backward()
    assert get_grad(f32).dtype == torchlet.float32


def test_stack_of_views_and_second_derivative_counts():
    a = leaf(R.standard_normal((3, 2)))
    y = torchlet.stack([a.t(), a.t() * 2], 2)
    assert grad_fn_name(y) == "StackBackward0" and tuple(y.shape) == (2, 3, 2)
    y.sum().backward()
    np.testing.assert_allclose(get_grad(a).numpy(), np.full((3, 2), 3.0))


def test_dropout_train_false_and_p_one():
    a = R.standard_normal((4, 4))
    x = leaf(a)
    y = torchlet.native_dropout(x, 0.3, False)[0]  # identity: gradient 1
    y.sum().backward()
    np.testing.assert_allclose(get_grad(x).numpy(), np.ones((4, 4)))
    x2 = leaf(a)
    y = torchlet.native_dropout(x2, 1.0, True)[0]  # everything dropped: p == 1 -> scale 0, not inf
    y.sum().backward()
    np.testing.assert_allclose(get_grad(x2).numpy(), np.zeros((4, 4)))


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_multi_output_gradients_match_torch():
    a = R.standard_normal((3, 5))
    x = leaf(a)
    tx = torch.tensor(a, requires_grad=True)
    g = R.standard_normal(3)
    v = torchlet.max(x, 1)[0] * torchlet.tensor(g) + torchlet.var_mean(x, 1, correction=0)[0]
    v.sum().backward()
    tv = torch.max(tx, 1)[0] * torch.tensor(g) + torch.var_mean(tx, 1, correction=0)[0]
    tv.sum().backward()
    np.testing.assert_allclose(get_grad(x).numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
