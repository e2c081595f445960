"""Run-time helpers of the generated Python bindings (generated/python/_ops.py).

The generated code decides which overload a call takes (type checks in a
fixed order, computed by codegen/api_python.py) and converts each argument to
its C form with the converters below; this module holds what is written once:

* ``cv_<kind>(value, ...)``: a Python value -> the C argument(s) of one
  api_c kind (docs/OPERATOR_ABI.md), or ``BAD`` when the value has the wrong
  type.  Converters never raise on a wrong type: the generated caller turns
  ``BAD`` into PyTorch's TypeError for its signature.
* ``arg_error`` / ``invalid_combination``: PyTorch's TypeError texts.
* wrapped numbers (``wrapped``), cached ``tl_scalar`` values, result helpers.

Nothing here imports torchlet._tensor: the Tensor class is bound by
``bind()`` when torchlet._tensor has defined it.
"""
from __future__ import annotations

import numbers as _numbers
import operator

import numpy as _np

from . import _device as _dev
from . import _dtype as _dt
from ._C import ffi, lib
from ._errors import raise_pending_error
from ._errors import emit_warnings as _emit_warnings

NULL = ffi.NULL
BAD = object()  # "wrong type" marker returned by converters
NUMBERS = frozenset((bool, int, float))

Tensor = None  # bound by bind()
_new = None

_release = lib.tl_tensor_release
_from_int = lib.tl_scalar_from_int
_from_double = lib.tl_scalar_from_double
_from_bool = lib.tl_scalar_from_bool
_wrapped_scalar = lib.tl_wrapped_scalar
_gc = ffi.gc

# tl_scalar values by value (cffi struct cdata), cached for small ints
SC_INT = {i: _from_int(i) for i in range(-256, 1025)}
SC_TRUE = _from_bool(1)
SC_FALSE = _from_bool(0)


def bind(tensor_cls) -> None:
    """Called once by torchlet._tensor with the Tensor class."""
    global Tensor, _new
    Tensor = tensor_cls
    _new = tensor_cls.__new__


def _adopt(h):
    """A Tensor owning the new C reference ``h``. The results here come after
    the binding's check_rc, which already raised the call's error or warnings,
    so none of _tensor._wrap's checks is needed (one C call per output saved)."""
    t = _new(Tensor)
    t._p = h
    return t


# ------------------------------------------------------------------ errors

def _type_name(v) -> str:
    return type(v).__name__


def arg_error(fname: str, name: str, pos: int, expected: str, value) -> TypeError:
    """``add(): argument 'other' (position 2) must be Tensor, not str``
    (``pos`` 0: a keyword-only argument, printed without a position)."""
    where = f" (position {pos})" if pos else ""
    return TypeError(f"{fname}(): argument '{name}'{where} must be {expected}, not {_type_name(value)}")


def unpack_error(fname: str, name: str, pos: int, expected: str, value) -> TypeError:
    """PyTorch's text for a sequence whose elements have the wrong type."""
    return TypeError(f"{fname}(): argument '{name}' failed to unpack the object at pos {pos} with error "
                     f"\"type must be {expected},but got {_type_name(value)}\"")


def _got(args, kwargs) -> str:
    parts = [_type_name(a) for a in args]
    parts += [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def invalid_combination(fname: str, args, kwargs, sigs) -> TypeError:
    """PyTorch's "received an invalid combination of arguments" TypeError.

    ``sigs``: per overload (tried order) ``(printed signature, positional
    checks, keyword checks, varargs)``, where checks are ``(name, predicate)``.
    Overloads the call's arity and keywords fit but whose types do not get a
    "didn't match because some of the arguments have invalid types" line with
    the offending arguments marked ``!type!``, like PyTorch.
    """
    if len(sigs) > 1:
        n = len(args) + len(kwargs)  # PyTorch counts keywords too
        plausible = [s for s in sigs if s[3] or _arity(s[0])[0] <= n <= _arity(s[0])[1]]
        if len(plausible) == 1:
            err = _one_overload_error(fname, args, kwargs, plausible[0])
            if err is not None:
                return err
    lines = [f"{fname}() received an invalid combination of arguments - got {_got(args, kwargs)}, "
             + ("but expected one of:" if len(sigs) > 1 else f"but expected {sigs[0][0]}")]
    for text, pos_checks, kw_checks, varargs in sigs:
        if len(sigs) > 1:
            lines.append(f" * {text}")
        names = {n for n, _ in pos_checks} | {n for n, _ in kw_checks}
        if (len(args) > len(pos_checks) and not varargs) or not set(kwargs) <= names or not args:
            continue
        marks, bad = [], False
        for i, a in enumerate(args):
            if varargs:
                ok = pos_checks[0][1](a if len(args) == 1 else [a])
            else:
                ok = pos_checks[i][1](a)
            bad |= not ok
            marks.append(_type_name(a) if ok else f"!{_type_name(a)}!")
        checks = dict(pos_checks + kw_checks)
        for k, v in kwargs.items():
            ok = checks[k](v)
            bad |= not ok
            marks.append(f"{k}={_type_name(v)}" if ok else f"{k}=!{_type_name(v)}!")
        if bad:
            lines.append("      didn't match because some of the arguments have invalid types: "
                         + "(" + ", ".join(marks) + ")")
    return TypeError("\n".join(lines) + "\n")


def _params(text: str) -> list[str]:
    """the parameters of a printed signature, split at top-level commas"""
    out, depth, cur = [], 0, ""
    for ch in text.strip()[1:-1]:
        depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [p for p in out + [cur.strip()] if p]


def _arity(text: str) -> tuple[int, int, dict[str, str]]:
    """PyTorch's min_args (parameters without a default), max_args (all
    parameters) and the printed type of each parameter of a signature"""
    params = [p for p in _params(text) if p != "*"]
    types = {p.split(" = ")[0].rsplit(" ", 1)[1]: p.split(" = ")[0].rsplit(" ", 1)[0] for p in params}
    return sum(" = " not in p for p in params), len(params), types


def _one_overload_error(fname: str, args, kwargs, sig):
    """The error the only plausible overload gives (PyTorch's signature.parse
    with raise_exception); None when it would accept the types."""
    text, pos_checks, kw_checks, varargs = sig
    min_args, _, types = _arity(text)
    if varargs:
        return None
    if len(args) > len(pos_checks):
        return extra_args_error(fname, min_args, len(pos_checks), len(args))
    for i, a in enumerate(args):
        name, ok = pos_checks[i]
        if not ok(a):
            return arg_error(fname, name, i + 1, types.get(name, "?"), a)
    checks = dict(pos_checks + kw_checks)
    for k, v in kwargs.items():
        if k not in checks:
            return TypeError(f"{fname}() got an unexpected keyword argument '{k}'")
        if not checks[k](v):
            return arg_error(fname, k, 0, types.get(k, "?"), v)
    return None


def extra_args_error(fname: str, min_args: int, max_pos: int, n: int) -> TypeError:
    """PyTorch's parser text for too many positional arguments (extra_args in
    python_arg_parser.cpp; min_args counts the parameters without a default)."""
    if min_args != max_pos:
        return TypeError(f"{fname}() takes from {min_args} to {max_pos} positional arguments but {n} were given")
    return TypeError(f"{fname}() takes {max_pos} positional argument{'' if max_pos == 1 else 's'} but {n} "
                     f"{'was' if n == 1 else 'were'} given")


def missing_error(fname: str, name: str) -> TypeError:
    return TypeError(f'{fname}() missing 1 required positional arguments: "{name}"')


# ------------------------------------------------------------------ results

def check_rc(rc) -> None:
    """An int status of an entry point or shim: -1 raises the error (after any
    warnings recorded before it), 1 (tl_pyabi_rc: warnings pending) raises them."""
    if rc:
        if rc < 0:
            raise_pending_error()
        _emit_warnings()


def value_result(p, kind):
    """The ``T *ret`` of a value-returning entry point as a Python value."""
    if kind == "scalar":
        s = p[0]
        if s.kind == lib.TL_SCALAR_DOUBLE:
            return s.d
        if s.kind == lib.TL_SCALAR_COMPLEX:
            return complex(s.d, s.im)
        if s.kind == lib.TL_SCALAR_BOOL:
            return bool(s.i)
        return s.i
    if kind == "bool":
        return bool(p[0])
    return p[0]


def tensor_list_result(p, n):
    """Adopt the tensors of a ``tl_tensor ***ret, int64_t *ret_len`` result
    (a tuple, as PyTorch returns a ``Tensor[]``: ``torch.split(...)``)."""
    arr, k = p[0], n[0]
    out = []
    for i in range(k):
        lib.tl_tensor_retain(arr[i])  # the Tensor's own reference
        out.append(_adopt(arr[i]))
    lib.tl_tensor_list_free(arr, k)  # drops the list's references and the array
    return tuple(out)


def check_out_tuple(out, n: int, pos: int) -> None:
    """out=(a, b) of an operator with several outputs: PyTorch's parser texts"""
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    for i, t in enumerate(out):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {pos}, but got {_type_name(t)}")


_DEVICE_TYPE_NAMES = ("cpu", "cuda", "meta")


def check_out_type(out, dtype_c, device_c) -> None:
    """factory(..., out=t, dtype=, device=): PyTorch's check_out_type_matches
    (torch/csrc/utils/out_types.cpp) -- the out tensor is not converted"""
    if dtype_c >= 0 and lib.tl_tensor_dtype(out._p) != dtype_c:
        name = ffi.string(lib.tl_dtype_scalar_name(dtype_c)).decode()
        have = ffi.string(lib.tl_dtype_scalar_name(lib.tl_tensor_dtype(out._p))).decode()
        raise RuntimeError(f"dtype {name} does not match dtype of out parameter ({have})")
    if device_c >= 0 and lib.tl_tensor_device(out._p) != device_c:
        raise RuntimeError(f"device type {_DEVICE_TYPE_NAMES[device_c]} does not match device type of out "
                           f"parameter ({_DEVICE_TYPE_NAMES[lib.tl_tensor_device(out._p)]})")


def out_tuple_result(out, name: str, fields: tuple):
    """out=(a, b) returns the same objects as torchlet.return_types.<op>_out"""
    from torchlet import return_types
    return return_types.get(name, fields)(*out)


def tensors_result(p, n: int, name: str | None = None, fields: tuple | None = None):
    """Several results: a tuple, or the named tuple torchlet.return_types.<name>
    when the schema names them (``-> (Tensor values, Tensor indices)``)."""
    vals = tuple(_adopt(p[i]) if p[i] else None for i in range(n))  # NULL: an undefined output (output_mask)
    if fields is None:
        return vals
    from torchlet import return_types
    return return_types.get(name, fields)(*vals)


# ------------------------------------------------------------------ numbers

def wrapped(v):
    """A Python number as a wrapped-number 0-dim tensor (PyTorch's
    ``scalar_to_tensor`` + ``set_wrapped_number``): it takes part in type
    promotion as a Python scalar."""
    s = cv_scalar(v)
    if s is BAD:
        raise TypeError(f"expected a number, got {_type_name(v)}")
    h = _wrapped_scalar(s)
    if not h:
        raise_pending_error()
    return _adopt(h)


def is_number(v) -> bool:
    """A number that is not a Python bool/int/float: Python complex, numpy
    scalars (PyTorch takes them as Python numbers), other numbers.Complex /
    Real / Integral objects."""
    if isinstance(v, (_np.generic, _numbers.Complex)) and not isinstance(v, (str, bytes)):
        return not isinstance(v, _np.ndarray) and (not isinstance(v, _np.generic) or v.dtype.kind in "biufc")
    return False


def is_scalar(v) -> bool:
    """What a ``Scalar`` parameter accepts: numbers and 0-dim tensors."""
    c = v.__class__
    if c in NUMBERS:
        return True
    if isinstance(v, Tensor):
        return v.dim() == 0 and not v.is_meta
    return is_number(v)


def cv_scalar(v):
    c = v.__class__
    if c is int:
        s = SC_INT.get(v)
        if s is not None:
            return s
        if not -(1 << 63) <= v < (1 << 63):
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return _from_int(v)
    if c is float:
        return _from_double(v)
    if c is bool:
        return SC_TRUE if v else SC_FALSE
    if c is complex or isinstance(v, (complex, _np.complexfloating)):
        return lib.tl_scalar_from_complex(v.real, v.imag)
    if Tensor is not None and isinstance(v, Tensor):
        if v.dim() != 0 or v.is_meta:
            return BAD
        return cv_scalar(v.item())
    if isinstance(v, (bool, _np.bool_)):
        return SC_TRUE if v else SC_FALSE
    if isinstance(v, _np.floating):
        return _from_double(float(v))
    if hasattr(v, "__index__") and not isinstance(v, float):
        return cv_scalar(operator.index(v))
    if hasattr(v, "__float__") and not isinstance(v, (str, bytes)):
        try:
            return _from_double(float(v))
        except (TypeError, ValueError):
            return BAD
    return BAD


def cv_opt_scalar(v):
    if v is None:
        return NULL
    s = cv_scalar(v)
    if s is BAD:
        return BAD
    p = ffi.new("tl_scalar *")
    p[0] = s
    return p


# ------------------------------------------------------------------ ints

def cv_int(v):
    c = v.__class__
    if c is int:
        return v
    if c is bool or c is float or c is str:
        return BAD
    if Tensor is not None and isinstance(v, Tensor):
        if v.dim() == 0 and not v.is_floating_point() and not v.is_meta:
            return int(v.item())
        return BAD
    if hasattr(v, "__index__"):
        return operator.index(v)
    return BAD


def cv_opt_int(v):
    if v is None:
        return (0, False)
    i = cv_int(v)
    return BAD if i is BAD else (i, True)


def _int_elems(seq):
    out = []
    for x in seq:
        i = x if x.__class__ is int else cv_int(x)
        if i is BAD:
            return BAD
        out.append(i)
    return out


# Small tuples of ints already converted to C arrays: cffi's conversion of a
# tuple argument to `int64_t *` (a temporary array per call) was most of the
# cost of a call such as x.view(2, 3) (about 950 of its 2,200 instructions in
# the cffi wrapper, callgrind). The callees copy the values, never keep the
# pointer; the cache is bounded.
INT_ARRAYS: dict = {}  # (ints...) -> int64_t[]; read directly by generated fast paths
_INT_ARRAYS_MAX = 4096


def _int_array(v):
    arr = INT_ARRAYS.get(v)
    if arr is None:
        arr = ffi.new("int64_t[]", v if v else 1)   # () is an empty list, never NULL (None)
        if len(INT_ARRAYS) < _INT_ARRAYS_MAX:
            INT_ARRAYS[v] = arr
    return arr


def cv_int_list(v, size=0):
    """``int[]`` / ``int[N]``: a sequence of ints (``N`` given: one int too)."""
    c = v.__class__
    if c is tuple or c is list:
        for x in v:
            if x.__class__ is not int:
                break
        else:  # the common case: a tuple of ints as a cached C array; a list as it is
            if c is tuple and len(v) <= 8:
                try:
                    return (_int_array(v), len(v))
                except OverflowError:
                    pass  # out of int64's range: cffi's own conversion raises PyTorch's error below
            return (v, len(v))
        out = _int_elems(v)
        return BAD if out is BAD else (out, len(out))
    if isinstance(v, (tuple, list)):
        out = _int_elems(v)
        return BAD if out is BAD else (out, len(out))
    if size:
        i = cv_int(v)
        if i is not BAD:
            return ([i] * size, size)
    return BAD


def cv_opt_int_list(v, size=0):
    if v is None:
        return (NULL, 0)
    return cv_int_list(v, size)


def varargs(args, kw):
    """``*size`` varargs: ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(size=...)``."""
    if args:
        if kw is not None:
            return BAD
        if len(args) == 1 and args[0].__class__ is not int and not (
                hasattr(args[0], "__index__") and not isinstance(args[0], (tuple, list))):
            return args[0]
        return args
    return kw


# ------------------------------------------------------------------ floats, bools

def cv_double(v):
    c = v.__class__
    if c is float or c is int:
        return v
    if c is bool or c is str:
        return BAD
    if Tensor is not None and isinstance(v, Tensor):
        return float(v.item()) if v.dim() == 0 and not v.is_meta else BAD
    if hasattr(v, "__float__"):
        try:
            return float(v)
        except (TypeError, ValueError):
            return BAD
    return BAD


def cv_opt_double(v):
    if v is None:
        return (0.0, False)
    d = cv_double(v)
    return BAD if d is BAD else (d, True)


def cv_double_list(v, size=0):
    if isinstance(v, (tuple, list)):
        out = []
        for x in v:
            d = cv_double(x)
            if d is BAD:
                return BAD
            out.append(d)
        return (out, len(out))
    if size:
        d = cv_double(v)
        if d is not BAD:
            return ([d] * size, size)
    return BAD


def cv_opt_double_list(v, size=0):
    if v is None:
        return (NULL, 0)
    return cv_double_list(v, size)


def cv_bool_list(v):
    """``bool[N]`` (output_mask): a sequence of bools -> (values, n); the kernel checks N."""
    if not isinstance(v, (tuple, list)):
        return BAD
    out = [cv_bool(x) for x in v]
    return BAD if any(x is BAD for x in out) else (out, len(out))


def cv_bool(v):
    if v.__class__ is bool:
        return v
    if Tensor is not None and isinstance(v, Tensor) and v.dim() == 0 and not v.is_meta \
            and v.dtype is _dt.bool_:
        return bool(v.item())
    try:
        import numpy as np
        if isinstance(v, np.bool_):
            return bool(v)
    except ImportError:  # pragma: no cover
        pass
    return BAD


def cv_opt_bool(v):
    if v is None:
        return (False, False)
    b = cv_bool(v)
    return BAD if b is BAD else (b, True)


# ------------------------------------------------------------------ tensors

def cv_opt_tensor(v):
    if v is None:
        return NULL
    if isinstance(v, Tensor):
        return v._p
    return BAD


def cv_tensor_list(v, opt=False):
    """``Tensor[]`` / ``Tensor?[]``: a sequence of tensors -> (handles, n)."""
    if not isinstance(v, (tuple, list)):
        return BAD
    hs = []
    for x in v:
        if x is None and opt:
            hs.append(NULL)
        elif isinstance(x, Tensor):
            hs.append(x._p)
        else:
            return BAD
    return (hs, len(hs))


def cv_opt_tensor_list(v):
    return cv_tensor_list(v, True)


def cv_generator(v):
    if v is None:
        return NULL
    from ._generator import Generator
    if isinstance(v, Generator):
        return v._g
    return BAD


# ------------------------------------------------------------------ enums

_PY_TYPES = {bool: _dt.bool_, int: _dt.int64}


def cv_dtype(v, opt=True):
    if isinstance(v, _dt.dtype):
        return v._id
    if v is None:
        return lib.TL_DTYPE_UNDEFINED if opt else BAD
    if v is float:
        return _dt.get_default_dtype()._id
    d = _PY_TYPES.get(v) if isinstance(v, type) else None
    if d is not None:
        return d._id
    return BAD


def cv_device(v, opt=True):
    if v is None:
        return -1 if opt else BAD
    if isinstance(v, _dev.device):
        return v._id
    if isinstance(v, str):
        return _dev.device(v)._id   # a malformed string raises PyTorch's RuntimeError
    if v.__class__ is int:
        return lib.TL_CPU if v == -1 else _dev.device("cuda", v)._id   # an ordinal: cuda:v
    return BAD


# Layout and MemoryFormat travel as ints (-1: not given)
_ENUMS = {"strided": 0, "contiguous_format": 0, "preserve_format": 1, "channels_last": 2}


def cv_enum(v, opt=True):
    if v is None:
        return -1 if opt else BAD
    if v.__class__ is int:
        return v
    if isinstance(v, str) and v in _ENUMS:
        return _ENUMS[v]
    code = getattr(v, "_enum_value", None)
    return code if code.__class__ is int else BAD


def cv_str(v, opt=True):
    if v is None:
        return NULL if opt else BAD
    if isinstance(v, str):
        return v.encode()
    return BAD


# ------------------------------------------------------------------ decisions

def kw_ok(kwargs, checks, taken=()) -> bool:
    """Every keyword names a parameter of the overload not already given by
    position (`taken`) and has its type."""
    for k, v in kwargs.items():
        c = checks.get(k)
        if c is None or k in taken or not c(v):
            return False
    return True


def missing_c(name: str):
    """Stand-in for a C entry point the extension lacks (stale build)."""
    def fail(*args):
        raise NotImplementedError(f"torchlet._C has no {name}: rebuild the extension (make build)")
    return fail


after = check_rc  # after a releasing shim returned non-zero (in-place / out=)
