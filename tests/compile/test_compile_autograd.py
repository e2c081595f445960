"""Compiled functions are differentiable: the joint trace, the partition,
one CompiledFunctionBackward node; gradients against eager and gradcheck;
parameters lifted from modules get their gradients; saved tensors are
version-checked; double backward is refused.  Every test runs with the
backward node made in C with the whole forward and backward plans run in C
(runtime/python/compile_program.c), with the node made in C over Python
plans (runtime/python/compile_node.c), and with the Python reference
(TORCHLET_COMPILE_C_NODE=0)."""
import numpy as np
import pytest

import torchlet as torch
import torchlet.nn.functional as F
from torchlet._compile import api
from torchlet.autograd import gradcheck


@pytest.fixture(autouse=True, params=["c-program", "c-node", "python-node"])
def node_maker(request, monkeypatch):
    if request.param == "c-node":
        monkeypatch.setattr(api, "_call_compiled_c", None)
    if request.param == "python-node":
        monkeypatch.setattr(api, "_call_compiled_c", None)
        monkeypatch.setattr(api, "_attach_node_c", None)
        monkeypatch.setattr(api, "_node_inputs_c", None)
    else:
        assert api._attach_node_c is not None
    return request.param


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def softmax(x, w):
    return torch.softmax(x * w, -1)


def layer_norm(x, w):
    return F.layer_norm(x, (x.shape[-1],), w, w)


def chain(x, w):
    return ((x * w).sigmoid() + x).tanh() * 2


@pytest.mark.parametrize("fn", [rms, softmax, layer_norm, chain], ids=lambda f: f.__name__)
def test_gradients_match_eager(fn):
    rng = np.random.default_rng(0)
    xa, wa, ga = rng.standard_normal((6, 40)), rng.standard_normal(40), rng.standard_normal((6, 40))
    grads = []
    for f in (fn, torch.compile(fn)):
        x = torch.tensor(xa.astype(np.float32), requires_grad=True)
        w = torch.tensor(wa.astype(np.float32), requires_grad=True)
        y = f(x, w)
        y.backward(torch.tensor(ga.astype(np.float32)))
        grads.append((y.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("fn", [rms, softmax, chain], ids=lambda f: f.__name__)
def test_gradcheck_of_compiled(fn):
    x = torch.randn(3, 7, dtype=torch.float64, requires_grad=True)
    w = torch.randn(7, dtype=torch.float64, requires_grad=True)
    assert gradcheck(torch.compile(fn), (x, w))


def test_one_backward_node():
    x = torch.randn(4, 8, requires_grad=True)
    y = torch.compile(rms)(x, torch.randn(8))
    assert type(y.grad_fn).__name__ == "CompiledFunctionBackward"


def test_module_parameters_get_gradients():
    torch.manual_seed(0)
    lin = torch.nn.Linear(5, 3)
    m = torch.compile(lin)
    x = torch.randn(4, 5)
    m(x).sum().backward()
    gw = lin.weight.grad.numpy().copy()
    lin.weight.grad = None
    lin.bias.grad = None
    lin(x).sum().backward()
    np.testing.assert_allclose(gw, lin.weight.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_saved_input_modified_in_place_is_an_error():
    x = torch.randn(4, 8, requires_grad=True)
    w = torch.randn(8, requires_grad=True)
    a = x * 1.0
    y = torch.compile(rms)(a, w)
    with torch.no_grad():
        a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_double_backward_is_refused():
    x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4)
    y = torch.compile(chain)(x, w).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), torch.autograd.grad(chain(x, w).sum(), x)[0].numpy(), rtol=1e-5)
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        g.sum().backward()


def test_no_grad_call_traces_forward_only():
    cf = torch.compile(rms)
    x = torch.randn(4, 8, requires_grad=True)
    with torch.no_grad():
        y = cf(x, torch.randn(8))
    assert y.grad_fn is None and cf.last_entry.backward is None


def test_outputs_that_alias_or_repeat_go_through_the_function_node():
    """An output that is an input, or one value returned twice: the node is
    recorded by autograd.Function, which detaches and copies as PyTorch does."""
    x = torch.randn(3, 4, requires_grad=True)

    def twice(t):
        y = t * 2
        return y, y

    a, b = torch.compile(twice)(x)
    (a.sum() + b.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 4), 4.0))
    x.grad = None
    out, same = torch.compile(lambda t: (t.sin(), t))(x)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-6)


def test_retain_graph_and_freed_graph():
    x = torch.randn(4, 8, requires_grad=True)
    w = torch.randn(8, requires_grad=True)
    y = torch.compile(rms)(x, w)
    g = torch.randn(4, 8)
    y.backward(g, retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward(g)
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-6)
    with pytest.raises(RuntimeError):
        y.backward(g)


def test_gradient_of_one_input_only():
    x = torch.randn(4, 8, requires_grad=True)
    w = torch.randn(8)
    y = torch.compile(rms)(x, w)
    (gx,) = torch.autograd.grad(y.sum(), x)
    (ex,) = torch.autograd.grad(rms(x, w).sum(), x)
    np.testing.assert_allclose(gx.numpy(), ex.numpy(), rtol=2e-5, atol=2e-6)


def test_reduction_then_mean_backward():
    """mean's backward expands its gradient and divides it, alone: the divide
    runs as an operator, so it must keep reading the expand (not the 0-dim
    gradient it came from)"""
    def f(x):
        return (x * 2).amax(1).mean()

    def g(x):
        return (x * 2).amax(1).mean() * 3 + x.sum()

    for fn, shape in ((f, (2, 6)), (g, (3, 5))):
        x = torch.randn(*shape, requires_grad=True)
        torch.compile(fn)(x).backward()
        ref = x.detach().clone().requires_grad_()
        fn(ref).backward()
        np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-6)


def _warm(cf, x, w):
    """one forward + backward: the backward plan exists (and, on the C path, its program)"""
    cf(x, w).sum().backward()
    x.grad = w.grad = None


def _count_python_applies(monkeypatch) -> list:
    calls = []
    orig = api._CompiledNode._tl_node_apply

    def counted(self, node, grads_in, grads_out):
        calls.append(1)
        return orig(self, node, grads_in, grads_out)
    monkeypatch.setattr(api._CompiledNode, "_tl_node_apply", counted)
    return calls


@pytest.mark.parametrize("fn", [rms, softmax, chain], ids=lambda f: f.__name__)
def test_c_program_backward_runs_without_python(fn, node_maker, monkeypatch):
    """After the first backward plans it, the backward program runs from the
    node's C apply; gradients equal the Python plan's bit for bit."""
    torch.compiler.reset()
    cf = torch.compile(fn)
    x, w = torch.randn(5, 9, requires_grad=True), torch.randn(9, requires_grad=True)
    _warm(cf, x, w)
    calls = _count_python_applies(monkeypatch)
    g = torch.randn(5, 9)
    cf(x, w).backward(g)
    gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
    if node_maker == "c-program":
        assert cf.last_entry.plan.program is not None and cf.last_entry.backward.plan.program is not None
        assert calls == []
        x.grad = w.grad = None
        monkeypatch.setattr(api, "_call_compiled_c", None)     # the Python plans: the reference
        cf(x, w).backward(g)
        np.testing.assert_array_equal(x.grad.numpy(), gx)
        np.testing.assert_array_equal(w.grad.numpy(), gw)
    else:
        assert calls == [1]


def test_c_program_falls_back_to_python_where_it_must(node_maker, monkeypatch):
    """An undefined incoming gradient (an output the loss does not use), and a
    torch-function mode active during backward: the Python apply runs."""
    if node_maker != "c-program":
        pytest.skip("the C program's fallbacks")
    torch.compiler.reset()

    def two(x, w):
        return (x * w).sin(), (x + w).exp()

    cf = torch.compile(two)
    x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4, requires_grad=True)
    a, b = cf(x, w)
    (a.sum() + b.sum()).backward()
    calls = _count_python_applies(monkeypatch)
    x.grad = w.grad = None
    a, b = cf(x, w)
    a.sum().backward()                       # b's gradient is undefined: zeros, in Python
    assert calls == [1]
    np.testing.assert_allclose(x.grad.numpy(), (w * x.detach()).cos().numpy() * w.detach().numpy(), rtol=1e-6)

    from torchlet.overrides import TorchFunctionMode
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    a, b = cf(x, w)
    with Log():
        (a.sum() + b.sum()).backward()
    assert len(calls) == 2


def test_c_program_apply_checks_saved_versions(node_maker):
    """The version check on a saved input, raised from the C apply."""
    torch.compiler.reset()
    cf = torch.compile(rms)
    x, w = torch.randn(4, 8, requires_grad=True), torch.randn(8, requires_grad=True)
    _warm(cf, x * 1.0, w)
    a = x * 1.0
    y = cf(a, w)
    with torch.no_grad():
        a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_c_program_outputs_and_empty_inputs(node_maker):
    """Results that are inputs keep their identity; a view result; an empty
    row (the Python form's operator-by-operator path) and a non-contiguous
    input (made contiguous there) give eager's values."""
    torch.compiler.reset()
    with torch.no_grad():
        x = torch.randn(4, 6)
        out = torch.compile(lambda t: (t, (t * 2).view(24)))(x)
        assert out[0] is x and out[1].shape == (24,)
        np.testing.assert_array_equal(out[1].numpy(), (x * 2).numpy().reshape(24))
    cf = torch.compile(softmax)
    for shape in ((3, 0), (0, 5)):
        x, w = torch.randn(*shape, requires_grad=True), torch.randn(shape[1], requires_grad=True)
        y = cf(x, w)
        assert y.shape == shape
        y.sum().backward()
        assert x.grad.shape == shape
    xt = torch.randn(7, 5).t().requires_grad_(True)
    w = torch.randn(7, requires_grad=True)
    y = cf(xt, w)
    np.testing.assert_allclose(y.detach().numpy(), softmax(xt, w).detach().numpy(), rtol=1e-6)


def test_output_the_backward_reads_through_an_identity_op():
    """exp's backward reads conj(result), and conj of a real tensor returns
    the same object: the function's second output must stay the forward's
    exp (it named the backward's conj node, which the forward never ran)"""
    torch.compiler.reset()

    def two(x, w):
        return (x * w).sin(), (x + w).exp()

    x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4, requires_grad=True)
    a, b = torch.compile(two)(x, w)
    np.testing.assert_allclose(b.detach().numpy(), np.exp(x.detach().numpy() + w.detach().numpy()), rtol=1e-6)
    (a.sum() + b.sum()).backward()
    ea, eb = two(xe := x.detach().requires_grad_(True), we := w.detach().requires_grad_(True))
    (ea.sum() + eb.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), we.grad.numpy(), rtol=1e-6)


def test_compiled_graph_lifetime(node_maker):
    """A compiled function's entries are collected once no one uses them (the
    C node's Python apply is held only while nodes exist), and a graph
    outlives the compiled function that made it."""
    import gc
    import weakref

    from torchlet.autograd import function as fn_mod
    torch.compiler.reset()
    gc.collect()
    before = len(fn_mod._live)
    x, w = torch.randn(4, 8, requires_grad=True), torch.randn(8, requires_grad=True)
    entries = []
    for _ in range(3):
        cf = torch.compile(rms)
        for _ in range(2):
            cf(x, w).sum().backward()
        entries.append(weakref.ref(cf.last_entry))
        del cf
    gc.collect()
    assert [e() for e in entries] == [None, None, None]
    assert len(fn_mod._live) == before
    x.grad = None
    y = torch.compile(rms)(x, w)       # the compiled function is gone before backward
    gc.collect()
    y.sum().backward()
    (ex,) = torch.autograd.grad(rms(x, w).sum(), x)
    np.testing.assert_allclose(x.grad.numpy(), ex.numpy(), rtol=2e-5, atol=2e-6)
