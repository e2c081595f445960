"""Every differentiable operator of yaml/ against finite differences.

The operator list comes from the YAML itself (codegen's model: every
non-out= function whose derivatives.yaml entry, or its group's, names a
backward node, except CompositeImplicitAutograd ones, which differentiate
through their decomposition). Each needs an input builder below, so adding
a derivative without a test fails here. Inputs are float64, with
broadcasting shapes, non-contiguous views and 0-dim tensors where the
operator allows them. Also: second derivatives of add, mul, relu, sum, mm;
grad_fn names; out= / in-place / not-implemented errors; and, when torch is
installed, the gradients compared with torch's on the same inputs.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torchlet = pytest.importorskip("torchlet")
if not hasattr(torchlet._lib, "tl_autograd_register_all"):
    pytest.skip("torchlet built without generated autograd", allow_module_level=True)

from _upsample_cases import UPSAMPLE_CASES  # noqa: E402
from _nn3d_cases import NN3D_CASES  # noqa: E402
from _nn_pad_pool_resample_cases import PAD_POOL_RESAMPLE_CASES  # noqa: E402
from _gradcheck_util import (  # noqa: E402
    backward,
    get_grad,
    grad_fn_name,
    gradcheck,
    gradgradcheck,
    leaf,
    requires_grad,
)

REPO = Path(__file__).resolve().parents[2]
R = np.random.default_rng(1234)


def rn(*shape):
    return R.standard_normal(shape)


def away(*shape):
    """values away from 0 (divisors, relu kinks)"""
    x = R.uniform(0.5, 2.0, shape)
    return x * np.where(R.random(shape) < 0.5, -1.0, 1.0)


def differentiable_ops() -> list[str]:
    from codegen.model import Inputs, load_model

    m = load_model(Inputs(str(REPO / "yaml/native_functions.yaml"), str(REPO / "yaml/derivatives.yaml")))
    names = []
    for f in m.functions:
        if f.func.is_out_fn() or "CompositeImplicitAutograd" in m.kernels(f):
            continue
        e = m.autograd_of(f)
        if e is not None and e.default is not None and e.default.op is not None:
            if all(d.text.startswith("not_implemented(") for d in e.default.derivatives):
                continue  # asinh_ ...: its backward raises (tests/autograd/test_not_implemented.py)
            names.append(str(f.func.name))
    return names


def T(x):
    """a non-contiguous view of x (transposed)"""
    return x.t()


# unary math and activations: their own generator,
# so adding them leaves the other cases' random inputs unchanged
RU = np.random.default_rng(606)


def _un(*shape, lo=None, hi=None, away_int=False):
    if lo is not None:
        return RU.uniform(lo, hi, shape)
    x = RU.standard_normal(shape) * 1.5
    if away_int:  # floor/ceil/trunc/frac/sign: no integer (kink) within reach of the finite differences
        x = np.floor(x) + RU.uniform(0.2, 0.8, shape)
    return x


UNARY_CASES = {}
for _op, _kw in {
    "exp": {}, "exp2": {}, "expm1": {}, "log": {"lo": 0.3, "hi": 3}, "log2": {"lo": 0.3, "hi": 3},
    "log10": {"lo": 0.3, "hi": 3}, "log1p": {"lo": -0.7, "hi": 3}, "sqrt": {"lo": 0.3, "hi": 3},
    "rsqrt": {"lo": 0.3, "hi": 3}, "sin": {}, "cos": {}, "tan": {"lo": -1.2, "hi": 1.2}, "tanh": {},
    "sigmoid": {}, "reciprocal": {"lo": 0.4, "hi": 2}, "erf": {}, "erfc": {}, "abs": {"away_int": True},
    "sign": {"away_int": True}, "floor": {"away_int": True}, "ceil": {"away_int": True},
    "trunc": {"away_int": True}, "frac": {"away_int": True}, "silu": {},
}.items():
    _mod = torchlet._C._nn if _op == "silu" else torchlet   # silu: python_module nn, as in PyTorch
    UNARY_CASES[_op] = [([_un(2, 3, **_kw)], lambda a, _op=_op, _m=_mod: getattr(_m, _op)(T(a))),  # non-contiguous
                        ([_un(**_kw)], lambda a, _op=_op, _m=_mod: getattr(_m, _op)(a))]            # 0-dim
    UNARY_CASES[_op + "_"] = [([_un(3, 2, **_kw)], lambda a, _op=_op: getattr(a.clone(), _op + "_")()
                               if _op != "silu" else torchlet._C._nn.silu_(a.clone()))]

# activations (python_module nn):
# own generator; values away from the kinks (0, the hardtanh bounds -0.5 / 0.8)
RC = np.random.default_rng(6067)


def _ac(*shape):
    x = RC.uniform(0.1, 2.0, shape) * np.where(RC.random(shape) < 0.5, -1.0, 1.0)
    return np.where(np.abs(np.abs(x) - 0.65) < 0.17, x * 1.5, x)


def _nnf():
    return torchlet._C._nn


ACTIVATION_CASES = {
    "leaky_relu": [([_ac(2, 3)], lambda a: _nnf().leaky_relu(T(a), 0.2)), ([_ac()], lambda a: _nnf().leaky_relu(a))],
    "leaky_relu_": [([_ac(3, 2)], lambda a: _nnf().leaky_relu_(a.clone(), 0.3))],
    "leaky_relu_backward": [([_ac(2, 3), _ac(2, 3)], lambda g, x: _nnf().leaky_relu_backward(g, x, 0.2, False))],
    "elu": [([_ac(2, 3)], lambda a: _nnf().elu(T(a), 0.5, 1.5, 2.0)), ([_ac()], lambda a: _nnf().elu(a))],
    "elu_": [([_ac(3, 2)], lambda a: _nnf().elu_(a.clone(), 0.7))],
    "elu_backward": [([_ac(2, 3), _ac(2, 3)], lambda g, x: _nnf().elu_backward(g, 0.5, 1.5, 2.0, False, x)),
                     ([_ac(3), _ac(2, 3)], lambda g, y: _nnf().elu_backward(g, 0.5, 1.0, 2.0, True, y))],
    "gelu": [([_ac(2, 3)], lambda a: _nnf().gelu(T(a))), ([_ac(4)], lambda a: _nnf().gelu(a, approximate="tanh"))],
    "gelu_": [([_ac(3, 2)], lambda a: _nnf().gelu_(a.clone(), approximate="tanh"))],
    "gelu_backward": [([_ac(2, 3), _ac(2, 3)], lambda g, x: _nnf().gelu_backward(g, x)),
                      ([_ac(2, 3), _ac(3, 2)], lambda g, x: _nnf().gelu_backward(g, T(x), approximate="tanh"))],
    "hardtanh": [([_ac(2, 3)], lambda a: _nnf().hardtanh(T(a), -0.5, 0.8)), ([_ac()], lambda a: _nnf().hardtanh(a))],
    "hardtanh_": [([_ac(3, 2)], lambda a: _nnf().hardtanh_(a.clone(), -0.5, 0.8))],
    "hardtanh_backward": [([_ac(2, 3), _ac(2, 3)], lambda g, x: _nnf().hardtanh_backward(g, x, -0.5, 0.8))],
    "mish": [([_ac(2, 3)], lambda a: _nnf().mish(T(a))), ([_ac()], lambda a: _nnf().mish(a))],
    "mish_": [([_ac(3, 2)], lambda a: _nnf().mish_(a.clone()))],
    "softplus": [([_ac(2, 3)], lambda a: _nnf().softplus(T(a), 2, 1.5)), ([_ac(4)], lambda a: _nnf().softplus(a))],
    "softplus_backward": [([_ac(2, 3), _ac(2, 3)], lambda g, x: _nnf().softplus_backward(g, x, 2, 1.5))],
    "silu_backward": [([_ac(2, 3), _ac(2, 3)], lambda g, x: _nnf().silu_backward(g, x)),     # linalg seeds
                      ([_ac(3), _ac(3, 2)], lambda g, x: _nnf().silu_backward(g, T(x)))],
}

# activations of the losses-and-activations block: own generator; lambd /
# threshold 0.65 sit in _ac's gap, hardswish's +-3 kinks scaled out of reach
RL = np.random.default_rng(6071)


def _al(*shape, scale=1.0):
    x = RL.uniform(0.1, 2.0, shape) * np.where(RL.random(shape) < 0.5, -1.0, 1.0)
    return np.where(np.abs(np.abs(x) - 0.65) < 0.17, x * 1.5, x) * scale


def _rrelu(x, training, inplace=False):
    g = torchlet.Generator().manual_seed(5)   # the same slopes at every finite-difference call
    noise = torchlet.empty(tuple(x.shape), dtype=x.dtype)
    if inplace:
        return _nnf().rrelu_with_noise_(x.clone(), noise, 0.1, 0.4, training, g)
    return _nnf().rrelu_with_noise(x, noise, 0.1, 0.4, training, g)


_RRELU_NOISE = RL.uniform(0.1, 0.4, (2, 3))


def _bce_w():
    return torchlet.tensor([0.5, 1.5, 2.0], dtype=torchlet.float64)


ACTIVATION_CASES.update({
    "hardswish": [([_al(2, 3, scale=2.0)], lambda a: _nnf().hardswish(T(a))), ([_al()], lambda a: _nnf().hardswish(a))],
    "hardswish_": [([_al(3, 2, scale=2.0)], lambda a: _nnf().hardswish_(a.clone()))],
    "hardswish_backward": [([_al(2, 3), _al(2, 3, scale=2.0)], lambda g, x: _nnf().hardswish_backward(g, x))],
    "hardsigmoid": [([_al(2, 3, scale=2.0)], lambda a: _nnf().hardsigmoid(T(a)))],
    "hardsigmoid_": [([_al(3, 2, scale=2.0)], lambda a: _nnf().hardsigmoid_(a.clone()))],
    "softshrink": [([_al(2, 3)], lambda a: _nnf().softshrink(T(a), 0.65)), ([_al()], lambda a: _nnf().softshrink(a))],
    "softshrink_backward": [([_al(2, 3), _al(2, 3)], lambda g, x: _nnf().softshrink_backward(g, x, 0.65))],
    "hardshrink": [([_al(2, 3)], lambda a: torchlet.hardshrink(T(a), 0.65))],
    "hardshrink_backward": [([_al(2, 3), _al(2, 3)], lambda g, x: torchlet.hardshrink_backward(g, x, 0.65))],
    "threshold": [([_al(2, 3)], lambda a: torchlet.threshold(T(a), 0.65, -3.0))],
    "threshold_": [([_al(3, 2)], lambda a: torchlet.threshold_(a.clone(), -0.65, 2.0))],
    "celu": [([_al(2, 3)], lambda a: torchlet.celu(T(a), 0.4)), ([_al()], lambda a: torchlet.celu(a))],
    "celu_": [([_al(3, 2)], lambda a: torchlet.celu_(a.clone(), 1.7))],
    "log_sigmoid_forward": [([_al(2, 3, scale=3.0)], lambda a: _nnf().log_sigmoid_forward(T(a))[0])],
    "log_sigmoid_backward": [([_al(2, 3), _al(2, 3, scale=3.0)],
                              lambda g, x: _nnf().log_sigmoid_backward(g, x, torchlet.empty(0, dtype=x.dtype)))],
    "glu": [([_al(2, 6)], lambda a: _nnf().glu(a, -1)), ([_al(4, 3)], lambda a: _nnf().glu(T(a), 1))],
    "glu_backward": [([_al(2, 3), _al(2, 6)], lambda g, x: _nnf().glu_backward(g, x, 1))],
    "_prelu_kernel": [([_al(2, 3, 2), _al(1, 3, 1)], lambda x, w: torchlet._prelu_kernel(x, w))],
    "_prelu_kernel_backward": [([_al(2, 3), _al(2, 3), _al(1, 3)],
                                lambda g, x, w: torchlet._prelu_kernel_backward(g, x, w)[0]),
                               ([_al(2, 3), _al(2, 3), _al(1, 3)],
                                lambda g, x, w: torchlet._prelu_kernel_backward(g, x, w)[1])],
    "rrelu_with_noise": [([_al(2, 3)], lambda a: _rrelu(T(a), True)), ([_al(2, 3)], lambda a: _rrelu(a, False))],
    "rrelu_with_noise_": [([_al(2, 3)], lambda a: _rrelu(a, True, True)), ([_al(2, 3)], lambda a: _rrelu(a, False, True))],
    "rrelu_with_noise_backward": [
        ([_al(2, 3), _al(2, 3)], lambda g, x: _nnf().rrelu_with_noise_backward(
            g, x, torchlet.tensor(_RRELU_NOISE), 0.1, 0.4, True, False)),
        ([_al(2, 3), _al(2, 3)], lambda g, x: _nnf().rrelu_with_noise_backward(
            g, x, torchlet.tensor(_RRELU_NOISE), 0.1, 0.4, False, False))],
    # pointwise losses: reductions none / mean / sum, broadcast grad_output
    "smooth_l1_loss": [([_al(3, 4), _al(3, 4)], lambda a, b: _nnf().smooth_l1_loss(a, b, 1, 0.5)),
                       ([_al(4, 3), _al(3, 4)], lambda a, b: _nnf().smooth_l1_loss(T(a), b, 0, 1.5))],
    "smooth_l1_loss_backward": [([_al(), _al(3, 4), _al(3, 4)],
                                 lambda g, a, b: _nnf().smooth_l1_loss_backward(g, a, b, 2, 0.5))],
    "huber_loss": [([_al(3, 4), _al(3, 4)], lambda a, b: _nnf().huber_loss(a, b, 2, 0.7)),
                   ([_al(4, 3), _al(3, 4)], lambda a, b: _nnf().huber_loss(T(a), b, 0, 1.5))],
    "huber_loss_backward": [([_al(), _al(3, 4), _al(3, 4)],
                             lambda g, a, b: _nnf().huber_loss_backward(g, a, b, 1, 0.7)),
                            ([_al(3, 4), _al(3, 4), _al(3, 4)],
                             lambda g, a, b: _nnf().huber_loss_backward(g, a, b, 0, 0.7))],
    "soft_margin_loss": [([_al(3, 4), _al(3, 4)], lambda a, t: _nnf().soft_margin_loss(a, t, 1))],
    "soft_margin_loss_backward": [([_al(), _al(3, 4), _al(3, 4)],
                                   lambda g, a, t: _nnf().soft_margin_loss_backward(g, a, t, 2)),
                                  ([_al(3, 4), _al(3, 4), _al(3, 4)],
                                   lambda g, a, t: _nnf().soft_margin_loss_backward(g, a, t, 0))],
    "binary_cross_entropy": [([RL.uniform(0.1, 0.9, (4, 3)), RL.uniform(0, 1, (4, 3))],
                              lambda x, y: _nnf().binary_cross_entropy(x, y, _bce_w(), 1)),
                             ([RL.uniform(0.1, 0.9, (3, 4)), RL.uniform(0, 1, (4, 3))],
                              lambda x, y: _nnf().binary_cross_entropy(T(x), y, None, 0))],
    "binary_cross_entropy_backward": [
        ([_al(), RL.uniform(0.1, 0.9, (4, 3)), RL.uniform(0, 1, (4, 3))],
         lambda g, x, y: _nnf().binary_cross_entropy_backward(g, x, y, _bce_w(), 1)),
        ([_al(4, 3), RL.uniform(0.1, 0.9, (4, 3)), RL.uniform(0, 1, (4, 3))],
         lambda g, x, y: _nnf().binary_cross_entropy_backward(g, x, y, None, 0))],
})

# shape and indexing operators; index tensors
# and masks are constants of the cases, not inputs.
RS = np.random.default_rng(6061)   # own generator: the other cases' inputs stay as they were


def _rs(*shape):
    return RS.standard_normal(shape)


def _ix(a):
    return torchlet.tensor(np.array(a, dtype=np.int64))


_MASK = torchlet.tensor(np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]]))
_I45 = [[1, 1, 3], [0, 0, 0], [2, 4, 2], [3, 3, 3]]        # gather / scatter_add: repeats
_I45U = [[0, 1, 2], [4, 3, 2], [1, 0, 3], [2, 4, 0]]       # scatter: distinct targets per row
_IEMB = [[0, 2, 0], [5, 2, 1]]
SHAPE_INDEX_CASES = {
    "index_select": [([_rs(4, 5)], lambda a: torchlet.index_select(a, 1, _ix([4, 0, 4]))),
                     ([_rs(5, 4)], lambda a: torchlet.index_select(T(a), 0, _ix([3, 1]))),
                     ([_rs()], lambda a: torchlet.index_select(a, 0, _ix([0])))],
    "gather": [([_rs(4, 5)], lambda a: torchlet.gather(a, 1, _ix(_I45))),
               ([_rs(5, 4)], lambda a: torchlet.gather(T(a), 0, _ix([[1, 0, 3, 3, 0]])))],
    "scatter.src": [([_rs(4, 5), _rs(4, 3)], lambda a, s: torchlet.scatter(a, 1, _ix(_I45U), s)),
                    ([_rs(5, 4), _rs(3, 3)], lambda a, s: torchlet.scatter(T(a), 1, _ix(_I45U[:3]), T(s)))],
    "scatter_.src": [([_rs(4, 5), _rs(4, 3)], lambda a, s: a.clone().scatter_(1, _ix(_I45U), s))],
    "scatter.value": [([_rs(4, 5)], lambda a: torchlet.scatter(a, 1, _ix(_I45), 2.0))],
    "scatter_.value": [([_rs(4, 5)], lambda a: a.clone().scatter_(1, _ix(_I45), -1.0))],
    "scatter_add": [([_rs(4, 5), _rs(4, 3)], lambda a, s: torchlet.scatter_add(a, 1, _ix(_I45), s)),
                    ([_rs(5, 4), _rs(5, 1)], lambda a, s: torchlet.scatter_add(T(a), 0, _ix([[1, 0, 3, 3, 0]]), T(s)))],
    "scatter_add_": [([_rs(4, 5), _rs(4, 3)], lambda a, s: a.clone().scatter_add_(1, _ix(_I45), s))],
    "masked_fill.Scalar": [([_rs(3, 4)], lambda a: torchlet.masked_fill(a, _MASK, 2.0)),
                           ([_rs(4)], lambda a: a.masked_fill(_MASK, 1.0))],      # self broadcast up
    "masked_fill_.Scalar": [([_rs(3, 4)], lambda a: a.clone().masked_fill_(_MASK, 2.0))],
    "masked_fill.Tensor": [([_rs(3, 4), _rs()], lambda a, v: torchlet.masked_fill(a, _MASK, v)),
                           ([_rs(4, 3), _rs()], lambda a, v: torchlet.masked_fill(T(a), _MASK, v))],
    "masked_fill_.Tensor": [([_rs(3, 4), _rs()], lambda a, v: (a * 1.0).masked_fill_(_MASK, v))],
    "embedding": [([_rs(6, 3)], lambda w: torchlet.embedding(w, _ix(_IEMB))),
                  ([_rs(3, 6)], lambda w: torchlet.embedding(T(w), _ix([4, 1, 4])))],  # padding_idx and
    # scale_grad_by_freq change the gradient on purpose (not d/dw): tests/ops/test_index_ops.py vs torch
    "embedding_dense_backward": [([_rs(2, 3, 4)], lambda g: torchlet.embedding_dense_backward(g, _ix(_IEMB), 6, 2, False))],
    "tril": [([_rs(3, 4)], lambda a: torchlet.tril(a)), ([_rs(4, 3)], lambda a: torchlet.tril(T(a), -1))],
    "tril_": [([_rs(3, 4)], lambda a: a.clone().tril_(1))],
    "triu": [([_rs(2, 3, 4)], lambda a: torchlet.triu(a, 1))],
    "triu_": [([_rs(3, 4)], lambda a: a.clone().triu_(-1))],
    "cat": [([_rs(2, 3), _rs(4, 3)], lambda a, b: torchlet.cat([a, b])),
            ([_rs(3, 2), _rs(3, 1)], lambda a, b: torchlet.cat([T(a), T(b)], 0))],
    "stack": [([_rs(2, 3), _rs(2, 3)], lambda a, b: torchlet.stack([a, b], 1))],
    # split / unbind: one node for all pieces; unused pieces get no gradient (zeros)
    "split.Tensor": [([_rs(5, 3)], lambda a: torchlet.cat([p * (i + 1.0) for i, p in enumerate(a.split(2))])),
                     ([_rs(3, 5)], lambda a: T(a).split(2)[1] * 3.0)],
    "split_with_sizes": [([_rs(3, 6)], lambda a: torchlet.cat([p * (i + 1.0) for i, p in enumerate(a.split_with_sizes([1, 0, 5], 1))], 1))],
    "unbind.int": [([_rs(3, 4)], lambda a: a.unbind(1)[0] * a.unbind(1)[3]),
                   ([_rs(2, 3)], lambda a: torchlet.stack(T(a).unbind(0)[::-1]))],
    # advanced indexing: repeated indices accumulate; separated index dims go first
    "index.Tensor": [([_rs(4, 5)], lambda a: torchlet.index(a, [_ix([3, 0, 3])])),
                     ([_rs(4, 5)], lambda a: T(a)[[0, 4, 4], [1, 3, 1]]),
                     ([_rs(3, 4)], lambda a: a[_MASK]),
                     ([_rs(2, 3, 4)], lambda a: a[[[1], [0]], :, [0, 3]])],
    "index_put": [([_rs(4, 5), _rs(2, 5)], lambda a, v: torchlet.index_put(a, [_ix([3, 0])], v)),
                  ([_rs(4, 5), _rs(5)], lambda a, v: torchlet.index_put(T(a), [_ix([1, 1, 2])], v[:4], True))],
    "index_put_": [([_rs(4, 5), _rs(2)], lambda a, v: (a * 1.0).index_put_([None, _ix([4, 0])], v)),
                   ([_rs(3, 4), _rs()], lambda a, v: (a * 1.0).index_put_([_MASK], v, accumulate=True))],
    "_index_put_impl_": [([_rs(4, 5), _rs(3, 5)], lambda a, v: torchlet._index_put_impl_(a * 1.0, [_ix([2, 0, 2])], v, True))],
}

# name -> list of (builder arrays, fn); fn gets leaf tensors in order
# NN operators: own generator; targets / total_weight are constants
RN = np.random.default_rng(6062)
_NLL_T = [0, 2, 1, 2]


def _nll_bwd(g, x, reduction):
    t = torchlet.tensor(_NLL_T)
    tw = torchlet.tensor(float(len(_NLL_T)), dtype=torchlet.float64)
    return torchlet._C._nn.nll_loss_backward(g, x, t, None, reduction, -100, tw)


NN_CASES = {
    "_softmax": [([RN.standard_normal((3, 4))], lambda a: torchlet._softmax(a, 1, False)),
                 ([RN.standard_normal((4, 3))], lambda a: torchlet._softmax(T(a), 0, False)),  # strided dim
                 ([RN.standard_normal(())], lambda a: torchlet._softmax(a, 0, False))],
    "_log_softmax": [([RN.standard_normal((3, 4))], lambda a: torchlet._log_softmax(a, -1, False)),
                     ([RN.standard_normal((2, 3, 4))], lambda a: torchlet._log_softmax(a, 1, False))],
    "mse_loss": [([RN.standard_normal((3, 4)), RN.standard_normal((3, 4))],
                  lambda a, b: torchlet._C._nn.mse_loss(a, b)),
                 ([RN.standard_normal((4, 3)), RN.standard_normal((3, 4))],
                  lambda a, b: torchlet._C._nn.mse_loss(T(a), b, 2)),
                 ([RN.standard_normal((2, 3)), RN.standard_normal((2, 3))],
                  lambda a, b: torchlet._C._nn.mse_loss(a, b, 0))],
    "nll_loss_backward": [([RN.standard_normal(()), RN.standard_normal((4, 3))], lambda g, x: _nll_bwd(g, x, 1)),
                          ([RN.standard_normal((4,)), RN.standard_normal((4, 3))], lambda g, x: _nll_bwd(g, x, 0))],
    "_softmax_backward_data": [([RN.standard_normal((3, 4)), RN.uniform(0.1, 1, (3, 4))],
                                lambda g, y: torchlet._softmax_backward_data(g, y, 1, torchlet.float64)),
                               ([RN.standard_normal((4, 3)), RN.uniform(0.1, 1, (3, 4))],
                                lambda g, y: torchlet._softmax_backward_data(T(g), y, 0, torchlet.float64))],
    "_log_softmax_backward_data": [([RN.standard_normal((3, 4)), RN.uniform(-2, -0.1, (3, 4))],
                                    lambda g, y: torchlet._log_softmax_backward_data(g, y, -1, torchlet.float64))],
    # fused attention (q, k, v as (B, H, T, E)): causal with T_q != T_k, a float mask with a
    # fully masked row, grouped-query heads on transposed views
    "_scaled_dot_product_flash_attention_for_cpu": [
        ([RN.standard_normal((2, 2, 5, 3)), RN.standard_normal((2, 2, 4, 3)), RN.standard_normal((2, 2, 4, 3))],
         lambda q, k, v: torchlet._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, True)[0]),
        ([RN.standard_normal((1, 2, 3, 4)), RN.standard_normal((1, 2, 6, 4)), RN.standard_normal((1, 2, 6, 4))],
         lambda q, k, v: torchlet._scaled_dot_product_flash_attention_for_cpu(
             q, k, v, attn_mask=torchlet.tensor([[0.0] * 6, [-float("inf")] * 6, [0.5, -1, 0, 2, -float("inf"), 0]],
                                                dtype=torchlet.float64), scale=0.8)[0]),
        ([RN.standard_normal((1, 3, 4, 3)), RN.standard_normal((1, 3, 1, 3)), RN.standard_normal((1, 3, 1, 3))],
         lambda q, k, v: torchlet._scaled_dot_product_flash_attention_for_cpu(
             q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), 0.0, True)[0])],
}

# convolution (every conv* front end reduces to it): own generator; groups,
# stride, dilation, padding, a transposed view as input, the transposed
# convolution with output_padding, conv1d unbatched, conv3d
RV = np.random.default_rng(6068)


def _rv(*shape):
    return RV.standard_normal(shape)


NN_CASES["convolution"] = [
    ([_rv(2, 4, 5, 6), _rv(6, 2, 3, 2), _rv(6)],
     lambda x, w, b: torchlet.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)),
    ([_rv(1, 3, 6, 5), _rv(2, 3, 1, 1)], lambda x, w: torchlet.conv2d(x.transpose(2, 3), w)),   # 1x1, non-contiguous
    ([_rv(3, 7), _rv(4, 3, 3), _rv(4)], lambda x, w, b: torchlet.conv1d(x, w, b, stride=2, padding=1)),
    ([_rv(2, 4, 3, 4), _rv(4, 3, 3, 2), _rv(6)],
     lambda x, w, b: torchlet.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)),
    ([_rv(1, 2, 3, 3, 4), _rv(2, 2, 2, 2, 2)], lambda x, w: torchlet.conv3d(x, w, padding=1, dilation=(1, 2, 1))),
]



def _conv_bwd(g, x, w, transposed):
    gi, gw, gb = torchlet.convolution_backward(g, x, w, [g.shape[1]], [2, 1], [1, 0], [1, 1], transposed,
                                               [1, 0] if transposed else [0], 2, [True, True, True])
    return torchlet.cat([gi.flatten(), gw.flatten(), gb])


NN_CASES["convolution_backward"] = [
    ([_rv(2, 4, 3, 2), _rv(2, 4, 5, 4), _rv(4, 2, 3, 3)], lambda g, x, w: _conv_bwd(g, x, w, False)),
    ([_rv(1, 4, 6, 4), _rv(1, 2, 3, 3), _rv(2, 2, 3, 2)], lambda g, x, w: _conv_bwd(g, x, w, True)),
]

# matrix products: own generator; transposed operands
# reach BLAS with the transpose flag, broadcast self / bias reduce back
RL = np.random.default_rng(6062)


def _rl(*shape):
    return RL.standard_normal(shape)


LINALG_CASES = {
    "bmm": [([_rl(2, 3, 4), _rl(2, 4, 2)], lambda a, b: torchlet.bmm(a, b)),
            ([_rl(2, 4, 3), _rl(2, 4, 2)], lambda a, b: torchlet.bmm(a.transpose(1, 2), b))],
    "addmm": [([_rl(3), _rl(2, 4), _rl(4, 3)], lambda s, a, b: torchlet.addmm(s, a, b)),
              ([_rl(2, 3), _rl(4, 2), _rl(4, 3)], lambda s, a, b: torchlet.addmm(s, T(a), b, beta=0.5, alpha=-2)),
              ([_rl(1, 3), _rl(2, 0), _rl(0, 3)], lambda s, a, b: torchlet.addmm(s, a, b, beta=3))],  # k = 0
    "addmm_": [([_rl(2, 3), _rl(2, 4), _rl(4, 3)], lambda s, a, b: s.clone().addmm_(a, b, beta=2, alpha=0.5))],
    "baddbmm": [([_rl(3), _rl(2, 2, 4), _rl(2, 4, 3)], lambda s, a, b: torchlet.baddbmm(s, a, b, alpha=1.5)),
                ([_rl(2, 2, 3), _rl(2, 4, 2), _rl(2, 4, 3)],
                 lambda s, a, b: torchlet.baddbmm(s, a.transpose(1, 2), b, beta=-1))],
    "baddbmm_": [([_rl(2, 2, 3), _rl(2, 2, 4), _rl(2, 4, 3)], lambda s, a, b: s.clone().baddbmm_(a, b, beta=0.5))],
    "mv": [([_rl(3, 4), _rl(4)], lambda a, v: torchlet.mv(a, v)),
           ([_rl(4, 3), _rl(8)], lambda a, v: torchlet.mv(T(a), v[::2]))],
    "dot": [([_rl(5), _rl(5)], lambda a, b: torchlet.dot(a, b)),
            ([_rl(6), _rl(3)], lambda a, b: a[::2].dot(b))],
}

# formula-compiler features: several outputs,
# one formula for several inputs, Tensor[] and ternaries; own generator
RA = np.random.default_rng(6066)


def _ra(*shape):
    return RA.standard_normal(shape)


def _nn():
    return torchlet._C._nn


def _dropout(x, p, train):
    torchlet.manual_seed(7)  # the same mask for every finite-difference evaluation
    return torchlet.native_dropout(x, p, train)[0]


_TGT = _ix([1, 0, 3, 1, 2])
_TGT_IGN = _ix([1, -100, 3, 1, -100])
COMPILER_CASES = {
    "max.dim": [([_ra(3, 4)], lambda a: torchlet.max(a, 1)[0]),
                ([_ra(4, 3)], lambda a: torchlet.max(T(a), 0, keepdim=True)[0]),
                ([_ra()], lambda a: torchlet.max(a, 0)[0])],
    "min.dim": [([_ra(3, 4)], lambda a: torchlet.min(a, -1)[0]),
                ([_ra(2, 3, 4)], lambda a: torchlet.min(a, 1, True)[0])],
    "var_mean.correction": [
        ([_ra(3, 4)], lambda a: torchlet.var_mean(a, 1)[0] * 2.0 + torchlet.var_mean(a, 1)[1]),   # both outputs
        ([_ra(3, 4)], lambda a: torchlet.var_mean(a, (0, 1), correction=0)[0]),                   # var only
        ([_ra(4, 3)], lambda a: torchlet.var_mean(T(a), 0, keepdim=True)[1]),                      # mean only
        ([_ra(5)], lambda a: torchlet.var_mean(a)[0])],                                            # dim=None
    "native_layer_norm": [
        ([_ra(3, 4), _ra(4), _ra(4)], lambda x, w, b: torchlet.native_layer_norm(x, [4], w, b, 1e-5)[0]),
        ([_ra(2, 3, 4), _ra(3, 4)], lambda x, w: torchlet.native_layer_norm(x, [3, 4], w, None, 1e-5)[0]),
        ([_ra(4, 3)], lambda x: torchlet.native_layer_norm(T(x), [4], None, None, 1e-5)[0])],
    "nll_loss_forward": [
        ([_ra(5, 4)], lambda s: _nn().nll_loss_forward(s, _TGT, None, 1, -100)[0]),
        ([_ra(5, 4)], lambda s: _nn().nll_loss_forward(s, _TGT, torchlet.tensor([1.0, 2.0, 0.5, 1.5], dtype=torchlet.float64), 2, -100)[0]),
        ([_ra(5, 4)], lambda s: _nn().nll_loss_forward(s, _TGT_IGN, None, 0, -100)[0])],
    "index_add": [([_ra(4, 5), _ra(4, 3)], lambda a, s: torchlet.index_add(a, 1, _ix([4, 0, 4]), s, alpha=2.0)),
                  ([_ra(5, 4), _ra(3, 4)], lambda a, s: torchlet.index_add(T(a), 1, _ix([1, 1, 2]), T(s))),
                  ([_ra(5), _ra()], lambda a, s: torchlet.index_add(a, 0, _ix([3]), s))],   # 0-dim source
    "index_add_": [([_ra(4, 5), _ra(4, 3)], lambda a, s: a.clone().index_add_(1, _ix([4, 0, 4]), s, alpha=-1.5))],
    "native_dropout": [([_ra(5, 6)], lambda x: _dropout(x, 0.3, True)),
                       ([_ra(4, 3)], lambda x: _dropout(T(x), 0.5, True)),  # train=None: PyTorch's formula scales by 1
                       ([_ra(3, 3)], lambda x: _dropout(x, 0.3, False))],
}


# pointwise math (pow, remainder, asin, logit, ...): their own generator, inputs away from the
# kinks (remainder/fmod/round jumps) and inside the domains (asin, logit, pow)
RB = np.random.default_rng(707)


def _pb(*shape, lo=-2.0, hi=2.0):
    return RB.uniform(lo, hi, shape)


def _pq(*shape, lo=0.6, hi=1.4):
    """away from 0, both signs (atan2's x; with lo=3.5, hi=4.5 the remainder/fmod
    divisors: |_pfrac / b| < 0.75 and never 0, so no jump within reach)"""
    return RB.uniform(lo, hi, shape) * np.where(RB.random(shape) < 0.5, -1.0, 1.0)


def _pd(*shape):
    return _pq(*shape, lo=3.5, hi=4.5)


def _pfrac(*shape):
    """k + [0.3, 0.45]: away from integers (round) and from 0"""
    return np.floor(RB.uniform(-3, 3, shape)) + RB.uniform(0.3, 0.45, shape)


POINTWISE_MATH_CASES = {
    "pow.Tensor_Scalar": [([_pb(2, 3, lo=0.3, hi=2)], lambda a: torchlet.pow(T(a), 2.5)),
                          ([_pb(3, 2)], lambda a: a ** 2), ([_pb(3, 2)], lambda a: a ** 3),
                          ([_pb(3, 2, lo=0.3, hi=2)], lambda a: a ** -0.5), ([_pb(4)], lambda a: a ** 0 + a),
                          ([_pb(lo=0.3, hi=2)], lambda a: a.pow(-1.5)), ([_pb(3, 2)], lambda a: a.pow(1.0) * a)],
    "pow.Tensor_Tensor": [([_pb(2, 3, lo=0.3, hi=2), _pb(3)], lambda a, b: torchlet.pow(a, b)),
                          ([_pb(3, 2, lo=0.3, hi=2), _pb(2, 3)], lambda a, b: T(a) ** b),
                          ([_pb(2, 3)], lambda a: a ** _ix([[2, 3, 0]]))],   # integer exponents, incl. 0
    "pow.Scalar": [([_pb(2, 3)], lambda e: torchlet.pow(2.5, T(e))), ([_pb(3)], lambda e: 0.5 ** e),
                   ([_pb(3, lo=0.2, hi=2)], lambda e: torchlet.pow(0.0, e) + e)],
    "pow_.Scalar": [([_pb(2, 3, lo=0.3, hi=2)], lambda a: a.clone().pow_(1.7)), ([_pb(3)], lambda a: (a * 1).pow_(2))],
    "pow_.Tensor": [([_pb(2, 3, lo=0.3, hi=2), _pb(3)], lambda a, b: a.clone().pow_(b))],
    "remainder.Tensor": [([_pfrac(2, 3), _pd(3)], lambda a, b: torchlet.remainder(a, b)),
                         ([_pfrac(3, 2), _pd(2, 3)], lambda a, b: T(a) % b)],
    "remainder_.Tensor": [([_pfrac(2, 3), _pd(2, 3)], lambda a, b: a.clone().remainder_(b))],
    "remainder.Scalar": [([_pfrac(2, 3)], lambda a: torchlet.remainder(T(a), 4.0))],
    "remainder_.Scalar": [([_pfrac(2, 3)], lambda a: a.clone().remainder_(-4.0))],
    "fmod.Tensor": [([_pfrac(2, 3), _pd(3)], lambda a, b: torchlet.fmod(a, b)),
                    ([_pfrac(3, 2), _pd(2, 3)], lambda a, b: torchlet.fmod(T(a), b))],
    "fmod_.Tensor": [([_pfrac(2, 3), _pd(2, 3)], lambda a, b: a.clone().fmod_(b))],
    "fmod.Scalar": [([_pfrac(2, 3)], lambda a: torchlet.fmod(T(a), 4.0))],
    "fmod_.Scalar": [([_pfrac(2, 3)], lambda a: a.clone().fmod_(-4.0))],
    "atan2": [([_pb(2, 3), _pq(3)], lambda a, b: torchlet.atan2(a, b)),
              ([_pq(3, 2), _pb(2, 3)], lambda a, b: torchlet.atan2(T(a), b)), ([_pb(), _pq()], torchlet.atan2)],
    "atan2_": [([_pb(2, 3), _pq(2, 3)], lambda a, b: a.clone().atan2_(b))],
    "hypot": [([_pq(2, 3), _pq(3)], lambda a, b: torchlet.hypot(a, b)), ([_pq(), _pq()], torchlet.hypot)],
    "hypot_": [([_pq(2, 3), _pq(2, 3)], lambda a, b: a.clone().hypot_(b))],
    # copysign: self's gradient is +-grad, other's 0 (other away from 0: no jump within reach)
    "copysign.Tensor": [([_pq(2, 3), _pq(3)], lambda a, b: torchlet.copysign(a, b))],
    "copysign_.Tensor": [([_pq(2, 3), _pq(2, 3)], lambda a, b: a.clone().copysign_(b))],
    "asin": [([_pb(2, 3, lo=-0.9, hi=0.9)], lambda a: torchlet.asin(T(a))), ([_pb(lo=-0.9, hi=0.9)], torchlet.asin)],
    "asin_": [([_pb(2, 3, lo=-0.9, hi=0.9)], lambda a: a.clone().asin_())],
    "acos": [([_pb(2, 3, lo=-0.9, hi=0.9)], lambda a: torchlet.acos(T(a))), ([_pb(lo=-0.9, hi=0.9)], torchlet.acos)],
    "acos_": [([_pb(2, 3, lo=-0.9, hi=0.9)], lambda a: a.clone().acos_())],
    "atan": [([_pb(2, 3)], lambda a: torchlet.atan(T(a))), ([_pb()], torchlet.atan)],
    "atan_": [([_pb(2, 3)], lambda a: a.clone().atan_())],
    "sinh": [([_pb(2, 3)], lambda a: torchlet.sinh(T(a))), ([_pb()], torchlet.sinh)],
    "sinh_": [([_pb(2, 3)], lambda a: a.clone().sinh_())],
    "cosh": [([_pb(2, 3)], lambda a: torchlet.cosh(T(a))), ([_pb()], torchlet.cosh)],
    "cosh_": [([_pb(2, 3)], lambda a: a.clone().cosh_())],
    "round": [([_pfrac(2, 3)], lambda a: torchlet.round(T(a)) * T(a))],
    "round_": [([_pfrac(2, 3)], lambda a: a.clone().round_() + a)],
    "round.decimals": [([_pfrac(2, 3) / 10], lambda a: torchlet.round(a, decimals=1) + a)],
    "round_.decimals": [([_pfrac(2, 3) * 10], lambda a: a.clone().round_(decimals=-1) * a)],
    "logit": [([_pb(2, 3, lo=0.1, hi=0.9)], lambda a: torchlet.logit(T(a))),
              ([_pb(3, lo=-0.2, hi=1.2)], lambda a: torchlet.logit(a, 0.25))],
    "logit_": [([_pb(2, 3, lo=0.1, hi=0.9)], lambda a: a.clone().logit_())],
    "nan_to_num": [([_pb(2, 3)], lambda a: torchlet.nan_to_num(T(a))),
                   ([np.array([[0.3, 0.5, 1.5], [1.8, 0.7, 1.3]])],   # NaN from log of negatives: zero gradient
                    lambda a: torchlet.nan_to_num(torchlet.log(a - 1.0), posinf=3.0))],
    "nan_to_num_": [([_pb(2, 3)], lambda a: a.clone().nan_to_num_(0.0))],
}


# special math (lgamma ... ldexp): own generator; inputs inside the domains
# (erfinv in (-1, 1), xlogy's other > 0) and away from the kinks (fmax / fmin
# ties, nextafter's self == other)
RS = np.random.default_rng(808)


def _sp(*shape, lo=0.3, hi=3.0):
    return RS.uniform(lo, hi, shape)


SPECIAL_MATH_CASES = {
    "lgamma": [([_sp(2, 3)], lambda a: torchlet.lgamma(T(a))), ([_sp(3, lo=-2.8, hi=-2.2)], torchlet.lgamma)],
    "lgamma_": [([_sp(2, 3)], lambda a: a.clone().lgamma_())],
    "digamma": [([_sp(2, 3)], lambda a: torchlet.digamma(T(a))), ([_sp(3, lo=-1.8, hi=-1.2)], torchlet.digamma)],
    "digamma_": [([_sp(2, 3)], lambda a: a.clone().digamma_())],
    "polygamma": [([_sp(2, 3)], lambda a: torchlet.polygamma(1, T(a))), ([_sp(3)], lambda a: torchlet.polygamma(3, a)),
                  ([_sp(3)], lambda a: torchlet.polygamma(0, a))],
    "polygamma_": [([_sp(2, 3)], lambda a: a.clone().polygamma_(2))],
    "erfinv": [([_sp(2, 3, lo=-0.9, hi=0.9)], lambda a: torchlet.erfinv(T(a)))],
    "erfinv_": [([_sp(2, 3, lo=-0.9, hi=0.9)], lambda a: a.clone().erfinv_())],
    "i0": [([_sp(2, 3, lo=-4, hi=4)], lambda a: torchlet.i0(T(a)))],
    "i0_": [([_sp(2, 3, lo=-4, hi=4)], lambda a: a.clone().i0_())],
    "special_i1": [([_sp(2, 3, lo=-4, hi=4)], lambda a: torchlet.special.i1(T(a)))],
    "sinc": [([_sp(2, 3, lo=-2, hi=2)], lambda a: torchlet.sinc(T(a)))],
    "sinc_": [([_sp(2, 3, lo=-2, hi=2)], lambda a: a.clone().sinc_())],
    "deg2rad": [([_sp(2, 3)], lambda a: torchlet.deg2rad(T(a)))],
    "deg2rad_": [([_sp(2, 3)], lambda a: a.clone().deg2rad_())],
    "rad2deg": [([_sp(2, 3)], lambda a: torchlet.rad2deg(T(a)))],
    "rad2deg_": [([_sp(2, 3)], lambda a: a.clone().rad2deg_())],
    "special_entr": [([_sp(2, 3)], lambda a: torchlet.special.entr(T(a)))],
    "mvlgamma": [([_sp(2, 3, lo=1.2, hi=4)], lambda a: torchlet.mvlgamma(T(a), 3))],
    "mvlgamma_": [([_sp(2, 3, lo=1.2, hi=4)], lambda a: a.clone().mvlgamma_(2))],
    # frexp: away from the powers of two (the mantissa jumps there)
    "frexp.Tensor": [([_sp(2, 3, lo=1.1, hi=1.9)], lambda a: torchlet.frexp(T(a))[0]),
                     ([_sp(3, lo=-7, hi=-4.5)], lambda a: a.frexp()[0] * 3)],
    "logaddexp": [([_sp(2, 3, lo=-2, hi=2), _sp(3, lo=-2, hi=2)], torchlet.logaddexp)],
    "logaddexp2": [([_sp(2, 3, lo=-2, hi=2), _sp(3, lo=-2, hi=2)], torchlet.logaddexp2)],
    "xlogy.Tensor": [([_sp(2, 3, lo=-2, hi=2), _sp(3)], torchlet.xlogy)],
    "xlogy_.Tensor": [([_sp(2, 3, lo=-2, hi=2), _sp(2, 3)], lambda a, b: a.clone().xlogy_(b))],
    "xlogy.Scalar_Self": [([_sp(2, 3)], lambda b: torchlet.xlogy(2.5, b))],
    "xlogy.Scalar_Other": [([_sp(2, 3, lo=-2, hi=2)], lambda a: torchlet.xlogy(a, 1.5))],
    "xlogy_.Scalar_Other": [([_sp(2, 3, lo=-2, hi=2)], lambda a: a.clone().xlogy_(0.5))],
    "special_xlog1py": [([_sp(2, 3, lo=-2, hi=2), _sp(3, lo=-0.5, hi=2)], torchlet.special.xlog1py)],
    "special_xlog1py.self_scalar": [([_sp(2, 3, lo=-0.5, hi=2)], lambda b: torchlet.special.xlog1py(2.5, b))],
    "special_xlog1py.other_scalar": [([_sp(2, 3, lo=-2, hi=2)], lambda a: torchlet.special.xlog1py(a, 0.5))],
    "fmax": [([_sp(2, 3), _sp(3) + 0.01], torchlet.fmax)],
    "fmin": [([_sp(2, 3), _sp(3) + 0.01], torchlet.fmin)],
    "nextafter": [([_sp(2, 3), _sp(3) + 5], lambda a, b: torchlet.nextafter(a, b) * b)],
    "nextafter_": [([_sp(2, 3), _sp(2, 3) + 5], lambda a, b: a.clone().nextafter_(b) * b)],
    "ldexp.Tensor": [([_sp(2, 3, lo=-2, hi=2), _sp(3, lo=-2, hi=2)], torchlet.ldexp)],
    "ldexp_": [([_sp(2, 3, lo=-2, hi=2), _sp(2, 3, lo=-2, hi=2)], lambda a, b: a.clone().ldexp_(b))],
}


# torchlet.special's functions (inputs inside the domains) and the random
# distributions: each call re-seeds, so a draw is a fixed function of the
# input and its gradient (zero through the draw) can be checked
RSF = np.random.default_rng(909)


def _sf(*shape, lo=0.3, hi=3.0):
    return RSF.uniform(lo, hi, shape)


def _seeded(fn):
    def run(*a):
        torchlet.manual_seed(0)
        return fn(*a)
    return run


SPECIAL_FNS_CASES = {
    "special_ndtri": [([_sf(2, 3, lo=0.05, hi=0.95)], lambda a: torchlet.special.ndtri(T(a)))],
    "special_log_ndtr": [([_sf(2, 3, lo=-6, hi=4)], lambda a: torchlet.special.log_ndtr(T(a)))],
    "special_erfcx": [([_sf(2, 3, lo=-2, hi=5)], lambda a: torchlet.special.erfcx(T(a)))],
    "special_i0e": [([_sf(2, 3, lo=-4, hi=4)], lambda a: torchlet.special.i0e(T(a)))],
    "special_i1e": [([_sf(2, 3, lo=-4, hi=4)], lambda a: torchlet.special.i1e(T(a)))],
    "special_zeta": [([_sf(2, 3, lo=1.5, hi=4), _sf(3, lo=0.5, hi=3)], torchlet.special.zeta)],
    "special_zeta.self_scalar": [([_sf(2, 3, lo=0.5, hi=3)], lambda q: torchlet.special.zeta(2.5, q))],
    "igamma": [([_sf(2, 3, lo=0.5, hi=4), _sf(3, lo=0.5, hi=4)], torchlet.igamma)],
    "igamma_": [([_sf(2, 3, lo=0.5, hi=4), _sf(2, 3, lo=0.5, hi=4)], lambda a, x: a.clone().igamma_(x))],
    "igammac": [([_sf(2, 3, lo=0.5, hi=4), _sf(3, lo=0.5, hi=4)], torchlet.igammac)],
    "igammac_": [([_sf(2, 3, lo=0.5, hi=4), _sf(2, 3, lo=0.5, hi=4)], lambda a, x: a.clone().igammac_(x))],
    "uniform_": [([_sf(2, 3)], _seeded(lambda a: a.clone().uniform_(1, 2) * a))],
    "normal_": [([_sf(2, 3)], _seeded(lambda a: a.clone().normal_(1, 2) * a))],
    "log_normal_": [([_sf(2, 3)], _seeded(lambda a: a.clone().log_normal_(0, 0.5) * a))],
    "cauchy_": [([_sf(2, 3)], _seeded(lambda a: a.clone().cauchy_() * a))],
    "exponential_": [([_sf(2, 3)], _seeded(lambda a: a.clone().exponential_(2.0) * a))],
    "geometric_": [([_sf(2, 3)], _seeded(lambda a: a.clone().geometric_(0.3) * a))],
    "random_.from": [([_sf(2, 3)], _seeded(lambda a: a.clone().random_(-3, 4) * a))],
    "random_.to": [([_sf(2, 3)], _seeded(lambda a: a.clone().random_(5) * a))],
    "random_": [([_sf(2, 3)], _seeded(lambda a: a.clone().random_() * a))],
    "random.from": [([_sf(2, 3)], _seeded(lambda a: getattr(torchlet.ops.aten.random, "from")(a, -3, 4) * a))],
    "random.to": [([_sf(2, 3)], _seeded(lambda a: torchlet.ops.aten.random.to(a, 5) * a))],
    "random": [([_sf(2, 3)], _seeded(lambda a: torchlet.ops.aten.random(a) * a))],
    # the autogen functional variants share the in-place entries' derivatives
    "uniform": [([_sf(2, 3)], _seeded(lambda a: torchlet.ops.aten.uniform(a, 1.0, 2.0) * a))],
    "log_normal": [([_sf(2, 3)], _seeded(lambda a: torchlet.ops.aten.log_normal(a, 0.0, 0.5) * a))],
    "cauchy": [([_sf(2, 3)], _seeded(lambda a: torchlet.ops.aten.cauchy(a) * a))],
    "exponential": [([_sf(2, 3)], _seeded(lambda a: torchlet.ops.aten.exponential(a, 2.0) * a))],
    "geometric": [([_sf(2, 3)], _seeded(lambda a: torchlet.ops.aten.geometric(a, 0.3) * a))],
    "bernoulli_.float": [([_sf(2, 3)], _seeded(lambda a: a.clone().bernoulli_(0.5) * a))],
    "bernoulli": [([_sf(2, 3, lo=0.2, hi=0.8)], _seeded(lambda a: torchlet.bernoulli(a) * a))],
    "bernoulli_.Tensor": [([_sf(2, 3), _sf(2, 3, lo=0.2, hi=0.8)], _seeded(lambda a, p: a.clone().bernoulli_(p) * a * p))],
    # normal's derivatives are zero (PyTorch's: no reparameterization), so its
    # mean / std enter as constants computed from the inputs (m * 0, s * 0 + 1)
    "normal.Tensor_float": [([_sf(2, 3)], _seeded(lambda m: torchlet.normal(m * 0, 0.5) * m))],
    "normal.float_Tensor": [([_sf(2, 3)], _seeded(lambda s: torchlet.normal(1.0, s * 0 + 1) * s))],
    "normal.Tensor_Tensor": [([_sf(2, 3), _sf(3)],
                              _seeded(lambda m, s: torchlet.normal(m * 0, s * 0 + 1) * m * s))],
}
# igamma / igammac / zeta: the first input has no derivative (not_implemented, as PyTorch)
SPECIAL_FNS_DIFF = {"special_zeta": [1], "igamma": [1], "igamma_": [1], "igammac": [1], "igammac_": [1]}


# three-input pointwise ops: own generator; values kept away
# from clamp's bounds (kinks) and addcdiv's divisor away from 0
RG = np.random.default_rng(707)


def _g(*shape):
    return RG.standard_normal(shape)


def _gx(*shape):
    """in (-2, -0.7) u (-0.3, 0.3) u (0.7, 2): at least 0.2 from bounds near +-0.5"""
    v = RG.uniform(-2.0, 2.0, shape)
    return np.where(np.abs(np.abs(v) - 0.5) < 0.2, v * 0.4, v)


def _gb(*shape, c):
    """tensor bounds within 0.1 of c"""
    return c + RG.uniform(-0.1, 0.1, shape)


def _gz(*shape):
    v = RG.uniform(0.5, 2.0, shape)
    return v * np.where(RG.random(shape) < 0.5, -1.0, 1.0)


TERNARY_CASES = {
    "addcmul": [([_g(2, 3), _g(3), _g(2, 1)], lambda s, a, b: torchlet.addcmul(s, a, b, value=-1.5)),
                ([_g(3, 2), _g(2, 3), _g()], lambda s, a, b: torchlet.addcmul(T(s), a, b))],
    "addcmul_": [([_g(2, 3), _g(3), _g(2, 1)], lambda s, a, b: s.clone().addcmul_(a, b, value=0.5))],
    "addcdiv": [([_g(2, 3), _g(3), _gz(2, 1)], lambda s, a, b: torchlet.addcdiv(s, a, b, value=-1.5)),
                ([_g(3, 2), _g(2, 3), _gz()], lambda s, a, b: torchlet.addcdiv(T(s), a, b))],
    "addcdiv_": [([_g(2, 3), _g(3), _gz(2, 1)], lambda s, a, b: s.clone().addcdiv_(a, b, value=2))],
    "where.self": [([_g(2, 3), _g(2, 3), _g(3)], lambda c, a, b: torchlet.where(c > 0, a, b)),
                   ([_g(3, 1), _g(), _g(3, 2)], lambda c, a, b: torchlet.where(c > 0, a * a, T(T(b)))),
                   ([_g(2), _g(2), _g(2)], lambda c, a, b: torchlet.where(c > 0, a, 2.0) * b)],
    "lerp.Scalar": [([_g(2, 3), _g(3)], lambda a, b: torchlet.lerp(a, b, 0.3)),
                    ([_g(3, 2), _g(2, 3)], lambda a, b: torchlet.lerp(T(a), b, 0.8))],
    "lerp.Tensor": [([_g(2, 3), _g(3), _g(2, 1)], lambda a, b, w: torchlet.lerp(a, b, w)),
                    ([_g(3, 2), _g(2, 3), _g()], lambda a, b, w: torchlet.lerp(T(a), b, w * 0.2 + 0.7))],
    "lerp_.Scalar": [([_g(2, 3), _g(3)], lambda a, b: a.clone().lerp_(b, 0.6))],
    "lerp_.Tensor": [([_g(2, 3), _g(3), _g(2, 3)], lambda a, b, w: a.clone().lerp_(b, w))],
    "clamp": [([_gx(2, 3)], lambda a: torchlet.clamp(a, -0.5, 0.5)),
              ([_gx(3, 2)], lambda a: torchlet.clamp(T(a), min=-0.5) + torchlet.clamp(a.t(), max=0.5))],
    "clamp_": [([_gx(2, 3)], lambda a: a.clone().clamp_(-0.5, 0.5))],
    "clamp.Tensor": [([_gx(2, 3), _gb(3, c=-0.5), _gb(2, 1, c=0.5)], lambda a, lo, hi: torchlet.clamp(a, lo, hi)),
                     ([_gx(3, 2), _gb(2, 3, c=-0.5)], lambda a, lo: torchlet.clamp(T(a), min=lo)),
                     ([_gx(2, 3), _gb(3, c=0.5)], lambda a, hi: torchlet.clamp(a, max=hi)),
                     # min > max: the result is max, which gets the gradient
                     ([_gx(2, 3), _gb(3, c=0.5), _gb(3, c=-0.5)], lambda a, lo, hi: torchlet.clamp(a, lo, hi))],
    "clamp_.Tensor": [([_gx(2, 3), _gb(3, c=-0.5), _gb(2, 3, c=0.5)],
                       lambda a, lo, hi: a.clone().clamp_(lo, hi))],
    "clamp_min": [([_gx(2, 3)], lambda a: torchlet.clamp_min(T(T(a)), 0.5))],
    "clamp_min_": [([_gx(2, 3)], lambda a: a.clone().clamp_min_(-0.5))],
    "clamp_min.Tensor": [([_gx(2, 3), _gb(3, c=0.5)], lambda a, lo: torchlet.clamp_min(a, lo))],
    "clamp_min_.Tensor": [([_gx(2, 3), _gb(2, 3, c=-0.5)], lambda a, lo: a.clone().clamp_min_(lo))],
    "clamp_max": [([_gx(2, 3)], lambda a: torchlet.clamp_max(a, -0.5))],
    "clamp_max_": [([_gx(2, 3)], lambda a: a.clone().clamp_max_(0.5))],
    "clamp_max.Tensor": [([_gx(2, 3), _gb(1, 3, c=0.5)], lambda a, hi: torchlet.clamp_max(a, hi))],
    "clamp_max_.Tensor": [([_gx(2, 3), _gb(2, 3, c=-0.5)], lambda a, hi: a.clone().clamp_max_(hi))],
}


# reductions: own generator; distinct values
# (no ties at max/amax/inf-norm), values away from 0 where |x| has a kink
RR = np.random.default_rng(4242)


def _rr(*shape):
    return RR.standard_normal(shape)


def _raway(*shape):
    """|x| in [0.5, 1.5], both signs: prod / norms / cumprod away from 0"""
    return RR.uniform(0.5, 1.5, shape) * np.where(RR.random(shape) < 0.5, -1.0, 1.0)


def _with_zero(*shape, zeros=1):
    a = _raway(*shape).ravel()
    a[RR.choice(a.size, zeros, replace=False)] = 0.0
    return a.reshape(shape)


REDUCTION_CASES = {
    "mean": [([_rr(2, 3)], lambda a: a.mean()), ([_rr()], lambda a: torchlet.mean(a)),
             ([_rr(3, 2)], lambda a: T(a).mean())],
    "mean.dim": [([_rr(2, 3, 4)], lambda a: a.mean(1)), ([_rr(2, 3, 4)], lambda a: a.mean((0, 2), keepdim=True)),
                 ([_rr(4, 3)], lambda a: T(a).mean(-1)), ([_rr(2, 3)], lambda a: a.mean(()))],
    "prod": [([_raway(2, 3)], lambda a: a.prod()), ([_with_zero(2, 3)], lambda a: torchlet.prod(a)),
             ([_with_zero(5, zeros=2)], lambda a: a.prod()), ([_rr()], lambda a: a.prod())],
    "prod.dim_int": [([_raway(2, 3, 4)], lambda a: a.prod(1)), ([_with_zero(3, 4)], lambda a: a.prod(1, keepdim=True)),
                     ([_with_zero(4, 3, zeros=2)], lambda a: T(a).prod(0))],
    "amax": [([_rr(3, 4)], lambda a: a.amax(1)), ([_rr(2, 3, 4)], lambda a: torchlet.amax(a, (0, 2), keepdim=True)),
             ([_rr(4, 3)], lambda a: T(a).amax()),
             ([np.array([[1.0, 3.0, 3.0], [2.0, 0.5, 2.0]])], lambda a: a.amax(1))],   # ties share the gradient
    "amin": [([_rr(3, 4)], lambda a: a.amin(0)), ([_rr(2, 3)], lambda a: torchlet.amin(a, -1, True))],
    "max": [([_rr(3, 4)], lambda a: a.max()), ([np.array([1.0, 4.0, 4.0, 2.0])], lambda a: torchlet.max(a))],
    "min": [([_rr(4, 3)], lambda a: T(a).min()), ([_rr()], lambda a: a.min())],
    "var.correction": [([_rr(3, 4)], lambda a: a.var()), ([_rr(3, 4)], lambda a: torchlet.var(a, 1, correction=0)),
                       ([_rr(2, 3, 4)], lambda a: a.var((0, 2), keepdim=True)),
                       ([_rr(4, 3)], lambda a: torchlet.var(T(a), 0, unbiased=False))],
    "std.correction": [([_rr(3, 4)], lambda a: a.std()), ([_rr(3, 4)], lambda a: torchlet.std(a, 1, keepdim=True)),
                       ([_rr(4, 3)], lambda a: torchlet.std(T(a), 0, correction=2))],
    "std_mean.correction": [
        ([_rr(3, 4)], lambda a: torchlet.std_mean(a, 1)[0] * 2.0 + torchlet.std_mean(a, 1)[1]),
        ([_rr(3, 4)], lambda a: torchlet.std_mean(a)[0]),
        ([_rr(4, 3)], lambda a: torchlet.std_mean(T(a), 0, keepdim=True)[1])],
    "logsumexp": [([_rr(3, 4)], lambda a: a.logsumexp(1)), ([_rr(2, 3, 4)], lambda a: torchlet.logsumexp(a, (0, 2), True)),
                  ([_rr(4, 3)], lambda a: torchlet.logsumexp(T(a), 0)), ([_rr()], lambda a: a.logsumexp(0))],
    "linalg_vector_norm": [
        ([_rr(3, 4)], lambda a: torchlet.linalg.vector_norm(a)),
        ([_raway(3, 4)], lambda a: torchlet.linalg.vector_norm(a, 1, 1)),
        ([_rr(3, 4)], lambda a: torchlet.linalg.vector_norm(a, float("inf"), 0, True)),
        ([_rr(3, 4)], lambda a: torchlet.linalg.vector_norm(T(a), float("-inf"), -1)),
        ([_raway(2, 3)], lambda a: torchlet.linalg.vector_norm(a, 3.0, (0, 1))),
        ([_raway(2, 3)], lambda a: torchlet.linalg.vector_norm(a, 1.5)),
        ([_raway(2, 3)], lambda a: torchlet.linalg.vector_norm(a, 0.5, 1)),
        ([_rr(2, 3)], lambda a: torchlet.norm(a, dim=1))],
    "cumsum": [([_rr(3, 4)], lambda a: a.cumsum(1)), ([_rr(4, 3)], lambda a: torchlet.cumsum(T(a), 0)),
               ([_rr()], lambda a: a.cumsum(0))],
    "cumsum_": [([_rr(3, 4)], lambda a: a.clone().cumsum_(0))],
    "cumprod": [([_raway(3, 4)], lambda a: a.cumprod(1)), ([_with_zero(3, 4, zeros=3)], lambda a: a.cumprod(1)),
                ([_raway(4, 3)], lambda a: torchlet.cumprod(T(a), 0))],
    "cumprod_": [([_raway(3, 4)], lambda a: a.clone().cumprod_(-1))],
    "flip": [([_rr(2, 3, 4)], lambda a: a.flip((0, 2))), ([_rr(3, 2)], lambda a: torchlet.flip(T(a), [1]))],
}


# inverse hyperbolics, svd and matrix norms, fill overloads: own generator, so
# the cases above keep their inputs
RM = np.random.default_rng(606)


def _pm(*shape, lo=-2.0, hi=2.0):
    return RM.uniform(lo, hi, shape)


MISSING_OPS_CASES = {
    "asinh": [([_pm(2, 3)], lambda a: torchlet.asinh(T(a))), ([_pm()], torchlet.asinh),
              ([_pm(3)], lambda a: torchlet.arcsinh(a))],
    "acosh": [([_pm(2, 3, lo=1.2, hi=3.0)], lambda a: torchlet.acosh(T(a))), ([_pm(lo=1.2, hi=3.0)], torchlet.acosh),
              ([_pm(3, lo=1.2, hi=3.0)], lambda a: a.arccosh())],
    "atanh": [([_pm(2, 3, lo=-0.8, hi=0.8)], lambda a: torchlet.atanh(T(a))), ([_pm(lo=-0.8, hi=0.8)], torchlet.atanh),
              ([_pm(3, lo=-0.8, hi=0.8)], lambda a: torchlet.arctanh(a))],
    # singular values, and U / Vh through sign-invariant products (tests/autograd/test_svd_backward.py)
    "_linalg_svd": [([_pm(3, 4)], lambda a: torchlet.linalg.svdvals(a)),
                    ([_pm(4, 3)], lambda a: (lambda r: r[0] * r[0])(torchlet.linalg.svd(a, False))),
                    ([_pm(2, 3)], lambda a: (lambda r: r[2] * r[2])(torchlet.linalg.svd(a, False))),
                    ([_pm(2, 4, 3)], lambda a: torchlet._linalg_svd(a.transpose(1, 2), True, True)[1]),
                    ([_pm(4, 3)], lambda a: torchlet.linalg.matrix_norm(a, "nuc")),
                    ([_pm(3, 3)], lambda a: torchlet.linalg.matrix_norm(a, -2)),
                    ([_pm(2, 3)], lambda a: torchlet.norm(a, "nuc"))],
    # fill's overloads
    "fill.Scalar": [([_pm(2, 3)], lambda a: torchlet.fill(T(a), 1.5) + a.t())],
    "fill.Tensor": [([_pm(2, 3), _pm()], lambda a, v: torchlet.fill(T(a), v)),
                    ([_pm(4), _pm()], lambda a, v: torchlet.fill(a, v) * a)],
    "fill_.Tensor": [([_pm(2, 3), _pm()], lambda a, v: (a * 2).fill_(v)),
                     ([_pm(3, 2), _pm()], lambda a, v: T(a * 1).fill_(v * v) * a.t())],
}


# dropout's backward, the functional _index_put_impl and _unsafe_view, with
# PyTorch's derivatives.yaml entries.
# native_dropout_backward's mask is a constant bool tensor (not differentiable);
# the functional _index_put_impl (autogen) takes _index_put_impl_'s entry, as in PyTorch
RDV = np.random.default_rng(6065)
_DMASK = torchlet.tensor(RDV.random((3, 4)) < 0.6)
DROPOUT_INDEX_PUT_VIEW_CASES = {
    "native_dropout_backward": [([RDV.standard_normal((3, 4))], lambda g: torchlet.native_dropout_backward(g, _DMASK, 1.0 / 0.6)),
                                ([RDV.standard_normal((4, 3))], lambda g: torchlet.native_dropout_backward(T(g), _DMASK, 2.5) * T(g))],
    "_index_put_impl": [([RDV.standard_normal((4, 5)), RDV.standard_normal((3, 5))],
                         lambda a, v: torchlet._index_put_impl(a, [_ix([2, 0, 2])], v, True)),
                        ([RDV.standard_normal((5, 4)), RDV.standard_normal((2,))],
                         lambda a, v: torchlet._index_put_impl(T(a), [None, _ix([4, 0])], v, False, True))],
    # reshape's copy and matmul's product end in it (UnsafeViewBackward0, as PyTorch)
    "_unsafe_view": [([RDV.standard_normal((3, 4))], lambda a: torchlet.library.call("aten::_unsafe_view", a * 1.0, [2, 6])),
                     ([RDV.standard_normal((4, 3))], lambda a: T(a).reshape(12)),
                     ([RDV.standard_normal((2, 2, 3)), RDV.standard_normal((3, 2))], lambda a, b: a @ b)],
}


# index_copy / index_fill.int_Scalar: own generator. Distinct indices (with a
# repeated index only the last copy lands, and PyTorch's formula still gives
# every copy the gradient); a negative index for index_fill
RIC = np.random.default_rng(6068)


def _ric(*shape):
    return RIC.standard_normal(shape)


INDEX_COPY_CASES = {
    "index_copy": [([_ric(4, 5), _ric(4, 3)], lambda a, s: torchlet.index_copy(a, 1, _ix([4, 0, 2]), s)),
                   ([_ric(5, 4), _ric(3, 4)], lambda a, s: torchlet.index_copy(T(a), -1, _ix([1, 3]), T(s)[:, :2])),
                   ([_ric(2, 3, 4), _ric(2, 1, 4)], lambda a, s: torchlet.index_copy(a, 1, _ix([2]), s)),
                   ([_ric(5), _ric()], lambda a, s: torchlet.index_copy(a, 0, _ix([3]), s)),  # 0-dim source
                   ([_ric(), _ric()], lambda a, s: torchlet.index_copy(a, 0, _ix(0), s))],    # 0-dim both
    "index_copy_": [([_ric(4, 5), _ric(4, 3)], lambda a, s: a.clone().index_copy_(1, _ix([4, 0, 2]), s))],
    "index_fill.int_Scalar": [([_ric(4, 5)], lambda a: torchlet.index_fill(a, 1, _ix([4, 0, -2]), 1.5)),
                              ([_ric(5, 4)], lambda a: T(a).index_fill(0, _ix(3), 0.0)),
                              ([_ric()], lambda a: a.index_fill(0, _ix([0]), -1.0))],
    "index_fill_.int_Scalar": [([_ric(4, 5)], lambda a: a.clone().index_fill_(0, _ix([1, 1, 3]), 2.0))],
}


# repeat, roll, diagonal, diag_embed, trace, sort, topk (kernels/native/tensor_shapes.c, sort.c);
# distinct values for the sorts (ties have no derivative)
RSS = np.random.default_rng(8819)


def _distinct(*shape):
    n = int(np.prod(shape)) if shape else 1
    return (RSS.permutation(n).astype(np.float64) + RSS.uniform(0.1, 0.4, n)).reshape(shape)


SHAPES_SORT_CASES = {
    "repeat": [([rn(2, 3)], lambda a: a.repeat(2, 1, 3)), ([rn(3, 2)], lambda a: T(a).repeat(1, 2))],
    "roll": [([rn(3, 4)], lambda a: torchlet.roll(a, [1, -2], [0, 1])), ([rn(5)], lambda a: torchlet.roll(a, 7, 0))],
    "diagonal": [([rn(3, 4)], lambda a: torchlet.diagonal(a, 1)), ([rn(2, 3, 4)], lambda a: a.diagonal(-1, 0, 2))],
    "diagonal_backward": [([rn(3)], lambda g: torchlet.library.call("aten::diagonal_backward", g, [3, 4], 1, 0, 1))],
    "diag_embed": [([rn(2, 3)], lambda a: torchlet.diag_embed(a)), ([rn(3)], lambda a: torchlet.diag_embed(a, -1))],
    "trace": [([rn(3, 4)], lambda a: torchlet.trace(a)), ([rn(4, 3)], lambda a: T(a).trace())],
    "sort": [([_distinct(3, 5)], lambda a: torchlet.sort(a, 1)[0]),
             ([_distinct(4, 3)], lambda a: torchlet.sort(T(a), 0, True)[0])],
    "sort.stable": [([_distinct(6)], lambda a: torchlet.sort(a, stable=True, dim=0, descending=False)[0])],
    "topk": [([_distinct(3, 6)], lambda a: torchlet.topk(a, 2, 1)[0]),
             ([_distinct(5)], lambda a: torchlet.topk(a, 3, largest=False)[0])],
}


# selection: kthvalue, median, mode, cummax/cummin, aminmax, nan-reductions,
# masked_select, take (kernels/native/select.c, select_index.c); distinct values
_NANX = _distinct(3, 4)
_NANX[1, 2] = np.nan
_MSK = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
SELECT_CASES = {
    "kthvalue": [([_distinct(3, 5)], lambda a: torchlet.kthvalue(a, 2, 1)[0]),
                 ([_distinct(4, 3)], lambda a: torchlet.kthvalue(T(a), 3, 0, True)[0])],
    "median": [([_distinct(3, 5)], lambda a: torchlet.median(a)), ([_distinct(4)], lambda a: T(a).median())],
    "nanmedian": [([_distinct(3, 5)], lambda a: torchlet.nanmedian(a))],
    "median.dim": [([_distinct(3, 5)], lambda a: torchlet.median(a, 1)[0]),
                   ([_distinct(4, 3)], lambda a: torchlet.median(T(a), 0, True)[0])],
    "nanmedian.dim": [([_distinct(3, 5)], lambda a: torchlet.nanmedian(a, 1)[0])],
    "mode": [([_distinct(3, 5)], lambda a: torchlet.mode(a, 1)[0])],
    "cummax": [([_distinct(3, 5)], lambda a: torchlet.cummax(a, 1)[0]),
               ([_distinct(4, 3)], lambda a: torchlet.cummax(T(a), 0)[0])],
    "cummin": [([_distinct(3, 5)], lambda a: torchlet.cummin(a, 0)[0])],
    "cummaxmin_backward": [([rn(3, 4)], lambda g: torchlet.cummaxmin_backward(
        g, torchlet.zeros(3, 4, dtype=torchlet.float64), torchlet.tensor([[0, 0, 2, 2]] * 3), 1))],
    "aminmax": [([_distinct(3, 5)], lambda a: (lambda r: r[0] * 2 + r[1])(torchlet.aminmax(a, dim=1))),
                ([_distinct(3, 4)], lambda a: (lambda r: r[0] - r[1])(torchlet.aminmax(T(a), keepdim=True)))],
    "nansum": [([rn(3, 4)], lambda a: torchlet.nansum(a, 1)), ([_NANX], lambda a: torchlet.nansum(a)),
               ([_NANX], lambda a: torchlet.nansum(T(a), 0, keepdim=True))],
    "masked_select": [([rn(3, 4)], lambda a: torchlet.masked_select(a, torchlet.tensor(_MSK))),
                      ([rn(4)], lambda a: torchlet.masked_select(a, torchlet.tensor(_MSK)))],  # broadcast
    "masked_select_backward": [([rn(7)], lambda g: torchlet.masked_select_backward(
        g, torchlet.zeros(3, 4, dtype=torchlet.float64), torchlet.tensor(_MSK)))],
    "take": [([rn(3, 4)], lambda a: torchlet.take(a, torchlet.tensor([[0, 5], [-1, 5]]))),
             ([rn(4, 3)], lambda a: T(a).take(torchlet.tensor([11, 2, 2])))],
    "masked_scatter": [([rn(3, 4), rn(9)], lambda a, s: torchlet.masked_scatter(a, torchlet.tensor(_MSK), s)),
                       ([rn(4), rn(2, 5)], lambda a, s: a.masked_scatter(torchlet.tensor(_MSK), s))],  # broadcast
    "masked_scatter_": [([rn(3, 4), rn(9)], lambda a, s: a.clone().masked_scatter_(torchlet.tensor(_MSK), s))],
    "masked_scatter_backward": [([rn(3, 4)], lambda g: torchlet.masked_scatter_backward(
        g, torchlet.tensor(_MSK), [2, 5]))],
    "block_diag": [([rn(2, 3), rn(4), rn()], lambda a, b, c: torchlet.block_diag(a, T(b) if b.ndim == 2 else b, c))],
    "logcumsumexp": [([rn(3, 5)], lambda a: torchlet.logcumsumexp(a, 1)),
                     ([rn(4, 3)], lambda a: T(a).logcumsumexp(0)), ([rn()], lambda a: torchlet.logcumsumexp(a, 0))],
    # scatter_reduce / index_reduce: every reduction, with and without self;
    # distinct values (amax / amin ties are split evenly, not differentiable)
    "scatter_reduce.two": [
        ([_distinct(3, 5), _distinct(3, 4)], lambda a, s, r=r, inc=inc: torchlet.scatter_reduce(
            a, 1, _ix([[0, 0, 4, 2], [1, 3, 3, 3], [4, 4, 4, 0]]), s, r, include_self=inc))
        for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)] + [
        ([_distinct(3, 5), _distinct(3, 4)], lambda a, s: torchlet.scatter_reduce(
            T(a), 0, _ix([[0, 1, 2], [0, 1, 2], [3, 3, 3], [4, 0, 4]]), T(s), "prod"))],
    "scatter_reduce_.two": [([_distinct(3, 5), _distinct(3, 4)], lambda a, s: a.clone().scatter_reduce_(
        1, _ix([[0, 0, 4, 2], [1, 3, 3, 3], [4, 4, 4, 0]]), s, "mean", include_self=False))],
    "index_reduce": [
        ([_distinct(5, 3), _distinct(4, 3)], lambda a, s, r=r, inc=inc: torchlet.index_reduce(
            a, 0, _ix([4, 0, 4, 2]), s, r, include_self=inc))
        for r in ("prod", "mean", "amax", "amin") for inc in (True, False)] + [
        ([_distinct(5, 3), _distinct(4, 3)], lambda a, s: torchlet.index_reduce(T(a), 1, _ix([1, 1, 0, 4]), T(s), "amax"))],
    "index_reduce_": [([_distinct(5, 3), _distinct(4, 3)], lambda a, s: a.clone().index_reduce_(
        0, _ix([4, 0, 4, 2]), s, "prod", include_self=False))],
    "sgn": [([rn(3, 4)], lambda a: torchlet.sgn(a))],
    "sgn_": [([rn(3, 4)], lambda a: a.clone().sgn_())],
}

# pooling: their own generator; distinct values (no tied maxima) and windows
# with padding, ceil_mode, dilation, non-contiguous inputs
RP = np.random.default_rng(4242)


def _rp(*shape):
    return RP.permutation(np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape) * 0.1 + RP.uniform(0, 0.01, shape)


def _mp_ind(x, *args):
    return _nn().max_pool2d_with_indices(torchlet.tensor(x), *args)[1]


def _amp_ind(x, os):
    return _nn().adaptive_max_pool2d(torchlet.tensor(x), os)[1]


_MPX = _rp(2, 3, 7, 6)
_AMX = _rp(2, 5, 7)
POOL_CASES = {
    "max_pool2d_with_indices": [
        ([_rp(2, 3, 7, 6)], lambda x: _nn().max_pool2d_with_indices(x, [3, 2], [2, 1], [1, 1], [1, 1], False)[0]),
        ([_rp(3, 6, 5)], lambda x: _nn().max_pool2d_with_indices(x, 2, [], 0, 2, True)[0]),
        ([_rp(2, 6, 7, 3)], lambda x: _nn().max_pool2d_with_indices(x.permute(0, 3, 1, 2), 3, 2, 1, 1, True)[0])],
    "max_pool2d_with_indices_backward": [
        ([_rp(2, 3, 4, 7), _MPX], lambda g, x: _nn().max_pool2d_with_indices_backward(
            g, x, [3, 2], [2, 1], [1, 1], [1, 1], False, _mp_ind(_MPX, [3, 2], [2, 1], [1, 1], [1, 1], False)))],
    "avg_pool2d": [
        ([_rp(2, 3, 7, 6)], lambda x: _nn().avg_pool2d(x, [3, 2], [2, 1], [1, 1], False, True, None)),
        ([_rp(3, 7, 5)], lambda x: _nn().avg_pool2d(x, 3, 2, 1, True, False, None)),
        ([_rp(2, 6, 7, 3)], lambda x: _nn().avg_pool2d(x.permute(0, 3, 1, 2), 2, 1, 1, True, True, 3))],
    "avg_pool2d_backward": [
        ([_rp(3, 4, 3), _rp(3, 7, 5)], lambda g, x: _nn().avg_pool2d_backward(g, x, [3, 3], [2, 2], [1, 1], True,
                                                                             False, None))],
    "_adaptive_avg_pool2d": [
        ([_rp(2, 3, 7, 6)], lambda x: torchlet._adaptive_avg_pool2d(x, [3, 4])),
        ([_rp(3, 5, 7)], lambda x: torchlet._adaptive_avg_pool2d(x.transpose(1, 2), [4, 2]))],
    "_adaptive_avg_pool2d_backward": [
        ([_rp(2, 3, 3, 4), _rp(2, 3, 7, 6)], lambda g, x: _nn()._adaptive_avg_pool2d_backward(g, x))],
    "adaptive_max_pool2d": [
        ([_rp(2, 3, 7, 6)], lambda x: _nn().adaptive_max_pool2d(x, [3, 4])[0]),
        ([_rp(3, 5, 7)], lambda x: _nn().adaptive_max_pool2d(x.transpose(1, 2), [4, 2])[0])],
    "adaptive_max_pool2d_backward": [
        ([_rp(2, 2, 3), _AMX], lambda g, x: _nn().adaptive_max_pool2d_backward(g, x, _amp_ind(_AMX, [2, 3])))],
}



def _bnstats():
    return (torchlet.tensor([0.1, -0.2, 0.3], dtype=torchlet.float64),
            torchlet.tensor([1.5, 0.5, 2.0], dtype=torchlet.float64))


NORM_CASES = {
    "native_batch_norm": [
        ([_rp(4, 3, 2, 2), _rp(3), _rp(3)], lambda x, w, b: torchlet.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0]),
        ([_rp(4, 3, 5)], lambda x: torchlet.native_batch_norm(x.transpose(0, 2).transpose(0, 2), None, None, *_bnstats(), True, 0.1, 1e-5)[0]),
        ([_rp(4, 3, 2), _rp(3), _rp(3)], lambda x, w, b: torchlet.native_batch_norm(x, w, b, *_bnstats(), False, 0.1, 1e-5)[0])],
    "_native_batch_norm_legit": [
        ([_rp(4, 3, 2), _rp(3), _rp(3)], lambda x, w, b: torchlet.ops.aten._native_batch_norm_legit.default(x, w, b, *_bnstats(), True, 0.1, 1e-5)[0])],
    "_native_batch_norm_legit_no_training": [
        ([_rp(4, 3, 2), _rp(3), _rp(3)], lambda x, w, b: torchlet._native_batch_norm_legit_no_training(x, w, b, *_bnstats(), 0.1, 1e-5)[0])],
    "_native_batch_norm_legit.no_stats": [
        ([_rp(4, 3, 2), _rp(3), _rp(3)], lambda x, w, b: torchlet._native_batch_norm_legit(x, w, b, True, 0.1, 1e-5)[0])],
    "native_group_norm": [
        ([_rp(2, 6, 2, 2), _rp(6), _rp(6)], lambda x, w, b: torchlet.native_group_norm(x, w, b, 2, 6, 4, 3, 1e-5)[0]),
        ([_rp(3, 4, 5)], lambda x: torchlet.native_group_norm(x, None, None, 3, 4, 5, 1, 1e-5)[0])],
}


PAD_CASES = {
    "constant_pad_nd": [([_rp(2, 3, 4)], lambda x: torchlet.constant_pad_nd(x, [1, 2, -1, 1], 0.5)),
                        ([_rp(3, 4)], lambda x: torchlet.constant_pad_nd(x.t(), [2, 0]))],
    "reflection_pad1d": [([_rp(2, 3, 5)], lambda x: _nn().reflection_pad1d(x, [2, 3]))],
    "reflection_pad2d": [([_rp(2, 3, 4, 5)], lambda x: _nn().reflection_pad2d(x, [2, 1, 3, 0])),
                         ([_rp(3, 5, 4)], lambda x: _nn().reflection_pad2d(x.transpose(1, 2), [-1, 2, 1, 1]))],
    "replication_pad1d": [([_rp(2, 3, 5)], lambda x: _nn().replication_pad1d(x, [4, 1]))],
    "replication_pad2d": [([_rp(2, 3, 4, 5)], lambda x: _nn().replication_pad2d(x, [2, 5, 3, -1]))],
    "reflection_pad1d_backward": [([_rp(2, 3, 10), _rp(2, 3, 5)], lambda g, x: _nn().reflection_pad1d_backward(g, x, [2, 3]))],
    "reflection_pad2d_backward": [([_rp(2, 3, 7, 8), _rp(2, 3, 4, 5)], lambda g, x: _nn().reflection_pad2d_backward(g, x, [2, 1, 3, 0]))],
    "replication_pad1d_backward": [([_rp(2, 3, 10), _rp(2, 3, 5)], lambda g, x: _nn().replication_pad1d_backward(g, x, [4, 1]))],
    "replication_pad2d_backward": [([_rp(2, 3, 7, 8), _rp(2, 3, 4, 5)], lambda g, x: _nn().replication_pad2d_backward(g, x, [2, 1, 3, 0]))],
}

# contractions and products (addmv, addr, addbmm, linalg_cross, dist, the
# distance kernels): own generator; transposed operands, broadcast self
RPR = np.random.default_rng(6063)


def _rpr(*shape):
    return RPR.standard_normal(shape)


PRODUCTS_CASES = {
    "addmv": [([_rpr(3), _rpr(3, 4), _rpr(4)], lambda s, m, v: torchlet.addmv(s, m, v, beta=0.5, alpha=2)),
              ([_rpr(1), _rpr(4, 3), _rpr(4)], lambda s, m, v: torchlet.addmv(s, T(m), v))],
    "addr": [([_rpr(3, 4), _rpr(3), _rpr(4)], lambda s, a, b: torchlet.addr(s, a, b, beta=-1, alpha=1.5)),
             ([_rpr(4), _rpr(3), _rpr(4)], lambda s, a, b: torchlet.addr(s, a, b))],
    "addbmm": [([_rpr(3, 2), _rpr(2, 3, 4), _rpr(2, 4, 2)], lambda s, a, b: torchlet.addbmm(s, a, b, alpha=0.5)),
               ([_rpr(2), _rpr(2, 4, 3), _rpr(2, 4, 2)],
                lambda s, a, b: torchlet.addbmm(s, a.transpose(1, 2), b, beta=2))],
    "linalg_cross": [([_rpr(4, 3), _rpr(4, 3)], lambda a, b: torchlet.linalg.cross(a, b)),
                     ([_rpr(3, 2), _rpr(3, 1)], lambda a, b: torchlet.linalg.cross(T(a), T(b), dim=1))],
    "dist": [([_rpr(3, 4), _rpr(4)], lambda a, b: torchlet.dist(a, b)),
             ([_rpr(5), _rpr(5)], lambda a, b: torchlet.dist(a, b, 3.5)),
             ([_rpr(2, 3), _rpr(2, 3)], lambda a, b: torchlet.dist(a, b, float("inf")))],
    "_euclidean_dist": [([_rpr(3, 4), _rpr(5, 4)], lambda a, b: torchlet._euclidean_dist(a, b))],
    "_cdist_forward": [([_rpr(3, 4), _rpr(5, 4)], lambda a, b: torchlet._cdist_forward(a, b, 2.0, None)),
                       ([_rpr(2, 3, 4), _rpr(5, 4)], lambda a, b: torchlet._cdist_forward(a, b, 1.5, None)),
                       ([_rpr(3, 4), _rpr(5, 4)], lambda a, b: torchlet._cdist_forward(a, b, 3.0, 2))],
    "addmv_": [([_rpr(3), _rpr(3, 4), _rpr(4)], lambda s, m, v: s.clone().addmv_(m, v, beta=2, alpha=0.5))],
    "addr_": [([_rpr(3, 4), _rpr(3), _rpr(4)], lambda s, a, b: s.clone().addr_(a, b, beta=0.5))],
    "addbmm_": [([_rpr(3, 2), _rpr(2, 3, 4), _rpr(2, 4, 2)], lambda s, a, b: s.clone().addbmm_(a, b, alpha=-1))],
    "_pdist_forward": [([_rpr(4, 3)], lambda a: torchlet._pdist_forward(a, 2.0)),
                       ([_rpr(5, 2)], lambda a: torchlet._pdist_forward(a, 1.5))],
}

# shape helpers: rot90 and unsafe_split (CompositeExplicitAutograd, PyTorch's formulas)
SHAPE_HELPERS_CASES = {
    "rot90": [([rn(3, 4)], lambda a: torchlet.rot90(a)), ([rn(2, 3, 4)], lambda a: torchlet.rot90(a, -3, [2, 0])),
              ([rn(3, 4)], lambda a: T(a).rot90(2))],
    "unsafe_split.Tensor": [([rn(5, 3)], lambda a: torchlet.unsafe_split(a, 2)[2] * 2),
                            ([rn(3, 4)], lambda a: torchlet.unsafe_split(T(a), 3, 0)[0] + 1)],
    "narrow_copy": [([rn(4, 3)], lambda a: torchlet.narrow_copy(a, 0, 1, 2)), ([rn(3, 4)], lambda a: T(a).narrow_copy(1, 0, 3))],
    "alias_copy": [([rn(2, 3)], lambda a: torchlet.alias_copy(a))],
    "as_strided_copy": [([rn(3, 4)], lambda a: torchlet.as_strided_copy(a, [2, 2], [4, 1], 1))],
    "diagonal_copy": [([rn(3, 4)], lambda a: torchlet.diagonal_copy(a, -1))],
    "expand_copy": [([rn(3, 1)], lambda a: torchlet.expand_copy(a, [2, 3, 4]))],
    "permute_copy": [([rn(2, 3, 4)], lambda a: torchlet.permute_copy(a, [2, 0, 1]))],
    "split_with_sizes_copy": [([rn(5, 3)], lambda a: torchlet.split_with_sizes_copy(a, [2, 3])[1] * 2)],
    "squeeze_copy": [([rn(1, 3, 1)], lambda a: torchlet.squeeze_copy(a))],
    "squeeze_copy.dim": [([rn(1, 3, 1)], lambda a: torchlet.squeeze_copy(a, -1))],
    "squeeze_copy.dims": [([rn(1, 3, 1)], lambda a: torchlet.squeeze_copy(a, [0, 2]))],
    "t_copy": [([rn(2, 3)], lambda a: torchlet.t_copy(a))],
    "transpose_copy.int": [([rn(2, 3, 4)], lambda a: torchlet.transpose_copy(a, 0, 2))],
    "unsqueeze_copy": [([rn(2, 3)], lambda a: torchlet.unsqueeze_copy(a, 1))],
    "unbind_copy.int": [([rn(3, 2)], lambda a: torchlet.unbind_copy(a, 1)[0] * 3)],
    "view_copy": [([rn(2, 6)], lambda a: torchlet.view_copy(a, [3, 4])), ([rn(3, 4)], lambda a: torchlet.view_copy(T(a), [12]))],
    "slice_scatter": [([rn(4, 3), rn(2, 3)], lambda a, s: torchlet.slice_scatter(a, s, 0, 1, 4, 2))],
    "select_scatter": [([rn(3, 4), rn(3)], lambda a, s: torchlet.select_scatter(a, s, 1, -1))],
    "diagonal_scatter": [([rn(3, 4), rn(3)], lambda a, s: torchlet.diagonal_scatter(a, s, 1))],
    "vdot": [([rn(4), rn(4)], lambda a, b: torchlet.vdot(a, b)), ([rn(3, 2), rn(3)], lambda a, b: T(a)[1].vdot(b))],
}

# LAPACK solvers and decompositions (docs/LINALG.md): their own generator;
# well-conditioned matrices, symmetric positive-definite ones for cholesky,
# factors perturbed on their triangle only (the other is not read)
RL = np.random.default_rng(4242)


def _well(*shape):
    n = shape[-1]
    return RL.standard_normal(shape) + 3 * n ** 0.5 * np.eye(n)


def _spd(*shape):
    a = RL.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _sym(a):
    return (a + a.transpose(-2, -1)) / 2


LINALG_SOLVER_CASES = {
    "linalg_inv_ex": [([_well(3, 3)], lambda a: torchlet.linalg.inv_ex(T(a))[0]),
                      ([_well(2, 3, 3)], lambda a: torchlet.linalg.inv(a))],
    "_linalg_solve_ex": [([_well(3, 3), RL.standard_normal((3, 2))], lambda a, b: torchlet.linalg.solve(a, b)),
                         ([_well(2, 3, 3), RL.standard_normal(3)], lambda a, b: torchlet.linalg.solve(a, b)),
                         ([_well(3, 3), RL.standard_normal((2, 4, 3))],
                          lambda a, b: torchlet.linalg.solve(a, b, left=False))],
    "_linalg_det": [([_well(2, 3, 3)], lambda a: torchlet.linalg.det(a)),
                    ([np.array([[1.0, 2.0], [2.0, 4.0]])], lambda a: torchlet.det(a))],
    "_linalg_slogdet": [([_well(2, 3, 3)], lambda a: torchlet.linalg.slogdet(a)[1]),
                        ([_spd(3, 3)], lambda a: torchlet.logdet(a))],
    "linalg_cholesky_ex": [([_spd(3, 3)], lambda a: torchlet.linalg.cholesky_ex(_sym(a))[0]),
                           ([_spd(2, 3, 3)], lambda a: torchlet.linalg.cholesky(_sym(a), upper=True))],
    "cholesky": [([_spd(3, 3)], lambda a: torchlet.cholesky(_sym(a)))],
    "_linalg_eigh": [([RL.standard_normal((3, 3))], lambda a: torchlet.linalg.eigvalsh(_sym(a))),
                     ([RL.standard_normal((3, 3))],
                      lambda a: (lambda v: v * v)(torchlet.linalg.eigh(_sym(a), UPLO="U")[1]))],
    "linalg_solve_triangular": [
        ([_well(3, 3), RL.standard_normal((3, 2))],
         lambda a, b: torchlet.linalg.solve_triangular(a.triu(), b, upper=True)),
        ([_well(3, 3), RL.standard_normal((2, 3))],
         lambda a, b: torchlet.linalg.solve_triangular(a.tril(), b, upper=False, left=False, unitriangular=True))],
    "cholesky_solve": [([RL.standard_normal((3, 2)), np.linalg.cholesky(_spd(3, 3))],
                        lambda b, l: torchlet.cholesky_solve(b, l.tril()))],
    "cholesky_inverse": [([np.linalg.cholesky(_spd(3, 3)).T.copy()],
                          lambda u: torchlet.cholesky_inverse(u.triu(), upper=True))],
}


# _ctc_loss through log_softmax (its formula is the gradient for normalized
# log-probabilities); the norm backward operators with their saved
# statistics recomputed from the (perturbed) input, as the double-backward
# formulas differentiate them
_CTC_TG = np.array([[1, 2, 2], [3, 1, 0]])


def _bn_bwd(g, x, w, train, out):
    with torchlet.no_grad():
        _, m, s = torchlet.native_batch_norm(x.detach(), w.detach(), None, None, None, True, 0.1, 1e-5)
    rm, rv = (None, None) if train else _bnstats()
    return torchlet.native_batch_norm_backward(g, x, w, rm, rv, m if train else None, s if train else None, train,
                                               1e-5, [True, True, True])[out]


def _gn_bwd(g, x, w, out):
    N, C = x.shape[0], x.shape[1]
    with torchlet.no_grad():
        _, m, s = torchlet.native_group_norm(x.detach(), None, None, N, C, x[0, 0].numel(), 2, 1e-5)
    return torchlet.native_group_norm_backward(g, x, m, s, w, N, C, x[0, 0].numel(), 2, [True, True, True])[out]


CTC_NORM_BACKWARD_CASES = {
    "_ctc_loss": [([_rv(5, 2, 4)], lambda a: torchlet._ctc_loss(a.log_softmax(2), torchlet.tensor(_CTC_TG), [5, 4],
                                                                 [3, 2])[0])],
    "_ctc_loss.Tensor": [([_rv(5, 2, 4)], lambda a: torchlet._ctc_loss(
        a.log_softmax(2), torchlet.tensor(_CTC_TG), torchlet.tensor([5, 5]), torchlet.tensor([3, 1]))[0])],
    "native_batch_norm_backward": [
        ([_rv(4, 3, 2), _rv(4, 3, 2), _rp(3)], lambda g, x, w: _bn_bwd(g, x, w, True, 0)),
        ([_rv(4, 3, 2), _rv(4, 3, 2), _rp(3)], lambda g, x, w: _bn_bwd(g, x, w, True, 1)),
        ([_rv(4, 3, 2), _rv(4, 3, 2), _rp(3)], lambda g, x, w: _bn_bwd(g, x, w, False, 0))],
    "native_group_norm_backward": [
        ([_rv(2, 4, 3), _rv(2, 4, 3), _rp(4)], lambda g, x, w: _gn_bwd(g, x, w, 0)),
        ([_rv(2, 4, 3), _rv(2, 4, 3), _rp(4)], lambda g, x, w: _gn_bwd(g, x, w, 1))],
}


# decompositions (kernels/native/linalg_decomp.c): their own generator
RDC = np.random.default_rng(2029)


def _wd(*shape):
    n = shape[-1]
    return RDC.standard_normal(shape) + 3 * n ** 0.5 * np.eye(n)


def _flat(ts):
    """several outputs as one tensor (the checker takes one output)"""
    return torchlet.cat([t.reshape(-1) for t in ts])


LINALG_DECOMP_CASES = {
    "linalg_lu_factor_ex": [([_wd(2, 3, 3)], lambda a: torchlet.linalg.lu_factor_ex(a)[0]),
                            ([RDC.standard_normal((3, 4))], lambda a: torchlet.linalg.lu_factor(a)[0])],
    "linalg_lu": [([RDC.standard_normal((4, 3))], lambda a: _flat(torchlet.linalg.lu(a)[1:])),
                  ([RDC.standard_normal((2, 3, 4))], lambda a: _flat(torchlet.linalg.lu(a.transpose(-2, -1))[1:]))],
    "linalg_lu_solve": [([_wd(3, 3), RDC.standard_normal((3, 2))],
                         lambda a, b: torchlet.linalg.lu_solve(*torchlet.linalg.lu_factor(a), b)),
                        ([_wd(3, 3), RDC.standard_normal((2, 3))],
                         lambda a, b: torchlet.linalg.lu_solve(*torchlet.linalg.lu_factor(a), b, left=False,
                                                               adjoint=True))],
    "lu_unpack": [([RDC.standard_normal((4, 3))],
                   lambda a: _flat(torchlet.lu_unpack(a, torchlet.linalg.lu_factor(a.detach())[1])[1:]))],
    "linalg_qr": [([RDC.standard_normal((4, 3))], lambda a: _flat(torchlet.linalg.qr(a))),
                  ([RDC.standard_normal((3, 5))], lambda a: _flat(torchlet.linalg.qr(a, mode="complete")))],
    "linalg_householder_product": [([RDC.standard_normal((4, 3)), RDC.standard_normal(2)],
                                    lambda a, t: torchlet.linalg.householder_product(a, t))],
    "ormqr": [([RDC.standard_normal((4, 3)), RDC.standard_normal(3), RDC.standard_normal((4, 2))],
               lambda a, t, c: torchlet.ormqr(a, t, c)),
              ([RDC.standard_normal((4, 3)), RDC.standard_normal(3), RDC.standard_normal((2, 4))],
               lambda a, t, c: torchlet.ormqr(a, t, c, left=False, transpose=True))],
    "triangular_solve": [([RDC.standard_normal((3, 2)), _wd(3, 3)],
                          lambda b, a: torchlet.triangular_solve(b, a.triu())[0]),
                         ([RDC.standard_normal((2, 3, 2)), _wd(3, 3)],
                          lambda b, a: _flat(torchlet.triangular_solve(b, a, False, True, True)))],
    "linalg_lstsq": [([RDC.standard_normal((5, 3)), RDC.standard_normal((5, 2))],
                      lambda a, b: torchlet.linalg.lstsq(a, b).solution),
                     ([RDC.standard_normal((5, 3)), RDC.standard_normal(5)],
                      lambda a, b: _flat(torchlet.linalg.lstsq(a, b, driver="gelsd")[:2]))],
    "linalg_pinv.atol_rtol_tensor": [([RDC.standard_normal((3, 4))], lambda a: torchlet.linalg.pinv(a)),
                                     ([RDC.standard_normal((2, 4, 3))], lambda a: torchlet.pinverse(a))],
    "linalg_matrix_exp": [([RDC.standard_normal((2, 3, 3))], lambda a: torchlet.linalg.matrix_exp(a))],
}


# complex dtypes and FFT: real float64 inputs made complex inside (complex / view_as_complex),
# complex outputs compared through view_as_real (a real function both ways)
_vr, _vc = (lambda z: torchlet.view_as_real(z)), (lambda a: torchlet.view_as_complex(a))
COMPLEX_FFT_CASES = {
    "view_as_real": [([rn(2, 3), rn(3)], lambda a, b: _vr(torchlet.complex(a, b)) * 2.0)],
    "view_as_complex": [([rn(3, 2)], lambda a: _vr(_vc(a) * _vc(a))), ([rn(2, 4, 2)], lambda a: _vr(_vc(a)[:, 1:3]))],
    "complex": [([rn(2, 3), rn(3)], lambda a, b: _vr(torchlet.complex(a, b))),
                ([rn(3, 2), rn(2, 3)], lambda a, b: _vr(torchlet.complex(T(a), b)))],
    "polar": [([np.abs(rn(4)) + 0.5, rn(4)], lambda a, b: _vr(torchlet.polar(a, b)))],
    "angle": [([rn(4), rn(4)], lambda a, b: torchlet.angle(torchlet.complex(a, b))),
              ([away(5)], lambda a: torchlet.angle(a) + a)],
    "_fft_r2c": [([rn(3, 5)], lambda a: _vr(torchlet._fft_r2c(a, [1], 0, True))),
                 ([rn(4, 6)], lambda a: _vr(torchlet._fft_r2c(a, [0, 1], 2, False))),
                 ([rn(2, 7)], lambda a: _vr(torchlet._fft_r2c(T(a), [0, 1], 1, True)))],
    "_fft_c2r": [([rn(3, 4, 2)], lambda a: torchlet._fft_c2r(_vc(a), [1], 0, 6)),
                 ([rn(3, 4, 2)], lambda a: torchlet._fft_c2r(_vc(a), [0, 1], 2, 7))],
    "_fft_c2c": [([rn(3, 5, 2)], lambda a: _vr(torchlet._fft_c2c(_vc(a), [0, 1], 1, True))),
                 ([rn(6, 2)], lambda a: _vr(torchlet._fft_c2c(_vc(a), [0], 2, False)))],
}


# linalg.eig (real and complex inputs; eigenvectors through |V|, which does not
# depend on their phases, as PyTorch's OpInfo)
LINALG_EIG_CASES = {
    "linalg_eig": [([RL.standard_normal((3, 3))], lambda a: _vr(torchlet.linalg.eig(a)[0])),
                   ([RL.standard_normal((2, 3, 3))], lambda a: torchlet.linalg.eig(a)[1].abs()),
                   ([rn(3, 3, 2)], lambda a: (lambda r: torchlet.cat([_vr(r[0]).flatten(), r[1].abs().flatten()]))(
                       torchlet.linalg.eig(_vc(a)))),
                   ([RL.standard_normal((4, 4))], lambda a: _vr(torchlet.linalg.eigvals(a)))],
}


CASES = {
    **COMPLEX_FFT_CASES,
    **LINALG_EIG_CASES,
    **CTC_NORM_BACKWARD_CASES,
    **SELECT_CASES,
    **POOL_CASES,
    **NORM_CASES,
    **PAD_CASES,
    **INDEX_COPY_CASES,
    **SHAPES_SORT_CASES,
    **DROPOUT_INDEX_PUT_VIEW_CASES,
    **REDUCTION_CASES,
    **COMPILER_CASES,
    **TERNARY_CASES,
    **POINTWISE_MATH_CASES,
    **SPECIAL_MATH_CASES,
    **SPECIAL_FNS_CASES,
    **ACTIVATION_CASES,
    **UNARY_CASES,
    **LINALG_CASES,
    **NN_CASES,
    **MISSING_OPS_CASES,
    **PRODUCTS_CASES,
    **LINALG_SOLVER_CASES,
    **LINALG_DECOMP_CASES,
    "add.Tensor": [([rn(2, 3), rn(3)], lambda a, b: torchlet.add(a, b, alpha=2.5)),
                   ([rn(3, 1), rn(1, 4)], lambda a, b: a + b),
                   ([rn(), rn(2)], lambda a, b: a + b),
                   ([rn(0, 3), rn(3)], lambda a, b: a + b)],  # empty
    "add_.Tensor": [([rn(2, 3), rn(3)], lambda a, b: a.clone().add_(b, alpha=-2))],
    "add.Scalar": [([rn(2, 3)], lambda a: torchlet.add(a, 1.5, alpha=2))],
    "add_.Scalar": [([rn(2, 3)], lambda a: a.clone().add_(1.5))],
    "sub.Tensor": [([rn(2, 3), rn(2, 1)], lambda a, b: torchlet.sub(a, b, alpha=3)),
                   ([rn(3, 2), rn(2, 3)], lambda a, b: T(a) - b)],
    "sub_.Tensor": [([rn(2, 3), rn(3)], lambda a, b: a.clone().sub_(b))],
    "sub.Scalar": [([rn(4)], lambda a: torchlet.sub(a, 2.0, alpha=3))],
    "sub_.Scalar": [([rn(4)], lambda a: a.clone().sub_(2.0))],
    "rsub.Tensor": [([rn(2, 3), rn(3)], lambda a, b: torchlet.rsub(a, b, alpha=2))],
    "rsub.Scalar": [([rn(2, 3)], lambda a: torchlet.rsub(a, 2.0, alpha=0.5))],
    "mul.Tensor": [([rn(2, 3), rn(3)], lambda a, b: a * b),
                   ([rn(3, 2), rn(1, 2)], lambda a, b: T(a) * T(b)),
                   ([rn(), rn(2, 2)], lambda a, b: a * b)],
    "mul_.Tensor": [([rn(2, 3), rn(2, 3)], lambda a, b: a.clone().mul_(b))],
    "mul.Scalar": [([rn(2, 3)], lambda a: a * 3.5)],
    "mul_.Scalar": [([rn(2, 3)], lambda a: a.clone().mul_(-2.0))],
    "div.Tensor": [([rn(2, 3), away(3)], lambda a, b: a / b),
                   ([away(2, 1), away(1, 3)], lambda a, b: a / b)],
    "div_.Tensor": [([rn(2, 3), away(2, 3)], lambda a, b: a.clone().div_(b))],
    "div.Scalar": [([rn(2, 3)], lambda a: a / 4.0)],
    "div_.Scalar": [([rn(2, 3)], lambda a: a.clone().div_(4.0))],
    "div.Tensor_mode": [([rn(2, 3), away(3)], lambda a, b: torchlet.div(a, b, rounding_mode=None)),
                        ([rn(2, 3) * 4, away(3)], lambda a, b: torchlet.div(a, b, rounding_mode="floor") + a),
                        ([rn(2, 3) * 4, away(2, 3)], lambda a, b: torchlet.div(a, b, rounding_mode="trunc") * b)],
    "div_.Tensor_mode": [([rn(2, 3), away(3)], lambda a, b: a.clone().div_(b, rounding_mode="floor") + a * b)],
    "div.Scalar_mode": [([rn(2, 3) * 4], lambda a: torchlet.div(a, 3.0, rounding_mode="trunc") + a),
                        ([rn(2, 3)], lambda a: torchlet.div(a, 3.0, rounding_mode=None))],
    "div_.Scalar_mode": [([rn(2, 3) * 4], lambda a: a.clone().div_(3.0, rounding_mode="floor") * a)],
    "neg": [([rn(2, 3)], lambda a: torchlet.neg(T(a)))],
    "neg_": [([rn(2, 3)], lambda a: a.clone().neg_())],
    "relu": [([away(3, 4)], lambda a: torchlet.relu(a))],
    "relu_": [([away(3, 4)], lambda a: a.clone().relu_())],
    "sum": [([rn(2, 3)], lambda a: a.sum()), ([rn()], lambda a: a.sum()), ([rn(0, 2)], lambda a: a.sum())],
    "sum.dim_IntList": [([rn(2, 3, 4)], lambda a: a.sum(1)),
                        ([rn(2, 3, 4)], lambda a: a.sum((0, 2), keepdim=True)),
                        ([rn(2, 3)], lambda a: a.sum(-1))],
    "mm": [([rn(2, 3), rn(3, 4)], lambda a, b: torchlet.mm(a, b)),
           ([rn(3, 2), rn(4, 3)], lambda a, b: torchlet.mm(T(a), T(b)))],
    "view": [([rn(2, 6)], lambda a: a.view(3, 4)), ([rn(2, 6)], lambda a: a.view(-1))],
    "transpose.int": [([rn(2, 3, 4)], lambda a: torchlet.transpose(a, 0, 2))],
    "t": [([rn(2, 3)], lambda a: a.t()), ([rn(3)], lambda a: a.t())],
    "permute": [([rn(2, 3, 4)], lambda a: a.permute(2, 0, 1))],
    "expand": [([rn(3, 1)], lambda a: a.expand(2, 3, 4)), ([rn()], lambda a: a.expand(3))],
    "squeeze": [([rn(1, 3, 1)], lambda a: a.squeeze())],
    "squeeze.dim": [([rn(1, 3, 1)], lambda a: a.squeeze(2)), ([rn(2, 3)], lambda a: a.squeeze(0))],
    "squeeze.dims": [([rn(1, 3, 1)], lambda a: a.squeeze((0, 2)))],
    "unsqueeze": [([rn(2, 3)], lambda a: a.unsqueeze(1)), ([rn(2, 3)], lambda a: a.unsqueeze(-1))],
    "select.int": [([rn(3, 4)], lambda a: a.select(1, 2)), ([rn(3, 4)], lambda a: a.select(0, -1))],
    "slice.Tensor": [([rn(5, 4)], lambda a: a[1:4]), ([rn(3, 7)], lambda a: a[:, 1::2])],
    "as_strided": [([rn(6)], lambda a: torchlet.as_strided(a, (2, 2), (1, 2))),
                   ([rn(6)], lambda a: torchlet.as_strided(a, (3, 2), (1, 1), 1)),  # overlapping output
                   ([rn(3, 2)], lambda a: torchlet.as_strided(T(a), (2, 2), (2, 1))),
                   ([rn(3)], lambda a: torchlet.as_strided(a.expand(2, 3), (3,), (1,)))],  # overlapping input
    "alias": [([rn(2, 3)], lambda a: torchlet.alias(a))],
    "clone": [([rn(2, 3)], lambda a: torchlet.clone(T(a)))],
    "_to_copy": [([rn(2, 3)], lambda a: torchlet._to_copy(a))],  # dtype casts: test_mixed_dtypes_cast_back
    "fill_.Scalar": [([rn(2, 3), rn(2, 3)], lambda a, b: (a * b).fill_(2.0) + a)],
    "copy_": [([rn(2, 3), rn(3)], lambda a, b: (a * 1.0).copy_(b) * a),
              ([rn(2, 3), rn(2, 3)], lambda a, b: torchlet.zeros(3, 2, dtype=torchlet.float64).t().copy_(b) + a)],
    "zero_": [([rn(2, 3), rn(2, 3)], lambda a, b: (a * b).zero_() + b)],
    "threshold_backward": [([rn(3, 4), away(3, 4)], lambda g, x: torchlet.threshold_backward(g, x, 0.0))],
    "select_backward": [([rn(4)], lambda g: torchlet.select_backward(g, [3, 4], 0, 1))],
    "slice_backward": [([rn(2, 4)], lambda g: torchlet.slice_backward(g, [5, 4], 0, 1, 5, 2))],
    # comparisons: the in-place forms keep self's dtype and
    # have zero gradients; the result times a differentiable term checks they are zeros
    "eq_.Tensor": [([rn(2, 3), rn(3)], lambda a, b: a.clone().eq_(b) * a + b)],
    "eq_.Scalar": [([rn(2, 3)], lambda a: a.clone().eq_(0.25) * a)],
    "ne_.Tensor": [([rn(2, 3), rn(3)], lambda a, b: a.clone().ne_(b) * a + b)],
    "ne_.Scalar": [([rn(2, 3)], lambda a: a.clone().ne_(0.25) * a)],
    "lt_.Tensor": [([rn(2, 3), rn(3)], lambda a, b: a.clone().lt_(b) * a + b)],
    "lt_.Scalar": [([rn(2, 3)], lambda a: a.clone().lt_(0.25) * a)],
    "le_.Tensor": [([rn(2, 3), rn(3)], lambda a, b: a.clone().le_(b) * a + b)],
    "le_.Scalar": [([rn(2, 3)], lambda a: a.clone().le_(0.25) * a)],
    "gt_.Tensor": [([rn(2, 3), rn(3)], lambda a, b: a.clone().gt_(b) * a + b)],
    "gt_.Scalar": [([rn(2, 3)], lambda a: a.clone().gt_(0.25) * a)],
    "ge_.Tensor": [([rn(2, 3), rn(3)], lambda a, b: a.clone().ge_(b) * a + b)],
    "ge_.Scalar": [([rn(2, 3)], lambda a: a.clone().ge_(0.25) * a)],
    "maximum": [([rn(2, 3), rn(3)], lambda a, b: torchlet.maximum(a, b)),
                ([rn(3, 2), rn(2, 3)], lambda a, b: torchlet.maximum(T(a), b))],
    "minimum": [([rn(2, 3), rn(3)], lambda a, b: torchlet.minimum(a, b)),
                ([rn(), rn(2)], lambda a, b: torchlet.minimum(a, b))],
    **SHAPE_INDEX_CASES,
    **SHAPE_HELPERS_CASES,
    **UPSAMPLE_CASES,
    **NN3D_CASES,
    **PAD_POOL_RESAMPLE_CASES,
}
# inputs that are not differentiated (threshold_backward's self: its formula is zeros)
DIFF = {"threshold_backward": [0], "where.self": [1, 2],
        # soft_margin_loss has no target formula (PyTorch neither)
        "soft_margin_loss": [0], "soft_margin_loss_backward": [0, 1], "rrelu_with_noise_backward": [0],
        **SPECIAL_FNS_DIFF}
LOOSE: set[str] = set()


@pytest.mark.parametrize("name", differentiable_ops())
def test_gradcheck(name):
    assert name in CASES, f"no gradcheck inputs for the differentiable operator {name}: add them to CASES"
    for arrays, fn in CASES[name]:
        kw = {"atol": 1e-3, "rtol": 1e-2} if name in LOOSE else {}
        assert gradcheck(fn, arrays, DIFF.get(name), **kw)


@pytest.mark.parametrize("name", differentiable_ops())
def test_torchlet_autograd_gradcheck(name):
    """the same cases through the project's own torchlet.autograd.gradcheck"""
    gc = getattr(getattr(torchlet, "autograd", None), "gradcheck", None)
    if gc is None:
        pytest.skip("torchlet.autograd.gradcheck not available")
    diff = DIFF.get(name)
    for arrays, fn in CASES[name]:
        if any(a.size == 0 for a in arrays):
            continue  # empty inputs: only the checker above (torchlet.autograd.gradcheck compares [] shapes)
        inputs = [leaf(a, diff is None or i in diff) for i, a in enumerate(arrays)]
        assert gc(fn, inputs)


@pytest.mark.parametrize(
    "name, arrays, fn",
    [
        ("add", [rn(2, 3), rn(3)], lambda a, b: (a + b) * (a + b)),
        ("mul", [rn(2, 3), rn(3)], lambda a, b: a * b),
        ("mul-sq", [rn(2, 3)], lambda a: a * a * a),
        ("relu", [away(3, 4)], lambda a: torchlet.relu(a) * a),
        ("sum", [rn(2, 3)], lambda a: (a * a).sum()),
        ("sum-dim", [rn(2, 3)], lambda a: (a * a).sum(0)),
        ("mm", [rn(2, 3), rn(3, 2)], lambda a, b: torchlet.mm(a, b)),
        ("mm-sq", [rn(2, 2)], lambda a: torchlet.mm(a, a)),
        ("div", [rn(2, 3), away(3)], lambda a, b: a / b),
        # unary math slice: formulas built from differentiable operators
        ("exp", [_un(2, 3)], lambda a: torchlet.exp(a)),
        ("log", [_un(2, 3, lo=0.3, hi=3)], lambda a: torchlet.log(a)),
        ("sqrt", [_un(2, 3, lo=0.3, hi=3)], lambda a: torchlet.sqrt(a)),
        ("rsqrt", [_un(2, 3, lo=0.3, hi=3)], lambda a: torchlet.rsqrt(a)),
        ("sin", [_un(2, 3)], lambda a: torchlet.sin(a)),
        ("tanh", [_un(2, 3)], lambda a: torchlet.tanh(a)),
        ("sigmoid", [_un(2, 3)], lambda a: torchlet.sigmoid(a)),
        ("erf", [_un(2, 3)], lambda a: torchlet.erf(a)),
        ("silu", [_un(2, 3)], lambda a: torchlet.nn.functional.silu(a)),
        # NN operators: second derivatives through _softmax_backward_data / _log_softmax_backward_data
        ("softmax", [RN.standard_normal((3, 4))], lambda a: torchlet.softmax(a, 1)),
        ("log_softmax", [RN.standard_normal((3, 4))], lambda a: torchlet.log_softmax(a, 0)),
        ("abs", [_un(2, 3, away_int=True)], lambda a: torchlet.abs(a) * a),
        # pointwise math: pow's helpers and logit's create_graph helper differentiate again
        ("pow-tensor", [_pb(2, 3, lo=0.3, hi=2), _pb(3)], lambda a, b: torchlet.pow(a, b)),
        ("pow-scalar", [_pb(2, 3, lo=0.3, hi=2)], lambda a: a ** 2.5),
        ("pow-2", [_pb(2, 3)], lambda a: (a ** 2) * a),   # pow_backward's exponent-2 path (no pow)
        ("pow-1-3", [_pb(2, 3)], lambda a: a.pow(1) * a ** 3),   # pow(1): a copy; pow(3)'s backward: pow(2)
        ("pow-number-base", [_pb(3)], lambda e: 1.5 ** e),
        ("atan2", [_pb(2, 3), _pq(3)], lambda a, b: torchlet.atan2(a, b)),
        ("logit", [_pb(2, 3, lo=0.1, hi=0.9)], lambda a: torchlet.logit(a)),
        ("logit-eps", [_pb(2, 3, lo=-0.1, hi=1.1)], lambda a: torchlet.logit(a, 0.2) * a),
        ("remainder", [_pfrac(2, 3), _pd(3)], lambda a, b: torchlet.remainder(a, b) * b),
        # shape and indexing slice: formulas built from index_select / gather / scatter_add / masked_fill
        ("index_select", [_rs(4, 5)], lambda a: torchlet.index_select(a, 1, _ix([4, 0, 4])) * a[:, :3]),
        ("gather", [_rs(4, 5)], lambda a: torchlet.gather(a, 1, _ix(_I45)) * a[:, :3]),
        ("scatter", [_rs(4, 5), _rs(4, 3)], lambda a, s: torchlet.scatter(a * a, 1, _ix(_I45U), s * s)),
        ("masked_fill", [_rs(3, 4), _rs()], lambda a, v: torchlet.masked_fill(a * a, _MASK, v * v)),
        ("embedding", [_rs(6, 3)], lambda w: torchlet.embedding(w, _ix(_IEMB)) * torchlet.embedding(w, _ix(_IEMB[::-1]))),
        ("tril", [_rs(3, 3)], lambda a: torchlet.tril(a * a, -1)),
        # formula-compiler features: Tensor[], several outputs, tuples, ternaries
        ("cat", [_ra(2, 3), _ra(1, 3)], lambda a, b: torchlet.cat([a * a, b]) * torchlet.cat([b, a])),
        ("stack", [_ra(2, 3)], lambda a: torchlet.stack([a, a * a], 0)),
        ("split", [_ra(4, 3)], lambda a: torchlet.cat([p * p for p in (a * a).split(3)])),
        ("unbind", [_ra(3, 2)], lambda a: a.unbind(1)[0] * a.unbind(1)[1]),
        ("index", [_ra(4, 3)], lambda a: (a * a)[[3, 0, 3]] * a[[1, 1, 2]]),
        ("index_put", [_ra(4, 3), _ra(2, 3)], lambda a, v: torchlet.index_put(a * a, [_ix([3, 0])], v * v * a[:2])),
        ("max.dim", [_ra(3, 4)], lambda a: torchlet.max(a * a, 1)[0]),
        ("var_mean", [_ra(3, 4)], lambda a: torchlet.var_mean(a, 1)[0] + torchlet.var_mean(a * a, 1)[1]),
        ("native_layer_norm", [_ra(3, 4), _ra(4), _ra(4)],
         lambda x, w, b: torchlet.native_layer_norm(x, [4], w, b, 1e-5)[0]),
        ("native_dropout", [_ra(4, 5)], lambda x: _dropout(x * x, 0.4, True)),
        # convolution: _convolution_double_backward (bias, groups, stride; transposed)
        ("convolution", [_rv(2, 4, 4, 5), _rv(4, 2, 2, 3), _rv(4)],
         lambda x, w, b: torchlet.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2)),
        ("convolution-transposed", [_rv(1, 2, 3, 3), _rv(2, 3, 2, 2), _rv(3)],
         lambda x, w, b: torchlet.conv_transpose2d(x, w, b, stride=2, output_padding=1)),
        # pooling: backward ops differentiate again (max_pool_double_backward, avg_pool2d, adaptive)
        ("max_pool2d", [_rp(2, 3, 6, 5)], lambda x: _nn().max_pool2d_with_indices(x * x, 2, 1, 1, 1, False)[0]),
        ("avg_pool2d", [_rp(2, 3, 6, 5)], lambda x: _nn().avg_pool2d(x * x, 3, 2, 1, True, False, None)),
        ("adaptive_avg_pool2d", [_rp(2, 6, 5)], lambda x: torchlet._adaptive_avg_pool2d(x * x, [4, 3])),
        ("adaptive_max_pool2d", [_rp(2, 6, 5)], lambda x: _nn().adaptive_max_pool2d(x * x, [4, 3])[0]),
        # three-input pointwise ops: helpers and formulas over entry points
        ("where", [_g(2, 3), _g(2, 3), _g(3)], lambda c, a, b: torchlet.where(c > 0, a * a, b * a)),
        ("clamp", [_gx(2, 3)], lambda a: torchlet.clamp(a * a, -0.5, 0.5) * a),
        ("clamp.Tensor", [_gx(2, 3), _gb(3, c=-0.5), _gb(3, c=0.5)],
         lambda a, lo, hi: torchlet.clamp(a, lo * lo - 0.75, hi * hi) * a),
        ("lerp.Tensor", [_g(2, 3), _g(3), _g(2, 3)], lambda a, b, w: torchlet.lerp(a, b * b, w * a)),
        ("addcdiv", [_g(2, 3), _g(3), _gz(2, 1)], lambda s, a, b: torchlet.addcdiv(s, a * s, b, value=0.5)),
        # double backward of the activations and pointwise losses (FunctionsManual helpers)
        ("log_sigmoid", [_al(2, 3, scale=3.0)], lambda a: _nnf().log_sigmoid(a) * a),
        ("glu", [_al(2, 6)], lambda a: _nnf().glu(a * a, 1)),
        ("prelu", [_al(2, 3), _al(3)], lambda x, w: torchlet.prelu(x * x - 1, w * w)),
        ("hardswish", [_al(2, 3, scale=2.0)], lambda a: _nnf().hardswish(a) * a),
        ("smooth_l1_loss", [_al(3, 4), _al(3, 4)], lambda a, b: _nnf().smooth_l1_loss(a * a, b, 0, 0.8)),
        ("huber_loss", [_al(3, 4), _al(3, 4)], lambda a, b: _nnf().huber_loss(a * a, b, 1, 0.8)),
        ("soft_margin_loss", [_al(3, 4)], lambda a: _nnf().soft_margin_loss(a * a, a.detach().sign(), 2)),
        ("binary_cross_entropy", [_al(3, 4), _al(3, 4)],
         lambda a, b: _nnf().binary_cross_entropy(torchlet.sigmoid(a), torchlet.sigmoid(b), None, 1)),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_gradgradcheck(name, arrays, fn):
    assert gradgradcheck(fn, arrays)


def test_broadcast_example_and_names():
    a, b, c = leaf(rn(2, 3)), leaf(rn(3)), leaf(rn(2, 1))
    m = a * b
    s = m + c
    y = s.sum()
    assert (grad_fn_name(m), grad_fn_name(s), grad_fn_name(y)) == ("MulBackward0", "AddBackward0", "SumBackward0")
    backward(y)
    np.testing.assert_allclose(get_grad(a).numpy(), np.broadcast_to(b.numpy(), (2, 3)))
    np.testing.assert_allclose(get_grad(b).numpy(), a.numpy().sum(0))
    np.testing.assert_allclose(get_grad(c).numpy(), np.full((2, 1), 3.0))
    assert get_grad(b).shape == (3,) and get_grad(c).shape == (2, 1)


@pytest.mark.parametrize(
    "fn, name",
    [
        (lambda a: a * 2.0, "MulBackward0"),  # a Python number is a wrapped 0-dim tensor, as in PyTorch
        (lambda a: a + 1, "AddBackward0"),
        (lambda a: a.mul(torchlet.tensor(2.0)), "MulBackward0"),
        (lambda a: a - a, "SubBackward0"),
        (lambda a: a / a, "DivBackward0"),
        (lambda a: -a, "NegBackward0"),
        (lambda a: torchlet.relu(a), "ReluBackward0"),
        (lambda a: a.sum(0), "SumBackward1"),
        (lambda a: torchlet.mm(a, a), "MmBackward0"),
        (lambda a: a.view(4), "ViewBackward0"),
        (lambda a: a.t(), "TBackward0"),
        (lambda a: a.transpose(0, 1), "TransposeBackward0"),
        (lambda a: a.permute(1, 0), "PermuteBackward0"),
        (lambda a: a.expand(3, 2, 2), "ExpandBackward0"),
        (lambda a: a.unsqueeze(0), "UnsqueezeBackward0"),
        (lambda a: a.select(0, 1), "SelectBackward0"),
        (lambda a: a[1:], "SliceBackward0"),
        (lambda a: torchlet.clone(a), "CloneBackward0"),
        (lambda a: a.to(torchlet.float32), "ToCopyBackward0"),
        (lambda a: torchlet.rsub(a, 1.0), "RsubBackward1"),
    ],
)
def test_grad_fn_names(fn, name):
    assert grad_fn_name(fn(leaf(rn(2, 2)))) == name


def test_no_requires_grad_records_nothing():
    a, b = leaf(rn(2, 3), False), leaf(rn(3), False)
    y = (a * b).sum()
    assert grad_fn_name(y) is None and not requires_grad(y)


def test_integer_outputs_have_no_history():
    """_to_copy's output_differentiability condition: no node for an integer dtype"""
    import torchlet as t

    a = leaf(rn(2, 3))
    before = t._lib.tl_autograd_live_nodes()
    y = a.to(torchlet.int64)
    assert not requires_grad(y) and grad_fn_name(y) is None
    assert t._lib.tl_autograd_live_nodes() == before


def test_out_variant_errors():
    a = leaf(rn(2, 3))
    out = torchlet.empty(2, 3, dtype=torchlet.float64)
    with pytest.raises(RuntimeError, match=r"^add\(\): functions with out=\.\.\. arguments don't support automatic "
                       r"differentiation, but one of the arguments requires grad\.$"):
        torchlet.add(a, a, out=out)
    b = leaf(rn(2, 3), False)
    torchlet.add(b, b, out=out)  # fine without grad


def test_leaf_inplace_errors():
    a = leaf(rn(2, 3))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        a.mul_(2.0)


def test_inplace_rebases_history():
    a, b = leaf(rn(2, 3)), leaf(rn(2, 3))
    c = a * 1.0
    c.mul_(b)
    assert grad_fn_name(c) == "MulBackward0"
    backward(c.sum())
    np.testing.assert_allclose(get_grad(a).numpy(), b.numpy())
    np.testing.assert_allclose(get_grad(b).numpy(), a.numpy())


def test_inplace_on_plain_tensor_with_grad_operand():
    a, b = leaf(rn(2, 3), False), leaf(rn(2, 3))
    a.add_(b, alpha=2)
    assert requires_grad(a) and grad_fn_name(a) == "AddBackward0"
    backward(a.sum())
    np.testing.assert_allclose(get_grad(b).numpy(), np.full((2, 3), 2.0))


def test_version_check():
    a, b = leaf(rn(2, 3)), leaf(rn(2, 3))
    c = a * 1.0
    y = c * b  # saves c
    c.add_(1.0)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been "
                       "modified by an inplace operation"):
        backward(y.sum())


def test_as_strided_double_backward_is_refused():
    """as_strided's backward is computed in C: refused when it would have to be differentiated"""
    from _gradcheck_util import grad

    a = leaf(rn(6))
    y = torchlet.as_strided(a * 1.0, (2, 2), (1, 2))
    (g,) = grad([y], [a], [leaf(np.ones((2, 2)), False)], create_graph=True)
    np.testing.assert_allclose(g.numpy(), [1, 1, 1, 1, 0, 0])
    y = torchlet.as_strided(a * 1.0, (2, 2), (1, 2))
    with pytest.raises(RuntimeError, match="the derivative for 'as_strided_backward' is not implemented."):
        grad([y], [a], [leaf(np.ones((2, 2)), True)], create_graph=True)


def test_mixed_dtypes_cast_back():
    a = leaf(rn(3))
    b = torchlet.tensor(np.ones(3, dtype=np.float32))
    from _gradcheck_util import set_requires_grad

    set_requires_grad(b)
    y = (a * b).sum()
    backward(y)
    assert get_grad(b).dtype == torchlet.float32 and get_grad(a).dtype == torchlet.float64


@pytest.mark.parametrize("name", ["add", "mul", "div", "mm", "relu", "sum_dim", "expand", "select"])
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    a0, b0 = away(3, 3), away(3, 3)
    fns = {
        "add": lambda lib, a, b: lib.add(a, b[0], alpha=2),
        "mul": lambda lib, a, b: a * b[:, :1],
        "div": lambda lib, a, b: a / b,
        "mm": lambda lib, a, b: lib.mm(a, b.t()),
        "relu": lambda lib, a, b: lib.relu(a) * b,
        "sum_dim": lambda lib, a, b: (a * b).sum(1, keepdim=True),
        "expand": lambda lib, a, b: a[:1].expand(3, 3) * b,
        "select": lambda lib, a, b: a.select(1, 2) * b.select(0, 1),
    }
    fn = fns[name]
    ta, tb = (torch.tensor(x, requires_grad=True) for x in (a0, b0))
    fn(torch, ta, tb).sum().backward()
    la, lb = leaf(a0), leaf(b0)
    backward(fn(torchlet, la, lb).sum())
    np.testing.assert_allclose(get_grad(la).numpy(), ta.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(get_grad(lb).numpy(), tb.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_memory_flat():
    """forward + backward on tiny tensors leaks no node"""
    import torchlet as t

    base = t._lib.tl_autograd_live_nodes()
    for _ in range(200):
        a, b = leaf(rn(2)), leaf(rn(2))
        y = (a * b + a).sum()
        backward(y)
        del a, b, y
    assert t._lib.tl_autograd_live_nodes() == base


@pytest.mark.parametrize(
    "arrays, fn, name",
    [
        ([rn(2, 6)], lambda a: a.reshape(3, 4), "ViewBackward0"),
        ([rn(3, 4)], lambda a: a.t().reshape(12), "UnsafeViewBackward0"),  # a copy, then _unsafe_view (PyTorch's)
        ([rn(3, 4)], lambda a: a.t().contiguous(), "CloneBackward0"),
        ([rn(3, 4)], lambda a: a.to(torchlet.float64, copy=True), "ToCopyBackward0"),
    ],
)
def test_composite_implicit_decompositions(arrays, fn, name):
    """CompositeImplicitAutograd operators differentiate through their parts"""
    assert grad_fn_name(fn(leaf(arrays[0]))) == name
    assert gradcheck(fn, arrays)
