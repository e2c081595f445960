"""F.interpolate and its deprecated aliases (F.upsample, F.upsample_nearest,
F.upsample_bilinear), PyTorch's Python (torch/nn/functional.py): argument
checks and messages, size vs scale_factor, recompute_scale_factor, then the
upsample_* .vec operators of torchlet._C._nn (kernels/native/upsample.c) or
adaptive average pooling for mode="area". Re-exported by
torchlet.nn.functional."""
from __future__ import annotations

import math
import numbers
import warnings

import torchlet
from torchlet._function_mode import GO as _GO, handle as _tf, watch as _tf_watch
from torchlet._generated import _nn

_TF = 0  # active torch-function modes (torchlet._function_mode)
_tf_watch(globals())


def _is_integer(x):
    """PyTorch's _is_integer: ints (numpy's too) and tensors of a non-floating dtype"""
    if isinstance(x, numbers.Integral):
        return True
    return isinstance(x, torchlet.Tensor) and not x.is_floating_point()


_NEAREST = {3: "upsample_nearest1d", 4: "upsample_nearest2d", 5: "upsample_nearest3d"}
_NEAREST_EXACT = {3: "_upsample_nearest_exact1d", 4: "_upsample_nearest_exact2d", 5: "_upsample_nearest_exact3d"}
_LINEAR = {(3, "linear"): "upsample_linear1d", (4, "bilinear"): "upsample_bilinear2d",
           (5, "trilinear"): "upsample_trilinear3d", (4, "bicubic"): "upsample_bicubic2d"}
_WRONG_DIM = {(3, "bilinear"): "Got 3D input, but bilinear mode needs 4D input",
              (3, "trilinear"): "Got 3D input, but trilinear mode needs 5D input",
              (4, "linear"): "Got 4D input, but linear mode needs 3D input",
              (4, "trilinear"): "Got 4D input, but trilinear mode needs 5D input",
              (5, "linear"): "Got 5D input, but linear mode needs 3D input",
              (5, "bilinear"): "Got 5D input, but bilinear mode needs 4D input"}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if _TF and (r_ := _tf(interpolate, locals())) is not _GO:
        return r_
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = [int(x) for x in size]
        else:
            output_size = [int(size) for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor) for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    # "area" always works from an explicit size (PyTorch reuses the
    # recompute_scale_factor path)
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(float(input.size(i + 2) * scale_factors[i])) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires "
                         "a 4-D tensor as input")
    nd = input.dim()
    if mode == "nearest" and nd in _NEAREST:
        return getattr(_nn, _NEAREST[nd])(input, output_size, scale_factors)
    if mode == "nearest-exact" and nd in _NEAREST_EXACT:
        return getattr(_nn, _NEAREST_EXACT[nd])(input, output_size, scale_factors)
    if mode == "area" and nd in (3, 4, 5):
        from . import functional as F
        pool = {3: "adaptive_avg_pool1d", 4: "adaptive_avg_pool2d", 5: "adaptive_avg_pool3d"}[nd]
        fn = getattr(F, pool, None)
        if fn is None:
            raise NotImplementedError(f"torchlet.nn.functional.{pool} is not implemented yet")
        return fn(input, output_size)
    if (nd, mode) in _LINEAR:
        if antialias:
            return getattr(_nn, f"_{_LINEAR[nd, mode]}_aa")(input, output_size, align_corners, scale_factors)
        return getattr(_nn, _LINEAR[nd, mode])(input, output_size, align_corners, scale_factors)
    if nd == 4 and mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        raise NotImplementedError("torchlet._C._nn._upsample_lanczos2d_aa is not implemented yet")
    if (nd, mode) in _WRONG_DIM:
        raise NotImplementedError(_WRONG_DIM[nd, mode])
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area"
        f" | nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    if _TF and (r_ := _tf(upsample, locals())) is not _GO:
        return r_
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    if _TF and (r_ := _tf(upsample_nearest, locals())) is not _GO:
        return r_
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    if _TF and (r_ := _tf(upsample_bilinear, locals())) is not _GO:
        return r_
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    if _TF and (r_ := _tf(pixel_shuffle, locals())) is not _GO:
        return r_
    return torchlet.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    if _TF and (r_ := _tf(pixel_unshuffle, locals())) is not _GO:
        return r_
    return torchlet.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    if _TF and (r_ := _tf(channel_shuffle, locals())) is not _GO:
        return r_
    return torchlet.channel_shuffle(input, groups)


def adaptive_avg_pool3d(input, output_size):
    if _TF and (r_ := _tf(adaptive_avg_pool3d, locals())) is not _GO:
        return r_
    from .functional import _list_with_default
    return _nn.adaptive_avg_pool3d(input, _list_with_default(output_size, input.size()))


def bilinear(input1, input2, weight, bias=None):
    if _TF and (r_ := _tf(bilinear, locals())) is not _GO:
        return r_
    return torchlet.bilinear(input1, input2, weight, bias)
