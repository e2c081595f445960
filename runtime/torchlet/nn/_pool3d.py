"""PyTorch's Python (torch/nn/functional.py) for the 3-d pooling, unpooling,
fold / unfold, embedding_bag and multilabel_margin_loss functions over the
operators of kernels/native/pool3d.c, max_unpool.c, fold.c, embedding_bag.c
and multilabel_margin.c: argument defaults, checks and messages as
PyTorch's. Re-exported by torchlet.nn.functional."""
from __future__ import annotations

import warnings

import torchlet
from torchlet._function_mode import GO as _GO, handle as _tf, watch as _tf_watch
from torchlet._generated import _nn

_TF = 0  # active torch-function modes (torchlet._function_mode)
_tf_watch(globals())


def _ntuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


def _stride(stride):
    return [] if stride is None else stride


# ----------------------------------------------------------------- 3-d pooling

def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    if _TF and (r_ := _tf(max_pool3d_with_indices, locals())) is not _GO:
        return r_
    return _nn.max_pool3d_with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if _TF and (r_ := _tf(max_pool3d, locals())) is not _GO:
        return r_
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return torchlet.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if _TF and (r_ := _tf(avg_pool3d, locals())) is not _GO:
        return r_
    return _nn.avg_pool3d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad,
                          divisor_override)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    if _TF and (r_ := _tf(adaptive_max_pool3d_with_indices, locals())) is not _GO:
        return r_
    from .functional import _list_with_default
    return _nn.adaptive_max_pool3d(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    if _TF and (r_ := _tf(adaptive_max_pool3d, locals())) is not _GO:
        return r_
    if return_indices:
        return adaptive_max_pool3d_with_indices(input, output_size)
    return adaptive_max_pool3d_with_indices(input, output_size)[0]


# ----------------------------------------------------------------- unpooling

def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    input_size = input.size()
    default_size = []
    for d in range(len(kernel_size)):
        default_size.append((input_size[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d])
    if output_size is None:
        ret = default_size
    else:
        if len(output_size) == len(kernel_size) + 2:
            output_size = output_size[2:]
        if len(output_size) != len(kernel_size):
            raise ValueError(
                "output_size should be a sequence containing "
                f"{len(kernel_size)} or {len(kernel_size) + 2} elements, but it has a length of '{len(output_size)}'")
        for d in range(len(kernel_size)):
            min_size = default_size[d] - stride[d]
            max_size = default_size[d] + stride[d]
            if not (min_size < output_size[d] < max_size):
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and {max_size})')
        ret = output_size
    for d in range(len(kernel_size)):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={ret[d]}")
    return ret


def _unpool_args(kernel_size, stride, padding, n):
    kernel_size = _ntuple(kernel_size, n)
    return kernel_size, (_ntuple(stride, n) if stride is not None else kernel_size), _ntuple(padding, n)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    if _TF and (r_ := _tf(max_unpool1d, locals())) is not _GO:
        return r_
    kernel_size, stride, padding = _unpool_args(kernel_size, stride, padding, 1)
    output_size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    output_size = output_size + [1] if isinstance(output_size, list) else output_size + (1,)
    return _nn.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), output_size).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    if _TF and (r_ := _tf(max_unpool2d, locals())) is not _GO:
        return r_
    kernel_size, stride, padding = _unpool_args(kernel_size, stride, padding, 2)
    output_size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _nn.max_unpool2d(input, indices, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    if _TF and (r_ := _tf(max_unpool3d, locals())) is not _GO:
        return r_
    kernel_size, stride, padding = _unpool_args(kernel_size, stride, padding, 3)
    output_size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _nn.max_unpool3d(input, indices, output_size, stride, padding)


# ----------------------------------------------------------------- fold / unfold

def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    if _TF and (r_ := _tf(unfold, locals())) is not _GO:
        return r_
    return _nn.im2col(input, _ntuple(kernel_size, 2), _ntuple(dilation, 2), _ntuple(padding, 2),
                      _ntuple(stride, 2))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if _TF and (r_ := _tf(fold, locals())) is not _GO:
        return r_
    return _nn.col2im(input, _ntuple(output_size, 2), _ntuple(kernel_size, 2), _ntuple(dilation, 2),
                      _ntuple(padding, 2), _ntuple(stride, 2))


# ----------------------------------------------------------------- losses

def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _TF and (r_ := _tf(multilabel_margin_loss, locals())) is not _GO:
        return r_
    from .functional import _reduction_enum
    return _nn.multilabel_margin_loss(input, target, _reduction_enum(reduction, size_average, reduce))


# ----------------------------------------------------------------- embedding_bag

def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if _TF and (r_ := _tf(embedding_bag, locals())) is not _GO:
        return r_
    # the old argument order embedding_bag(weight, input, ...)
    if weight.dtype == torchlet.long and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. "
                      "Usage `embedding_bag(weight, input, ...)` is deprecated, "
                      "and should now be `embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
                         f"then it must have the same shape as the input ({input.shape})")
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = torchlet.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        # PyTorch's _no_grad_embedding_renorm_
        with torchlet.no_grad():
            torchlet.embedding_renorm_(weight, input.contiguous(), max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on GitHub.")
    ret, _, _, _ = torchlet.embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum, sparse,
                                          per_sample_weights, include_last_offset, padding_idx)
    return ret


__all__ = ["max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "unfold", "fold",
           "multilabel_margin_loss", "embedding_bag"]
