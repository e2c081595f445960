"""FakeTensor and FakeTensorMode (PyTorch's ``torch._subclasses.fake_tensor``).

A FakeTensor is a tensor subclass over a *meta* C tensor (sizes, strides,
dtype, no memory) that reports a device of its own (``fake_device``: cpu,
cuda:0, ... — no GPU or driver needed). Inside ``FakeTensorMode`` every
factory returns FakeTensors and every operator runs its Meta kernel (the
structured meta functions, a custom operator's ``register_fake`` kernel, the
CompositeImplicitAutograd decomposition), so a model's forward and backward
passes cost only metadata: how memory is planned and shapes are inferred.

    with FakeTensorMode():
        h = torch.empty(4, 128, 8192) @ torch.empty(8192, 28672)   # FakeTensor, no memory

The mode is an "infra" mode: it sits below every user dispatch mode whatever
the entry order, so a logging mode entered inside it sees FakeTensor results.
Outside its mode a FakeTensor still works: its calls reach
``FakeTensor.__torch_dispatch__``, which re-enters the tensor's mode.
"""
from __future__ import annotations

import threading
import weakref

from .. import _device as _dev
from .._C import lib
from .._python_dispatch import exclude_python
from .._subclass import attach, state_of
from .._tensor import Tensor
from ..utils._python_dispatch import TorchDispatchMode

__all__ = ["FakeTensor", "FakeTensorMode", "FakeTensorConverter", "UnsupportedFakeTensorException",
           "DynamicOutputShapeException", "DataDependentOutputException", "UnsupportedOperatorException"]

_META = _dev.device("meta")


class _InKernel(threading.local):
    depth = 0


_kernel = _InKernel()     # PyTorch's in_kernel_invocation_manager, per thread


def _fake_device(d) -> _dev.device:
    d = _dev.as_device(d)
    return _dev.device("cuda", 0) if d.type == "cuda" and d.index is None else d
_CPU = _dev.device("cpu")


# ------------------------------------------------------------------ exceptions (PyTorch's)

class UnsupportedFakeTensorException(RuntimeError):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class DynamicOutputShapeException(RuntimeError):
    """An operator whose output shape depends on data (nonzero, masked_select, unique)."""

    def __init__(self, func):
        super().__init__(str(func))
        self.func = func


class DataDependentOutputException(RuntimeError):
    """An operator whose output is data (``.item()``, ``bool(t)``, ``.tolist()``)."""

    def __init__(self, func):
        super().__init__(str(func))
        self.func = func


class UnsupportedOperatorException(RuntimeError):
    """An operator with no Meta kernel, with the fallback to real kernels turned off."""

    def __init__(self, func):
        super().__init__(str(func))
        self.func = func


def _local_scalar_dense():
    from .._ops import ops
    return ops.aten._local_scalar_dense.default if hasattr(ops.aten, "_local_scalar_dense") \
        else "aten._local_scalar_dense.default"


# ------------------------------------------------------------------ FakeTensor

class FakeTensor(Tensor):
    """A meta tensor that says it lives on ``fake_device``."""

    fake_device: _dev.device
    fake_mode: "FakeTensorMode"

    @staticmethod
    def _make(mode: "FakeTensorMode", meta: Tensor, device) -> "FakeTensor":
        """A FakeTensor over the meta tensor ``meta`` (its C tensor, shared)."""
        t = Tensor.__new__(FakeTensor)
        lib.tl_tensor_retain(meta._p)
        t._p = meta._p
        t.fake_device = _fake_device(device)
        t.fake_mode = mode
        return attach(t)

    # -- what it says about itself
    @property
    def device(self) -> _dev.device:
        # inside the mode's kernel call the truth (meta), so that code there
        # (a register_fake kernel's torchlet.empty(..., device=x.device)) makes meta tensors
        return _META if _kernel.depth else self.fake_device

    @property
    def is_meta(self) -> bool:
        return self.fake_device.type == "meta"

    @property
    def is_cpu(self) -> bool:
        return self.fake_device.type == "cpu"

    @property
    def is_cuda(self) -> bool:
        return self.fake_device.type == "cuda"

    def get_device(self) -> int:
        return -1 if self.fake_device.type == "cpu" else (self.fake_device.index or 0)

    def data_ptr(self) -> int:
        return 0

    def __repr__(self):
        parts = []
        if self.fake_device.type != "cpu":
            parts.append(f"device='{self.fake_device}'")
        parts.append(f"size={tuple(self.shape)}")
        from .. import _dtype as _dt
        if self.dtype is not _dt.get_default_dtype():
            parts.append(f"dtype={self.dtype}")
        if self.requires_grad:
            parts.append("requires_grad=True")
        return f"FakeTensor(..., {', '.join(parts)})"

    __str__ = __repr__

    # -- data it does not have
    def item(self):
        raise DataDependentOutputException(_local_scalar_dense())

    def tolist(self):
        raise DataDependentOutputException(_local_scalar_dense())

    def __bool__(self):
        raise DataDependentOutputException(_local_scalar_dense())

    def __int__(self):
        raise DataDependentOutputException(_local_scalar_dense())

    def __float__(self):
        raise DataDependentOutputException(_local_scalar_dense())

    def __index__(self):
        raise DataDependentOutputException(_local_scalar_dense())

    def numpy(self, *, force=False):
        raise RuntimeError("Cannot copy out of fake tensor: it has no data (convert a real tensor instead)")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def __deepcopy__(self, memo):
        raise RuntimeError("deepcopy of a FakeTensor: make a new one with FakeTensorMode.from_tensor")

    # -- its calls outside its mode go back to it
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        mode = _mode_of(args, kwargs or {})
        if mode is None:
            return NotImplemented
        with mode:
            return func(*args, **(kwargs or {}))


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            for t in v:
                if isinstance(t, Tensor):
                    yield t


def _mode_of(args, kwargs):
    for t in _tensors(list(args) + list(kwargs.values())):
        if isinstance(t, FakeTensor):
            return t.fake_mode
    return None


# ------------------------------------------------------------------ converter

class FakeTensorConverter:
    """Real tensor -> FakeTensor, memoized (the same real tensor gives the same
    fake), keeping views as views of one fake storage and ``requires_grad``."""

    def __init__(self):
        self._memo: dict[int, tuple] = {}        # id(real) -> (weakref(real), fake)
        self._storages: dict[int, tuple] = {}    # storage address -> (weakref(real), meta base)

    def from_real_tensor(self, fake_mode, t, make_constant=False, shape_env=None, *, source=None,
                         symbolic_context=None, trace=True):
        if isinstance(t, FakeTensor):
            if t.fake_mode is not fake_mode:
                raise AssertionError("Mixing fake modes NYI")
            return t
        hit = self._memo.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        fake = self._convert(fake_mode, t)
        self._memo[id(t)] = (weakref.ref(t, lambda _r, k=id(t): self._memo.pop(k, None)), fake)
        return fake

    def _convert(self, fake_mode, t: Tensor) -> FakeTensor:
        """Real tensors sharing a storage get fakes sharing one meta storage:
        views of the same base stay views of one fake base."""
        from .._C import ffi
        from .._generated import _ops as g
        storage = lib.tl_tensor_storage(t._p)
        key = (int(ffi.cast("intptr_t", storage)), t.dtype)
        hit = self._storages.get(key)
        if hit is None or hit[0]() is None:
            n = lib.tl_storage_nbytes(storage) // t.element_size()
            with exclude_python():
                hit = (weakref.ref(t), g.empty((n,), dtype=t.dtype, device="meta"))
            self._storages[key] = hit
        with exclude_python():
            meta = hit[1].as_strided(tuple(t.shape), tuple(t.stride()), t.storage_offset())
        fake = FakeTensor._make(fake_mode, meta, t.device)
        if t.requires_grad:
            fake.requires_grad_(True)
        return fake


# ------------------------------------------------------------------ the mode

class FakeTensorMode(TorchDispatchMode):
    """Every factory returns a FakeTensor, every operator runs its Meta kernel."""

    _mode_key = "fake"

    def __init__(self, *, allow_fallback_kernels=True, allow_non_fake_inputs=False, shape_env=None,
                 static_shapes=None, export=False):
        super().__init__()
        if shape_env is not None:
            raise NotImplementedError("torchlet's FakeTensorMode has no symbolic shapes (shape_env)")
        self.allow_fallback_kernels = allow_fallback_kernels
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.static_shapes = True if static_shapes is None else static_shapes
        self.export = export
        self.shape_env = None
        self.fake_tensor_converter = FakeTensorConverter()

    @classmethod
    def is_infra_mode(cls) -> bool:
        return True

    def from_tensor(self, tensor, *, static_shapes=None, source=None, symbolic_context=None, trace=True):
        """The FakeTensor standing for the real tensor ``tensor`` (memoized)."""
        return self.fake_tensor_converter.from_real_tensor(self, tensor)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if any(not issubclass(t, FakeTensor) for t in types):
            return NotImplemented
        args, kwargs = self._fakes_only(func, args, kwargs)
        tags = func.tags
        from .._tags import Tag
        if Tag.dynamic_output_shape in tags:
            raise DynamicOutputShapeException(func)
        if Tag.data_dependent_output in tags:
            raise DataDependentOutputException(func)
        device = self._out_device(func, args, kwargs)
        call_kwargs = dict(kwargs)
        if "device" in func._names:     # factories and .to(): the data lives on meta
            call_kwargs["device"] = _META
        _kernel.depth += 1
        try:
            with exclude_python():
                try:
                    out = func(*args, **call_kwargs)
                except NotImplementedError:
                    if not self.allow_fallback_kernels:
                        raise UnsupportedOperatorException(func) from None
                    out = self._run_real(func, args, call_kwargs)
        finally:
            _kernel.depth -= 1
        return _wrap_outputs(self, out, device)

    # -- inputs
    def _fakes_only(self, func, args, kwargs):
        """Every tensor argument as a FakeTensor of this mode (PyTorch's check)."""
        def fix(v):
            if isinstance(v, FakeTensor):
                if v.fake_mode is not self:
                    raise AssertionError("Mixing fake modes NYI")
                return v
            if isinstance(v, Tensor):
                if v.is_meta:          # no data either: a fake of the meta device
                    return self.from_tensor(v)
                if not self.allow_non_fake_inputs:
                    shown = ", ".join(repr(a) for a in args)
                    raise AssertionError(
                        "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with "
                        f"'allow_non_fake_inputs'. Found in {func}({shown})")
                return self.from_tensor(v)
            if isinstance(v, (list, tuple)) and any(isinstance(t, Tensor) for t in v):
                return type(v)(fix(t) for t in v)
            return v
        return tuple(fix(a) for a in args), {k: fix(v) for k, v in kwargs.items()}

    def _out_device(self, func, args, kwargs):
        """The device results report: an explicit ``device=``, else the inputs'
        common device (0-dim cpu tensors mix with any device), else cpu."""
        d = kwargs.get("device")
        if d is not None:
            return _fake_device(d)
        common, common_is_scalar = None, False
        for t in _tensors(list(args) + list(kwargs.values())):
            dev, scalar = t.fake_device, t.dim() == 0 and t.fake_device.type == "cpu"
            if common is None or (common_is_scalar and not scalar):
                common, common_is_scalar = dev, scalar
            elif dev != common and not scalar:
                raise RuntimeError(f"Unhandled FakeTensor Device Propagation for {func}, found two different "
                                   f"devices {common}, {dev}")
        return common if common is not None else _CPU

    # -- an operator without a Meta kernel
    def _run_real(self, func, args, kwargs):
        """PyTorch's fallback: run the real kernel on zero-filled inputs of the
        same metadata and keep only the outputs' metadata."""
        from .._generated import _ops as g

        def real(v):
            if isinstance(v, Tensor):
                shape, stride = tuple(v.shape), tuple(v.stride())
                # the storage a strided view spans (a slice of a wider tensor reaches past its numel)
                span = 0 if 0 in shape else 1 + sum((n - 1) * abs(st) for n, st in zip(shape, stride))
                r = g.zeros((span,), dtype=v.dtype)
                return r.as_strided(shape, stride) if v.dim() else r.view(())
            if isinstance(v, (list, tuple)):
                return type(v)(real(t) for t in v)
            return v
        kw = {k: (_CPU if k == "device" else real(v)) for k, v in kwargs.items()}
        out = func(*(real(a) for a in args), **kw)

        def meta(v):
            if isinstance(v, Tensor):
                return g.empty_strided(tuple(v.shape), tuple(v.stride()), dtype=v.dtype, device="meta")
            if isinstance(v, (list, tuple)):
                return type(v)(meta(t) for t in v)
            return v
        return meta(out)


def _wrap_outputs(mode, out, device):
    if isinstance(out, FakeTensor):
        return out
    if isinstance(out, Tensor):
        if state_of(out._p) is not None:     # an input came back (in-place, out=)
            from .._subclass import rewrap
            return rewrap(out)
        if not out.is_meta:      # a kernel that made real memory: keep only its metadata
            from .._generated import _ops as g
            with exclude_python():
                out = g.empty_strided(tuple(out.shape), tuple(out.stride()), dtype=out.dtype, device="meta")
        return FakeTensor._make(mode, out, device)
    if isinstance(out, tuple):
        return type(out)(*(_wrap_outputs(mode, o, device) for o in out)) if hasattr(out, "_fields") \
            else tuple(_wrap_outputs(mode, o, device) for o in out)
    if isinstance(out, list):
        return [_wrap_outputs(mode, o, device) for o in out]
    return out
