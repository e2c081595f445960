"""The caching allocator's counters and cache (PyTorch's torch.cuda memory API).

Counts are bytes of blocks as the allocator hands them out (requests rounded
up to 512 B), per device; `reserved` is what the allocator holds from the
driver (segments), cached blocks included. Without CUDA every counter is 0 and
empty_cache() does nothing, as in PyTorch before CUDA is initialized."""
from __future__ import annotations

from .._C import ffi, lib
from .._errors import check


def _stats(device):
    from . import _device_index
    if lib.tl_cuda_device_count() == 0:
        return (0, 0, 0, 0)
    idx = _device_index(device, optional=True)
    v = ffi.new("int64_t[4]")
    check(lib.tl_cuda_memory_stats(idx, v, v + 1, v + 2, v + 3))
    return tuple(v)


def memory_allocated(device=None) -> int:
    """Bytes of device memory held by tensors now."""
    return _stats(device)[0]


def max_memory_allocated(device=None) -> int:
    """The peak of memory_allocated since start or reset_peak_memory_stats()."""
    return _stats(device)[1]


def memory_reserved(device=None) -> int:
    """Bytes the caching allocator holds from the driver (in use and cached)."""
    return _stats(device)[2]


def max_memory_reserved(device=None) -> int:
    return _stats(device)[3]


def reset_peak_memory_stats(device=None) -> None:
    from . import _device_index
    if lib.tl_cuda_device_count() == 0:
        return
    check(lib.tl_cuda_reset_peak_memory_stats(_device_index(device, optional=True)))


def empty_cache() -> None:
    """Gives every cached, unused segment back to the driver (blocks still in
    use, and segments split between used and free blocks, stay)."""
    check(lib.tl_cuda_empty_cache())
