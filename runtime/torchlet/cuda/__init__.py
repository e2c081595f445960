"""torchlet.cuda: NVIDIA GPUs through the CUDA driver API (PyTorch's torch.cuda).

The C runtime (runtime/src/cuda/) loads the driver lazily: importing
torchlet never needs one, ``is_available()`` is False without a driver or a
device, and the calls that need a device raise PyTorch's RuntimeError
("Found no NVIDIA driver on your system. ..." / "No CUDA GPUs are available").
Streams, events and memory statistics are thin wrappers over tl_cuda.h; the
caching allocator, copies and launches stay in C. Kernels are compiled on
first launch per device through ``_compile_hook`` (NVRTC behind a disk cache,
torchlet/cuda/nvrtc.py), which this module installs as the runtime's compiler.
"""
from __future__ import annotations

import ctypes

from .._C import ffi, lib
from .. import _device as _dev
from .._errors import OutOfMemoryError, check
from ._memory import (empty_cache, max_memory_allocated, max_memory_reserved, memory_allocated,
                      memory_reserved, reset_peak_memory_stats)
from . import _blas
from .streams import Event, Stream, StreamContext, current_stream, default_stream, set_stream, stream

__all__ = [
    "OutOfMemoryError", "is_available", "device_count", "current_device", "set_device", "device", "device_of",
    "synchronize", "current_stream", "default_stream", "stream", "set_stream", "Stream", "StreamContext", "Event",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "reset_peak_memory_stats", "empty_cache", "get_device_capability", "get_device_name", "is_initialized", "init",
    "driver_version",
]


def is_available() -> bool:
    """True when a CUDA driver and at least one device are present."""
    return lib.tl_cuda_device_count() > 0


def device_count() -> int:
    return lib.tl_cuda_device_count()


def is_initialized() -> bool:
    return is_available()


def _lazy_init() -> None:
    if lib.tl_cuda_device_count() == 0:
        raise RuntimeError(ffi.string(lib.tl_cuda_unavailable_reason()).decode())


def init() -> None:
    """Initializes the driver (it is loaded on first use anyway); raises without one."""
    _lazy_init()


def _device_index(d, optional: bool = False) -> int:
    """A device ordinal from an int, "cuda:1", a torchlet.device or None (the
    current device when optional)."""
    if d is None:
        if not optional:
            raise ValueError("Expected a cuda device, but got: None")
        _lazy_init()
        return lib.tl_cuda_current_device()
    if isinstance(d, str):
        d = _dev.device(d)
    if isinstance(d, _dev.device):
        if d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        if d.index is None:
            if not optional:
                raise ValueError(f"Expected a cuda device with a specified index or an integer, but got:{d}")
            _lazy_init()
            return lib.tl_cuda_current_device()
        return d.index
    if d.__class__ is int or isinstance(d, int) and not isinstance(d, bool):
        return d
    raise ValueError(f"Expected a cuda device, but got: {d!r}")


def current_device() -> int:
    _lazy_init()
    return lib.tl_cuda_current_device()


def set_device(device) -> None:
    """Sets this thread's current device (a negative index is ignored, as in PyTorch)."""
    idx = _device_index(device, optional=True)
    if idx >= 0:
        check(lib.tl_cuda_set_device(idx))


class device:
    """Context manager that makes `device` the current one (None: no change)."""

    def __init__(self, device):
        self.idx = -1 if device is None else _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                check(lib.tl_cuda_set_device(self.idx))
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            check(lib.tl_cuda_set_device(self.prev_idx))
        return False


class device_of(device):
    """device(t's device) for a CUDA tensor, a no-op for a CPU one."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else None)


def synchronize(device=None) -> None:
    """Waits for every stream of the device to finish its work."""
    check(lib.tl_cuda_synchronize(_device_index(device, optional=True)))


def get_device_capability(device=None) -> tuple[int, int]:
    idx = _device_index(device, optional=True)
    major, minor = ffi.new("int *"), ffi.new("int *")
    check(lib.tl_cuda_device_capability(idx, major, minor))
    return major[0], minor[0]


def get_device_name(device=None) -> str:
    idx = _device_index(device, optional=True)
    buf = ffi.new("char[256]")
    check(lib.tl_cuda_device_name(idx, buf, 256))
    return ffi.string(buf).decode()


def driver_version() -> int:
    """cuDriverGetVersion, e.g. 13000 for CUDA 13.0."""
    v = ffi.new("int *")
    check(lib.tl_cuda_driver_version(v))
    return v[0]


# ------------------------------------------------------------ the kernel compiler
def _compile_hook(name: str, source: str, major: int, minor: int) -> bytes:
    """A program's CUDA C source -> a loadable image (CUBIN) for sm_<major><minor>.
    The runtime calls it (through the cffi callback below) on a program's
    first launch on a device; NVRTC and its disk cache live in nvrtc.py
    (``compile_program(name, source, cc)``, cc = major * 10 + minor; the
    driver's version lets it refuse an NVRTC newer than the driver)."""
    try:
        from . import nvrtc
    except ImportError as e:
        if e.name not in (__name__ + ".nvrtc",):
            raise
        raise RuntimeError("torchlet.cuda: no kernel compiler: torchlet.cuda.nvrtc is not installed "
                           "(the NVRTC + kernel cache module of the CUDA kernel library)") from None
    return nvrtc.compile_program(name, source, major * 10 + minor, driver_version=driver_version())


_libc = ctypes.CDLL(None)   # the runtime frees the image with the process's free()
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]


def _malloc_copy(data: bytes):
    addr = _libc.malloc(len(data))
    if not addr:
        raise MemoryError("out of memory copying a kernel image")
    buf = ffi.cast("char *", addr)
    ffi.memmove(buf, data, len(data))
    return buf


@ffi.def_extern()
def tl_py_cuda_compile(name, source, major, minor, image, image_len, error_msg):
    # C -> Python -> C: the image and any message are malloc'ed, the runtime frees them
    try:
        img = _compile_hook(ffi.string(name).decode(), ffi.string(source).decode(), major, minor)
        if not isinstance(img, (bytes, bytearray, memoryview)) or len(img) == 0:
            raise RuntimeError(f"the compiler returned {type(img).__name__}, not a non-empty bytes image")
        img = bytes(img)
        image[0] = _malloc_copy(img)
        image_len[0] = len(img)
        return 0
    except BaseException as e:   # noqa: BLE001 - reported through the C error, never lost
        msg = f"{type(e).__name__}: {e}".encode("utf-8", "replace")
        try:
            error_msg[0] = _malloc_copy(msg + b"\0")
        except MemoryError:
            pass
        return -1


lib.tl_cuda_set_compiler(lib.tl_py_cuda_compile)
_blas.install(lib)   # where the nvidia-cublas wheel's library is (loaded on the first matrix product)
