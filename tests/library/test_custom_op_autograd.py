"""register_autograd: a custom operator's backward as a node of the C engine."""
import numpy as np
import pytest

import torchlet as tl
from torchlet import Tensor
from torchlet.autograd import gradcheck, gradgradcheck
from torchlet.library import custom_op, opcheck


def make_cube():
    @custom_op("tca::cube", mutates_args=())
    def cube(x: Tensor, k: float) -> Tensor:
        return x * x * x * k

    def setup(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.k, None     # differentiable: double backward works

    cube.register_autograd(backward, setup_context=setup)
    return cube


def test_no_formula_is_an_error_not_a_silent_zero():
    @custom_op("tca::noauto", mutates_args=())
    def noauto(x: Tensor) -> Tensor:
        return x * 2

    x = tl.ones(3, requires_grad=True)
    y = noauto(x)
    assert y.requires_grad
    assert y.grad_fn.name() == "GeneratedBackwardFor_tca_noauto_defaultBackward"
    with pytest.raises(RuntimeError, match="Trying to backward through tca.noauto.default but no autograd "
                                           "formula was registered. Please use register_autograd to add one."):
        y.sum().backward()
    # without an input that requires grad there is no node at all
    assert noauto(tl.ones(2)).grad_fn is None
    with tl.no_grad():
        assert noauto(x).grad_fn is None


def test_registered_backward_gradcheck_and_double_backward(rng):
    cube = make_cube()
    x = tl.tensor(rng.standard_normal((3, 4)), dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda t: cube(t, 1.5), (x,))
    assert gradgradcheck(lambda t: cube(t, 1.5), (x,))
    y = cube(x, 2.0)
    (g,) = tl.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 6 * x.detach().numpy() ** 2)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 12 * x.detach().numpy())


def test_saved_tensor_version_check():
    cube = make_cube()
    x = tl.ones(3, requires_grad=True)
    h = x * 1.0
    y = cube(h, 1.0)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_needs_input_grad_and_kwarg_only_setup():
    seen = {}

    @custom_op("tca::lin", mutates_args=())
    def lin(x: Tensor, w: Tensor, *, scale: float = 1.0) -> Tensor:
        return x * w * scale

    def setup(ctx, inputs, keyword_only_inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.scale = keyword_only_inputs["scale"]

    def backward(ctx, g):
        x, w = ctx.saved_tensors
        seen["needs"] = ctx.needs_input_grad
        return (g * w * ctx.scale if ctx.needs_input_grad[0] else None,
                g * x * ctx.scale if ctx.needs_input_grad[1] else None)

    lin.register_autograd(backward, setup_context=setup)
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    w = tl.tensor([3.0, 4.0])
    lin(x, w, scale=2.0).sum().backward()
    assert seen["needs"] == (True, False)
    assert x.grad.tolist() == [6.0, 8.0]
    lin(x, w).sum().backward()                # the default of the kwarg-only reaches setup_context
    assert x.grad.tolist() == [9.0, 12.0]


def test_wrong_number_of_gradients():
    @custom_op("tca::two", mutates_args=())
    def two(x: Tensor, y: Tensor) -> Tensor:
        return x + y

    two.register_autograd(lambda ctx, g: g)
    a = tl.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned 1 gradients; expected 2"):
        two(a, a).sum().backward()


def test_mutable_ops_cannot_register_autograd():
    @custom_op("tca::mu", mutates_args={"x", "y"})
    def mu(x: Tensor, y: Tensor) -> None:
        x.add_(1)
        y.add_(1)

    with pytest.raises(RuntimeError, match=r"Cannot register autograd formula for non-functional operator "
                                           r"<CustomOpDef\(tca::mu\)> with schema tca::mu\(Tensor\(a0!\) x, "
                                           r"Tensor\(a1!\) y\) -> \(\)"):
        mu.register_autograd(lambda ctx, g: None)


def test_opcheck_utils():
    cube = make_cube()

    @cube.register_fake
    def _(x, k):
        return tl.empty_like(x)

    x = tl.randn(3, requires_grad=True)
    assert opcheck(cube, (x, 2.0)) == {u: "SUCCESS" for u in
                                       ("test_schema", "test_autograd_registration", "test_faketensor",
                                        "test_aot_dispatch_dynamic")}
    with pytest.raises(ValueError, match="specify both"):
        opcheck(cube, (x, 2.0), atol=1e-3)

    @custom_op("tca::badfake", mutates_args=())
    def badfake(x: Tensor) -> Tensor:
        return x.clone()

    @badfake.register_fake
    def _(x):
        return tl.empty(x.shape[0] + 1)

    r = opcheck(badfake, (tl.ones(3),), raise_exception=False)
    assert "Shapes torchlet.Size([4]) and torchlet.Size([3]) are not equal" in str(r["test_faketensor"])

    @custom_op("tca::noform", mutates_args=())
    def noform(x: Tensor) -> Tensor:
        return x * 2

    noform.register_fake(lambda x: tl.empty_like(x))
    r = opcheck(noform, (tl.ones(2, requires_grad=True),), raise_exception=False)
    assert "no autograd formula was registered" in str(r["test_autograd_registration"])

    @custom_op("tca::lazy", mutates_args={"out"})
    def lazy(out: Tensor) -> None:
        pass                                      # declared as written, never written

    r = opcheck(lazy, (tl.zeros(2),), raise_exception=False)
    assert "declared as mutated (Tensor(a!)) but the operator did not write" in str(r["test_schema"])

    @custom_op("tca::aliasing", mutates_args=(), schema="(Tensor x) -> Tensor")
    def aliasing(x):
        return x.clone()

    from torchlet.library import Library
    with Library("tca2", "DEF") as lib:
        lib.define("v(Tensor x) -> Tensor")
        lib.impl("v", lambda x: x.view(-1), "CPU")
        lib.impl("v", lambda x: tl.empty_like(x).view(-1), "Meta")
        r = opcheck(tl.ops.tca2.v.default, (tl.ones(2, 2),), raise_exception=False)
        assert "Argument x is not defined to alias output but was aliasing" in str(r["test_schema"])
        with pytest.raises(Exception, match=r"opcheck\(op, ...\): test_schema failed with"):
            opcheck(tl.ops.tca2.v.default, (tl.ones(2, 2),))


def test_against_pytorch_custom_op_autograd(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 3))
    outs = []
    for mod in (tl, torch):
        @mod.library.custom_op("tca_vs::cube", mutates_args=())
        def cube(x: mod.Tensor, k: float) -> mod.Tensor:
            return x * x * x * k

        def setup(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.k = inputs[1]

        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x * ctx.k, None

        cube.register_autograd(backward, setup_context=setup)
        x = mod.tensor(a, requires_grad=True)
        y = cube(x, 0.5)
        y.sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    np.testing.assert_allclose(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1])
    assert outs[0][2] == outs[1][2] == "GeneratedBackwardFor_tca_vs_cube_defaultBackward"
