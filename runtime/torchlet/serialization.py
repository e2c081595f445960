"""torchlet.save / torchlet.load in PyTorch's zip checkpoint format.

A checkpoint is a zip archive (records stored uncompressed, each record's
data 64-byte aligned) whose records share one top-level folder `<name>/`:

* `data.pkl`: the object pickled (protocol 2) with every tensor reduced to
  `torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride,
  requires_grad, backward_hooks)` (a Parameter to `_rebuild_parameter(tensor,
  requires_grad, hooks)`) and every storage written as the persistent id
  `("storage", torch.<Type>Storage, key, "cpu", numel)`;
* `data/<key>`: each storage's raw bytes (tensors that share a storage share
  the record, as PyTorch preserves views);
* `byteorder`, `version` ("3"), `.format_version`, `.storage_alignment`.

The globals are written under PyTorch's names (`torch._utils ...`,
`torch FloatStorage`, `torch float32`, `torch device`, `collections
OrderedDict`), so `torch.load` reads a torchlet file and torchlet reads
torch's. On load those names map to torchlet's own functions and types.

`load(..., weights_only=True)` (the default, as PyTorch 2.6+) unpickles with
an allowlist: the rebuild functions, storage types, dtypes, devices, Size,
OrderedDict / Counter, set / frozenset / bytearray / complex, plus whatever
`add_safe_globals` allowed; any other global is refused before it is looked
up (pickle.UnpicklingError, "Weights only load failed..."), so a file cannot
run code. Primitives, lists, tuples and dicts need no globals.
"""
from __future__ import annotations

import contextlib
import io
import os
import pickle
import struct
import sys
import zipfile
from collections import Counter, OrderedDict

import numpy as np

import torchlet

from . import _dtype as _dt
from ._C import ffi, lib
from ._tensor import Size, Tensor, _wrap

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

DEFAULT_PROTOCOL = 2
STORAGE_ALIGNMENT = 64

# dtype -> PyTorch's legacy typed-storage class name (what the pickle names)
_STORAGE_NAMES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
    "uint8": "ByteStorage", "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}


def _dtype_name(dtype) -> str:
    return str(dtype).rpartition(".")[2]


# ------------------------------------------------------------------ saving


class _Global:
    """A reference to a global by name, pickled as GLOBAL `module name` (the
    object itself need not exist here: torch's names are written without torch)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce wants a callable; only its name is written
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint, not a function")


_GLOBALS: dict = {}


def _g(module: str, name: str) -> _Global:
    key = (module, name)
    g = _GLOBALS.get(key)
    if g is None:
        g = _GLOBALS[key] = _Global(module, name)
    return g


class _StorageRef:
    """The storage under a tensor being saved: its persistent id names it."""

    __slots__ = ("key", "dtype", "numel")

    def __init__(self, key: str, dtype, numel: int) -> None:
        self.key, self.dtype, self.numel = key, dtype, numel


def _storage_of(t: Tensor):
    """(address of the C storage, its bytes as a buffer, nbytes) of a CPU tensor."""
    s = lib.tl_tensor_storage(t._p)
    nbytes = lib.tl_storage_nbytes(s)
    data = lib.tl_storage_data(s)
    return int(ffi.cast("uintptr_t", s)), data, nbytes


class _Pickler(pickle._Pickler):
    """The pure-Python pickler (it lets `_Global` write a GLOBAL opcode for a
    name that cannot be imported here); tensors reduce to PyTorch's rebuild calls."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages: dict = {}       # storage address -> (_StorageRef, tensor keeping it alive, data ptr)

    def _save_global_ref(self, obj: _Global) -> None:
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + obj.module.encode("utf-8") + b"\n" + obj.name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[_Global] = _save_global_ref

    def _save_dtype(self, obj) -> None:
        self._save_global_ref(_g("torch", _dtype_name(obj)))
        self.memoize(obj)

    dispatch[_dt.dtype] = _save_dtype

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _g("torch", _STORAGE_NAMES[_dtype_name(obj.dtype)]), obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, torchlet.device):
            return (_g("torch", "device"), (str(obj),))
        if isinstance(obj, Size):
            return (_g("torch", "Size"), (tuple(obj),))
        return NotImplemented

    def _reduce_tensor(self, t: Tensor):
        from .nn.modules import Parameter
        if isinstance(t, Parameter):
            return (_g("torch._utils", "_rebuild_parameter"),
                    (t.detach(), t.requires_grad, OrderedDict()))
        if t.is_meta:
            raise RuntimeError("Cannot save a meta tensor: it has no data")
        if t.device.type != "cpu":
            t = t.cpu()
        name = _dtype_name(t.dtype)
        if name not in _STORAGE_NAMES:
            raise TypeError(f"torchlet.save: unsupported tensor dtype {t.dtype}")
        addr, data, nbytes = _storage_of(t)
        entry = self.storages.get(addr)
        if entry is None:
            ref = _StorageRef(str(len(self.storages)), t.dtype, nbytes // t.element_size())
            self.storages[addr] = entry = (ref, t, data, nbytes)
        elif entry[0].dtype != t.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        return (_g("torch._utils", "_rebuild_tensor_v2"),
                (entry[0], t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.requires_grad, OrderedDict()))


def _archive_name(f) -> str:
    if isinstance(f, str):
        return os.path.splitext(os.path.basename(f))[0] or "archive"
    return "archive"


def _write_aligned(zf: zipfile.ZipFile, name: str, data) -> None:
    """One stored record whose data starts at a multiple of STORAGE_ALIGNMENT
    (padding in an 'FB' extra field, as PyTorch's writer does)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    offset = zf.fp.tell() if zf.fp.seekable() else zf.start_dir
    start = offset + 30 + len(name.encode("utf-8")) + 4     # local header, name, extra-field header
    pad = -start % STORAGE_ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    zf.writestr(info, bytes(data))


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """Save `obj` (tensors, Parameters, state_dicts, containers of them) to
    `f`, a path or a writable binary file object, in PyTorch's zip format."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("torchlet.save writes only the zip format (_use_new_zipfile_serialization=True)")
    if pickle_module is not pickle:
        raise NotImplementedError("torchlet.save: pickle_module must be the standard pickle module")
    if isinstance(f, os.PathLike):
        f = os.fspath(f)
    if not isinstance(f, str) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    prefix = _archive_name(f) + "/"
    target = open(f, "wb") if isinstance(f, str) else f
    try:
        with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            _write_aligned(zf, prefix + "data.pkl", buf.getvalue())
            _write_aligned(zf, prefix + ".format_version", b"1")
            _write_aligned(zf, prefix + ".storage_alignment", str(STORAGE_ALIGNMENT).encode())
            if not _disable_byteorder_record:
                _write_aligned(zf, prefix + "byteorder", sys.byteorder.encode())
            for ref, _t, data, nbytes in pickler.storages.values():
                _write_aligned(zf, prefix + "data/" + ref.key, ffi.buffer(data, nbytes) if nbytes else b"")
            _write_aligned(zf, prefix + "version", b"3\n")
    finally:
        if isinstance(f, str):
            target.close()


# ----------------------------------------------------------------- loading


class _StorageType:
    """What `torch.<Type>Storage` names on load: the storage's dtype."""

    __slots__ = ("dtype",)

    def __init__(self, dtype) -> None:
        self.dtype = dtype


class _LoadedStorage:
    """A storage read from a `data/<key>` record (owns a C storage reference)."""

    def __init__(self, handle, dtype, location: str) -> None:
        self._h = handle
        self.dtype = dtype
        self.location = location

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            lib.tl_storage_release(h)


def _ints(name: str, v) -> tuple:
    if not isinstance(v, (tuple, list)) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise pickle.UnpicklingError(f"_rebuild_tensor_v2: {name} must be a tuple of ints, got {v!r}")
    return tuple(v)


def _rebuild_tensor(storage, storage_offset, size, stride):
    if not isinstance(storage, _LoadedStorage):
        raise pickle.UnpicklingError(f"_rebuild_tensor_v2: expected a storage, got {type(storage).__name__}")
    size, stride = _ints("size", size), _ints("stride", stride)
    if not isinstance(storage_offset, int) or storage_offset < 0 or len(size) != len(stride) or \
            any(x < 0 for x in size + stride):
        raise pickle.UnpicklingError(f"_rebuild_tensor_v2: invalid view (offset {storage_offset!r}, size {size}, "
                                     f"stride {stride})")
    h = lib.tl_tensor_new_with_storage(storage._h, storage_offset, len(size), list(size), list(stride),
                                       storage.dtype._id)
    return _wrap(h)   # NULL (the view does not fit the storage) raises the runtime's error


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        if not t.is_floating_point():
            raise pickle.UnpicklingError("_rebuild_tensor_v2: only floating point tensors can require gradients")
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from .nn.modules import Parameter
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"_rebuild_parameter: expected a tensor, got {type(data).__name__}")
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _rebuild_parameter(data, requires_grad)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor saved with Python attributes: rebuild it, then set them
    (only plain Tensor / Parameter types; attribute names must be strings)."""
    from .nn.modules import Parameter
    if func not in (_rebuild_tensor_v2, _rebuild_parameter, _rebuild_parameter_with_state):
        raise pickle.UnpicklingError("_rebuild_from_type_v2: unsupported rebuild function")
    ret = func(*args)
    if new_type is _PARAMETER_TYPE and not isinstance(ret, Parameter):
        ret = Parameter(ret, ret.requires_grad)
    if isinstance(state, tuple):
        state = state[0] if state and isinstance(state[0], dict) else {}
    for k, v in (state or {}).items():
        if not isinstance(k, str) or k.startswith("__"):
            raise pickle.UnpicklingError(f"_rebuild_from_type_v2: invalid attribute name {k!r}")
        setattr(ret, k, v)
    return ret


_TENSOR_TYPE = object()       # what `torch.Tensor` names on load (a marker for _rebuild_from_type_v2)
_PARAMETER_TYPE = object()    # `torch.nn.parameter.Parameter`


def _encode(s, encoding="latin1"):
    """_codecs.encode, which protocol-2 pickles use to build bytes."""
    if not isinstance(s, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode: only encode(str, 'latin1') is allowed")
    return s.encode("latin1")


def _allowed_globals() -> dict:
    """The globals a weights-only load may name: {(module, name): object}."""
    rc = {
        ("collections", "OrderedDict"): OrderedDict,
        ("collections", "Counter"): Counter,
        ("builtins", "set"): set,
        ("builtins", "frozenset"): frozenset,
        ("builtins", "bytearray"): bytearray,
        ("builtins", "complex"): complex,
        ("_codecs", "encode"): _encode,
        ("torch", "device"): torchlet.device,
        ("torch", "Size"): Size,
        ("torch", "Tensor"): _TENSOR_TYPE,
        ("torch.nn.parameter", "Parameter"): _PARAMETER_TYPE,
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
        ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
        ("torch", "UntypedStorage"): _StorageType(torchlet.uint8),
        ("torch.storage", "UntypedStorage"): _StorageType(torchlet.uint8),
    }
    for name, storage in _STORAGE_NAMES.items():
        d = _dt._BY_NAME[name]
        rc[("torch", storage)] = _StorageType(d)
        rc[("torch", name)] = d
    for alias, name in (("float", "float32"), ("double", "float64"), ("half", "float16"), ("long", "int64"),
                        ("int", "int32"), ("short", "int16"), ("cfloat", "complex64"), ("cdouble", "complex128")):
        rc[("torch", alias)] = _dt._BY_NAME[name]
    return rc


_ALLOWED = _allowed_globals()
_USER_SAFE: dict = {}
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

_UNSAFE_MESSAGE = ("torchlet.load defaults to `weights_only=True`, as torch.load does since PyTorch 2.6. "
                   "Re-running `torchlet.load` with `weights_only` set to `False` will likely succeed, but it can "
                   "result in arbitrary code execution. Do it only if you got the file from a trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torchlet.load (docs/OPTIM.md) to learn more about types accepted "
                 "by default with weights_only.")


def _global_name(obj) -> tuple:
    return (getattr(obj, "__module__", None) or "builtins", getattr(obj, "__qualname__", None) or obj.__name__)


def add_safe_globals(safe_globals) -> None:
    """Allow these classes / functions (or (obj, "module.name") pairs) in weights-only loads."""
    for g in safe_globals:
        if isinstance(g, tuple):
            obj, full = g
            mod, _, name = full.rpartition(".")
            _USER_SAFE[(mod, name)] = obj
        else:
            _USER_SAFE[_global_name(g)] = g


def get_safe_globals() -> list:
    return list(_USER_SAFE.values())


def clear_safe_globals() -> None:
    _USER_SAFE.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Context manager: add_safe_globals for the duration of the block."""
    before = dict(_USER_SAFE)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _USER_SAFE.clear()
        _USER_SAFE.update(before)


def _wo_message(message: str, unsafe_global: bool = False) -> str:
    if unsafe_global:
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
                + message + _DOCS_MESSAGE)
    return f"Weights only load failed. {_UNSAFE_MESSAGE}\n\n\n" + message + _DOCS_MESSAGE


class _UnsafeGlobal(pickle.UnpicklingError):
    pass


class _Unpickler(pickle.Unpickler):
    """Maps PyTorch's names to torchlet's; with `weights_only`, refuses every
    global outside the allowlist; storages come from the archive's records."""

    def __init__(self, file, *, zf, prefix, weights_only, byteorder, map_location, encoding="utf-8"):
        super().__init__(file, encoding=encoding)
        self._zf, self._prefix, self._weights_only = zf, prefix, weights_only
        self._byteorder, self._map_location = byteorder, map_location
        self._storages: dict = {}

    def find_class(self, module, name):
        key = (module, name)
        if key in _ALLOWED:
            return _ALLOWED[key]
        if key in _USER_SAFE:
            return _USER_SAFE[key]
        if self._weights_only:
            full = f"{module}.{name}"
            if module in _BLOCKED_MODULES:
                raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module {module} "
                                             "is blocked.")
            raise _UnsafeGlobal(f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please "
                                f"use `torchlet.serialization.add_safe_globals([{name}])` or the "
                                f"`torchlet.serialization.safe_globals([{name}])` context manager to allowlist "
                                "this global if you trust this class/function.")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        _, stype, key, location, numel = pid
        if not isinstance(stype, _StorageType) or not isinstance(key, str) or not isinstance(location, str):
            raise pickle.UnpicklingError(f"invalid storage persistent id {pid!r}")
        st = self._storages.get(key)
        if st is None:
            st = self._storages[key] = self._read_storage(stype.dtype, key, location)
        elif st.dtype != stype.dtype:
            raise pickle.UnpicklingError(f"storage {key} is read as two different dtypes")
        return st

    def _read_storage(self, dtype, key, location) -> _LoadedStorage:
        try:
            data = self._zf.read(self._prefix + "data/" + key)
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file data/{key}: file not found") from None
        itemsize = torchlet.empty(0, dtype=dtype).element_size()
        if self._byteorder != sys.byteorder and itemsize > 1:
            data = np.frombuffer(data, dtype=f"u{itemsize}").byteswap().tobytes()
        h = lib.tl_storage_new(len(data), lib.TL_CPU)
        if not h:
            from ._errors import raise_pending_error
            raise_pending_error()
        if data:
            ffi.memmove(lib.tl_storage_data(h), data, len(data))
        st = _LoadedStorage(h, dtype, location)
        ml = self._map_location
        if callable(ml) and not isinstance(ml, (str, dict, torchlet.device)):
            if ml(st, location) is not st:
                raise NotImplementedError("torchlet.load: a map_location function must return the storage it "
                                          "is given (torchlet storages stay on the CPU)")
        return st


def _target_device(location: str, map_location):
    if map_location is None or callable(map_location) and not isinstance(map_location, (str, torchlet.device)):
        return location
    if isinstance(map_location, dict):
        return map_location.get(location, location)
    return str(map_location)


def _move(obj, map_location, memo):
    """Put loaded tensors on the device `map_location` asks for (they are
    built on the CPU): one pass over the containers the pickle produced."""
    if map_location is None:
        return obj
    dev = str(torchlet.device(_target_device("cpu", map_location)))
    if dev == "cpu":
        return obj
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, Tensor):
        from .nn.modules import Parameter
        out = obj.to(dev)
        if isinstance(obj, Parameter):
            out = Parameter(out, obj.requires_grad)
        memo[id(obj)] = out
        return out
    if isinstance(obj, dict):
        out = type(obj)() if type(obj) in (dict, OrderedDict) else obj
        memo[id(obj)] = out
        for k, v in list(obj.items()):
            out[k] = _move(v, map_location, memo)
        return out
    if isinstance(obj, list):
        out = memo[id(obj)] = []
        out.extend(_move(v, map_location, memo) for v in obj)
        return out
    if type(obj) is tuple:
        return tuple(_move(v, map_location, memo) for v in obj)
    return obj


def _open_zip(f):
    if isinstance(f, os.PathLike):
        f = os.fspath(f)
    if isinstance(f, str):
        with open(f, "rb") as fh:
            data = fh.read()
    elif hasattr(f, "read"):
        data = f.read()
    else:
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'read' attribute")
    if isinstance(data, str):
        raise TypeError("torchlet.load: the file must be opened in binary mode")
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise RuntimeError("torchlet.load: not a zip checkpoint. torchlet reads the zip format torch.save writes by "
                           "default (PyTorch 1.6 and later); re-save legacy files with torch.save in a recent "
                           "PyTorch.")
    return zipfile.ZipFile(io.BytesIO(data))


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved by torchlet.save or torch.save (zip format).

    weights_only (default True): only tensors, primitives, containers and
    the allowlisted globals (see add_safe_globals) may be unpickled.
    map_location: None (keep), a device / device string, a {saved: new}
    dict of locations, or a function returning the storage it is given."""
    if weights_only is None:
        weights_only = True
    if mmap:
        raise NotImplementedError("torchlet.load: mmap=True is not supported")
    if pickle_module is not None and pickle_module is not pickle:
        if weights_only:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
        raise NotImplementedError("torchlet.load: pickle_module must be the standard pickle module")
    if "encoding" not in pickle_load_args:
        pickle_load_args["encoding"] = "utf-8"
    zf = _open_zip(f)
    with zf:
        names = zf.namelist()
        pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
        if not pkl:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        prefix = pkl[0][: -len("data.pkl")]
        byteorder = zf.read(prefix + "byteorder").decode() if prefix + "byteorder" in names else sys.byteorder
        if byteorder not in ("little", "big"):
            raise ValueError("Unknown endianness type: " + byteorder)
        up = _Unpickler(io.BytesIO(zf.read(pkl[0])), zf=zf, prefix=prefix, weights_only=weights_only,
                        byteorder=byteorder, map_location=map_location, **pickle_load_args)
        if not weights_only:
            result = up.load()
        else:
            try:
                result = up.load()
            except _UnsafeGlobal as e:
                raise pickle.UnpicklingError(_wo_message(str(e), unsafe_global=True)) from None
            except Exception as e:  # any other failure of a restricted load, worded as PyTorch's
                raise pickle.UnpicklingError(_wo_message(str(e))) from None
    return _move(result, map_location, {})
