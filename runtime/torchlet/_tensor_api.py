"""PyTorch's hand-written Python bindings of the tensor API's conversions and
helpers (torch/csrc/autograd/python_variable_methods.cpp, torch/functional.py):
the dtype conversion methods (``float() ... bool()``), ``cpu()``, ``type()``,
``new_tensor``; and the variadic module functions ``broadcast_shapes``,
``broadcast_tensors(*tensors)``, ``atleast_{1,2,3}d(*tensors)``,
``meshgrid(*tensors, indexing=)`` over their generated bindings (the operators
are in yaml/native_functions.yaml, kernels/native/tensor_helpers.c)."""
from __future__ import annotations

import warnings

from . import _dtype as _dt
from ._function_mode import GO as _GO, handle as _tf, handle_args as _tf_args, watch as _tf_watch

_TF = 0  # active torch-function modes: these functions are reported as themselves
_tf_watch(globals())

# legacy tensor type names (torch.FloatTensor ...) by dtype, as Tensor.type() prints them
_LEGACY = {
    _dt.float32: "FloatTensor", _dt.float64: "DoubleTensor", _dt.float16: "HalfTensor",
    _dt.bfloat16: "BFloat16Tensor", _dt.int64: "LongTensor", _dt.int32: "IntTensor",
    _dt.int16: "ShortTensor", _dt.int8: "CharTensor", _dt.uint8: "ByteTensor", _dt.bool_: "BoolTensor",
}
_BY_LEGACY = {v: k for k, v in _LEGACY.items()}


def _conversion(name, dtype):
    def method(self, memory_format=None):
        if _TF and (r_ := _tf(method, locals())) is not _GO:
            return r_
        if memory_format is None:
            return self.to(dtype)
        return self.to(dtype, memory_format=memory_format)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"`self.{name}()` is equivalent to `self.to({dtype})`."
    return method


def _cpu(self, memory_format=None):
    """A CPU copy of the tensor (the tensor itself when it is on the CPU)."""
    if _TF and (r_ := _tf(_cpu, locals())) is not _GO:
        return r_
    if memory_format is None:
        return self.to("cpu")
    return self.to("cpu", memory_format=memory_format)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """Without dtype: the legacy type name ('torch.FloatTensor'); with a dtype or
    a type name: the tensor converted (itself when the type is the same)."""
    if _TF and (r_ := _tf(_type, locals())) is not _GO:
        return r_
    if dtype is None:
        prefix = "torch.meta." if self.is_meta else "torch."
        return prefix + _LEGACY[self.dtype]
    if isinstance(dtype, str):
        name = dtype
        for p in ("torch.meta.", "torch.", "torchlet."):
            if name.startswith(p):
                name = name[len(p):]
                break
        want = _BY_LEGACY.get(name)
        if want is None:
            raise ValueError(f"invalid type: '{dtype}'")
    elif isinstance(dtype, _dt.dtype):
        want = dtype
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    return self.to(want, non_blocking=non_blocking)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """torch.tensor(data) with self's dtype and device unless given."""
    if _TF and (r_ := _tf(_new_tensor, locals())) is not _GO:
        return r_
    from ._factory import tensor
    from ._tensor import Tensor

    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = data.detach()
    return tensor(data, dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device, requires_grad=requires_grad)


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to (torch.broadcast_shapes)."""
    if _TF and (r_ := _tf_args(broadcast_shapes, shapes)) is not _GO:
        return r_
    from ._tensor import Size

    max_len = 0
    for shape in shapes:
        if isinstance(shape, int):
            max_len = max(max_len, 1)
        elif isinstance(shape, (tuple, list)):
            max_len = max(max_len, len(shape))
    result = [1] * max_len
    for shape in shapes:
        if isinstance(shape, int):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list of ints, got ",
                               shape)
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension ({shape[i]}): ({shape[i]})")
            if shape[i] == 1 or shape[i] == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape")
            result[i] = shape[i]
    return Size(result)


def _variadic(gen, name, doc):
    """torch/functional.py's `f(*tensors)`: one tensor -> its result; several,
    or one list / tuple -> a tuple."""
    def fn(*tensors):
        if _TF and (r_ := _tf_args(fn, tensors)) is not _GO:
            return r_
        if len(tensors) == 1:
            tensors = tensors[0]
        r = gen(tensors if not isinstance(tensors, tuple) else list(tensors))
        return tuple(r) if isinstance(r, list) else r

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__wrapped__ = gen
    return fn


def _broadcast_tensors(gen):
    def broadcast_tensors(*tensors):
        """The tensors expanded to their common broadcast shape (views)."""
        if _TF and (r_ := _tf_args(broadcast_tensors, tensors)) is not _GO:
            return r_
        return tuple(gen(list(tensors)))

    broadcast_tensors.__wrapped__ = gen
    return broadcast_tensors


def _meshgrid(gen):
    def meshgrid(*tensors, indexing=None):
        """Coordinate grids from 0-D / 1-D tensors; indexing 'ij' (matrix) or 'xy' (Cartesian)."""
        if _TF and (r_ := _tf_args(meshgrid, tensors, {} if indexing is None else {"indexing": indexing})) is not _GO:
            return r_
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        r = gen(list(tensors)) if indexing is None else gen(list(tensors), indexing=indexing)
        return tuple(r)

    meshgrid.__wrapped__ = gen
    return meshgrid


def _cartesian_prod(gen):
    def cartesian_prod(*tensors):
        """The Cartesian product of 1-D tensors: one row per combination (itertools.product's order)."""
        if _TF and (r_ := _tf_args(cartesian_prod, tensors)) is not _GO:
            return r_
        return gen(list(tensors))

    cartesian_prod.__wrapped__ = gen
    return cartesian_prod


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of input, sorted (torch.unique; over _unique2, or
    unique_dim for the distinct slices along dim), with the index of each
    element (slice) among them and their counts when asked."""
    if _TF and (r_ := _tf(unique, locals())) is not _GO:
        return r_
    if dim is not None:
        output, inverse, counts = _unique_dim()(input, dim, sorted, return_inverse, return_counts)
    else:
        output, inverse, counts = _UNIQUE2[0](input, sorted, return_inverse, return_counts)
    return _unique_outputs(output, inverse, counts, return_inverse, return_counts)


def _unique_outputs(output, inverse, counts, return_inverse, return_counts):
    """What torch.unique / unique_consecutive return: the output, then the
    inverse and the counts when asked for (torch/functional.py's rule)."""
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


_UNIQUE2 = [None, None]   # the generated _unique2; aten::unique_dim


def _unique_dim():
    """aten::unique_dim from the operator table: like torch, torchlet binds no
    torchlet.unique_dim (torch/__init__.py's PRIVATE_OPS)."""
    if _UNIQUE2[1] is None:
        from ._ops import ops
        _UNIQUE2[1] = ops.aten.unique_dim.default
    return _UNIQUE2[1]


def _tensor_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Tensor.unique: torchlet.unique(self, ...)."""
    return unique(self, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


_CONVERSIONS = (("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16),
                ("bfloat16", _dt.bfloat16), ("int", _dt.int32), ("long", _dt.int64), ("short", _dt.int16),
                ("char", _dt.int8), ("byte", _dt.uint8), ("bool", _dt.bool_), ("cfloat", _dt.complex64),
                ("cdouble", _dt.complex128))


def install(tensor_cls, namespace: dict) -> None:
    for name, dtype in _CONVERSIONS:
        setattr(tensor_cls, name, _conversion(name, dtype))
    _cpu.__name__ = "cpu"
    _type.__name__ = "type"
    _new_tensor.__name__ = "new_tensor"
    tensor_cls.cpu = _cpu
    tensor_cls.type = _type
    tensor_cls.new_tensor = _new_tensor
    namespace["broadcast_shapes"] = broadcast_shapes
    namespace["broadcast_tensors"] = _broadcast_tensors(namespace["broadcast_tensors"])
    namespace["meshgrid"] = _meshgrid(namespace["meshgrid"])
    namespace["cartesian_prod"] = _cartesian_prod(namespace["cartesian_prod"])
    _UNIQUE2[0] = namespace["_unique2"]
    namespace["unique"] = unique
    _tensor_unique.__name__ = "unique"
    tensor_cls.unique = _tensor_unique
    for n in (1, 2, 3):
        name = f"atleast_{n}d"
        namespace[name] = _variadic(namespace[name], name,
                                    f"Each tensor viewed with at least {n} dimension(s); one tensor -> a tensor, "
                                    "several (or a sequence) -> a tuple.")
