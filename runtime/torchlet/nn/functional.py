"""torchlet.nn.functional: PyTorch's functional NN interface.

Two layers, as in PyTorch:

* operators whose YAML entry says ``python_module: nn`` are generated into
  ``torchlet._C._nn`` (generated/python/_nn.py) -- ``mse_loss``, ``nll_loss_nd``,
  ``cross_entropy_loss``, ``silu``, ``gelu`` ...;
* this module holds the Python-level functions PyTorch writes in Python
  (torch/nn/functional.py): they turn ``reduction="mean"`` into the enum,
  pick implicit dims, handle ``inplace=``, and call those operators or the
  ``torchlet.*`` ones (``softmax``, ``layer_norm``, ``dropout``, ...).

An operator another part of the library has not declared yet raises
NotImplementedError naming it (instead of an AttributeError at import).
"""
from __future__ import annotations

import math
import warnings

import torchlet
from torchlet._function_mode import GO as _GO, handle as _tf, watch as _tf_watch
from torchlet._generated import _nn

__all__ = [
    "softmax", "log_softmax", "relu", "relu_", "silu", "gelu", "leaky_relu", "elu", "hardtanh", "softplus", "mish",
    "sigmoid", "tanh", "threshold", "threshold_", "relu6", "hardswish", "hardsigmoid", "selu", "celu", "logsigmoid",
    "softshrink", "hardshrink", "tanhshrink", "softsign", "softmin", "glu", "prelu", "rrelu", "rrelu_",
    "linear", "layer_norm", "rms_norm", "dropout", "nll_loss", "cross_entropy", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "cosine_embedding_loss", "triplet_margin_loss", "multi_margin_loss",
    "embedding", "scaled_dot_product_attention", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices", "batch_norm", "instance_norm", "group_norm",
    "pad", "one_hot", "normalize", "cosine_similarity", "pairwise_distance", "local_response_norm",
]

_TF = 0  # active torch-function modes (torchlet._function_mode); each public function checks it first
_tf_watch(globals())

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
_REDUCTION_NAMES = ("none", "mean", "sum")


def _op(module, name):
    fn = getattr(module, name, None)
    if fn is None:
        where = "torchlet._C._nn" if module is _nn else "torchlet"
        raise NotImplementedError(f"{where}.{name} is not implemented yet (no '{name}' entry in "
                                  "yaml/native_functions.yaml)")
    return fn


def _reduction_enum(reduction, size_average=None, reduce=None) -> int:
    """PyTorch's _Reduction.get_enum (and legacy_get_string for the deprecated
    size_average / reduce arguments)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warnings.warn("size_average and reduce args will be deprecated, please use reduction='%s' instead."
                      % reduction, stacklevel=3)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


# ------------------------------------------------------------ activations


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(x)_i = exp(x_i) / sum_j exp(x_j) along ``dim`` (torchlet.softmax)."""
    if _TF and (r_ := _tf(softmax, locals())) is not _GO:
        return r_
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return torchlet.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if _TF and (r_ := _tf(log_softmax, locals())) is not _GO:
        return r_
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return torchlet.log_softmax(input, dim, dtype=dtype)


def relu(input, inplace=False):
    if _TF and (r_ := _tf(relu, locals())) is not _GO:
        return r_
    return torchlet.relu_(input) if inplace else torchlet.relu(input)


def relu_(input):
    if _TF and (r_ := _tf(relu_, locals())) is not _GO:
        return r_
    return torchlet.relu_(input)


def silu(input, inplace=False):
    if _TF and (r_ := _tf(silu, locals())) is not _GO:
        return r_
    return _op(_nn, "silu_")(input) if inplace else _op(_nn, "silu")(input)


def gelu(input, *, approximate="none"):  # keyword-only, as gelu(Tensor self, *, str approximate)
    if _TF and (r_ := _tf(gelu, locals())) is not _GO:
        return r_
    return _op(_nn, "gelu")(input, approximate=approximate)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if _TF and (r_ := _tf(leaky_relu, locals())) is not _GO:
        return r_
    if inplace:
        return _op(_nn, "leaky_relu_")(input, negative_slope)
    return _op(_nn, "leaky_relu")(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    if _TF and (r_ := _tf(elu, locals())) is not _GO:
        return r_
    if inplace:
        return _op(_nn, "elu_")(input, alpha)
    return _op(_nn, "elu")(input, alpha)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if _TF and (r_ := _tf(hardtanh, locals())) is not _GO:
        return r_
    if inplace:
        return _op(_nn, "hardtanh_")(input, min_val, max_val)
    return _op(_nn, "hardtanh")(input, min_val, max_val)


def softplus(input, beta=1.0, threshold=20.0):
    if _TF and (r_ := _tf(softplus, locals())) is not _GO:
        return r_
    return _op(_nn, "softplus")(input, beta, threshold)


def mish(input, inplace=False):
    if _TF and (r_ := _tf(mish, locals())) is not _GO:
        return r_
    return _op(_nn, "mish_")(input) if inplace else _op(_nn, "mish")(input)


def sigmoid(input):
    if _TF and (r_ := _tf(sigmoid, locals())) is not _GO:
        return r_
    return torchlet.sigmoid(input)


def tanh(input):
    if _TF and (r_ := _tf(tanh, locals())) is not _GO:
        return r_
    return torchlet.tanh(input)


# ----------------------------------------------------------- convolution
# PyTorch binds these to the operators themselves (torch.conv2d is
# F.conv2d): the generated bindings pick conv2d or conv2d.padding by the
# type of `padding` and handle torch-function modes.
conv1d = torchlet.conv1d
conv2d = torchlet.conv2d
conv3d = torchlet.conv3d
conv_transpose1d = torchlet.conv_transpose1d
conv_transpose2d = torchlet.conv_transpose2d
conv_transpose3d = torchlet.conv_transpose3d


def threshold(input, threshold, value, inplace=False):
    """value where input <= threshold, input elsewhere (torchlet.threshold)."""
    if _TF and (r_ := _tf(globals()["threshold"], locals())) is not _GO:
        return r_
    return torchlet.threshold_(input, threshold, value) if inplace else torchlet.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    if _TF and (r_ := _tf(globals()["threshold_"], locals())) is not _GO:
        return r_
    return torchlet.threshold_(input, threshold, value)


def relu6(input, inplace=False):
    if _TF and (r_ := _tf(relu6, locals())) is not _GO:
        return r_
    return _op(_nn, "relu6_")(input) if inplace else _op(_nn, "relu6")(input)


def hardswish(input, inplace=False):
    if _TF and (r_ := _tf(hardswish, locals())) is not _GO:
        return r_
    return _nn.hardswish_(input) if inplace else _nn.hardswish(input)


def hardsigmoid(input, inplace=False):
    if _TF and (r_ := _tf(hardsigmoid, locals())) is not _GO:
        return r_
    return _nn.hardsigmoid_(input) if inplace else _nn.hardsigmoid(input)


def selu(input, inplace=False):
    if _TF and (r_ := _tf(selu, locals())) is not _GO:
        return r_
    return torchlet.selu_(input) if inplace else torchlet.selu(input)


def celu(input, alpha=1.0, inplace=False):
    if _TF and (r_ := _tf(celu, locals())) is not _GO:
        return r_
    return torchlet.celu_(input, alpha) if inplace else torchlet.celu(input, alpha)


def logsigmoid(input):
    """log(sigmoid(x)) (torchlet._C._nn.log_sigmoid, PyTorch's F.logsigmoid)."""
    if _TF and (r_ := _tf(logsigmoid, locals())) is not _GO:
        return r_
    return _nn.log_sigmoid(input)


def softshrink(input, lambd=0.5):
    if _TF and (r_ := _tf(softshrink, locals())) is not _GO:
        return r_
    return _nn.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    if _TF and (r_ := _tf(hardshrink, locals())) is not _GO:
        return r_
    return torchlet.hardshrink(input, lambd)


def tanhshrink(input):
    if _TF and (r_ := _tf(tanhshrink, locals())) is not _GO:
        return r_
    return input - input.tanh()


def softsign(input):
    if _TF and (r_ := _tf(softsign, locals())) is not _GO:
        return r_
    return input / (input.abs() + 1)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along ``dim`` (PyTorch's Python composite)."""
    if _TF and (r_ := _tf(softmin, locals())) is not _GO:
        return r_
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return torchlet.softmax(-input, dim, dtype=dtype)


def glu(input, dim=-1):
    """a * sigmoid(b) for the halves a, b of ``input`` along ``dim`` (torchlet._C._nn.glu)."""
    if _TF and (r_ := _tf(glu, locals())) is not _GO:
        return r_
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _nn.glu(input, dim)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight along dim 1 (torchlet.prelu)."""
    if _TF and (r_ := _tf(prelu, locals())) is not _GO:
        return r_
    return torchlet.prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (torchlet.rrelu: rrelu_with_noise): while
    training, each element <= 0 is scaled by a slope drawn from U(lower,
    upper) (the default generator); otherwise by (lower + upper) / 2."""
    if _TF and (r_ := _tf(rrelu, locals())) is not _GO:
        return r_
    if inplace:
        return torchlet.rrelu_(input, lower, upper, training)
    return torchlet.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    if _TF and (r_ := _tf(rrelu_, locals())) is not _GO:
        return r_
    return torchlet.rrelu_(input, lower, upper, training)


# ----------------------------------------------------- linear and norms


def linear(input, weight, bias=None):
    """input @ weight.T + bias (PyTorch binds linear in torch._C._nn)."""
    if _TF and (r_ := _tf(linear, locals())) is not _GO:
        return r_
    fn = getattr(_nn, "linear", None) or getattr(torchlet, "linear", None)
    if fn is not None:
        return fn(input, weight, bias)
    # composite fallback while linear is not declared: the same ops PyTorch's
    # CompositeImplicit linear uses
    if input.dim() == 2 and bias is not None and hasattr(torchlet, "addmm"):
        return torchlet.addmm(bias, input, weight.t())
    out = _op(torchlet, "matmul")(input, weight.t())
    return out + bias if bias is not None else out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if _TF and (r_ := _tf(layer_norm, locals())) is not _GO:
        return r_
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return torchlet.layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if _TF and (r_ := _tf(rms_norm, locals())) is not _GO:
        return r_
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return torchlet.rms_norm(input, normalized_shape, weight, eps)


# --------------------------------------------------------------- dropout


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability ``p`` and scales the rest by
    1 / (1 - p) when ``training``; the identity otherwise. Draws come from the
    default generator (torchlet.manual_seed)."""
    if _TF and (r_ := _tf(dropout, locals())) is not _GO:
        return r_
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input  # the input object itself, as PyTorch's _dropout_impl
    r = torchlet.dropout(input, p, training)
    if inplace:
        if r is not input:
            input.copy_(r)
        return input
    return r


# ----------------------------------------------------------------- losses


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if _TF and (r_ := _tf(nll_loss, locals())) is not _GO:
        return r_
    return _nn.nll_loss_nd(input, target, weight, _reduction_enum(reduction, size_average, reduce), ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    if _TF and (r_ := _tf(cross_entropy, locals())) is not _GO:
        return r_
    return _nn.cross_entropy_loss(input, target, weight, _reduction_enum(reduction, size_average, reduce),
                                  ignore_index, label_smoothing)


def _broadcast_shape(a, b):
    sa, sb = list(a), list(b)
    n = max(len(sa), len(sb))
    sa, sb = [1] * (n - len(sa)) + sa, [1] * (n - len(sb)) + sb
    out = []
    for i, (x, y) in enumerate(zip(sa, sb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _TF and (r_ := _tf(mse_loss, locals())) is not _GO:
        return r_
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=2)
    red = _reduction_enum(reduction, size_average, reduce)
    if weight is not None:
        raise NotImplementedError("mse_loss: weight= is not supported yet")
    shape = _broadcast_shape(input.shape, target.shape)
    return _nn.mse_loss(input.expand(shape), target.expand(shape), red)


def _size_mismatch_warning(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _reduce_by_name(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _TF and (r_ := _tf(l1_loss, locals())) is not _GO:
        return r_
    _size_mismatch_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _REDUCTION_NAMES[_reduction_enum(reduction, size_average, reduce)]
    x, y = torchlet.broadcast_tensors(input, target)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        e = (x - y).abs() * weight
        if reduction == "mean":
            return e.sum() / weight.sum()
        return _reduce_by_name(e, reduction)
    return _nn.l1_loss(x, y, _reduction_enum(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    if _TF and (r_ := _tf(smooth_l1_loss, locals())) is not _GO:
        return r_
    _size_mismatch_warning(input, target)
    red = _reduction_enum(reduction, size_average, reduce)
    x, y = torchlet.broadcast_tensors(input, target)
    if beta == 0.0:
        return _nn.l1_loss(x, y, red)
    return _nn.smooth_l1_loss(x, y, red, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if _TF and (r_ := _tf(huber_loss, locals())) is not _GO:
        return r_
    _size_mismatch_warning(input, target)
    x, y = torchlet.broadcast_tensors(input, target)
    if weight is None:
        return _nn.huber_loss(x, y, _reduction_enum(reduction), delta)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    return _reduce_by_name(_nn.huber_loss(x, y, 0, delta) * weight, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if _TF and (r_ := _tf(binary_cross_entropy, locals())) is not _GO:
        return r_
    red = _reduction_enum(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(torchlet.broadcast_shapes(target.shape, weight.shape))
    return _nn.binary_cross_entropy(input, target, weight, red)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """PyTorch's formula: (1 - t) * x - lw * log_sigmoid(x), lw = 1 + (pos_weight
    - 1) * t, times weight, reduced (a composite here: PyTorch has an operator)."""
    if _TF and (r_ := _tf(binary_cross_entropy_with_logits, locals())) is not _GO:
        return r_
    red = _reduction_enum(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    ls = _nn.log_sigmoid(input)
    if pos_weight is not None:
        ls = ls * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input - ls
    if weight is not None:
        loss = loss * weight
    return _reduce_by_name(loss, _REDUCTION_NAMES[red])


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if _TF and (r_ := _tf(kl_div, locals())) is not _GO:
        return r_
    if size_average is not None or reduce is not None:
        red = _reduction_enum(reduction, size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        red = 2 if reduction == "batchmean" else _reduction_enum(reduction)
    out = torchlet.kl_div(input, target, red, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(x) - t * x (log_input) or x - t * log(x + eps), plus Stirling's
    term t log t - t + log(2 pi t) / 2 for t > 1 when ``full`` (PyTorch's
    formula; a composite here, PyTorch has an operator)."""
    if _TF and (r_ := _tf(poisson_nll_loss, locals())) is not _GO:
        return r_
    if size_average is not None or reduce is not None:
        reduction = _REDUCTION_NAMES[_reduction_enum(reduction, size_average, reduce)]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = torchlet.exp(input) - target * input
    else:
        loss = input - target * torchlet.log(input + eps)
    if full:
        stirling = target * torchlet.log(target) - target + 0.5 * torchlet.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce_by_name(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if _TF and (r_ := _tf(gaussian_nll_loss, locals())) is not _GO:
        return r_
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * torchlet.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass  # heteroscedastic: one dim of var is 1
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with torchlet.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (torchlet.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce_by_name(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin) (PyTorch's formula; a
    composite here)."""
    if _TF and (r_ := _tf(margin_ranking_loss, locals())) is not _GO:
        return r_
    red = _reduction_enum(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce_by_name(loss, _REDUCTION_NAMES[red])


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where target == 1, max(0, margin - x) where target == -1 (PyTorch's
    formula: both terms masked by target != -1 / != 1; a composite here)."""
    if _TF and (r_ := _tf(hinge_embedding_loss, locals())) is not _GO:
        return r_
    red = _reduction_enum(reduction, size_average, reduce)
    zeros = torchlet.zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    loss = torchlet.where(target != 1, margin_clamp, zeros) + torchlet.where(target != -1, input, zeros)
    return _reduce_by_name(loss, _REDUCTION_NAMES[red])


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _TF and (r_ := _tf(soft_margin_loss, locals())) is not _GO:
        return r_
    return _nn.soft_margin_loss(input, target, _reduction_enum(reduction, size_average, reduce))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if _TF and (r_ := _tf(multilabel_soft_margin_loss, locals())) is not _GO:
        return r_
    if size_average is not None or reduce is not None:
        reduction = _REDUCTION_NAMES[_reduction_enum(reduction, size_average, reduce)]
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _reduce_by_name(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where
    target == -1; cos with PyTorch's EPSILON = 1e-12 on the squared norms (a
    composite here, as PyTorch's)."""
    if _TF and (r_ := _tf(cosine_embedding_loss, locals())) is not _GO:
        return r_
    red = _reduction_enum(reduction, size_average, reduce)
    t_dim = target.dim()
    if input1.shape != input2.shape:
        raise RuntimeError(f"cosine_embedding_loss: Input1 and Input2 must have the same shape, but got Input1: "
                           f"{list(input1.shape)} and Input2: {list(input2.shape)}")
    if input1.dim() != t_dim + 1:
        raise RuntimeError(f"cosine_embedding_loss: Expected target to be 1D when input1 and input2 are 2D, or 0D "
                           f"when input1 and input2 are 1D, but got target of shape {list(target.shape)}")
    if t_dim > 1:
        raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported, but got target of shape "
                           f"{list(target.shape)}")
    d = t_dim
    prod_sum = (input1 * input2).sum(d)
    mag_square1 = (input1 * input1).sum(d) + 1e-12
    mag_square2 = (input2 * input2).sum(d) + 1e-12
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    zeros = torchlet.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    loss = torchlet.where(target == 1, pos, zeros) + torchlet.where(target == -1, neg, zeros)
    return _reduce_by_name(loss, _REDUCTION_NAMES[red])


def _pairwise_distance(x1, x2, p, eps):
    """PyTorch's pairwise_distance: ||x1 - x2 + eps||_p over the last dim."""
    d = x1 - x2 + eps
    if p == 2:
        return (d * d).sum(-1).sqrt()
    if p == 1:
        return d.abs().sum(-1)
    return (d.abs() ** p).sum(-1) ** (1.0 / p)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, d(a, p) - d(a, n) + margin), d the p-norm distance with eps
    added to the difference; ``swap`` takes min(d(a, n), d(p, n)) (PyTorch's
    formula; a composite here)."""
    if _TF and (r_ := _tf(triplet_margin_loss, locals())) is not _GO:
        return r_
    red = _reduction_enum(reduction, size_average, reduce)
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = torchlet.minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    return _reduce_by_name(loss, _REDUCTION_NAMES[red])


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum_{i != y} max(0, margin - x[y] + x[i])^p / C per sample, times
    weight[y] (PyTorch's formula; a composite of gather / where here, PyTorch
    has a kernel)."""
    if _TF and (r_ := _tf(multi_margin_loss, locals())) is not _GO:
        return r_
    red = _reduction_enum(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    n, c = x.shape
    t = target.reshape(-1)
    if t.numel() != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got {list(target.shape)}")
    xy = x.gather(1, t.reshape(-1, 1))
    z = (margin - xy + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t).reshape(-1, 1)
    cls = torchlet.arange(c, device=x.device).reshape(1, -1)
    z = torchlet.where(cls == t.reshape(-1, 1), torchlet.zeros_like(z), z)
    loss = z.sum(1) / c
    if input.dim() < 2:
        loss = loss.reshape(target.shape) if red == 0 else loss
    return _reduce_by_name(loss, _REDUCTION_NAMES[red])


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if _TF and (r_ := _tf(embedding, locals())) is not _GO:
        return r_
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % n
    else:
        padding_idx = -1
    if max_norm is not None:
        # the rows the indices name are renormalised in place, outside autograd
        # (torch's _no_grad_embedding_renorm_); sparse=True fails at backward:
        # torchlet has no sparse tensors
        input = input.contiguous()
        with torchlet.no_grad():
            torchlet.embedding_renorm_(weight, input, max_norm, norm_type)
    fn = getattr(torchlet, "embedding", None)
    if fn is not None:
        return fn(weight, input, padding_idx, scale_grad_by_freq, sparse)
    flat = _op(torchlet, "index_select")(weight, 0, input.reshape(-1))
    return flat.reshape(*input.shape, weight.shape[-1])


# -------------------------------------------------------------- attention


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                                 enable_gqa=False):
    """softmax(q @ k^T * scale + mask) @ v, scale = 1/sqrt(E) by default;
    ``is_causal`` masks the upper triangle (it may not be combined with an
    explicit ``attn_mask``); a bool mask keeps True positions, a float mask is
    added. (torchlet._C._nn.scaled_dot_product_attention)"""
    if _TF and (r_ := _tf(scaled_dot_product_attention, locals())) is not _GO:
        return r_
    return _nn.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                                            enable_gqa=enable_gqa)


# ----------------------------------------------------------------- pooling
# PyTorch's torch/nn/functional.py: stride=None means "kernel_size" (passed
# as an empty list), return_indices picks the *_with_indices operator.


def _no_stride(stride):
    return [] if stride is None else stride


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    if _TF and (r_ := _tf(max_pool1d_with_indices, locals())) is not _GO:
        return r_
    return torchlet.max_pool1d_with_indices(input, kernel_size, _no_stride(stride), padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if _TF and (r_ := _tf(max_pool1d, locals())) is not _GO:
        return r_
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return torchlet.max_pool1d(input, kernel_size, _no_stride(stride), padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    if _TF and (r_ := _tf(max_pool2d_with_indices, locals())) is not _GO:
        return r_
    return _nn.max_pool2d_with_indices(input, kernel_size, _no_stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if _TF and (r_ := _tf(max_pool2d, locals())) is not _GO:
        return r_
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return torchlet.max_pool2d(input, kernel_size, _no_stride(stride), padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    if _TF and (r_ := _tf(avg_pool1d, locals())) is not _GO:
        return r_
    return torchlet.avg_pool1d(input, kernel_size, _no_stride(stride), padding, ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if _TF and (r_ := _tf(avg_pool2d, locals())) is not _GO:
        return r_
    return _nn.avg_pool2d(input, kernel_size, _no_stride(stride), padding, ceil_mode, count_include_pad,
                          divisor_override)


def _list_with_default(out_size, defaults):
    """PyTorch's torch.nn.modules.utils._list_with_default: None entries of
    output_size keep the input's size."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def adaptive_avg_pool1d(input, output_size):
    if _TF and (r_ := _tf(adaptive_avg_pool1d, locals())) is not _GO:
        return r_
    return torchlet.adaptive_avg_pool1d(input, output_size)


def adaptive_avg_pool2d(input, output_size):
    if _TF and (r_ := _tf(adaptive_avg_pool2d, locals())) is not _GO:
        return r_
    return _nn.adaptive_avg_pool2d(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    if _TF and (r_ := _tf(adaptive_max_pool1d_with_indices, locals())) is not _GO:
        return r_
    return torchlet.adaptive_max_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if _TF and (r_ := _tf(adaptive_max_pool1d, locals())) is not _GO:
        return r_
    if return_indices:
        return adaptive_max_pool1d_with_indices(input, output_size)
    return adaptive_max_pool1d_with_indices(input, output_size)[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    if _TF and (r_ := _tf(adaptive_max_pool2d_with_indices, locals())) is not _GO:
        return r_
    return _nn.adaptive_max_pool2d(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    if _TF and (r_ := _tf(adaptive_max_pool2d, locals())) is not _GO:
        return r_
    if return_indices:
        return adaptive_max_pool2d_with_indices(input, output_size)
    return adaptive_max_pool2d_with_indices(input, output_size)[0]


# ----------------------------------------------------------- normalization
# PyTorch's torch/nn/functional.py: the size checks are Python's (ValueError),
# the operators torchlet.batch_norm / instance_norm / group_norm.


def _verify_batch_size(size):
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if _TF and (r_ := _tf(batch_norm, locals())) is not _GO:
        return r_
    if training:
        _verify_batch_size(input.size())
    return torchlet.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if _TF and (r_ := _tf(instance_norm, locals())) is not _GO:
        return r_
    if use_input_stats:
        _verify_spatial_size(input.size())
    return torchlet.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                                  False)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if _TF and (r_ := _tf(group_norm, locals())) is not _GO:
        return r_
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return torchlet.group_norm(input, num_groups, weight, bias, eps, False)


# ----------------------------------------------------------------- padding
# PyTorch's pad (aten pad_symint's checks and routing, written here in
# Python): constant -> constant_pad_nd; reflect / replicate -> the 1-d / 2-d
# operators by pad length and input rank; circular -> _pad_circular below.

_PAD_MODES = {"constant", "reflect", "replicate", "circular"}


def _pad_circular(input, pad):
    """Circular padding of the last len(pad) // 2 dims (pad pairs from the
    last dim), as cat of wrapped slices; negative pads crop."""
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = out.size(dim)
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if lo + hi + size < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension.")
        # the kept middle (negative pads crop), then wrapped copies of its ends
        mid = out.narrow(dim, max(-lo, 0), size - max(-lo, 0) - max(-hi, 0))
        parts = [mid]
        if lo > 0:
            parts.insert(0, mid.narrow(dim, mid.size(dim) - lo, lo))
        if hi > 0:
            parts.append(mid.narrow(dim, 0, hi))
        out = torchlet.cat(parts, dim) if len(parts) > 1 else mid
    return out


def pad(input, pad, mode="constant", value=None):
    if _TF and (r_ := _tf(globals()["pad"], locals())) is not _GO:
        return r_
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > input.dim() * 2:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        return torchlet.constant_pad_nd(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n, d = len(pad), input.dim()
    if (n, d) in ((2, 2), (2, 3), (4, 3), (4, 4), (6, 4), (6, 5)):
        if mode == "circular":
            return _pad_circular(input, pad)
        fn = f"{'reflection' if mode == 'reflect' else 'replication'}_pad{n // 2}d"
        return getattr(_nn, fn)(input, pad)
    raise NotImplementedError(
        f"Padding size {n} is not supported for {d}D input tensor.\n"
        "Supported combinations for non-constant padding:\n"
        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


# ------------------------------------------------- composites PyTorch writes
# over other operators (values and messages as PyTorch 2.13's)


def one_hot(tensor, num_classes=-1):
    """PyTorch's one_hot (an aten CompositeImplicitAutograd operator there):
    int64 classes -> int64 rows with a single 1."""
    if _TF and (r_ := _tf(one_hot, locals())) is not _GO:
        return r_
    if tensor.dtype != torchlet.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return torchlet.empty(*tensor.shape, num_classes, dtype=torchlet.int64)
    if int(tensor.min().item()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1
    elif int(tensor.max().item()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = torchlet.zeros(*tensor.shape, num_classes, dtype=torchlet.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if _TF and (r_ := _tf(normalize, locals())) is not _GO:
        return r_
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return torchlet.div(input, denom, out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """PyTorch's cosine_similarity: sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) over
    dim, the inputs broadcast together first (PyTorch clamps the norms in
    place under no_grad: the gradient differs only where a norm is below eps)"""
    if _TF and (r_ := _tf(cosine_similarity, locals())) is not _GO:
        return r_
    x1, x2 = torchlet.broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clamp_min(eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    if _TF and (r_ := _tf(pairwise_distance, locals())) is not _GO:
        return r_
    innermost = max(x1.dim(), x2.dim()) - 1
    if innermost < 0:  # two 0-dim inputs: PyTorch norms over no dim
        return (x1 - x2 + eps).abs()
    return (x1 - x2 + eps).norm(p, innermost, keepdim=keepdim)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """PyTorch's local_response_norm; the 4-d+ case's avg_pool3d over
    (size, 1, 1) is the same window as avg_pool2d over (size, 1) of the
    spatial dims flattened"""
    if _TF and (r_ := _tf(local_response_norm, locals())) is not _GO:
        return r_
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    sizes = input.size()
    div = div.unsqueeze(1) if dim == 3 else div.reshape(sizes[0], 1, sizes[1], -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    if dim > 3:
        div = div.reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# torch.nn.functional.pdist is torch.pdist (the operator binding)
pdist = torchlet.pdist
# ----------------------------------------------------------------- interpolation
from ._interpolate import (  # noqa: E402,F401
    adaptive_avg_pool3d, bilinear, channel_shuffle, interpolate, pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear,
    upsample_nearest)

__all__ += ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
            "channel_shuffle", "adaptive_avg_pool3d", "bilinear"]

# ----------------------------------------------------------------- channel-wise and alpha dropout
from ._dropout_nd import (  # noqa: E402,F401
    alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout)

__all__ += ["alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"]
from ._triplet_distance import triplet_margin_with_distance_loss  # noqa: E402,F401

__all__ += ["triplet_margin_with_distance_loss"]
from . import _mha  # noqa: E402

# PyTorch's F also carries the attention helpers the Transformer modules call
multi_head_attention_forward = _mha.multi_head_attention_forward
_canonical_mask, _none_or_dtype, _mha_shape_check = _mha._canonical_mask, _mha._none_or_dtype, _mha._mha_shape_check
_in_projection, _in_projection_packed = _mha._in_projection, _mha._in_projection_packed

__all__ += ["multi_head_attention_forward"]
from ._ctc import ctc_loss  # noqa: E402,F401

__all__ += ["ctc_loss"]
# ----------------------------------------------------------------- 3-d pooling, unpooling, fold, embedding_bag
from ._pool3d import (  # noqa: E402,F401
    adaptive_max_pool3d, adaptive_max_pool3d_with_indices, avg_pool3d, embedding_bag, fold, max_pool3d,
    max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d, multilabel_margin_loss, unfold)

__all__ += ["max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_max_pool3d",
            "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "unfold", "fold",
            "multilabel_margin_loss", "embedding_bag"]

# ----------------------------------------------------------------- fractional max pooling
from ._fractional_pool import (  # noqa: E402,F401
    fractional_max_pool2d, fractional_max_pool2d_with_indices, fractional_max_pool3d,
    fractional_max_pool3d_with_indices)

__all__ += ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
            "fractional_max_pool3d_with_indices"]
