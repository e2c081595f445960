"""torch/functional.py's Python front ends of the contraction operators:
``einsum(equation, *operands)`` and its sublist format ``einsum(op0, sub0,
op1, sub1, ..., [out_sub])``, ``tensordot(a, b, dims)`` with dims an int, a
pair of lists or a tensor, and ``cdist``'s compute_mode names; each then
calls its generated binding
(the operators are in yaml/native_functions.yaml, kernels/native/einsum.c and
kernels/native/products.c)."""
from __future__ import annotations

from ._function_mode import GO as _GO, handle_args as _tf_args, watch as _tf_watch

_TF = 0  # active torch-function modes: these functions are reported as themselves
_tf_watch(globals())


def _subscript(n) -> str:
    if n is Ellipsis:
        return "..."
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def _einsum(gen):
    def einsum(*args):
        """Sums the product of the operands' elements over the indices the
        equation names (Einstein summation), as torch.einsum."""
        if _TF and (r_ := _tf_args(einsum, args)) is not _GO:
            return r_
        from ._tensor import Tensor

        if len(args) < 2:
            raise ValueError("einsum(): must specify the equation string and at least one operand, "
                             "or at least one operand and its subscripts list")
        if isinstance(args[0], Tensor):  # sublist format
            equation = ",".join("".join(_subscript(s) for s in sub) for sub in args[1::2])
            if len(args) % 2 == 1:
                equation += "->" + "".join(_subscript(s) for s in args[-1])
                operands = args[:-1:2]
            else:
                operands = args[::2]
        else:
            equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            return einsum(equation, *operands[0])  # the old interface: one list of operands
        return gen(equation, list(operands))

    einsum.__wrapped__ = gen
    return einsum


def _tensordot(gen):
    def tensordot(a, b, dims=2, out=None):
        """Contracts a's last / listed dims with b's first / listed dims, as torch.tensordot."""
        if _TF and (r_ := _tf_args(tensordot, (a, b), {"dims": dims, "out": out})) is not _GO:
            return r_
        from ._tensor import Tensor

        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            return gen(a, b, [], [])  # the binding's TypeError (torch's Python code fails on a.dim())
        if isinstance(dims, bool) or not isinstance(dims, (tuple, list, Tensor, int)):
            raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                               f"list[list[int]] containing two lists, but got dims={dims}")
        dims_a, dims_b = [], []
        if isinstance(dims, (tuple, list)):
            dims_a, dims_b = dims
        elif isinstance(dims, Tensor):
            if dims.numel() > 1:
                if dims.size()[0] != 2:  # torch asserts this
                    raise ValueError(f"tensordot expects a dims tensor of 2 rows, but got dims={dims}")
                dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
            else:
                n = int(dims.item())
                if n < 0:
                    raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
                dims_a, dims_b = list(range(-n, 0)), list(range(n))
        else:
            if dims < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            if dims > min(a.dim(), b.dim()):
                raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
            dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
        if out is None:
            return gen(a, b, dims_a, dims_b)
        return gen(a, b, dims_a, dims_b, out=out)

    tensordot.__wrapped__ = gen
    return tensordot


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _cdist(gen):
    def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
        """p-norm distances between the rows of x1 and x2 (batched), as torch.cdist:
        compute_mode names whether p = 2 may use the matrix-product expansion."""
        if _TF and (r_ := _tf_args(cdist, (x1, x2), {"p": p, "compute_mode": compute_mode})) is not _GO:
            return r_
        if compute_mode not in _CDIST_MODES:
            raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
        return gen(x1, x2, p, _CDIST_MODES[compute_mode])

    cdist.__wrapped__ = gen
    return cdist


def install(namespace: dict) -> None:
    namespace["einsum"] = _einsum(namespace["einsum"])
    namespace["tensordot"] = _tensordot(namespace["tensordot"])
    namespace["cdist"] = _cdist(namespace["cdist"])
