"""Boxing: Python values <-> the dispatcher's boxed values (tl_ivalue).

Two directions, both driven by an operator's schema:

* ``packer(arg)``: how one schema argument travels into C. A call through
  ``torchlet.ops`` converts every argument into flat streams (kinds, ints,
  doubles, tensors, strings) that ``tl_op_call_flat`` reads in one crossing.
* ``from_ivalue`` / ``push``: a boxed kernel written in Python receives its
  arguments as Python values and pushes its results back (the trampoline in
  ``torchlet.library``).

Conversion is strict where PyTorch's is silently lenient: a Tensor is never
taken for a ``float``/``int``/``Scalar`` argument and a number is taken for a
Tensor only by the arithmetic operators that accept numbers (``add``,
``mul``...), as a wrapped 0-dim tensor.
"""
from __future__ import annotations

import numbers
import operator

from codegen.schema import BaseTy, ListType, OptionalType

from . import _device as _dev
from . import _dtype as _dt
from ._C import ffi, lib
from ._tensor import Tensor, _wrap

NONE, BOOL, INT, DOUBLE, COMPLEX = lib.TL_IV_NONE, lib.TL_IV_BOOL, lib.TL_IV_INT, lib.TL_IV_DOUBLE, lib.TL_IV_COMPLEX
TENSOR, STRING, INT_LIST, DOUBLE_LIST = lib.TL_IV_TENSOR, lib.TL_IV_STRING, lib.TL_IV_INT_LIST, lib.TL_IV_DOUBLE_LIST
BOOL_LIST, TENSOR_LIST, OPT_TENSOR_LIST = lib.TL_IV_BOOL_LIST, lib.TL_IV_TENSOR_LIST, lib.TL_IV_OPT_TENSOR_LIST
DTYPE, DEVICE = lib.TL_IV_DTYPE, lib.TL_IV_DEVICE

# operators whose Tensor arguments take Python numbers (PyTorch's
# allow_numbers_as_tensors set for the arithmetic operators)
NUMBERS_AS_TENSORS = frozenset(
    f"aten::{n}" for n in (
        "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "true_divide", "true_divide_",
        "floor_divide", "floor_divide_", "remainder", "remainder_", "fmod", "fmod_", "pow", "pow_",
        "rsub", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor",
        "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "maximum", "minimum",
    )
)


def type_name(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _is_int(v) -> bool:
    c = v.__class__
    if c is int:
        return True
    if c is bool or c is float or isinstance(v, (Tensor, str)):
        return False
    return hasattr(v, "__index__")


# ----------------------------------------------------------------- packers
# A packer appends one argument to the streams s = (kinds, ints, doubles,
# tensors, strings, keep) and returns True, or returns False when the value
# does not convert. `exact(v)` says whether v needs no conversion (overload
# resolution prefers exact matches).

def _p_tensor(numbers_ok):
    def pack(v, s):
        if isinstance(v, Tensor):
            s[0].append(TENSOR)
            s[3].append(v._p)
            return True
        if numbers_ok and isinstance(v, (bool, int, float, complex)):
            from ._pyargs import wrapped
            t = wrapped(v)
            s[5].append(t)
            s[0].append(TENSOR)
            s[3].append(t._p)
            return True
        return False
    return pack


def _p_int(v, s):
    if not _is_int(v):
        return False
    s[0].append(INT)
    s[1].append(operator.index(v))
    return True


def _p_float(v, s):
    if isinstance(v, (Tensor, bool, str)) or not isinstance(v, numbers.Real):
        return False
    s[0].append(DOUBLE)
    s[2].append(float(v))
    return True


def _p_bool(v, s):
    if v.__class__ is not bool and type(v).__name__ != "bool_":   # numpy.bool_
        return False
    s[0].append(BOOL)
    s[1].append(1 if v else 0)
    return True


def _p_scalar(v, s):
    if isinstance(v, Tensor) or isinstance(v, str):
        return False
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        s[0].append(BOOL)
        s[1].append(1 if v else 0)
    elif _is_int(v):
        s[0].append(INT)
        s[1].append(operator.index(v))
    elif isinstance(v, numbers.Real):
        s[0].append(DOUBLE)
        s[2].append(float(v))
    elif isinstance(v, numbers.Complex):
        s[0].append(COMPLEX)
        s[2].extend((complex(v).real, complex(v).imag))
    else:
        return False
    return True


def _p_dtype(v, s):
    if not isinstance(v, _dt.dtype):
        return False
    s[0].append(DTYPE)
    s[1].append(v._id)
    return True


def _p_device(v, s):
    if isinstance(v, str):
        v = _dev.device(v)
    if not isinstance(v, _dev.device):
        return False
    s[0].append(DEVICE)
    s[1].extend((v._type, -1 if v.index is None else v.index))
    return True


def _p_str(v, s):
    if not isinstance(v, str):
        return False
    b = ffi.new("char[]", v.encode())
    s[5].append(b)
    s[0].append(STRING)
    s[4].append(b)
    return True


def _p_enum(v, s):
    from ._pyargs import cv_enum, BAD
    c = cv_enum(v, False)
    if c is BAD or c is None:
        return False
    s[0].append(INT)
    s[1].append(c)
    return True


def _p_generator(v, s):
    from ._generator import Generator
    if not isinstance(v, Generator):
        return False
    s[0].append(INT)
    s[1].append(int(ffi.cast("intptr_t", v._g)))
    return True


def _p_list(elem_ok, tag, size):
    def pack(v, s):
        if size is not None and tag == INT_LIST and _is_int(v):
            v = [v] * size                      # int[2] takes one int (PyTorch's broadcast list)
        if not isinstance(v, (list, tuple)) or not all(elem_ok(x) for x in v):
            return False
        s[0].append(tag)
        s[1].append(len(v))
        if tag == INT_LIST:
            s[1].extend(operator.index(x) for x in v)
        elif tag == BOOL_LIST:
            s[1].extend(1 if x else 0 for x in v)
        elif tag == DOUBLE_LIST:
            s[2].extend(float(x) for x in v)
        else:
            s[3].extend(ffi.NULL if x is None else x._p for x in v)
        return True
    return pack


def _p_optional(inner):
    def pack(v, s):
        if v is None:
            s[0].append(NONE)
            return True
        return inner(v, s)
    return pack


_SCALAR_PACKERS = {
    BaseTy.int: _p_int, BaseTy.SymInt: _p_int, BaseTy.float: _p_float, BaseTy.bool: _p_bool,
    BaseTy.SymBool: _p_bool, BaseTy.Scalar: _p_scalar, BaseTy.ScalarType: _p_dtype,
    BaseTy.Device: _p_device, BaseTy.str: _p_str, BaseTy.Layout: _p_enum,
    BaseTy.MemoryFormat: _p_enum, BaseTy.Generator: _p_generator, BaseTy.DeviceIndex: _p_int,
}

_LIST_ELEMS = {
    BaseTy.int: (_is_int, INT_LIST), BaseTy.SymInt: (_is_int, INT_LIST),
    BaseTy.float: (lambda x: isinstance(x, numbers.Real) and not isinstance(x, (bool, Tensor)), DOUBLE_LIST),
    BaseTy.bool: (lambda x: isinstance(x, bool), BOOL_LIST),
}


def packer(typ, numbers_as_tensors: bool = False):
    """The packer of a schema type (codegen.schema Type). NotImplementedError
    for a type the boxed calling convention cannot carry."""
    if isinstance(typ, OptionalType):
        return _p_optional(packer(typ.elem, numbers_as_tensors))
    if isinstance(typ, ListType):
        el = typ.elem
        if el.base is BaseTy.Tensor:
            if el.is_nullable():
                return _p_list(lambda x: x is None or isinstance(x, Tensor), OPT_TENSOR_LIST, None)
            return _p_list(lambda x: isinstance(x, Tensor), TENSOR_LIST, None)
        if not isinstance(el, (OptionalType, ListType)) and el.base in _LIST_ELEMS:
            ok, tag = _LIST_ELEMS[el.base]
            return _p_list(ok, tag, typ.size)
        raise NotImplementedError(f"arguments of type {typ} cannot be boxed")
    if typ.base is BaseTy.Tensor:
        return _p_tensor(numbers_as_tensors)
    p = _SCALAR_PACKERS.get(typ.base)
    if p is None:
        raise NotImplementedError(f"arguments of type {typ} cannot be boxed")
    return p


def is_exact(typ, v) -> bool:
    """v is of the argument's own Python type (no conversion): the first
    tier of overload resolution."""
    if v is None:
        return typ.is_nullable()
    b = typ.base
    if typ.is_list_like() is not None:
        return isinstance(v, (list, tuple))
    if b is BaseTy.Tensor:
        return isinstance(v, Tensor)
    if b in (BaseTy.int, BaseTy.SymInt, BaseTy.DeviceIndex):
        return _is_int(v)                        # numpy integers are integers
    if b is BaseTy.float:
        return isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral)
    if b in (BaseTy.bool, BaseTy.SymBool):
        return v.__class__ is bool
    if b is BaseTy.Scalar:
        return isinstance(v, (bool, int, float, complex))
    return True


# ----------------------------------------------------------------- unboxing

def from_ivalue(v):
    """A boxed value (borrowed tl_ivalue *) as a Python value; tensors get a new reference."""
    tag = v.tag
    if tag == TENSOR:
        if v.u.t == ffi.NULL:
            return None
        lib.tl_tensor_retain(v.u.t)
        return _wrap(v.u.t)
    if tag == INT:
        return v.u.i
    if tag == DOUBLE:
        return v.u.d
    if tag == BOOL:
        return bool(v.u.i)
    if tag == NONE:
        return None
    if tag == INT_LIST:
        return list(ffi.unpack(v.u.ints.data, v.u.ints.len)) if v.u.ints.len else []
    if tag == DOUBLE_LIST:
        return list(ffi.unpack(v.u.doubles.data, v.u.doubles.len)) if v.u.doubles.len else []
    if tag == BOOL_LIST:
        return [bool(x) for x in ffi.unpack(v.u.bools.data, v.u.bools.len)] if v.u.bools.len else []
    if tag in (TENSOR_LIST, OPT_TENSOR_LIST):
        out = []
        for i in range(v.u.tensors.len):
            t = v.u.tensors.data[i]
            if t == ffi.NULL:
                out.append(None)
            else:
                lib.tl_tensor_retain(t)
                out.append(_wrap(t))
        return out
    if tag == DTYPE:
        return _dt._BY_ID[v.u.i]
    if tag == DEVICE:
        d = _dev._BY_ID[v.u.device.type]
        return d if v.u.device.index < 0 else _dev.device(d.type, v.u.device.index)
    if tag == STRING:
        return ffi.string(v.u.s).decode()
    if tag == COMPLEX:
        return complex(v.u.c.re, v.u.c.im)
    raise TypeError(f"cannot pass a boxed value with tag {tag} to Python")


_new_tensor = Tensor.__new__
_adopt = None           # torchlet._subclass.wrap once a tensor subclass instance exists
SUBCLASSED: list = []   # non-empty from then on (read by the fast callers made below)


def _rewrap(t):
    from ._subclass import rewrap
    return rewrap(t)


def take_args(stack, n: int) -> list:
    """The top n values of a stack as Python values, in order. Tensors are
    moved out (their stack slots become None), so no reference is taken twice."""
    if n <= 0:
        return []
    base = lib.tl_stack_peek(stack, n - 1)      # the values are contiguous from here
    out = []
    for i in range(n):
        v = base[i]
        tag = v.tag
        if tag == TENSOR:
            p = v.u.t
            if p == ffi.NULL:
                out.append(None)
                continue
            v.tag = NONE                        # the slot's reference is the Tensor's now
            if _adopt is not None:
                out.append(_adopt(p))
                continue
            t = _new_tensor(Tensor)
            t._p = p
            out.append(t)
        elif tag == DOUBLE:
            out.append(v.u.d)
        elif tag == INT:
            out.append(v.u.i)
        else:
            out.append(from_ivalue(v))
    return out


def push(stack, x) -> int:
    """Push a Python kernel's result onto a C stack; 0 / -1 (error set)."""
    if isinstance(x, Tensor):
        return lib.tl_stack_push_tensor(stack, x._p)
    if x is None:
        return lib.tl_stack_push_none(stack)
    if isinstance(x, bool):
        return lib.tl_stack_push_bool(stack, x)
    if isinstance(x, int):
        return lib.tl_stack_push_int(stack, x)
    if isinstance(x, float):
        return lib.tl_stack_push_double(stack, x)
    if isinstance(x, complex):
        return lib.tl_stack_push_complex(stack, x.real, x.imag)
    if isinstance(x, (list, tuple)) and all(isinstance(t, Tensor) for t in x):
        return lib.tl_stack_push_tensor_list(stack, [t._p for t in x], len(x))
    if isinstance(x, (list, tuple)) and x and all(type(i) is bool for i in x):  # bool[N] (output_mask)
        return lib.tl_stack_push_bool_list(stack, [int(i) for i in x], len(x))
    if isinstance(x, (list, tuple)) and all(type(i) is int for i in x):
        return lib.tl_stack_push_int_list(stack, list(x), len(x))
    if isinstance(x, (list, tuple)) and all(isinstance(i, float) for i in x):
        return lib.tl_stack_push_double_list(stack, list(x), len(x))
    if isinstance(x, _dt.dtype):
        return lib.tl_stack_push_dtype(stack, x._id)
    if isinstance(x, str):
        return lib.tl_stack_push_string(stack, x.encode())
    raise TypeError(f"a kernel returned {type(x).__name__}, which cannot be boxed")


def push_returns(stack, result, nret: int, op, who: str) -> int:
    """Push what a Python kernel or handler (``who``) returned for an operator with
    ``nret`` returns; 0 / -1 (error set); a result that does not fit raises."""
    if nret == 1:
        if result.__class__ is tuple and len(result) == 1:
            result = result[0]              # a function annotated -> tuple[Tensor]
        return -1 if push(stack, result) < 0 else 0
    if nret == 0:
        return 0
    if not isinstance(result, (tuple, list)):
        raise RuntimeError(f"{ffi.string(lib.tl_op_name(op)).decode()}: {who} returned "
                           f"{type(result).__name__}, the schema has {nret} returns (return a tuple)")
    if len(result) != nret:
        raise RuntimeError(f"{ffi.string(lib.tl_op_name(op)).decode()}: {who} returned {len(result)} "
                           f"values, the schema has {nret} returns")
    for r in result:
        if push(stack, r) < 0:
            return -1
    return 0


# ----------------------------------------------------------------- fast binders
# The per-call path of an OpOverload: a small function made once per overload
# from its schema, whose Python signature is the schema's (so Python binds
# positional and keyword arguments), with the common types converted inline.
# It returns the flat streams, or None when a value needs the general path
# (which then converts it, or raises PyTorch's error).

import keyword

FLAT_SCALAR, FLAT_OPTIONAL = lib.TL_FLAT_SCALAR, lib.TL_FLAT_OPTIONAL


def _inline_code(a: str, typ, out: list[str]):
    """Append the statements converting argument `a`; its constant flat kind,
    or None when the type is not converted inline. ``return _SLOW_`` marks the
    way out to the general path (fast_caller writes the call it stands for)."""
    opt = isinstance(typ, OptionalType)
    base = typ.elem if opt else typ
    if isinstance(base, ListType):
        el = base.elem
        if isinstance(el, (OptionalType, ListType)) or el.base not in (BaseTy.int, BaseTy.SymInt) or base.size:
            return None
        kind = INT_LIST
        body = [f"if {a}.__class__ is not list and {a}.__class__ is not tuple: return _SLOW_",
                f"for _x_ in {a}:",
                "    if _x_.__class__ is not int: return _SLOW_",
                f"_i_.append(len({a})); _i_.extend({a})"]
    else:
        b = base.base
        if b is BaseTy.Tensor:
            check = f"if {a}.__class__ is not _T_ and not isinstance({a}, _T_): return _SLOW_"
            if opt:    # None travels as a NULL tensor
                out += [f"if {a} is None: _t_.append(_NULL_)", "else:", "    " + check,
                        f"    _t_.append({a}._p)"]
            else:      # the tensors list is built in one expression when every tensor is plain
                out += [check, f"_t_.append({a}._p)  # tensor:{a}"]
            return TENSOR
        if b in (BaseTy.int, BaseTy.SymInt):
            kind, body = INT, [f"if {a}.__class__ is not int: return _SLOW_", f"_i_.append({a})"]
        elif b is BaseTy.float:
            kind, body = DOUBLE, [f"if {a}.__class__ is not float and {a}.__class__ is not int: return _SLOW_",
                                  f"_d_.append({a})"]
        elif b is BaseTy.bool:
            kind, body = BOOL, [f"if {a}.__class__ is not bool: return _SLOW_", f"_i_.append({a})"]
        elif b is BaseTy.Scalar:
            kind, body = FLAT_SCALAR, [f"_c_ = {a}.__class__",
                                       f"if _c_ is int: _i_.append(1); _i_.append({a})",
                                       f"elif _c_ is float: _i_.append(2); _d_.append({a})",
                                       f"elif _c_ is bool: _i_.append(0); _i_.append({a})",
                                       "else: return _SLOW_"]
        elif b is BaseTy.ScalarType:
            kind, body = DTYPE, [f"if {a}.__class__ is not _DT_: return _SLOW_", f"_i_.append({a}._id)"]
        else:
            return None
    if opt:
        out += [f"if {a} is None: _i_.append(0)", "else:", "    _i_.append(1)"]
        out += ["    " + x for x in body]
        return kind | FLAT_OPTIONAL
    out += body
    return kind


def _streams_used(typ) -> set:
    opt = isinstance(typ, OptionalType)
    base = typ.elem if opt else typ
    if isinstance(base, ListType):
        return {"i"}
    b = base.base
    used = {BaseTy.Tensor: {"t"}, BaseTy.float: {"d"}, BaseTy.Scalar: {"i", "d"}}.get(b, {"i"})
    return used | ({"i"} if opt and b is not BaseTy.Tensor else set())


MISSING = object()   # a fast caller's default for a required argument: not given


def slow_call(op, values, extra, kw):
    """A fast caller's way out: the call as it was made (the values before the
    first missing one positionally, the rest by keyword) to the general path,
    which converts it or raises PyTorch's error."""
    if extra:
        return op._general(tuple(values) + tuple(extra), kw)
    n = next((i for i, v in enumerate(values) if v is MISSING), len(values))
    kwargs = {spec[0]: v for spec, v in zip(op._specs[n:], values[n:]) if v is not MISSING}
    kwargs.update(kw)
    return op._general(tuple(values[:n]), kwargs)


def fast_caller(specs, c_op, nargs: int, one_tensor: bool, finish):
    """The per-call function of an overload, used as its class's ``__call__``:
    binds by the schema's own Python signature (every parameter has a default,
    extra ones are collected, so binding never fails), converts the common
    types inline and calls tl_op_call_flat_tensor (one-Tensor returns) or
    ``finish(streams)``; anything else goes to ``slow_call``. None when the
    argument names cannot be Python names."""
    names = [s[0] for s in specs]
    if any(not n.isidentifier() or keyword.iskeyword(n) or (n.startswith("_") and n.endswith("_"))
           for n in names) or len(set(names)) != len(names):
        return None
    from ._errors import pending_result
    from ._tensor import Tensor as _T
    env = {"_T_": Tensor, "_DT_": _dt.dtype, "_F_": lib.tl_op_call_flat_tensor, "_OP_": c_op,
           "_NULL_": ffi.NULL, "_pr_": pending_result, "_new_": _T.__new__,
           "_fin_": finish, "_M_": MISSING, "_sc_": slow_call, "_SUB_": SUBCLASSED, "_rw_": _rewrap,
           "__name__": __name__}    # a torchlet frame: warnings point past it, at the user's line
    params, lines, used, kinds, required = [], [], set(), [], []
    for j, (name, pack, has_default, default, typ) in enumerate(specs):
        env[f"_D{j}_"] = default if has_default else MISSING
        params.append(f"{name}=_D{j}_")
        if not has_default:
            required.append(name)
        kind = _inline_code(name, typ, lines)
        if kind is not None:
            used |= _streams_used(typ)
            kinds.append(kind)
            lines.append(f"_k_.append({kind})")
        else:
            env[f"_P{j}_"] = pack
            lines.append(f"if not _P{j}_({name}, _s_): return _SLOW_")
            used |= {"i", "d", "t", "s"}
            kinds.append(None)
    constant = None not in kinds
    if constant:     # one kinds array for every call: drop the per-call list
        env["_K_"] = ffi.new("int32_t[]", kinds or [0])
        lines = [ln for ln in lines if not ln.startswith("_k_.append(")]
    plain = [ln.split("# tensor:")[1] for ln in lines if "# tensor:" in ln]
    tensor_expr = "_t_"
    if constant and plain and not any("_t_.append" in ln and "# tensor:" not in ln for ln in lines):
        lines = [ln for ln in lines if "# tensor:" not in ln]
        tensor_expr = "[" + ", ".join(f"{a}._p" for a in plain) + "]"
        if not any("_t_" in ln for ln in lines):
            used.discard("t")
    kinds_expr = "_K_" if constant else "_k_"
    stream = {k: (f"_{k}_" if k in used else "_NULL_") for k in "idts"}
    if tensor_expr != "_t_":
        stream["t"] = tensor_expr
    head = [f"_{k}_ = []" for k in "idt" if k in used]
    if not constant:
        head.append("_k_ = []")
    if "s" in used or not constant:
        head.append("_s_ = (_k_, _i_, _d_, _t_, [], [])")
    slow = f"return _sc_(_op_, ({''.join(n + ', ' for n in names)}), _x_, _kw_)"
    src = [f"def call(_op_, /, {''.join(p + ', ' for p in params)}*_x_, **_kw_):"]
    guard = " or ".join(["_x_", "_kw_"] + [f"{n} is _M_" for n in required])
    src += [f"    if {guard}: {slow}", "    " + ("; ".join(head) or "pass")]
    src += ["    " + ln.replace("return _SLOW_", slow) for ln in lines]
    if one_tensor:
        strings = "_s_[4]" if "s" in used else "_NULL_"
        src += [f"    _h_ = _F_(_OP_, {kinds_expr}, {nargs}, {stream['i']}, {stream['d']}, {stream['t']}, {strings})",
                "    if not _h_:                    # the error, or a result parked while warnings are raised",
                "        _h_ = _pr_()",
                "    _r_ = _new_(_T_)",
                "    _r_._p = _h_",
                "    if _SUB_: _r_ = _rw_(_r_)      # a subclass tensor may come back (torchlet._subclass)",
                "    return _r_"]
    else:
        if constant:
            lists = ", ".join("[]" if stream[k] == "_NULL_" else stream[k] for k in "idt")
            src.append(f"    return _fin_(({kinds_expr}, {lists}, [], []))")
        else:
            src.append("    return _fin_(_s_)")
    exec(compile("\n".join(src), "<torchlet.ops call>", "exec"), env)  # noqa: S102 - code made here
    return env["call"]
