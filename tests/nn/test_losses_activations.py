"""Activations (hardswish, hardsigmoid, threshold, relu6, selu, celu,
log_sigmoid, softshrink, hardshrink, tanhshrink, softsign, softmin, glu,
prelu, rrelu) and losses (l1, smooth_l1, huber, binary_cross_entropy (+ with
logits), kl_div, poisson / gaussian nll, margin ranking, hinge embedding,
soft margin, multilabel soft margin, cosine embedding, triplet margin, multi
margin) of torchlet.nn.functional and their nn modules: values against numpy
references (always), float64 gradchecks (the YAML derivatives and the
composites), reductions none / mean / sum, weights, PyTorch's errors and
warnings, and values and gradients beside torch where installed."""
import math
import warnings

import numpy as np
import pytest

import torchlet as tl
import torchlet.nn as nn
import torchlet.nn.functional as F
from torchlet.autograd import gradcheck, gradgradcheck

R = np.random.default_rng(2026)


def T(a, dtype=tl.float64, requires_grad=False):
    t = tl.from_numpy(np.array(a, dtype=np.float64)).to(dtype)
    return t.requires_grad_() if requires_grad else t


def N(t):
    return t.detach().to(tl.float64).numpy()


def close(t, ref, tol=1e-10):
    np.testing.assert_allclose(N(t), ref, rtol=tol, atol=tol)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def log_sigmoid(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def reduce_np(v, reduction):
    return {"none": v, "mean": v.mean(), "sum": v.sum()}[reduction]


# data away from the kinks (|x| = 3, +-lambd, threshold) so finite differences are smooth
def smooth_data(shape, kinks=(-3.0, 3.0, -0.5, 0.5, 0.0, 0.1, 6.0)):
    x = R.uniform(-5, 7, size=shape)
    for k in kinks:
        x = np.where(np.abs(x - k) < 0.02, x + 0.05, x)
    return x


# ------------------------------------------------------------ activations

ACT_NP = {
    "hardswish": (lambda x: F.hardswish(x), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), lambda x: np.clip(x + 3, 0, 6) / 6),
    "relu6": (lambda x: F.relu6(x), lambda x: np.clip(x, 0, 6)),
    "threshold": (lambda x: F.threshold(x, 0.1, 20.0), lambda x: np.where(x <= 0.1, 20.0, x)),
    "selu": (lambda x: F.selu(x), lambda x: 1.0507009873554804934193349852946 * np.where(
        x > 0, x, 1.6732632423543772848170429916717 * np.expm1(x))),
    "celu": (lambda x: F.celu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x / 0.7))),
    "logsigmoid": (lambda x: F.logsigmoid(x), log_sigmoid),
    "softshrink": (lambda x: F.softshrink(x, 0.5),
                   lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0.0))),
    "hardshrink": (lambda x: F.hardshrink(x, 0.5), lambda x: np.where(np.abs(x) <= 0.5, 0.0, x)),
    "tanhshrink": (lambda x: F.tanhshrink(x), lambda x: x - np.tanh(x)),
    "softsign": (lambda x: F.softsign(x), lambda x: x / (1 + np.abs(x))),
    "softmin": (lambda x: F.softmin(x, dim=-1), lambda x: np.exp(-x) / np.exp(-x).sum(-1, keepdims=True)),
    "glu": (lambda x: F.glu(x, -1), lambda x: x[..., :x.shape[-1] // 2] * sigmoid(x[..., x.shape[-1] // 2:])),
    "rrelu_eval": (lambda x: F.rrelu(x, 0.1, 0.3), lambda x: np.where(x >= 0, x, 0.2 * x)),
}


@pytest.mark.parametrize("name", sorted(ACT_NP))
@pytest.mark.parametrize("shape", [(7, 10), (3, 4, 6), (0, 4)])
def test_activation_values_numpy(name, shape):
    x = smooth_data(shape)
    fn, ref = ACT_NP[name]
    close(fn(T(x)), ref(x))
    # float32 and a non-contiguous view
    xt = T(x.T.copy(), tl.float32).t() if len(shape) == 2 else T(x, tl.float32)
    close(fn(xt), ref(N(xt)), tol=2e-6)


@pytest.mark.parametrize("name", sorted(ACT_NP))
def test_activation_gradcheck(name):
    x = T(smooth_data((3, 6)), requires_grad=True)
    assert gradcheck(ACT_NP[name][0], (x,))


@pytest.mark.parametrize("name", ["hardswish", "logsigmoid", "celu", "selu", "softsign", "glu", "softmin"])
def test_activation_gradgradcheck(name):
    x = T(smooth_data((2, 4)), requires_grad=True)
    assert gradgradcheck(ACT_NP[name][0], (x,))


def test_activation_inplace_and_dtypes():
    x = smooth_data((4, 5))
    for fn, ref in [(F.hardswish, ACT_NP["hardswish"][1]), (F.hardsigmoid, ACT_NP["hardsigmoid"][1]),
                    (F.selu, ACT_NP["selu"][1]), (F.relu6, ACT_NP["relu6"][1])]:
        t = T(x)
        r = fn(t, inplace=True)
        assert r is t
        close(t, ref(x))
    t = T(x)
    assert F.threshold(t, 0.1, 20.0, inplace=True) is t
    close(t, ACT_NP["threshold"][1](x))
    # threshold takes integers; the floating-only kernels raise PyTorch's error
    i = tl.arange(-3, 4)
    assert F.threshold(i, 0, -7).tolist() == [-7, -7, -7, -7, 1, 2, 3]
    with pytest.raises(NotImplementedError, match="\"hardswish_cpu\" not implemented for 'Long'"):
        F.hardswish(i)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.logsigmoid(i)
    # half precision computes in float
    h = F.hardsigmoid(T(x, tl.bfloat16))
    assert h.dtype == tl.bfloat16
    close(h, ACT_NP["hardsigmoid"][1](N(T(x, tl.bfloat16))), tol=1e-2)


def test_activation_nan_and_errors():
    x = T([float("nan"), -1.0, 2.0])
    for fn in (F.hardswish, F.hardsigmoid, F.logsigmoid, F.softshrink, F.hardshrink):
        assert math.isnan(fn(x)[0].item())
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 1.79769e\+308\] for input dtype Double, "
                                           "but found -1"):
        F.softshrink(x, -1.0)
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 65504\] for input dtype Half"):
        F.softshrink(x.half(), 1e5)
    with pytest.raises(NotImplementedError, match="\"softshrink_check\" not implemented for 'Long'"):
        F.softshrink(tl.arange(3))
    with pytest.raises(RuntimeError, match="ZeroDivisionError: alpha cannot be 0 for CELU"):
        F.celu(x, 0.0)
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(T(1.0))
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 5"):
        F.glu(T(np.ones((2, 5))), 1)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size. Found parameter "
                                           "numbers = 4 and channel size = 3."):
        F.prelu(T(np.ones((2, 3))), T(np.ones(4)))
    with pytest.raises(RuntimeError, match="prelu: Type promoting not supported. Got Double and Float"):
        F.prelu(T(np.ones((2, 3))), T(np.ones(3), tl.float32))
    with pytest.raises(RuntimeError, match="prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"):
        F.prelu(T(np.ones((2, 1))), T(np.ones((1, 1))))


def test_log_sigmoid_forward_buffer_and_grad_fn():
    x = T(smooth_data((5,)), requires_grad=True)
    out, buf = tl._C._nn.log_sigmoid_forward(x)
    assert tuple(buf.shape) == (0,)
    close(out, log_sigmoid(N(x)))
    assert type(F.logsigmoid(x).grad_fn).__name__.startswith("LogSigmoid")
    assert type(F.celu(x).grad_fn).__name__ == "CeluBackward0"
    assert type(F.selu(x).grad_fn).__name__ == "EluBackward0"
    assert type(F.hardswish(x).grad_fn).__name__ == "HardswishBackward0"
    assert type(F.glu(x[:4]).grad_fn).__name__ == "GluBackward0"
    assert type(F.prelu(x, T([0.1])).grad_fn).__name__ == "PreluKernelBackward0"


def test_prelu_values_and_gradcheck():
    x = smooth_data((2, 3, 4))
    w = np.array([0.25, -0.5, 1.5])
    ref = np.where(x > 0, x, w.reshape(3, 1) * x)
    close(F.prelu(T(x), T(w)), ref)
    close(F.prelu(T(x), T([0.3])), np.where(x > 0, x, 0.3 * x))
    assert gradcheck(F.prelu, (T(x, requires_grad=True), T(w, requires_grad=True)))
    m = nn.PReLU(3)
    assert repr(m) == "PReLU(num_parameters=3)"
    assert np.allclose(N(m.weight), 0.25)


def test_rrelu_training_draws_slopes():
    tl.manual_seed(0)
    x = T(-np.ones(2000))
    y = N(F.rrelu(x, 0.1, 0.3, training=True))
    assert np.all((y <= -0.1 + 1e-12) & (y >= -0.3 - 1e-12))
    assert y.std() > 0.03          # the slopes are drawn, not one value
    pos = T(np.ones(5))
    close(F.rrelu(pos, training=True), np.ones(5))
    m = nn.RReLU(0.1, 0.3)
    m.eval()
    close(m(x), -0.2 * np.ones(2000))
    # rrelu_with_noise records the slopes (1 for positive inputs); a seeded generator repeats them
    xs = T(smooth_data((4, 6)), requires_grad=True)
    noise = tl.empty((4, 6), dtype=tl.float64)
    out = tl._C._nn.rrelu_with_noise(xs, noise, 0.1, 0.3, True, tl.Generator().manual_seed(3))
    nz = N(noise)
    assert nz.shape == (4, 6)
    xv = N(xs)
    assert np.all(np.where(xv > 0, nz == 1, (nz >= 0.1) & (nz <= 0.3)))
    close(out, xv * nz)
    out2 = tl._C._nn.rrelu_with_noise(xs, tl.empty((4, 6), dtype=tl.float64), 0.1, 0.3, True,
                                      tl.Generator().manual_seed(3))
    with pytest.raises(RuntimeError, match=r"noise tensor shape must match self tensor shape. Got self.shape = "
                                           r"\[4, 6\] noise.shape = \[0\]"):
        tl._C._nn.rrelu_with_noise(xs, tl.empty(0, dtype=tl.float64), 0.1, 0.3, True)
    close(out2, N(out))
    out.sum().backward()
    close(xs.grad, nz)
    assert type(out.grad_fn).__name__ == "RreluWithNoiseBackward0"
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(x, 0.5, 0.1)
    y = T(-np.ones(6))
    assert F.rrelu(y, training=True, inplace=True) is y


# ----------------------------------------------------------------- losses

def bce_np(x, y, w=None):
    v = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))
    return v if w is None else v * w


def smooth_l1_np(x, y, beta):
    z = np.abs(x - y)
    return np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)


def huber_np(x, y, delta):
    z = np.abs(x - y)
    return np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))


def loss_data(shape=(4, 5)):
    x = R.standard_normal(shape)
    y = R.standard_normal(shape)
    p = R.uniform(0.05, 0.95, size=shape)
    t01 = R.uniform(0, 1, size=shape)
    sgn = np.where(R.standard_normal(shape) > 0, 1.0, -1.0)
    return x, y, p, t01, sgn


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_pointwise_losses_numpy(reduction):
    x, y, p, t01, sgn = loss_data()
    w = R.uniform(0.5, 2, size=(5,))
    cases = [
        (F.l1_loss(T(x), T(y), reduction=reduction), np.abs(x - y)),
        (F.smooth_l1_loss(T(x), T(y), reduction=reduction, beta=0.7), smooth_l1_np(x, y, 0.7)),
        (F.smooth_l1_loss(T(x), T(y), reduction=reduction, beta=0.0), np.abs(x - y)),
        (F.huber_loss(T(x), T(y), reduction=reduction, delta=0.6), huber_np(x, y, 0.6)),
        (F.soft_margin_loss(T(x), T(sgn), reduction=reduction), np.log1p(np.exp(-sgn * x))),
        (F.binary_cross_entropy(T(p), T(t01), reduction=reduction), bce_np(p, t01)),
        (F.binary_cross_entropy(T(p), T(t01), weight=T(w), reduction=reduction), bce_np(p, t01, w)),
        (F.binary_cross_entropy_with_logits(T(x), T(t01), reduction=reduction),
         -(t01 * log_sigmoid(x) + (1 - t01) * log_sigmoid(-x))),
        (F.binary_cross_entropy_with_logits(T(x), T(t01), weight=T(w), pos_weight=T(w * 2), reduction=reduction),
         -(2 * w * t01 * log_sigmoid(x) + (1 - t01) * log_sigmoid(-x)) * w),
        (F.kl_div(T(x), T(p), reduction=reduction, log_target=False) if reduction != "mean" else
         F.kl_div(T(x), T(p), reduction="sum") / x.size, p * (np.log(p) - x)),
        (F.kl_div(T(x), T(y), reduction="sum" if reduction == "mean" else reduction, log_target=True)
         / (x.size if reduction == "mean" else 1), np.exp(y) * (y - x)),
        (F.poisson_nll_loss(T(x), T(np.abs(y) * 3), reduction=reduction), np.exp(x) - np.abs(y) * 3 * x),
        (F.margin_ranking_loss(T(x), T(y), T(sgn), margin=0.2, reduction=reduction),
         np.maximum(0, -sgn * (x - y) + 0.2)),
        (F.hinge_embedding_loss(T(x), T(sgn), margin=0.5, reduction=reduction),
         np.where(sgn == 1, x, np.maximum(0, 0.5 - x))),
    ]
    for got, ref in cases:
        close(got, reduce_np(ref, reduction))


def test_l1_and_huber_weight_and_broadcast_warning():
    x, y, *_ = loss_data()
    w = R.uniform(0.5, 2, size=x.shape)
    close(F.l1_loss(T(x), T(y), weight=T(w)), (np.abs(x - y) * w).sum() / w.sum())
    close(F.huber_loss(T(x), T(y), weight=T(w), reduction="sum"), (huber_np(x, y, 1.0) * w).sum())
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        F.l1_loss(T(x), T(y), weight=T(w[0]))
    with pytest.warns(UserWarning, match="Using a target size"):
        r = F.l1_loss(T(x), T(y[0]), reduction="none")
    close(r, np.abs(x - y[0]))
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        F.smooth_l1_loss(T(x), T(np.ones(3)))


def test_loss_errors_and_legacy_reduction():
    x, y, p, t01, sgn = loss_data()
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.l1_loss(T(x), T(y), reduction="avg")
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(T(x), T(t01))
    with pytest.raises(ValueError, match="Using a target size .* is deprecated"):
        F.binary_cross_entropy(T(p), T(t01[0]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(T(x), T(t01[0]))
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta."):
        F.smooth_l1_loss(T(x), T(y), beta=-1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta."):
        F.huber_loss(T(x), T(y), delta=0.0)
    with pytest.raises(NotImplementedError, match="\"smooth_l1_cpu\" not implemented for 'Long'"):
        tl._C._nn.smooth_l1_loss(tl.arange(3), tl.arange(3), 1, 1.0)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        r = F.l1_loss(T(x), T(y), size_average=False)
    close(r, np.abs(x - y).sum())
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(T(x), T(p))
    close(F.kl_div(T(x), T(p), reduction="batchmean"), (p * (np.log(p) - x)).sum() / x.shape[0])
    # PyTorch's xlogy: a zero target contributes 0
    close(F.kl_div(T([0.3]), T([0.0]), reduction="sum"), 0.0)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0.0)


def test_bce_extremes_clamped():
    r = F.binary_cross_entropy(T([0.0, 1.0, 1.0]), T([1.0, 0.0, 1.0]), reduction="none")
    close(r, [100.0, 100.0, 0.0])


def test_composite_losses_numpy():
    x, y, p, t01, sgn = loss_data((6, 4))
    var = R.uniform(0.2, 2, size=x.shape)
    ref = 0.5 * (np.log(var) + (x - y) ** 2 / var)
    close(F.gaussian_nll_loss(T(x), T(y), T(var)), ref.mean())
    close(F.gaussian_nll_loss(T(x), T(y), T(var[:, 0]), full=True, reduction="sum"),
          (0.5 * (np.log(var[:, :1]) + (x - y) ** 2 / var[:, :1]) + 0.5 * math.log(2 * math.pi)).sum())
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(T(x), T(y), T(-var))
    w = R.uniform(0.5, 2, size=(4,))
    ml = -(t01 * log_sigmoid(x) + (1 - t01) * log_sigmoid(-x)) * w
    close(F.multilabel_soft_margin_loss(T(x), T(t01), weight=T(w), reduction="none"), ml.mean(1))
    tgt = np.where(R.standard_normal(6) > 0, 1.0, -1.0)
    cos = (x * y).sum(1) / np.sqrt(((x * x).sum(1) + 1e-12) * ((y * y).sum(1) + 1e-12))
    close(F.cosine_embedding_loss(T(x), T(y), T(tgt), margin=0.1, reduction="none"),
          np.where(tgt == 1, 1 - cos, np.maximum(0, cos - 0.1)))
    a, pz, n = x, y, R.standard_normal(x.shape)
    d = lambda u, v: np.sqrt(((u - v + 1e-6) ** 2).sum(-1))  # noqa: E731
    close(F.triplet_margin_loss(T(a), T(pz), T(n), margin=0.5), np.maximum(0, 0.5 + d(a, pz) - d(a, n)).mean())
    close(F.triplet_margin_loss(T(a), T(pz), T(n), swap=True, reduction="sum"),
          np.maximum(0, 1.0 + d(a, pz) - np.minimum(d(a, n), d(pz, n))).sum())
    cls = R.integers(0, 4, size=6)
    mw = R.uniform(0.5, 2, size=4)
    for pp in (1, 2):
        z = np.maximum(0, 1.0 - x[np.arange(6), cls][:, None] + x) ** pp * mw[cls][:, None]
        z[np.arange(6), cls] = 0
        close(F.multi_margin_loss(T(x), tl.from_numpy(cls), p=pp, weight=T(mw), reduction="none"), z.sum(1) / 4)
    st = np.abs(y) * 3 + 0.5
    full = np.exp(x) - st * x + np.where(st > 1, st * np.log(st) - st + 0.5 * np.log(2 * np.pi * st), 0)
    close(F.poisson_nll_loss(T(x), T(st), full=True, reduction="none"), full)
    close(F.poisson_nll_loss(T(p), T(st), log_input=False, reduction="sum"), (p - st * np.log(p + 1e-8)).sum())


LOSS_GRAD = {
    "l1": lambda x, y: F.l1_loss(x, y),
    "smooth_l1": lambda x, y: F.smooth_l1_loss(x, y, beta=0.5, reduction="sum"),
    "huber": lambda x, y: F.huber_loss(x, y, delta=0.8, reduction="none"),
    "soft_margin": lambda x, y: F.soft_margin_loss(x, y.detach().sign()),  # no target derivative (PyTorch)
    "bce": lambda x, y: F.binary_cross_entropy(tl.sigmoid(x), tl.sigmoid(y), weight=T(np.arange(1.0, 6.0))),
    "bce_logits": lambda x, y: F.binary_cross_entropy_with_logits(x, tl.sigmoid(y), pos_weight=T([2.0] * 5)),
    "kl_div": lambda x, y: F.kl_div(x, tl.sigmoid(y), reduction="batchmean"),
    "kl_div_log": lambda x, y: F.kl_div(x, y, reduction="sum", log_target=True),
    "poisson": lambda x, y: F.poisson_nll_loss(x, y.abs() + 2, full=True),
    "gaussian": lambda x, y: F.gaussian_nll_loss(x, y, y.abs() + 0.5),
    "margin_ranking": lambda x, y: F.margin_ranking_loss(x, y, T(np.sign(np.arange(20.0).reshape(4, 5) - 9.5))),
    "multilabel": lambda x, y: F.multilabel_soft_margin_loss(x, tl.sigmoid(y)),
    "cosine": lambda x, y: F.cosine_embedding_loss(x, y, T([1.0, -1.0, 1.0, -1.0]), margin=-0.9),
    "triplet": lambda x, y: F.triplet_margin_loss(x, y, x * 0.3 - 1, margin=4.0),
    "multi_margin": lambda x, y: F.multi_margin_loss(x, tl.from_numpy(np.array([0, 3, 1, 4])), p=2, margin=3.0),
}


@pytest.mark.parametrize("name", sorted(LOSS_GRAD))
def test_loss_gradcheck(name):
    x = T(R.standard_normal((4, 5)), requires_grad=True)
    y = T(R.standard_normal((4, 5)) * 2, requires_grad=True)
    assert gradcheck(LOSS_GRAD[name], (x, y))


@pytest.mark.parametrize("name", ["smooth_l1", "huber", "soft_margin", "bce", "l1"])
def test_loss_gradgradcheck(name):
    x = T(R.standard_normal((4, 5)), requires_grad=True)
    y = T(R.standard_normal((4, 5)) * 2, requires_grad=True)
    assert gradgradcheck(LOSS_GRAD[name], (x, y))


def test_loss_grad_fn_names():
    x = T(R.uniform(0.1, 0.9, (3,)), requires_grad=True)
    y = T(R.uniform(0.1, 0.9, (3,)))
    assert type(F.smooth_l1_loss(x, y).grad_fn).__name__ == "SmoothL1LossBackward0"
    assert type(F.huber_loss(x, y).grad_fn).__name__ == "HuberLossBackward0"
    assert type(F.binary_cross_entropy(x, y).grad_fn).__name__ == "BinaryCrossEntropyBackward0"
    assert type(F.soft_margin_loss(x, y).grad_fn).__name__ == "SoftMarginLossBackward0"


def test_nll_and_cross_entropy_weight_ignore_index_label_smoothing():
    x = R.standard_normal((6, 4))
    t = np.array([0, 3, -100, 2, 1, 3])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    lp = x - np.log(np.exp(x).sum(1, keepdims=True))
    keep = t != -100
    tk = t[keep]
    nll = -lp[keep, tk] * w[tk]
    close(F.cross_entropy(T(x), tl.from_numpy(t), weight=T(w)), nll.sum() / w[tk].sum())
    close(nn.NLLLoss(weight=T(w), reduction="sum")(T(lp), tl.from_numpy(t)), nll.sum())
    ls = 0.2
    smooth = -(lp[keep] * w).sum(1)
    ref = ((1 - ls) * nll.sum() + ls / 4 * smooth.sum()) / w[tk].sum()
    close(nn.CrossEntropyLoss(weight=T(w), label_smoothing=ls)(T(x), tl.from_numpy(t)), ref)
    probs = np.exp(R.standard_normal((6, 4)))
    probs /= probs.sum(1, keepdims=True)
    close(F.cross_entropy(T(x), T(probs)), -(lp * probs).sum(1).mean())


# ------------------------------------------------------------------ modules

def test_module_reprs_and_forward():
    cases = [
        (nn.Hardswish(), "Hardswish()"), (nn.Hardsigmoid(True), "Hardsigmoid()"),
        (nn.Threshold(0.1, 20), "Threshold(threshold=0.1, value=20)"), (nn.ReLU6(True), "ReLU6(inplace=True)"),
        (nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"), (nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
        (nn.ELU(inplace=True), "ELU(alpha=1.0, inplace=True)"), (nn.CELU(), "CELU(alpha=1.0)"),
        (nn.SELU(), "SELU()"), (nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"), (nn.Mish(), "Mish()"),
        (nn.LogSigmoid(), "LogSigmoid()"), (nn.Softshrink(), "Softshrink(0.5)"), (nn.Hardshrink(), "Hardshrink(0.5)"),
        (nn.Tanhshrink(), "Tanhshrink()"), (nn.Softsign(), "Softsign()"), (nn.Softmin(1), "Softmin(dim=1)"),
        (nn.GLU(), "GLU(dim=-1)"), (nn.RReLU(), "RReLU(lower=0.125, upper=0.3333333333333333)"),
        (nn.L1Loss(), "L1Loss()"), (nn.BCEWithLogitsLoss(), "BCEWithLogitsLoss()"), (nn.KLDivLoss(), "KLDivLoss()"),
        (nn.TripletMarginLoss(), "TripletMarginLoss()"), (nn.HuberLoss(), "HuberLoss()"),
    ]
    for m, r in cases:
        assert repr(m) == r
    x = smooth_data((3, 4))
    close(nn.Sequential(nn.Hardswish(), nn.Softshrink(0.5))(T(x)), ACT_NP["softshrink"][1](ACT_NP["hardswish"][1](x)))
    with pytest.raises(AssertionError, match="must be greater than min_val"):
        nn.Hardtanh(1.0, 0.0)
    bce = nn.BCEWithLogitsLoss(weight=T(np.ones(4)), pos_weight=T(np.full(4, 3.0)))
    assert set(dict(bce.named_buffers())) == {"weight", "pos_weight"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nn.SmoothL1Loss(beta=0.5).beta == 0.5
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert nn.L1Loss(reduce=False).reduction == "none"


# -------------------------------------------------------------------- torch

TORCH_CASES = [
    ("hardswish", lambda M, x, y: M.hardswish(x)),
    ("hardsigmoid", lambda M, x, y: M.hardsigmoid(x)),
    ("threshold", lambda M, x, y: M.threshold(x, 0.1, -2.0)),
    ("relu6", lambda M, x, y: M.relu6(x)),
    ("selu", lambda M, x, y: M.selu(x)),
    ("celu", lambda M, x, y: M.celu(x, 0.3)),
    ("logsigmoid", lambda M, x, y: M.logsigmoid(x)),
    ("softshrink", lambda M, x, y: M.softshrink(x, 0.4)),
    ("hardshrink", lambda M, x, y: M.hardshrink(x, 0.4)),
    ("tanhshrink", lambda M, x, y: M.tanhshrink(x)),
    ("softsign", lambda M, x, y: M.softsign(x)),
    ("softmin", lambda M, x, y: M.softmin(x, 0)),
    ("glu", lambda M, x, y: M.glu(x, 0)),
    ("prelu", lambda M, x, y: M.prelu(x, y[0].abs())),
    ("rrelu_eval", lambda M, x, y: M.rrelu(x, 0.2, 0.45)),
    ("prelu_scalar", lambda M, x, y: M.prelu(x.t(), y[0, :1])),
    ("l1", lambda M, x, y: M.l1_loss(x, y)),
    ("smooth_l1", lambda M, x, y: M.smooth_l1_loss(x, y, beta=0.3, reduction="sum")),
    ("huber", lambda M, x, y: M.huber_loss(x, y, delta=0.4, reduction="none")),
    ("soft_margin", lambda M, x, y: M.soft_margin_loss(x, y.detach())),  # target: not differentiable
    ("bce", lambda M, x, y: M.binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduction="sum")),
    ("bce_logits", lambda M, x, y: M.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=y[0].detach().abs())),
    ("kl_div", lambda M, x, y: M.kl_div(x, y.sigmoid(), reduction="batchmean")),
    ("kl_div_log", lambda M, x, y: M.kl_div(x, y, reduction="none", log_target=True)),
    ("poisson", lambda M, x, y: M.poisson_nll_loss(x, y.abs() + 1, full=True)),
    ("gaussian", lambda M, x, y: M.gaussian_nll_loss(x, y, y.abs() + 0.1, full=True)),
    ("margin_ranking", lambda M, x, y: M.margin_ranking_loss(x, y, (y > 0).to(x.dtype) * 2 - 1, margin=0.1)),
    ("hinge", lambda M, x, y: M.hinge_embedding_loss(x, (y > 0).to(x.dtype) * 2 - 1)),
    ("multilabel", lambda M, x, y: M.multilabel_soft_margin_loss(x, y.sigmoid())),
    ("cosine", lambda M, x, y: M.cosine_embedding_loss(x, y, (y[:, 0] > 0).to(x.dtype) * 2 - 1)),
    ("triplet", lambda M, x, y: M.triplet_margin_loss(x, y, x.flip(0), p=3, swap=True)),
]


@pytest.mark.parametrize("name,fn", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_against_torch(name, fn):
    torch = pytest.importorskip("torch")
    x = smooth_data((6, 5))
    y = R.standard_normal((6, 5))
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    lx, ly = T(x, requires_grad=True), T(y, requires_grad=True)
    r_t, r_l = fn(torch.nn.functional, tx, ty), fn(F, lx, ly)
    close(r_l, r_t.detach().numpy(), tol=1e-10)
    g = R.standard_normal(tuple(r_t.shape))
    r_t.backward(torch.tensor(g))
    r_l.backward(T(g))
    close(lx.grad, tx.grad.numpy(), tol=1e-9)
    if ty.grad is not None:
        close(ly.grad, ty.grad.numpy(), tol=1e-9)


def test_multi_margin_and_modules_against_torch():
    torch = pytest.importorskip("torch")
    x = R.standard_normal((5, 4))
    t = np.array([0, 3, 2, 2, 1])
    w = R.uniform(0.5, 2, 4)
    for p in (1, 2):
        for red in ("none", "mean", "sum"):
            a = F.multi_margin_loss(T(x), tl.from_numpy(t), p=p, margin=0.7, weight=T(w), reduction=red)
            b = torch.nn.functional.multi_margin_loss(torch.tensor(x), torch.tensor(t), p=p, margin=0.7,
                                                      weight=torch.tensor(w), reduction=red)
            close(a, b.numpy())
    for name in ("Hardswish", "SELU", "Softsign", "LogSigmoid", "Tanhshrink"):
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())
