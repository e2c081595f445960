"""Functions torch writes in Python over its operators (torch/functional.py)
rather than as operators: ``unravel_index``."""
from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence

from ._function_mode import GO as _GO, handle as _tf, watch as _tf_watch

_TF = 0  # active torch-function modes: these functions are reported as themselves
_tf_watch(globals())


def _unravel_index(indices, shape):
    """the coordinates as the last dim of one long tensor: (indices // coef) % shape"""
    import torchlet

    if indices.is_floating_point() or indices.dtype is torchlet.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if not isinstance(shape, (int, Sequence)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if isinstance(shape, int):
        shape = (shape,)
    else:
        for dim in shape:
            if not isinstance(dim, int):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(dim)}")
        shape = tuple(shape)
    if not all(dim >= 0 for dim in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    # row-major strides of shape: the product of the sizes after each dim
    coefs = list(reversed(list(itertools.accumulate(reversed(shape[1:] + (1,)), func=operator.mul))))
    return indices.unsqueeze(-1).floor_divide(
        torchlet.tensor(coefs, device=indices.device, dtype=torchlet.int64)
    ) % torchlet.tensor(shape, device=indices.device, dtype=torchlet.int64)


def unravel_index(indices, shape):
    """torch.unravel_index: the coordinates in a tensor of `shape` of flat `indices`,
    one long tensor per dim of shape (numpy.unravel_index without its bounds check)."""
    if _TF and (r_ := _tf(unravel_index, locals())) is not _GO:
        return r_
    return _unravel_index(indices, shape).unbind(-1)
