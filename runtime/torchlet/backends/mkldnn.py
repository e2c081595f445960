"""torchlet.backends.mkldnn: oneDNN, the optional accelerator of the float32
CPU convolutions (docs/NN.md, "Convolution"), as torch.backends.mkldnn.

The library (libdnnl.so.3 from the onednn-cpu-gomp wheel, or
$TORCHLET_LIBDNNL) is loaded at the first convolution, never at import;
without it convolutions run their im2col + GEMM path. TORCHLET_ONEDNN=0 in the
environment, or `torchlet.backends.mkldnn.enabled = False`, turns it off.

    >>> torchlet.backends.mkldnn.is_available()
    True
    >>> with torchlet.backends.mkldnn.flags(enabled=False):
    ...     y = torchlet.nn.functional.conv2d(x, w)      # the im2col path
"""
from __future__ import annotations

import os
import sys
import types
from contextlib import contextmanager

from .._C import ffi as _ffi, lib as _lib

_SONAME = "libdnnl.so.3"


def _installed_library() -> str | None:
    """The wheel's libdnnl.so.3: its data files land in <prefix>/lib, the
    environment's or, for a --user install, the user base's (two stats at
    import; no package metadata scan)."""
    import site
    for base in (sys.prefix, getattr(site, "USER_BASE", None)):
        if base:
            path = os.path.join(base, "lib", _SONAME)
            if os.path.exists(path):
                return path
    return None


def is_available() -> bool:
    """Whether oneDNN loads (loads it): torch.backends.mkldnn.is_available."""
    return bool(_lib.tl_dnnl_is_available())


def unavailable_reason() -> str:
    """Why is_available() is False ('' when it is True)."""
    return _ffi.string(_lib.tl_dnnl_unavailable_reason()).decode(errors="replace")


def set_flags(_enabled: bool | None = None, _deterministic: bool | None = None):
    """Sets the flags (None keeps one) and returns the previous ones, as torch's."""
    orig = (bool(_lib.tl_dnnl_enabled()), False)
    if _enabled is not None:
        _lib.tl_dnnl_set_enabled(int(bool(_enabled)))
    return orig


@contextmanager
def flags(enabled: bool = False, deterministic: bool = False):
    """The flags set inside the block, restored after it."""
    orig = set_flags(enabled, deterministic)
    try:
        yield
    finally:
        set_flags(*orig)


def _cache_size() -> int:
    """Convolution primitives created and cached so far."""
    return int(_lib.tl_dnnl_cache_size())


class _MkldnnModule(types.ModuleType):
    """`enabled` as a module property (torch.backends.mkldnn.enabled)."""

    @property
    def enabled(self) -> bool:
        return bool(_lib.tl_dnnl_enabled())

    @enabled.setter
    def enabled(self, value: bool) -> None:
        _lib.tl_dnnl_set_enabled(int(bool(value)))


sys.modules[__name__].__class__ = _MkldnnModule

_path = _installed_library()
if _path is not None:
    _lib.tl_dnnl_set_library(_path.encode())
