"""Channel-wise and alpha dropout: F.dropout1d / dropout2d / dropout3d,
F.alpha_dropout, F.feature_alpha_dropout (PyTorch's Python: checks,
warnings, unbatched inputs) over PyTorch's `_dropout_impl` arithmetic
(aten/src/ATen/native/Dropout.cpp), written here in Python: the Bernoulli
noise is the mask of `native_dropout` on ones of the noise's shape (one
value per (N, C) for the feature variants), drawn from the default
generator; alpha dropout keeps SELU's mean and variance (`a`, `b` as
PyTorch's). Re-exported by torchlet.nn.functional; the layers are
Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout."""
from __future__ import annotations

import math
import warnings

import torchlet
from torchlet._function_mode import GO as _GO, handle as _tf, watch as _tf_watch

from .modules import Module

_TF = 0  # active torch-function modes (torchlet._function_mode)
_tf_watch(globals())

_ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, train, feature, alpha, inplace):
    """PyTorch's _dropout_impl<feature_dropout, alpha_dropout, inplace>"""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        z = torchlet.zeros((), dtype=input.dtype)
        return input.mul_(z) if inplace else input.mul(z)
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = [input.size(0), input.size(1)] + [1] * (input.dim() - 2)
    else:
        shape = list(input.shape)
    keep = torchlet.native_dropout(torchlet.ones(shape, dtype=input.dtype), p, True)[1].to(input.dtype)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = keep.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
        noise = keep.mul_(a)
        out = input.mul_(noise) if inplace else input.mul(noise)
        return out.add_(b)
    noise = keep.div_(1 - p)
    return input.mul_(noise) if inplace else input.mul(noise)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    if _TF and (r_ := _tf(alpha_dropout, locals())) is not _GO:
        return r_
    _check_p(p)
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    if _TF and (r_ := _tf(feature_alpha_dropout, locals())) is not _GO:
        return r_
    _check_p(p)
    return _dropout_impl(input, p, training, True, True, inplace)


def _batched_feature_dropout(input, p, training, inplace, batched):
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _dropout_impl(input, p, training, True, False, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input, p=0.5, training=True, inplace=False):
    if _TF and (r_ := _tf(dropout1d, locals())) is not _GO:
        return r_
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs).")
    return _batched_feature_dropout(input, p, training, inplace, inp_dim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    if _TF and (r_ := _tf(dropout2d, locals())) is not _GO:
        return r_
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    if _TF and (r_ := _tf(dropout3d, locals())) is not _GO:
        return r_
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _batched_feature_dropout(input, p, training, inplace, inp_dim == 5)


class _DropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        _check_p(p)
        self.p, self.inplace = p, inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    def forward(self, input):
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    def forward(self, input):
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    def forward(self, input):
        return dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    def forward(self, input):
        return alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    def forward(self, input):
        return feature_alpha_dropout(input, self.p, self.training)
