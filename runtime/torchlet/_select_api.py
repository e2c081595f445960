"""torch/functional.py's wrappers over the selection operators:
`unique_consecutive` (returns only the outputs asked for) and
`block_diag(*tensors)`; `Tensor.unique_consecutive` (torch/_tensor.py)."""
from __future__ import annotations

from ._function_mode import GO as _GO, handle as _tf, handle_args as _tf_args, watch as _tf_watch
from ._tensor_api import _unique_outputs

_TF = 0  # active torch-function modes: these functions are reported as themselves
_tf_watch(globals())
_GEN = {}


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Eliminates all but the first element of every consecutive group of
    equivalent elements (torch.unique_consecutive)."""
    if _TF and (r_ := _tf(unique_consecutive, locals())) is not _GO:
        return r_
    output, inverse, counts = _GEN["unique_consecutive"](input, return_inverse, return_counts, dim)
    return _unique_outputs(output, inverse, counts, return_inverse, return_counts)


def _tensor_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """Tensor.unique_consecutive: torchlet.unique_consecutive(self, ...)."""
    return unique_consecutive(self, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


def block_diag(*tensors):
    """A block diagonal matrix from the given tensors (torch.block_diag)."""
    if _TF and (r_ := _tf_args(block_diag, tensors)) is not _GO:
        return r_
    return _GEN["block_diag"](list(tensors))


def install(tensor_cls, namespace: dict) -> None:
    for name, fn in (("unique_consecutive", unique_consecutive), ("block_diag", block_diag)):
        _GEN[name] = namespace[name]
        fn.__wrapped__ = namespace[name]
        namespace[name] = fn
    _tensor_unique_consecutive.__name__ = "unique_consecutive"
    tensor_cls.unique_consecutive = _tensor_unique_consecutive
