"""One `lib` over the C library's modules.

``_C.abi3.so`` holds several cffi modules (build_ffi.py): ``torchlet._C``,
the runtime API, and the operator shards ``torchlet._C_ops<k>``, which split
the generated operators' wrappers so that a new operator recompiles one
shard. Python loads each shard from the same file (one library can define
several modules: PEP 489), then replaces ``torchlet._C.lib`` with an
:class:`OperatorLib` that finds a name in any of them, so every
``from torchlet._C import lib`` sees all functions. The cffi ``Lib`` of the
base module stays as ``torchlet._C.runtime_lib`` (``ffi.addressof`` needs it).

torchlet/__init__.py imports this module before anything reads ``_C.lib``.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import sys

from . import _C


def _load_shard(name: str):
    loader = importlib.machinery.ExtensionFileLoader(name, _C.__file__)
    spec = importlib.util.spec_from_file_location(name, _C.__file__, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


class OperatorLib:
    """The functions and constants of torchlet._C and its operator shards by
    name. A name found once is kept on the instance, so a later lookup is one
    dict read, as on a cffi Lib (the modules export no variables, only
    functions and constants, so nothing kept can go stale)."""

    def __init__(self, runtime, shards):
        self.__dict__["_libs"] = (runtime, *(m.lib for m in shards))

    def __getattr__(self, name: str):
        for lib in self._libs:
            try:
                value = getattr(lib, name)
            except AttributeError:
                continue
            self.__dict__[name] = value
            return value
        raise AttributeError(f"torchlet._C has no function or constant {name!r}")

    def __dir__(self):
        return sorted({n for lib in self._libs for n in dir(lib)})

    def __repr__(self):
        return f"<torchlet._C lib: the runtime and {len(self._libs) - 1} operator shards>"


if not isinstance(_C.lib, OperatorLib):  # once per process
    _C.runtime_lib = _C.lib
    _C.lib = OperatorLib(_C.lib, [_load_shard(f"torchlet._C_ops{k}") for k in range(_C.lib.TL_OPS_SHARDS)])
