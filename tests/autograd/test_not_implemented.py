"""Operators without a derivative, as PyTorch 2.13 handles them (docs/AUTOGRAD.md,
"No derivative"):

* no derivatives.yaml entry (and not in DONT_REQUIRE_DERIVATIVE): the forward
  runs, the result gets a ``NotImplemented`` grad_fn over the inputs that
  require grad, and backward raises ``RuntimeError: derivative for aten::<op>
  is not implemented``;
* a ``not_implemented("...")`` formula (asinh_ / acosh_ / atanh_): the node is
  recorded and its backward raises ``NotImplementedError: the derivative for
  '...' is not implemented.``.
Each case is compared with torch when it is installed."""
from __future__ import annotations

import os

import numpy as np
import pytest

tl = pytest.importorskip("torchlet")

try:
    if os.environ.get("TORCHLET_ASAN_RUN") == "1":  # torch's C++ exceptions abort under ASan's preload
        raise ImportError
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

R = np.random.default_rng(4242)


def pair(a, requires_grad=True):
    """the same float64 data as a torchlet tensor and (when installed) a torch tensor"""
    t = tl.tensor(a).requires_grad_(requires_grad)
    p = torch.tensor(a).requires_grad_(requires_grad) if torch is not None else None
    return t, p


def outcome(fn, x):
    """(result requires grad, grad_fn class name, grad_fn name(), edges, backward's error)"""
    r = fn(x)
    info = (r.requires_grad, type(r.grad_fn).__name__, r.grad_fn.name(), len(r.grad_fn.next_functions))
    with pytest.raises(Exception) as ei:
        r.sum().backward()
    return info + (type(ei.value).__name__, str(ei.value))


CASES = {
    "floor_divide_scalar": lambda m, x: m.floor_divide(x, 2),
    "floor_divide_dunder": lambda m, x: x // 1.5,
    "floor_divide_tensor": lambda m, x: m.floor_divide(x, x * 0 + 0.75),  # both inputs require grad
    "floor_divide_plain_other": lambda m, x: m.floor_divide(x.detach() + 3, x),  # only other does
    "floor_divide_inplace": lambda m, x: (x * 1).floor_divide_(0.5),
    "remainder_scalar_tensor": lambda m, x: m.remainder(2, x),
    "scatter_reduce_str": lambda m, x: m.scatter(x, 0, m.tensor([0, 1]), x[:2] * 2, reduce="add"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_entry_records_not_implemented(case):
    a = R.uniform(0.5, 3.0, 5)
    x, px = pair(a)
    got = outcome(lambda t: CASES[case](tl, t), x)
    assert got[:3] == (True, "NotImplemented", "torch::autograd::NotImplemented")
    assert got[4] == "RuntimeError" and got[5].startswith("derivative for aten::") and got[5].endswith(" is not implemented")
    if torch is not None:
        assert got == outcome(lambda t: CASES[case](torch, t), px)


def test_forward_values_unchanged():
    a = R.uniform(-3.0, 3.0, (3, 4))
    x, _ = pair(a)
    np.testing.assert_array_equal(tl.floor_divide(x, 0.5).detach().numpy(), np.floor_divide(a, 0.5))
    y = x * 1
    y.floor_divide_(0.25)
    np.testing.assert_array_equal(y.detach().numpy(), np.floor_divide(a, 0.25))


def test_no_grad_and_plain_inputs_record_nothing():
    x, _ = pair(R.uniform(0.5, 3.0, 4))
    with tl.no_grad():
        assert tl.floor_divide(x, 2).grad_fn is None and not tl.floor_divide(x, 2).requires_grad
    p, _ = pair(R.uniform(0.5, 3.0, 4), requires_grad=False)
    r = tl.floor_divide(p, 2)
    assert r.grad_fn is None and not r.requires_grad


def test_inplace_on_leaf_is_refused():
    x, _ = pair(R.uniform(0.5, 3.0, 4))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        x.floor_divide_(2)


def test_error_only_when_backward_reaches_the_node():
    """a graph with a NotImplemented branch: grad() w.r.t. an input whose path
    avoids it works; the full backward raises"""
    x, _ = pair(R.uniform(0.5, 3.0, 4))
    w, _ = pair(R.uniform(0.5, 3.0, 4))
    y = (x // 2).sum() + (w * 3).sum()
    (gw,) = tl.autograd.grad(y, [w], retain_graph=True)
    np.testing.assert_array_equal(gw.numpy(), np.full(4, 3.0))
    with pytest.raises(RuntimeError, match="^derivative for aten::floor_divide is not implemented$"):
        y.backward()


def test_integer_results_get_no_history():
    """PyTorch's isDifferentiableType: an integer output of a recorded op stays plain"""
    x, _ = pair(R.uniform(0.5, 3.0, 4))
    i = tl.tensor([7, 8, 9, 10])
    r = i.floor_divide(x.detach().to(tl.int64))  # integer inputs: nothing requires grad
    assert not r.requires_grad


@pytest.mark.parametrize("op,lo,hi", [("asinh_", -2.0, 2.0), ("acosh_", 1.5, 3.0), ("atanh_", -0.8, 0.8)])
def test_not_implemented_formula_raises_in_backward(op, lo, hi):
    a = R.uniform(lo, hi, 5)
    x, px = pair(a)
    y = getattr(x * 1, op)()
    np.testing.assert_allclose(y.detach().numpy(), getattr(np, "arc" + op[1:-1])(a), rtol=1e-12)
    name = op[0].upper() + op[1:-1] + "Backward1"
    assert y.grad_fn.name() == name
    msg = f"the derivative for 'inplace version of {op[:-1]}' is not implemented."
    with pytest.raises(NotImplementedError) as ei:
        y.sum().backward()
    assert str(ei.value) == msg
    if torch is not None:
        py = getattr(px * 1, op)()
        assert py.grad_fn.name() == name
        with pytest.raises(NotImplementedError) as et:
            py.sum().backward()
        assert str(et.value) == msg


def test_functional_inverse_hyperbolics_still_differentiate():
    a = R.uniform(-0.8, 0.8, 5)
    x, _ = pair(a)
    tl.atanh(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / (1 - a * a), rtol=1e-12)


def test_fused_attention_double_backward_fails_at_the_second_backward():
    """_scaled_dot_product_flash_attention_for_cpu_backward has no derivative in
    PyTorch: create_graph builds the graph, the second backward raises"""
    q, k, v = (tl.tensor(R.standard_normal((1, 2, 4, 8))).requires_grad_() for _ in range(3))
    o = tl.nn.functional.scaled_dot_product_attention(q, k, v)
    assert o.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    (g,) = tl.autograd.grad(o.sum(), [q], create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError) as ei:
        g.sum().backward()
    msg = "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented"
    assert str(ei.value) == msg
    if torch is not None:
        tq, tk, tv = (torch.tensor(t.detach().numpy()).requires_grad_() for t in (q, k, v))
        to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
        (tg,) = torch.autograd.grad(to.sum(), [tq], create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-10, atol=1e-12)
        with pytest.raises(RuntimeError) as et:
            tg.sum().backward()
        assert str(et.value) == msg
