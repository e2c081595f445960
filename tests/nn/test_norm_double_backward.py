"""Second derivatives of batch and group normalization
(native_batch_norm_backward's derivative, PyTorch's
batchnorm_double_backward; native_group_norm_backward's): float64
gradgradchecks (finite differences of the first derivative) in training and
evaluation mode, with and without affine parameters, instance_norm through
batch norm; double-backward values against torch where installed."""
import sys
from pathlib import Path

import numpy as np
import pytest

import torchlet
import torchlet.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from _gradcheck_util import gradcheck, gradgradcheck  # noqa: E402

R = np.random.default_rng(20261205)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (2, 3, 2, 3)])
def test_batch_norm_gradgradcheck_affine(training, shape):
    C = shape[1]
    rm = torchlet.tensor(R.standard_normal(C))
    rv = torchlet.tensor(R.uniform(0.5, 2.0, C))
    x, w, b = R.standard_normal(shape), R.uniform(0.5, 1.5, C), R.standard_normal(C)
    assert gradgradcheck(lambda x, w, b: F.batch_norm(x, rm.clone(), rv.clone(), w, b, training, 0.1, 1e-5),
                         [x, w, b])


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradgradcheck_no_affine(training):
    rm = torchlet.zeros(3, dtype=torchlet.float64)
    rv = torchlet.ones(3, dtype=torchlet.float64)
    x = R.standard_normal((5, 3, 2))
    assert gradgradcheck(lambda x: F.batch_norm(x, rm.clone(), rv.clone(), None, None, training), [x])


def test_batch_norm_no_running_stats_and_instance_norm():
    x, w, b = R.standard_normal((3, 2, 4)), R.uniform(0.5, 1.5, 2), R.standard_normal(2)
    assert gradgradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), [x, w, b])
    assert gradgradcheck(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), [x, w, b])


def test_node_name_and_double_backward_matches_torch():
    torch = pytest.importorskip("torch")
    x0, w0, b0 = R.standard_normal((4, 3, 5)), R.uniform(0.5, 1.5, 3), R.standard_normal(3)
    g0, u0 = R.standard_normal((4, 3, 5)), R.standard_normal((4, 3, 5))
    res = []
    for lib in (torchlet, torch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (x0, w0, b0))
        y = lib.nn.functional.batch_norm(x, None, None, w, b, True)
        gx, gw = lib.autograd.grad(y, [x, w], lib.tensor(g0), create_graph=True)
        if lib is torchlet:
            assert gx.grad_fn.name() == "NativeBatchNormBackwardBackward0"
        (gx * lib.tensor(u0)).sum().add(gw.sum()).backward()
        assert b.grad is None  # grad_input / grad_weight do not depend on the bias
        res.append([t.grad.detach().numpy() for t in (x, w)])
    for a, e in zip(*res):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((3, 6, 2, 2), 3), ((2, 3), 1), ((1, 4, 5), 4)])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_gradgradcheck(shape, groups, affine):
    C = shape[1]
    x = R.standard_normal(shape)
    if affine:
        w, b = R.uniform(0.5, 1.5, C), R.standard_normal(C)
        assert gradgradcheck(lambda x, w, b: F.group_norm(x, groups, w, b), [x, w, b])
    else:
        assert gradgradcheck(lambda x: F.group_norm(x, groups), [x])


def test_group_norm_double_backward_matches_torch():
    torch = pytest.importorskip("torch")
    x0, w0, b0 = R.standard_normal((3, 6, 4)), R.uniform(0.5, 1.5, 6), R.standard_normal(6)
    g0, u0, v0 = R.standard_normal((3, 6, 4)), R.standard_normal((3, 6, 4)), R.standard_normal(6)
    res = []
    for lib in (torchlet, torch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (x0, w0, b0))
        y = lib.nn.functional.group_norm(x, 3, w, b)
        gx, gw, gb = lib.autograd.grad(y, [x, w, b], lib.tensor(g0), create_graph=True)
        ((gx * lib.tensor(u0)).sum() + (gw * lib.tensor(v0)).sum()).backward()
        res.append([t.grad.detach().numpy() for t in (x, w)])
    for a, e in zip(*res):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


def _group_norm_stats(x, w, b, groups=2):
    """native_group_norm's three outputs weighted into one loss (mean and rstd are differentiable)."""
    N, C = x.shape[0], x.shape[1]
    y, mean, rstd = torchlet.native_group_norm(x, w, b, N, C, int(np.prod(x.shape[2:])), groups, 1e-5)
    return (y * y).sum() + (mean * 3.0).sum() + (rstd * rstd).sum()


def test_group_norm_gradients_through_mean_and_rstd_gradcheck():
    # with all three outputs' gradients the statistics' terms are the true derivative
    x, w, b = R.standard_normal((2, 4, 3)), R.uniform(0.5, 1.5, 4), R.standard_normal(4)
    assert gradcheck(_group_norm_stats, [x, w, b])
    assert gradgradcheck(_group_norm_stats, [x, w, b])


@pytest.mark.parametrize("outputs", [(0,), (0, 1), (0, 2), (0, 1, 2), (1, 2), (1,), (2,)])
def test_group_norm_output_gradients_match_torch(outputs):
    # PyTorch's infinitely_differentiable_native_group_norm_backward adds mean's and rstd's
    # terms only when both have gradients (one alone is dropped; alone, no input gradient)
    torch = pytest.importorskip("torch")
    x0, w0, b0 = R.standard_normal((3, 6, 4)), R.uniform(0.5, 1.5, 6), R.standard_normal(6)
    gs = [R.standard_normal((3, 6, 4)), R.standard_normal((3, 3)), R.standard_normal((3, 3))]
    res = []
    for lib in (torchlet, torch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (x0, w0, b0))
        out = lib.native_group_norm(x, w, b, 3, 6, 4, 3, 1e-5)
        loss = sum((out[i] * lib.tensor(gs[i])).sum() for i in outputs)
        res.append(lib.autograd.grad(loss, [x, w, b], allow_unused=True))
    for a, e in zip(*res):
        assert (a is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(a.detach().numpy(), e.detach().numpy(), rtol=1e-10, atol=1e-12)
