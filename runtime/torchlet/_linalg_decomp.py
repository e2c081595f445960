"""torchlet.lu / Tensor.lu: torch/functional.py's hand-written front end over
the `_lu_with_info` operator (the LU factors and pivots, with the infos when
get_infos=True; out= fills a tuple). The operators themselves are generated
(kernels/native/linalg_decomp.c, docs/LINALG.md "Decompositions")."""
from __future__ import annotations


def _lu(A, pivot=True, get_infos=False, out=None):
    import torchlet

    # as torch: errors are never checked here (the infos say which matrices failed)
    result = torchlet._lu_with_info(A, pivot=pivot, check_errors=(not get_infos))
    if out is not None:
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        if len(out) - (1 if get_infos else 0) != 2:
            raise TypeError(f"expected tuple of {2 + int(get_infos)} elements but got {len(out)}")
        for dst, src in zip(out, result):
            dst.resize_as_(src).copy_(src)
        return out
    return result if get_infos else (result[0], result[1])


def _tensor_lu(self, pivot=True, get_infos=False):
    """Tensor.lu: see torchlet.lu"""
    return _lu(self, pivot=pivot, get_infos=get_infos)


def install(Tensor, namespace: dict) -> None:
    _lu.__name__ = "lu"
    _lu.__doc__ = "lu(A, pivot=True, get_infos=False, out=None): the LU factorization (torch.lu)"
    namespace["lu"] = _lu
    Tensor.lu = _tensor_lu
