"""Dispatcher introspection and thread-local key sets, as PyTorch spells them
under ``torch._C``: ``torchlet._C._dispatch_keys(t)``,
``torchlet._C._dispatch_dump_table("aten::add.Tensor")``, ...

``torchlet._C`` is the compiled cffi module (``ffi``, ``lib``); this module
defines the functions and attaches them to it, so both spellings work:
``torchlet._dispatch._dispatch_keys`` and ``torchlet._C._dispatch_keys``.
"""
from __future__ import annotations

from . import _C as _C_module
from ._C import ffi, lib
from ._errors import raise_pending_error

__all__ = [
    "DispatchKeySet",
    "_dispatch_keys",
    "_dispatch_dump_table",
    "_dispatch_dump",
    "_dispatch_has_kernel_for_dispatch_key",
    "_dispatch_has_kernel",
    "_dispatch_key_name",
    "_dispatch_key_parse",
    "_dispatch_tls_local_include_set",
    "_dispatch_tls_local_exclude_set",
    "_dispatch_tls_set_dispatch_key_included",
    "_dispatch_tls_set_dispatch_key_excluded",
    "_dispatch_tls_is_dispatch_key_included",
    "_dispatch_tls_is_dispatch_key_excluded",
]


def _text(fn, *args) -> str:
    """The sizing protocol of the dispatcher's string functions."""
    n = fn(*args, ffi.NULL, 0)
    if n < 0:
        raise_pending_error()
    buf = ffi.new("char[]", n + 1)
    if fn(*args, buf, n + 1) < 0:
        raise_pending_error()
    return ffi.string(buf).decode()


def _key(name) -> int:
    """A dispatch key name ("CPU", "AutogradCPU", "CompositeImplicitAutograd") -> its number."""
    if isinstance(name, int):
        return name
    if not isinstance(name, str):
        raise TypeError(f"expected a dispatch key name (str), got {type(name).__name__}")
    k = lib.tl_dispatch_key_parse(name.encode())
    if k == lib.TL_KEY_INVALID:
        raise_pending_error()
    return k


class DispatchKeySet:
    """A 64-bit set of dispatch keys (PyTorch's ``DispatchKeySet``)."""

    __slots__ = ("_bits",)

    def __init__(self, bits=0):
        if isinstance(bits, str):
            bits = 1 << _key(bits)
        self._bits = int(bits)

    def has(self, key) -> bool:
        return bool(self._bits >> _key(key) & 1)

    def __or__(self, other):
        return DispatchKeySet(self._bits | DispatchKeySet(other)._bits if not isinstance(other, DispatchKeySet)
                              else self._bits | other._bits)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and other._bits == self._bits

    def __hash__(self):
        return hash(self._bits)

    def __int__(self):
        return self._bits

    def __repr__(self):
        return _text(lib.tl_dispatch_keyset_to_string, self._bits)

    __str__ = __repr__


def _dispatch_keys(tensor) -> DispatchKeySet:
    """The dispatch keys of a tensor: ``DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)``."""
    return DispatchKeySet(lib.tl_tensor_key_set(tensor._p))


def _find(name: str):
    op = lib.tl_op_find(name.encode())
    if op == ffi.NULL:
        raise_pending_error()
    return op


def _dispatch_dump_table(name: str) -> str:
    """One line per filled table slot: ``KEY: kernel [provenance]``."""
    return _text(lib.tl_dispatch_dump_table, name.encode())


def _dispatch_dump(name: str) -> str:
    """The registrations of an operator, newest first."""
    return _text(lib.tl_op_dump_registrations, _find(name))


def _dispatch_has_kernel_for_dispatch_key(name: str, key) -> bool:
    return bool(lib.tl_op_has_registration(_find(name), _key(key)))


def _dispatch_has_kernel(name: str) -> bool:
    """Whether an operator of that name is defined."""
    if lib.tl_op_find(name.encode()) == ffi.NULL:
        lib.tl_clear_error()
        return False
    return True


def _dispatch_key_name(key: int) -> str:
    return ffi.string(lib.tl_dispatch_key_name(key)).decode()


def _dispatch_key_parse(name: str) -> int:
    return _key(name)


def _dispatch_tls_local_include_set() -> DispatchKeySet:
    return DispatchKeySet(lib.tl_tls_get_included())


def _dispatch_tls_local_exclude_set() -> DispatchKeySet:
    return DispatchKeySet(lib.tl_tls_get_excluded())


def _dispatch_tls_set_dispatch_key_included(key, flag: bool) -> None:
    bit = 1 << _key(key)
    cur = lib.tl_tls_get_included()
    if lib.tl_tls_set_included(cur | bit if flag else cur & ~bit) < 0:
        raise_pending_error()


def _dispatch_tls_set_dispatch_key_excluded(key, flag: bool) -> None:
    bit = 1 << _key(key)
    cur = lib.tl_tls_get_excluded()
    if lib.tl_tls_set_excluded(cur | bit if flag else cur & ~bit) < 0:
        raise_pending_error()


def _dispatch_tls_is_dispatch_key_included(key) -> bool:
    return bool(lib.tl_tls_get_included() >> _key(key) & 1)


def _dispatch_tls_is_dispatch_key_excluded(key) -> bool:
    return bool(lib.tl_tls_get_excluded() >> _key(key) & 1)


for _name in __all__:
    setattr(_C_module, _name, globals()[_name])
del _name
