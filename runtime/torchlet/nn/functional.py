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
    "sigmoid", "tanh", "linear", "layer_norm", "rms_norm", "dropout", "nll_loss", "cross_entropy", "mse_loss",
    "embedding", "scaled_dot_product_attention", "max_pool1d", "max_pool2d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices", "batch_norm", "instance_norm", "group_norm",
    "pad", "one_hot", "normalize", "cosine_similarity", "pairwise_distance", "local_response_norm",
]

_TF = 0  # active torch-function modes (torchlet._function_mode); each public function checks it first
_tf_watch(globals())

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


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


del math


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
    if (n, d) in ((2, 2), (2, 3), (4, 3), (4, 4)):
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
