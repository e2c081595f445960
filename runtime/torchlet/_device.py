"""torchlet.device: cpu, meta (metadata only) and cuda (NVIDIA GPUs, torchlet.cuda).

`_id` is what the C runtime's device arguments take: the tl_device_type, and
for a cuda device with an index that index packed above it
(type | (index + 1) << 8, runtime/include/tl_internal.h); `_type` is the
plain tl_device_type."""
from __future__ import annotations

from ._C import lib

_TYPES = {"cpu": lib.TL_CPU, "cuda": lib.TL_CUDA, "meta": lib.TL_META}
_NAMES = {v: k for k, v in _TYPES.items()}


class device:
    __slots__ = ("type", "index", "_id", "_type")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type.__class__.__name__})")
        if ":" in type:
            type, _, idx = type.partition(":")
            try:
                index = int(idx)
            except ValueError:
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'") from None
        if type not in _TYPES:
            raise RuntimeError(
                f"Expected one of cpu, cuda, meta device type at start of device string: {type}")
        if index is not None:
            if index.__class__ is not int or index < 0:
                raise RuntimeError(f"Device index must not be negative" if isinstance(index, int)
                                   else f"Device index must be an int, got {index!r}")
        self.type = type
        self.index = index
        self._type = _TYPES[type]
        self._id = self._type | ((index + 1) << 8) if index is not None and type == "cuda" else self._type

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    # `with torchlet.device("meta"):` factory calls without a device land on
    # it (torchlet/utils/_device.py: a DeviceContext on the mode stack)
    def __enter__(self):
        from .utils._device import enter_device
        enter_device(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        from .utils._device import exit_device
        exit_device(self)


CPU = device("cpu")
META = device("meta")
_BY_ID = {lib.TL_CPU: CPU, lib.TL_META: META, lib.TL_CUDA: device("cuda")}


def as_device(d) -> device:
    if d is None:
        return CPU
    if isinstance(d, device):
        return d
    if isinstance(d, str):
        return device(d)
    if isinstance(d, int):
        return device("cuda", d)
    raise TypeError(f"expected a device, got {type(d).__name__}")


_CUDA = [device("cuda", i) for i in range(16)]


def from_id(i: int) -> device:
    return _BY_ID[i]


def of_tensor_ptr(p) -> device:
    """The device of a C tensor (cuda ones with their index)."""
    t = lib.tl_tensor_device(p)
    if t == lib.TL_CUDA:
        return _CUDA[lib.tl_tensor_device_index(p)]
    return _BY_ID[t]
