"""The operator ABI in one place: every C name and C type derived from a schema.

docs/OPERATOR_ABI.md is the contract; this module is its only implementation.
Emitters (C glue, ufunc kernels, Python bindings, autograd) ask here for
names, parameter lists, return conventions and how each argument is boxed,
and never spell a C name themselves.

Names for ``aten::add.Tensor`` (unambiguous name ``add_Tensor``)::

    tl_ops_add_Tensor_op           operator handle (global)
    tl_ops_add_Tensor              entry point
    tl_ops_add_Tensor_redispatch   redispatch entry point
    tl_ops_add_Tensor_fn           unboxed kernel pointer type
    tl_ops_add_Tensor_boxed        boxed adapter (runs an unboxed kernel from a stack)
    tl_native_<K>                  hand-written kernel K of a ``dispatch:`` line
    tl_meta_add_Tensor             structured meta function (named after the functional op)
    tl_impl_<K>                    structured impl (K = the out= function's kernel)
    tl_structured_add_Tensor_CPU   generated structured kernel for a key

Argument conventions (entry points and kernels; kernels take ``tl_keyset ks``
first) and return conventions are the tables of OPERATOR_ABI.md; see
:func:`c_arg` and :func:`c_return`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Union

from . import api
from .analysis import NativeFunctionsGroup
from .native import NativeFunction
from .schema import Argument, BaseTy, BaseType, FunctionSchema, ListType, OperatorName, OptionalType, Return

FuncLike = Union[NativeFunction, FunctionSchema, OperatorName]


class UnsupportedCType(ValueError):
    """A schema type the C ABI does not cover yet (the message names it)."""


# ----------------------------------------------------------------------- names

def _schema(f: FuncLike) -> FunctionSchema | None:
    if isinstance(f, NativeFunction):
        return f.func
    if isinstance(f, FunctionSchema):
        return f
    return None


def _opname(f: FuncLike) -> OperatorName:
    if isinstance(f, OperatorName):
        return f
    s = _schema(f)
    assert s is not None
    return s.name


# Per-object memo of the derived C facts of a schema (its names, arguments,
# return convention): the emitters ask for each several times per function
# (c_args ~13x: 39,580 calls for PyTorch's 3,101 functions). Keyed by id, the
# object kept beside the value so that a recycled id is never a false hit.
_Memo = dict  # id(obj) -> (obj, value)


def _memo(cache: dict, obj: object, compute):
    hit = cache.get(id(obj))
    if hit is None or hit[0] is not obj:
        hit = cache[id(obj)] = (obj, compute(obj))
    return hit[1]


_SYMBOLS: _Memo = {}


def unambiguous_name(f: FuncLike) -> str:
    """``add.Tensor`` -> ``add_Tensor``; ``add_.Tensor`` -> ``add__Tensor``; ``relu`` -> ``relu``."""
    return _memo(_SYMBOLS, _opname(f), api.op_symbol)


def qualified_name(f: FuncLike) -> str:
    """The dispatcher's operator name: ``aten::add.Tensor``."""
    n = _opname(f)
    ns = n.namespace or "aten"
    base = str(n.name)
    return f"{ns}::{base}.{n.overload_name}" if n.overload_name else f"{ns}::{base}"


def c_entry_name(f: FuncLike) -> str:
    return f"tl_ops_{unambiguous_name(f)}"


def c_redispatch_name(f: FuncLike) -> str:
    return f"tl_ops_{unambiguous_name(f)}_redispatch"


def op_handle_name(f: FuncLike) -> str:
    return f"tl_ops_{unambiguous_name(f)}_op"


def kernel_typedef_name(f: FuncLike) -> str:
    return f"tl_ops_{unambiguous_name(f)}_fn"


def boxed_adapter_name(f: FuncLike) -> str:
    return f"tl_ops_{unambiguous_name(f)}_boxed"


def boxing_wrapper_name(f: FuncLike) -> str:
    return f"tl_ops_{unambiguous_name(f)}_boxing_wrapper"


def native_name(kernel: str) -> str:
    """The hand-written C function of a kernel named in a ``dispatch:`` line."""
    return f"tl_native_{kernel}"


def meta_name(g: NativeFunctionsGroup) -> str:
    """The structured meta function of a group, named after its functional op
    (the out= op when the group has no functional member)."""
    f = g.functional or g.out
    assert f is not None
    return f"tl_meta_{unambiguous_name(f)}"


def impl_name(kernel: str) -> str:
    """The structured impl of the out= function's kernel ``kernel``."""
    return f"tl_impl_{kernel}"


def structured_kernel_name(f: FuncLike, key: str) -> str:
    """The generated structured kernel of ``f`` for dispatch key ``key``."""
    return f"tl_structured_{unambiguous_name(f)}_{key}"


def backend_select_name(f: FuncLike) -> str:
    """The generated BackendSelect kernel of a factory function."""
    return f"tl_ops_{unambiguous_name(f)}_backend_select"


def register_fn_name(op_base: str, prefix: str = "tl_ops_register_") -> str:
    """The registration function of every overload of one operator name
    (``aten::all`` gets ``..._all_op``: ``tl_ops_register_all`` /
    ``tl_autograd_register_all`` register everything)."""
    return f"{prefix}{op_base}" + ("_op" if op_base == "all" else "")


REGISTER_ALL = "tl_ops_register_all"

# dispatch key (YAML spelling) -> C enum constant of runtime/include/tl_dispatch_key.h
DISPATCH_KEY_ENUM = {
    "CPU": "TL_KEY_CPU",
    "CUDA": "TL_KEY_CUDA",
    "Meta": "TL_KEY_META",
    "PrivateUse1": "TL_KEY_PRIVATEUSE1",
    "BackendSelect": "TL_KEY_BACKEND_SELECT",
    "Python": "TL_KEY_PYTHON",
    "ADInplaceOrView": "TL_KEY_AD_INPLACE_OR_VIEW",
    "AutogradOther": "TL_KEY_AUTOGRAD_OTHER",
    "AutogradCPU": "TL_KEY_AUTOGRAD_CPU",
    "AutogradCUDA": "TL_KEY_AUTOGRAD_CUDA",
    "AutogradMeta": "TL_KEY_AUTOGRAD_META",
    "AutogradPrivateUse1": "TL_KEY_AUTOGRAD_PRIVATEUSE1",
    "Autograd": "TL_KEY_AUTOGRAD",
    "CompositeImplicitAutograd": "TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD",
    "CompositeExplicitAutograd": "TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD",
    "CompositeExplicitAutogradNonFunctional": "TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL",
}

# backends whose tensors the runtime can create (CUDA is reserved: no kernels
# are registered for it until the runtime has a CUDA backend)
STRUCTURED_BACKENDS = ("CPU",)
DEVICE_ENUM = {"CPU": "TL_CPU", "CUDA": "TL_CUDA", "Meta": "TL_META"}


# Layout / MemoryFormat are passed as int (-1: None); the values of their
# names (PyTorch's enum spellings, as in schema defaults) are these, matching
# tl_layout / tl_memory_format in runtime/include/tl_structured.h
ENUM_VALUES = {
    "strided": 0,
    "contiguous_format": 0,
    "preserve_format": 1,
    "channels_last": 2,
    "channels_last_3d": 3,
}


def dispatch_key_enum(key: str) -> str | None:
    """The C constant of a dispatch key, or None when the runtime lacks it."""
    return DISPATCH_KEY_ENUM.get(key)


# ----------------------------------------------------------------------- types

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int "
    "long register restrict return short signed sizeof static struct switch typedef union unsigned void "
    "volatile while bool true false NULL".split()
)


# names the generated code uses for its own parameters and locals
_GLUE_NAMES = frozenset({"ks", "st", "s", "k_", "st_", "rc_", "r_", "s_", "op_", "ret", "ret_len"})


def c_string(text: str) -> str:
    """``text`` as a C string literal (schemas hold string defaults: ``str b="2"``)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_ident(name: str) -> str:
    """An argument name as a C identifier: C keywords get a trailing ``_``,
    names the generated glue uses itself (``ks``, ``st``, ``s`` ...) ``_arg``."""
    if name in _C_KEYWORDS:
        return name + "_"
    if name in _GLUE_NAMES or (name.startswith("ret") and name[3:].isdigit()):
        return name + "_arg"
    return name


@dataclass(frozen=True)
class CParam:
    name: str
    ctype: str

    def decl(self) -> str:
        """``tl_tensor *self``, ``int64_t dim``."""
        sep = "" if self.ctype.endswith("*") else " "
        return f"{self.ctype}{sep}{self.name}"


@dataclass(frozen=True)
class CArg:
    """One schema argument in C: its parameter(s) and how it is boxed.

    ``kind`` names the convention (``tensor``, ``opt_tensor``, ``tensor_list``,
    ``opt_tensor_list``, ``int``, ``opt_int``, ``int_list``, ``opt_int_list``,
    ``double``, ``opt_double``, ``double_list``, ``opt_double_list``, ``bool``,
    ``opt_bool``, ``bool_list``, ``scalar``, ``opt_scalar``, ``dtype``, ``device``, ``enum``,
    ``str``, ``generator``).  In the boxed adapter the popped value lives in
    locals named after the argument; ``pop_decls`` declares them, ``pop``
    is a C expression (0 on success), ``call_args`` are the expressions passed
    to the kernel and ``release`` the statements that free them afterwards.
    """

    arg: Argument
    name: str
    kind: str
    params: tuple[CParam, ...]

    # --- boxing (caller side): push the C parameters onto stack `st`
    def push(self, st: str = "st") -> str:
        n = self.name
        k = self.kind
        return {
            "tensor": f"tl_stack_push_tensor({st}, {n})",
            "opt_tensor": f"tl_stack_push_tensor({st}, {n})",
            "tensor_list": f"tl_stack_push_tensor_list({st}, {n}, {n}_len)",
            "opt_tensor_list": f"tl_stack_push_opt_tensor_list({st}, {n}, {n}_len)",
            "int": f"tl_stack_push_int({st}, {n})",
            "opt_int": f"tl_glue_push_opt_int({st}, {n}, {n}_has)",
            "int_list": f"tl_stack_push_int_list({st}, {n}, {n}_len)",
            "opt_int_list": f"tl_glue_push_opt_int_list({st}, {n}, {n}_len)",
            "double": f"tl_stack_push_double({st}, {n})",
            "opt_double": f"tl_glue_push_opt_double({st}, {n}, {n}_has)",
            "double_list": f"tl_stack_push_double_list({st}, {n}, {n}_len)",
            "opt_double_list": f"tl_glue_push_opt_double_list({st}, {n}, {n}_len)",
            "bool": f"tl_stack_push_bool({st}, {n})",
            "opt_bool": f"tl_glue_push_opt_bool({st}, {n}, {n}_has)",
            "bool_list": f"tl_stack_push_bool_list({st}, (const uint8_t *){n}, {n}_len)",
            "scalar": f"tl_stack_push_scalar({st}, {n})",
            "opt_scalar": f"tl_glue_push_opt_scalar({st}, {n})",
            "dtype": f"tl_glue_push_dtype({st}, {n})",
            "device": f"tl_glue_push_device({st}, {n})",
            "enum": f"tl_glue_push_enum({st}, {n})",
            "str": f"tl_stack_push_string({st}, {n})",
            "generator": f"tl_glue_push_generator({st}, {n})",
            "scalar_list": f"tl_glue_push_scalar_list({st}, {n}, {n}_len)",
            "opt_scalar_list": f"tl_glue_push_scalar_list({st}, {n}, {n}_len)",
            "storage": f"tl_glue_push_storage({st}, {n})",
        }[k]

    # --- unboxing (kernel side): pop into locals
    def pop_decls(self) -> list[str]:
        n = self.name
        k = self.kind
        if k in ("tensor", "opt_tensor"):
            return [f"tl_tensor *{n} = NULL;"]
        if k in ("tensor_list", "opt_tensor_list", "int_list", "opt_int_list", "double_list", "opt_double_list",
                 "bool_list", "str"):
            return [f"tl_ivalue {n}_iv = {{0}};"]
        if k in ("opt_int", "opt_double", "opt_bool"):
            return [f"{self.params[0].ctype} {n} = 0;", f"bool {n}_has = false;"]
        if k == "opt_scalar":
            return [f"tl_scalar {n}_v;", f"const tl_scalar *{n} = NULL;"]
        if k == "scalar":
            return [f"tl_scalar {n};"]
        if k == "dtype":
            return [f"tl_dtype {n} = TL_DTYPE_UNDEFINED;"]
        if k in ("device", "enum"):
            return [f"int {n} = -1;"]
        if k == "generator":
            return [f"tl_generator *{n} = NULL;"]
        if k in ("scalar_list", "opt_scalar_list"):
            return [f"tl_scalar *{n} = NULL;", f"int64_t {n}_len = 0;"]
        if k == "storage":
            return [f"tl_storage *{n} = NULL;"]
        return [f"{self.params[0].ctype} {n} = 0;"]

    def pop(self, st: str = "st") -> str:
        n = self.name
        k = self.kind
        return {
            "tensor": f"tl_stack_pop_tensor({st}, &{n})",
            "opt_tensor": f"tl_stack_pop_opt_tensor({st}, &{n})",
            "tensor_list": f"tl_glue_pop_list({st}, TL_IV_TENSOR_LIST, 0, &{n}_iv)",
            "opt_tensor_list": f"tl_glue_pop_list({st}, TL_IV_OPT_TENSOR_LIST, 0, &{n}_iv)",
            "int": f"tl_stack_pop_int({st}, &{n})",
            "opt_int": f"tl_glue_pop_opt_int({st}, &{n}, &{n}_has)",
            "int_list": f"tl_glue_pop_list({st}, TL_IV_INT_LIST, 0, &{n}_iv)",
            "opt_int_list": f"tl_glue_pop_list({st}, TL_IV_INT_LIST, 1, &{n}_iv)",
            "double": f"tl_stack_pop_double({st}, &{n})",
            "opt_double": f"tl_glue_pop_opt_double({st}, &{n}, &{n}_has)",
            "double_list": f"tl_glue_pop_list({st}, TL_IV_DOUBLE_LIST, 0, &{n}_iv)",
            "opt_double_list": f"tl_glue_pop_list({st}, TL_IV_DOUBLE_LIST, 1, &{n}_iv)",
            "bool": f"tl_glue_pop_bool({st}, &{n})",
            "opt_bool": f"tl_glue_pop_opt_bool({st}, &{n}, &{n}_has)",
            "bool_list": f"tl_glue_pop_list({st}, TL_IV_BOOL_LIST, 0, &{n}_iv)",
            "scalar": f"tl_stack_pop_scalar({st}, &{n})",
            "opt_scalar": f"tl_glue_pop_opt_scalar({st}, &{n}_v, &{n})",
            "dtype": f"tl_glue_pop_dtype({st}, &{n})",
            "device": f"tl_glue_pop_device({st}, &{n})",
            "enum": f"tl_glue_pop_enum({st}, &{n})",
            "str": f"tl_glue_pop_list({st}, TL_IV_STRING, 1, &{n}_iv)",
            "generator": f"tl_glue_pop_generator({st}, &{n})",
            "scalar_list": f"tl_glue_pop_scalar_list({st}, 0, &{n}, &{n}_len)",
            "opt_scalar_list": f"tl_glue_pop_scalar_list({st}, 1, &{n}, &{n}_len)",
            "storage": f"tl_glue_pop_storage({st}, &{n})",
        }[k]

    def call_args(self) -> list[str]:
        """The expressions passed to the kernel after popping."""
        n = self.name
        k = self.kind
        if k in ("tensor_list", "opt_tensor_list"):
            return [f"(tl_tensor *const *){n}_iv.u.tensors.data", f"{n}_iv.u.tensors.len"]
        if k in ("int_list", "opt_int_list"):
            return [f"{n}_iv.u.ints.data", f"{n}_iv.u.ints.len"]
        if k in ("double_list", "opt_double_list"):
            return [f"{n}_iv.u.doubles.data", f"{n}_iv.u.doubles.len"]
        if k == "bool_list":  # stored as uint8_t 0 / 1
            return [f"(const bool *){n}_iv.u.bools.data", f"{n}_iv.u.bools.len"]
        if k == "str":
            return [f"{n}_iv.u.s"]
        if k in ("scalar_list", "opt_scalar_list"):
            return [f"(const tl_scalar *){n}", f"{n}_len"]
        return [p.name for p in self.params]

    def release(self) -> list[str]:
        n = self.name
        if self.kind in ("tensor", "opt_tensor"):
            return [f"tl_tensor_release({n});"]
        if self.kind in ("tensor_list", "opt_tensor_list", "int_list", "opt_int_list", "double_list", "opt_double_list",
                         "bool_list", "str"):
            return [f"tl_ivalue_destroy(&{n}_iv);"]
        if self.kind in ("scalar_list", "opt_scalar_list"):
            return [f"free({n});"]
        return []

    @property
    def is_tensor(self) -> bool:
        return self.kind in ("tensor", "opt_tensor", "tensor_list", "opt_tensor_list")

    def keyset_expr(self) -> str | None:
        """This argument's contribution to the call's keyset, or None."""
        n = self.name
        if self.kind == "tensor":
            return f"tl_tensor_key_set({n})"
        if self.kind == "opt_tensor":
            return f"({n} ? tl_tensor_key_set({n}) : 0)"
        if self.kind in ("tensor_list", "opt_tensor_list"):
            return f"tl_glue_list_keyset({n}, {n}_len)"
        return None


# (kind, C parameter types) of a plain and of an optional base type
_SIMPLE_KINDS = {
    BaseTy.Tensor: ("tensor", ("tl_tensor *",)),
    BaseTy.int: ("int", ("int64_t",)),
    BaseTy.SymInt: ("int", ("int64_t",)),
    BaseTy.float: ("double", ("double",)),
    BaseTy.bool: ("bool", ("bool",)),
    BaseTy.Scalar: ("scalar", ("tl_scalar",)),
    BaseTy.ScalarType: ("dtype", ("tl_dtype",)),
    BaseTy.Device: ("device", ("int",)),
    BaseTy.Layout: ("enum", ("int",)),
    BaseTy.MemoryFormat: ("enum", ("int",)),
    BaseTy.str: ("str", ("const char *",)),
    # c10::DeviceIndex (int8) and a packed c10::Stream (StreamData3's id) as plain ints
    BaseTy.DeviceIndex: ("int", ("int64_t",)),
    BaseTy.Stream: ("int", ("int64_t",)),
    BaseTy.SymBool: ("bool", ("bool",)),
    BaseTy.Storage: ("storage", ("tl_storage *",)),
}

_OPTIONAL_KINDS = {
    BaseTy.Tensor: ("opt_tensor", ("tl_tensor *",)),
    BaseTy.int: ("opt_int", ("int64_t", "bool")),
    BaseTy.SymInt: ("opt_int", ("int64_t", "bool")),
    BaseTy.float: ("opt_double", ("double", "bool")),
    BaseTy.bool: ("opt_bool", ("bool", "bool")),
    BaseTy.Scalar: ("opt_scalar", ("const tl_scalar *",)),
    BaseTy.ScalarType: ("dtype", ("tl_dtype",)),
    BaseTy.Device: ("device", ("int",)),
    BaseTy.Layout: ("enum", ("int",)),
    BaseTy.MemoryFormat: ("enum", ("int",)),
    BaseTy.str: ("str", ("const char *",)),
    BaseTy.Generator: ("generator", ("tl_generator *",)),
    BaseTy.DeviceIndex: ("opt_int", ("int64_t", "bool")),
    BaseTy.Stream: ("opt_int", ("int64_t", "bool")),
    BaseTy.SymBool: ("opt_bool", ("bool", "bool")),
}


def _kind(t, where: str) -> tuple[str, tuple[str, ...]]:
    """(kind, C types of its parameters) for a schema type."""
    if isinstance(t, BaseType):
        b = t.name
        hit = _SIMPLE_KINDS.get(b)
        if hit is not None:
            return hit
    elif isinstance(t, OptionalType):
        e = t.elem
        if isinstance(e, BaseType):
            b = e.name
            hit = _OPTIONAL_KINDS.get(b)
            if hit is not None:
                return hit
        elif isinstance(e, ListType) and isinstance(e.elem, BaseType):
            if e.elem.name in (BaseTy.int, BaseTy.SymInt):
                return "opt_int_list", ("const int64_t *", "int64_t")
            if e.elem.name is BaseTy.float:
                return "opt_double_list", ("const double *", "int64_t")
            if e.elem.name is BaseTy.Scalar:
                return "opt_scalar_list", ("const tl_scalar *", "int64_t")
    elif isinstance(t, ListType):
        e = t.elem
        if isinstance(e, BaseType):
            if e.name is BaseTy.Tensor:
                return "tensor_list", ("tl_tensor *const *", "int64_t")
            if e.name in (BaseTy.int, BaseTy.SymInt):
                return "int_list", ("const int64_t *", "int64_t")
            if e.name is BaseTy.float:
                return "double_list", ("const double *", "int64_t")
            if e.name is BaseTy.bool:  # bool[N] (output_mask): the kernel checks N
                return "bool_list", ("const bool *", "int64_t")
            if e.name is BaseTy.Scalar:  # Scalar[] (_foreach_*.ScalarList): NULL = None
                return "scalar_list", ("const tl_scalar *", "int64_t")
        elif isinstance(e, OptionalType) and isinstance(e.elem, BaseType) and e.elem.name is BaseTy.Tensor:
            return "opt_tensor_list", ("tl_tensor *const *", "int64_t")
    raise UnsupportedCType(f"{where}: the C ABI has no convention for type '{t}' yet (docs/OPERATOR_ABI.md)")


_SUFFIX = {
    "opt_int": "_has", "opt_double": "_has", "opt_bool": "_has",
    "tensor_list": "_len", "opt_tensor_list": "_len", "int_list": "_len", "opt_int_list": "_len",
    "double_list": "_len", "opt_double_list": "_len", "bool_list": "_len",
    "scalar_list": "_len", "opt_scalar_list": "_len",
}


def c_arg(a: Argument, where: str = "") -> CArg:
    name = c_ident(a.name)
    kind, ctypes = _kind(a.type, f"{where} argument '{a.name}'")
    params = [CParam(name, ctypes[0])]
    if len(ctypes) == 2:
        params.append(CParam(name + _SUFFIX[kind], ctypes[1]))
    return CArg(a, name, kind, tuple(params))


_C_ARGS: _Memo = {}


def c_args(f: FuncLike) -> list[CArg]:
    """Every schema argument in schema order (positional, keyword-only, out)."""
    s = _schema(f)
    assert s is not None
    return list(_memo(_C_ARGS, s, lambda s: tuple(c_arg(a, str(s.name)) for a in s.arguments.flat_all)))


@dataclass(frozen=True)
class CReturn:
    """How a function returns in C.

    ``kind``: ``tensor`` (returns ``tl_tensor *``, new reference, NULL on
    error), ``tensors`` (several tensors: returns int, trailing
    ``tl_tensor **ret0, ...``), ``none`` (returns int), ``value`` (one int /
    float / bool / Scalar / ScalarType / QScheme: returns int, trailing ``T
    *ret``), ``tensor_list`` (returns int, trailing ``tl_tensor ***ret,
    int64_t *ret_len``), ``tuple`` (a tuple mixing tensors, tensor lists and
    values: returns int, each element's parameters of the three conventions
    above in order, named ``ret<i>``).
    """

    kind: str
    ctype: str
    fail: str
    out_params: tuple[CParam, ...]
    returns: tuple[Return, ...]

    def ok_value(self, result: str = "r_") -> str:
        return result if self.kind == "tensor" else "0"


_VALUE_RET = {
    BaseTy.int: "int64_t",
    BaseTy.SymInt: "int64_t",
    BaseTy.float: "double",
    BaseTy.bool: "bool",
    BaseTy.SymBool: "bool",
    BaseTy.Scalar: "tl_scalar",
    BaseTy.ScalarType: "tl_dtype",
    BaseTy.QScheme: "int",  # c10::QScheme's enum value
}

# boxing of a value return by its C type: (pop from the stack into a T *, push a T)
VALUE_BOXING = {
    "int64_t": ("tl_stack_pop_int", "tl_stack_push_int"),
    "double": ("tl_stack_pop_double", "tl_stack_push_double"),
    "bool": ("tl_glue_pop_bool", "tl_stack_push_bool"),
    "tl_scalar": ("tl_stack_pop_scalar", "tl_stack_push_scalar"),
    "tl_dtype": ("tl_glue_pop_dtype", "tl_glue_push_dtype"),
    "int": ("tl_glue_pop_enum", "tl_glue_push_enum"),
}


def _is_tensor(t) -> bool:
    return isinstance(t, BaseType) and t.name is BaseTy.Tensor


def _is_tensor_list(t) -> bool:
    return isinstance(t, ListType) and _is_tensor(t.elem)


def _element_out_params(t, i: int, where: str) -> tuple[str, tuple[CParam, ...]]:
    """(element kind, trailing out parameters) of return ``i`` of a tuple."""
    if _is_tensor(t):
        return "tensor", (CParam(f"ret{i}", "tl_tensor **"),)
    if _is_tensor_list(t):
        return "tensor_list", (CParam(f"ret{i}", "tl_tensor ***"), CParam(f"ret{i}_len", "int64_t *"))
    if isinstance(t, BaseType) and t.name in _VALUE_RET:
        return "value", (CParam(f"ret{i}", _VALUE_RET[t.name] + " *"),)
    raise UnsupportedCType(f"{where}: the C ABI has no convention for a '{t}' return yet")


_C_RETURNS: _Memo = {}


def c_return(f: FuncLike) -> CReturn:
    s = _schema(f)
    assert s is not None
    return _memo(_C_RETURNS, s, _c_return)


def _c_return(s: FunctionSchema) -> CReturn:
    rets = s.returns
    if len(rets) == 0:
        return CReturn("none", "int", "-1", (), rets)
    if len(rets) == 1:
        t = rets[0].type
        if _is_tensor(t):
            return CReturn("tensor", "tl_tensor *", "NULL", (), rets)
        if isinstance(t, BaseType) and t.name in _VALUE_RET:
            return CReturn("value", "int", "-1", (CParam("ret", _VALUE_RET[t.name] + " *"),), rets)
        if _is_tensor_list(t):
            return CReturn("tensor_list", "int", "-1", (CParam("ret", "tl_tensor ***"), CParam("ret_len", "int64_t *")), rets)
        raise UnsupportedCType(f"{s.name}: the C ABI has no convention for returns '{rets[0]}' yet")
    if all(_is_tensor(r.type) for r in rets):
        return CReturn("tensors", "int", "-1", tuple(CParam(f"ret{i}", "tl_tensor **") for i in range(len(rets))), rets)
    # a mixed tuple ((Tensor, Tensor[]), (Tensor, ..., SymInt max_q, ...), (float, int)):
    # one group of trailing parameters per element, in order
    params: list[CParam] = []
    for i, r in enumerate(rets):
        params.extend(_element_out_params(r.type, i, str(s.name))[1])
    return CReturn("tuple", "int", "-1", tuple(params), rets)


def tuple_elements(r: CReturn) -> list[tuple[str, tuple[CParam, ...]]]:
    """The (kind, out params) of each element of a ``tuple`` return."""
    return [_element_out_params(x.type, i, "") for i, x in enumerate(r.returns)]


_C_PARAMS: _Memo = {}
_C_KERNEL_PARAMS: _Memo = {}
_KS = CParam("ks", "tl_keyset")


def _params_of(s: FunctionSchema, with_ks: bool) -> tuple[tuple[CParam, ...], str]:
    """(parameters, their declaration list) of ``s``'s entry point or kernel."""
    def compute(s: FunctionSchema) -> tuple[tuple[CParam, ...], str]:
        ps = [_KS] if with_ks else []
        for a in c_args(s):
            ps.extend(a.params)
        ps.extend(c_return(s).out_params)
        return tuple(ps), c_param_decls(ps)

    return _memo(_C_KERNEL_PARAMS if with_ks else _C_PARAMS, s, compute)


def c_params(f: FuncLike, with_ks: bool = False) -> list[CParam]:
    """The C parameter list of the entry point (``with_ks``: of a kernel,
    ``tl_keyset ks`` first), including trailing return parameters."""
    s = _schema(f)
    assert s is not None
    return list(_params_of(s, with_ks)[0])


def c_param_decls(params: Iterable[CParam]) -> str:
    ps = [p.decl() for p in params]
    return ", ".join(ps) if ps else "void"


def c_param_names(params: Iterable[CParam]) -> str:
    return ", ".join(p.name for p in params)


def c_signature(f: FuncLike, name: str | None = None, with_ks: bool = False) -> str:
    """A full prototype without the trailing ``;``."""
    r = c_return(f)
    n = name or (c_redispatch_name(f) if with_ks else c_entry_name(f))
    sep = "" if r.ctype.endswith("*") else " "
    return f"{r.ctype}{sep}{n}({_params_of(_schema(f), with_ks)[1]})"


def kernel_typedef(f: FuncLike) -> str:
    """``typedef tl_tensor *(*tl_ops_add_Tensor_fn)(tl_keyset ks, ...);``"""
    r = c_return(f)
    sep = "" if r.ctype.endswith("*") else " "
    return f"typedef {r.ctype}{sep}(*{kernel_typedef_name(f)})({_params_of(_schema(f), True)[1]});"


def native_prototype(f: FuncLike, kernel: str) -> str:
    """Prototype of the hand-written kernel of ``f`` named ``kernel``."""
    return c_signature(f, native_name(kernel), with_ks=True) + ";"


def precompute_name(g: NativeFunctionsGroup) -> str | None:
    """The struct a ``precomputed:`` meta function fills (None without one)."""
    out = g.out
    assert out is not None
    if out.precomputed is None:
        return None
    return f"tl_precompute_{unambiguous_name(out)}"


# C fields of a precomputed value, by its C++ type in the YAML
_PRECOMPUTE_FIELD = {
    "int": "int64_t {n};",
    "bool": "bool {n};",
    "MemoryFormat": "int {n};",
    "ScalarType": "tl_dtype {n};",
    "DimVector": "int64_t {n}[TL_PRECOMPUTE_MAX_DIMS]; int64_t {n}_len;",
}


def precompute_fields(g: NativeFunctionsGroup) -> list[str]:
    """The fields of :func:`precompute_name`'s struct, in YAML order."""
    out = g.out
    assert out is not None and out.precomputed is not None
    pc = out.precomputed
    fields = []
    for a in [a for _, args in pc.replace for a in args] + list(pc.add):
        if a.type not in _PRECOMPUTE_FIELD:
            raise UnsupportedCType(f"{out.func.name}: precomputed type '{a.type}' has no C field type")
        fields.append(_PRECOMPUTE_FIELD[a.type].format(n=c_ident(a.name)))
    return fields


def meta_params(g: NativeFunctionsGroup) -> list[CParam]:
    """``tl_structured *s`` followed by the signature's arguments (no out=),
    then ``tl_precompute_<out> *pre`` when the group has ``precomputed:``."""
    out = g.out
    assert out is not None
    ps = [CParam("s", "tl_structured *")]
    for a in out.func.arguments.non_out:
        ps.extend(c_arg(a, str(out.func.name)).params)
    pre = precompute_name(g)
    if pre:
        ps.append(CParam("pre", pre + " *"))
    return ps


def meta_prototype(g: NativeFunctionsGroup) -> str:
    return f"int {meta_name(g)}({c_param_decls(meta_params(g))});"


def impl_params(g: NativeFunctionsGroup) -> list[CParam]:
    """``tl_structured *s``, the signature's arguments, then the out tensors.
    With ``precomputed:`` the replaced arguments are dropped (as in PyTorch)
    and ``const tl_precompute_<out> *pre`` comes before the out tensors."""
    out = g.out
    assert out is not None
    pre = precompute_name(g)
    replaced = {n for n, _ in out.precomputed.replace} if out.precomputed else set()
    ps = [CParam("s", "tl_structured *")]
    for a in out.func.arguments.non_out:
        if a.name not in replaced:
            ps.extend(c_arg(a, str(out.func.name)).params)
    if pre:
        ps.append(CParam("pre", f"const {pre} *"))
    for a in out.func.arguments.out:
        ps.extend(c_arg(a, str(out.func.name)).params)
    return ps


def impl_prototype(g: NativeFunctionsGroup, kernel: str) -> str:
    return f"int {impl_name(kernel)}({c_param_decls(impl_params(g))});"


def is_factory(f: NativeFunction) -> bool:
    """A function without tensor arguments that takes ``Device? device``:
    routed by a generated BackendSelect kernel."""
    args = f.func.arguments.flat_all
    if any(a.type.is_tensor_like() for a in args):
        return False
    return any(a.name == "device" and a.type.base is BaseTy.Device for a in args)


# ------------------------------------------------- meta functions derived from YAML

#: the tag that makes a derived meta function promote integer inputs to the
#: default float dtype (PyTorch's build_borrowing_*_float_op; OpInfo's
#: ``promotes_int_to_float``)
FLOAT_OP_TAG = "promotes_int_to_float"


def derived_meta_builder(g: NativeFunctionsGroup) -> str | None:
    """The TensorIterator builder a pointwise group's meta function is derived
    from, or None when the author must write it.

    PyTorch writes ``TORCH_META_FUNC(hypot) { build_borrowing_binary_op(...); }``
    by hand for every ``structured_inherits: TensorIteratorBase`` pointwise
    operator; the body follows from the signature and one tag, so torchlet
    derives it: one Tensor input -> unary, two -> binary, ``_float_`` with
    the ``promotes_int_to_float`` tag; plain numbers (float, int, bool,
    Scalar) only reach the loop. Any other argument (``Tensor?``, a
    ``rounding_mode``) means the meta function has work to do: not derived.
    """
    out = g.out
    if out is None or not out.structured or out.structured_inherits != "TensorIteratorBase":
        return None
    if "pointwise" not in out.tags or out.precomputed or len(out.func.arguments.out) != 1:
        return None
    args = out.func.arguments.non_out
    tensors = [a for a in args if isinstance(a.type, BaseType) and a.type.base is BaseTy.Tensor]
    # plain numbers (leaky_relu's negative_slope) reach the loop only, never the shapes or dtypes
    numbers = [a for a in args if isinstance(a.type, BaseType)
               and a.type.base in (BaseTy.float, BaseTy.int, BaseTy.bool, BaseTy.Scalar)]
    if not 1 <= len(tensors) <= 2 or len(tensors) + len(numbers) != len(args):
        return None
    arity = "unary" if len(tensors) == 1 else "binary"
    flt = "_float" if FLOAT_OP_TAG in out.tags else ""
    return f"tl_structured_build_{arity}{flt}_op"


def derived_meta_definition(g: NativeFunctionsGroup) -> str | None:
    """The weak C definition of a derived meta function (a hand-written
    ``tl_meta_*`` of the same name replaces it at link time)."""
    builder = derived_meta_builder(g)
    if builder is None:
        return None
    ps = meta_params(g)
    out = g.out
    assert out is not None
    tensors = ["s"] + [c_ident(a.name) for a in out.func.arguments.non_out
                       if isinstance(a.type, BaseType) and a.type.base is BaseTy.Tensor]
    unused = [f"    (void){p.name};\n" for p in ps if p.name not in tensors]
    return (f"__attribute__((weak)) int {meta_name(g)}({c_param_decls(ps)}) {{\n" + "".join(unused)
            + f"    return {builder}({', '.join(tensors)});\n}}")
