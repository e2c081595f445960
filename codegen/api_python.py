"""Layer 4 (translation): how a schema becomes a Python signature.

Everything the Python-binding emitter needs is derived here and nowhere else:
the Python name of each argument, the PyTorch spelling of its type (what
``TypeError`` messages print: ``Tensor``, ``Number``, ``tuple of ints``,
``torchlet.dtype``), its default as PyTorch prints it, which arguments are
keyword-only, where ``out=`` comes from, whether ``*size`` varargs are
accepted, the order in which the overloads of one name are tried, and the
lowering of each Python argument to the C entry point's parameters
(docs/OPERATOR_ABI.md).  See docs/PYTHON_BINDINGS.md for the rules.

Conventions (PyTorch's, from its ``torchgen/api/python.py`` and
``python_arg_parser``):

* ``self`` is ``input`` in module functions; in methods it is the receiver and
  is not part of the printed signature.
* The functional and the out= variant of one operator are one Python
  signature: the out argument becomes the keyword-only ``out=None``.
* Factory functions (those with the ``dtype, layout, device, pin_memory``
  TensorOptions keywords) also take ``requires_grad=False``.
* An ``int[]`` that is the only positional argument may be given as varargs
  (``torchlet.zeros(2, 3)``, ``x.view(2, 3)``); an ``int[N]`` (N given)
  accepts a single int too.
* Python reserved words used as argument names get a trailing ``_``.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from typing import Iterable

from . import api_c
from .schema import Argument, BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Type

# ---------------------------------------------------------------------------
# C names and conventions come from codegen/api_c.py (docs/OPERATOR_ABI.md)

c_entry_name = api_c.c_entry_name


# ---------------------------------------------------------------------------
# PyTorch's lists

#: Operators whose Tensor parameters also accept Python numbers (they become
#: wrapped-number 0-dim tensors).  PyTorch's ``should_allow_numbers_as_tensors``.
NUMBERS_AS_TENSORS = frozenset(
    """add add_ add_out div div_ div_out divide divide_ divide_out mul mul_ mul_out
    multiply multiply_ multiply_out sub sub_ sub_out subtract subtract_ subtract_out
    true_divide true_divide_ true_divide_out to _to_copy copy_ copy floor_divide
    floor_divide_ floor_divide_out _conj""".split()
)

#: Overloads PyTorch does not bind in Python: the Tensor overload of these
#: operators already takes numbers (as wrapped 0-dim tensors), so the Scalar
#: overload would never be chosen (torchgen's SKIP_PYTHON_BINDINGS_SIGNATURES).
SKIP_PYTHON_OVERLOADS = frozenset(
    f"{op}{suffix}.Scalar" for op in ("add", "sub", "mul", "div") for suffix in ("", "_")
)

#: Module functions PyTorch does not expose (``torch.slice`` does not exist;
#: the name would also shadow the builtin inside the torchlet package;
#: ``unique_dim`` is in torch/__init__.py's PRIVATE_OPS, reached through
#: ``torch.unique(dim=)``).
SKIP_PYTHON_FUNCTIONS = frozenset({"slice", "unique_dim"})

#: Operators PyTorch binds neither as functions nor as methods
#: (torchgen's SKIP_PYTHON_BINDINGS: ``nonzero_numpy`` is reached through
#: ``torch.where(condition)`` and ``nonzero(as_tuple=True)``; ``_unsafe_view``
#: only inside reshape / matmul, reached as ``torch.ops.aten._unsafe_view``;
#: ``unique_dim_consecutive`` only through ``unique_consecutive(dim=)``).
SKIP_PYTHON_BINDINGS = frozenset({"nonzero_numpy", "_unsafe_view", "unique_dim_consecutive"})

#: Operator dunders of ``Tensor``: (dunder, operator name, form).
#:   forward  -- ``op(self, other)`` through the method's overloads
#:   reflect  -- ``op(other, self)``: ``2 - a``; ``other`` becomes a wrapped number
#:   reflect_tensor -- ``op(other, self)`` for a tensor ``other`` only (``2 @ a``: TypeError, as PyTorch)
#:   reflect_function -- the function ``op(other, self)``, the number as it is, so that
#:                ``2 ** a`` is pow.Scalar and ``2 % a`` remainder.Scalar_Tensor (torch/_tensor.py's dunders)
#:   swap_function -- the function ``op(self, other)``: ``2 - a`` is ``rsub(a, 2)`` (rsub.Scalar, RsubBackward1)
#:   reciprocal_mul -- ``self.reciprocal() * other``: torch's ``__rtruediv__`` (``2 / a`` records MulBackward0)
#:   inplace  -- ``self.op_(other)`` (``op`` names the in-place method)
#:   unary    -- ``op(self)``
#: Entries whose operator is not declared in yaml/ are skipped; as operators
#: are added they get their dunders without touching Python code.
DUNDERS: tuple[tuple[str, str, str], ...] = (
    ("__add__", "add", "forward"),
    ("__radd__", "add", "forward"),
    ("__iadd__", "add_", "inplace"),
    ("__sub__", "sub", "forward"),
    ("__rsub__", "rsub", "swap_function"),
    ("__isub__", "sub_", "inplace"),
    ("__mul__", "mul", "forward"),
    ("__rmul__", "mul", "forward"),
    ("__imul__", "mul_", "inplace"),
    ("__truediv__", "div", "forward"),
    ("__rtruediv__", "reciprocal", "reciprocal_mul"),
    ("__rdiv__", "reciprocal", "reciprocal_mul"),   # torch/_tensor.py: __rtruediv__ = __rdiv__
    ("__itruediv__", "div_", "inplace"),
    ("__floordiv__", "floor_divide", "forward"),
    ("__rfloordiv__", "floor_divide", "reflect"),
    ("__ifloordiv__", "floor_divide_", "inplace"),
    ("__mod__", "remainder", "forward"),
    ("__rmod__", "remainder", "reflect_function"),
    ("__imod__", "remainder_", "inplace"),
    ("__pow__", "pow", "forward"),
    ("__rpow__", "pow", "reflect_function"),
    ("__ipow__", "pow_", "inplace"),
    ("__matmul__", "matmul", "forward"),
    ("__rmatmul__", "matmul", "reflect_tensor"),
    ("__and__", "bitwise_and", "forward"),
    ("__rand__", "bitwise_and", "forward"),
    ("__iand__", "bitwise_and_", "inplace"),
    ("__or__", "bitwise_or", "forward"),
    ("__ror__", "bitwise_or", "forward"),
    ("__ior__", "bitwise_or_", "inplace"),
    ("__xor__", "bitwise_xor", "forward"),
    ("__rxor__", "bitwise_xor", "forward"),
    ("__ixor__", "bitwise_xor_", "inplace"),
    ("__lshift__", "bitwise_left_shift", "forward"),
    ("__rlshift__", "bitwise_left_shift", "reflect_function"),
    ("__ilshift__", "bitwise_left_shift_", "inplace"),
    ("__rshift__", "bitwise_right_shift", "forward"),
    ("__rrshift__", "bitwise_right_shift", "reflect_function"),
    ("__irshift__", "bitwise_right_shift_", "inplace"),
    ("__eq__", "eq", "forward"),
    ("__ne__", "ne", "forward"),
    ("__lt__", "lt", "forward"),
    ("__le__", "le", "forward"),
    ("__gt__", "gt", "forward"),
    ("__ge__", "ge", "forward"),
    ("__neg__", "neg", "unary"),
    ("__abs__", "abs", "unary"),
    ("__invert__", "bitwise_not", "unary"),
)

TENSOR_OPTION_NAMES = ("dtype", "layout", "device", "pin_memory")

#: ``int reduction=Mean`` defaults of the losses: PyTorch's at::Reduction values
REDUCTION_DEFAULTS = {"Mean": 1, "Sum": 2}

#: Operators that return their input itself when there is nothing to do
#: (``x.contiguous() is x``, ``x.to(x.dtype) is x`` in PyTorch): their
#: bindings return the same Python object when C returns the same tensor.
RETURNS_SELF_WHEN_UNCHANGED = frozenset({"contiguous", "to", "flatten"})

# ---------------------------------------------------------------------------
# argument kinds: the C convention of api_c (tensor, opt_tensor, int_list,
# scalar, dtype, enum, ...), which also fixes the Python check and conversion


def arg_kind(t: Type) -> str:
    """api_c's kind of a schema type, or ``unsupported``."""
    try:
        return api_c.c_arg(Argument("x", t)).kind
    except api_c.UnsupportedCType:
        return "unsupported"


def is_optional(t: Type) -> bool:
    return isinstance(t, OptionalType)


# PyTorch's python_arg_parser spellings of list element and plain types
_LIST_TYPE_NAMES = {
    BaseTy.int: "tuple of ints",
    BaseTy.SymInt: "tuple of ints",
    BaseTy.float: "tuple of floats",
    BaseTy.bool: "tuple of bools",
    BaseTy.Tensor: "tuple of Tensors",
}
_TYPE_NAMES = {
    BaseTy.Tensor: "Tensor",
    BaseTy.Scalar: "Number",
    BaseTy.int: "int",
    BaseTy.SymInt: "int",
    BaseTy.float: "float",
    BaseTy.bool: "bool",
    BaseTy.str: "str",
    BaseTy.ScalarType: "torchlet.dtype",
    BaseTy.Device: "torchlet.device",
    BaseTy.Layout: "torchlet.layout",
    BaseTy.MemoryFormat: "torchlet.memory_format",
    BaseTy.Generator: "torchlet.Generator",
}


def python_type_name(t: Type) -> str:
    """PyTorch's python_arg_parser spelling of a type (without ``?``)."""
    inner = t.elem if isinstance(t, OptionalType) else t
    if isinstance(inner, ListType):
        e = inner.elem.elem if isinstance(inner.elem, OptionalType) else inner.elem
        base = e.name if isinstance(e, BaseType) else None
        return _LIST_TYPE_NAMES.get(base, str(inner))  # type: ignore[arg-type]
    assert isinstance(inner, BaseType)
    return _TYPE_NAMES.get(inner.name, inner.name.value)


def pyi_type(t: Type, kind: str, numbers: bool) -> str:
    """The PEP 484 annotation of an argument in the generated stubs."""
    base = {
        "tensor": "Tensor | Number" if numbers else "Tensor",
        "tensor_list": "Sequence[Tensor]",
        "opt_tensor_list": "Sequence[Tensor | None]",
        "int": "int",
        "int_list": "int | Sequence[int]" if _list_size(t) else "Sequence[int]",
        "double": "float",
        "double_list": "Sequence[float]",
        "bool": "bool",
        "bool_list": "Sequence[bool]",
        "scalar": "Number",
        "dtype": "_dtype",
        "device": "_device | str | int",
        "enum": "Any",
        "str": "str",
        "generator": "Generator",
    }
    k = kind[4:] if kind.startswith("opt_") else kind
    text = base.get(k, "Any")
    if kind.startswith("opt_") or isinstance(t, OptionalType):
        text += " | None"
    return text


def _list_size(t: Type) -> int | None:
    inner = t.elem if isinstance(t, OptionalType) else t
    return inner.size if isinstance(inner, ListType) else None


def python_default(a: Argument) -> tuple[str | None, str | None]:
    """(Python expression for the ``def`` line, PyTorch's printed default).

    ``None`` for both when the argument is required.
    """
    d = a.default
    if d is None:
        return None, None
    kind = arg_kind(a.type)
    if d.kind == "none":
        return "None", "None"
    if d.kind == "bool":
        v = "True" if d.value else "False"
        return v, v
    if d.kind in ("int", "float"):
        if kind.endswith("int_list"):
            # ``int[2] stride=1`` means [1, 1]
            n = _list_size(a.type) or 1
            return repr((d.value,) * n), str(d.text)
        return repr(d.value), str(d.text)
    if d.kind == "list":
        vals = tuple(x.value for x in d.value)  # type: ignore[union-attr]
        return repr(vals), "[" + ", ".join(str(x.text) for x in d.value) + "]"  # type: ignore[union-attr]
    if d.kind == "str":
        return repr(d.value), repr(d.value)
    if kind == "int" and d.text in REDUCTION_DEFAULTS:
        # ``int reduction=Mean``: PyTorch's at::Reduction enum value
        return repr(REDUCTION_DEFAULTS[d.text]), d.text
    if kind.startswith("dtype"):
        # ``ScalarType? dtype=long``: None reaches the kernel, which applies the
        # schema's default (PyTorch's parser gives None the same meaning)
        return "None", d.text
    # enum-like defaults (contiguous_format, Mean, long): keep as a name for
    # the runtime (resolved by the helper converting the kind), printed as is
    return repr(d.text), d.text


def python_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


# ---------------------------------------------------------------------------
# Python signatures


@dataclass(frozen=True)
class PyArg:
    """One argument of a Python signature."""

    name: str  # the Python name (``input`` for self in functions, ``from_``)
    schema_name: str
    type: Type
    kind: str  # see arg_kind
    kwarg_only: bool
    default: str | None  # Python expression, None if required
    default_doc: str | None  # PyTorch's printed default
    numbers_ok: bool = False  # a Tensor argument that also takes Python numbers
    is_out: bool = False
    is_self: bool = False

    @property
    def required(self) -> bool:
        return self.default is None

    @property
    def size(self) -> int | None:
        return _list_size(self.type)

    def doc(self) -> str:
        """``Tensor other`` / ``Number alpha = 1`` as PyTorch's errors print it."""
        s = f"{python_type_name(self.type)} {self.name}"
        if self.default_doc is not None:
            s += f" = {self.default_doc}"
        return s


@dataclass(frozen=True)
class PySignature:
    """One Python signature of a name: a functional overload (with its out=
    variant merged in), an in-place overload, or an out-only function."""

    name: str  # python name: add, add_, zeros
    method: bool
    func: FunctionSchema  # the schema called when out is None
    out_func: FunctionSchema | None  # the schema called when out= is given
    args: tuple[PyArg, ...]  # in Python order (self excluded for methods)
    self_arg: PyArg | None  # the receiver of a method
    factory: bool = False  # takes requires_grad= as well
    varargs: bool = False  # the only positional int[] may be given as *args
    returns_self: bool = False  # in-place: returns the receiver object
    tags: tuple[str, ...] = field(default=())

    @property
    def positional(self) -> tuple[PyArg, ...]:
        return tuple(a for a in self.args if not a.kwarg_only)

    @property
    def kwonly(self) -> tuple[PyArg, ...]:
        return tuple(a for a in self.args if a.kwarg_only)

    def signature_str(self) -> str:
        """``(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)``."""
        parts = [a.doc() for a in self.positional]
        kw = [a.doc() for a in self.kwonly]
        if self.factory:
            kw.append("bool requires_grad = False")
        if kw:
            parts.append("*")
            parts.extend(kw)
        return "(" + ", ".join(parts) + ")"


def _schema_args(func: FunctionSchema, method: bool) -> Iterable[tuple[Argument, bool, bool]]:
    """(argument, kwarg_only, is_self) in schema order, minus out arguments."""
    a = func.arguments
    for x in a.positional:
        yield x, False, x is a.self_arg
    for x in a.kwarg_only:
        yield x, True, False


def make_signature(
    func: FunctionSchema, out_func: FunctionSchema | None, method: bool, tags: tuple[str, ...] = ()
) -> PySignature:
    """The Python signature of ``func`` (and its out= variant) as a module
    function (``method=False``) or a Tensor method."""
    base = str(func.name.name)
    numbers = base in NUMBERS_AS_TENSORS
    args: list[PyArg] = []
    self_arg = None
    topts = func.arguments.tensor_options or ()
    for a, kwonly, is_self in _schema_args(func, method):
        kind = arg_kind(a.type)
        dflt, doc = python_default(a)
        if a in topts:
            # TensorOptions keywords are all optional: PyTorch prints them "= None"
            # (pin_memory: "= False")
            if dflt is None:
                dflt, doc = ("False", "False") if a.name == "pin_memory" else ("None", "None")
        name = "self" if (is_self and method) else ("input" if is_self else python_name(a.name))
        pa = PyArg(
            name=name,
            schema_name=a.name,
            type=a.type,
            kind=kind,
            kwarg_only=kwonly,
            default=dflt,
            default_doc=doc,
            numbers_ok=numbers and kind == "tensor" and not is_self,
            is_self=is_self,
        )
        if is_self and method:
            self_arg = pa
        else:
            args.append(pa)
    # out= from the out variant (or the function itself for out-only functions)
    outs = (out_func or func).arguments.out if (out_func is not None or func.is_out_fn()) else ()
    if len(outs) == 1:
        o = outs[0]
        args.append(
            PyArg("out", o.name, o.type, "tensor", True, "None" if out_func is not None else None,
                  "None" if out_func is not None else None, is_out=True)
        )
    elif len(outs) > 1:
        # several outputs travel as one tuple, like PyTorch's out=(values, indices)
        args.append(PyArg("out", "out", ListType(BaseType(BaseTy.Tensor)), "out_tuple", True,
                          "None" if out_func is not None else None,
                          "None" if out_func is not None else None, is_out=True))
    positional = [a for a in args if not a.kwarg_only]
    varargs = len(positional) == 1 and positional[0].kind == "int_list"
    return PySignature(
        name=base,
        method=method,
        func=func,
        out_func=out_func,
        args=tuple(args),
        self_arg=self_arg,
        # PyTorch adds requires_grad= to factories and *_like / new_* functions
        factory=bool(topts) and not func.is_out_fn() and not func.name.name.inplace
        and (not any(a.type.is_tensor_like() for a in func.arguments.flat_all)
             or base.endswith("_like") or base.startswith("new_")),
        varargs=varargs,
        returns_self=bool(func.name.name.inplace),
        tags=tags,
    )


def supported(sig: PySignature) -> str | None:
    """Why a signature cannot be bound (None when it can)."""
    for a in sig.args + ((sig.self_arg,) if sig.self_arg else ()):
        if a.kind == "unsupported":
            return f"argument type {a.type} is not bound in Python yet"
    for r in sig.func.returns:
        if r.type != BaseType(BaseTy.Tensor) and not (
            isinstance(r.type, BaseType) and r.type.name in (BaseTy.int, BaseTy.float, BaseTy.bool, BaseTy.Scalar)
        ):
            if not (isinstance(r.type, ListType) and r.type.elem == BaseType(BaseTy.Tensor)):
                return f"return type {r.type} is not bound in Python yet"
    return None


# ---------------------------------------------------------------------------
# overload order (PyTorch's sort_overloads)


def _arg_smaller(t1: Type, t2: Type) -> bool:
    """t1 is tried after t2 at the same position."""
    s1, s2 = str(t1), str(t2)
    return (
        (s1 == "Scalar" and s2 == "Tensor")
        or (s1 == "Scalar?" and s2 == "Tensor?")
        or ("int[" in s1 and s2 in ("int", "int?", "SymInt", "SymInt?"))
        or ("SymInt[" in s1 and s2 in ("int", "int?", "SymInt", "SymInt?"))
        or (s1 == "Tensor[]" and "[]" in s2)
        or (s1 in ("int", "SymInt") and s2 == "Tensor")
        # conv2d.padding after conv2d: PyTorch's first sort key prints the
        # types as C++ (`SymIntArrayRef[2]` before `c10::string_view`)
        or (s1 == "str" and ("int[" in s2 or "SymInt[" in s2))
    )


def _smaller(s1: PySignature, s2: PySignature) -> bool:
    a1 = [a for a in s1.args if not a.is_out]
    a2 = [a for a in s2.args if not a.is_out]
    if len(a1) != len(a2):
        return False
    equal = all(x.type == y.type for x, y in zip(a1, a2))
    le = all(str(x.type) == str(y.type) or _arg_smaller(x.type, y.type) for x, y in zip(a1, a2))
    return le and not equal


def sort_overloads(sigs: list[PySignature]) -> list[PySignature]:
    """The order in which the overloads of one name are tried.

    Sorted by their printed signature, then a topological order of the partial
    order "s1 is tried after s2" (Scalar after Tensor, int[] after int, ...),
    taking the first remaining signature that no other remaining one must
    precede.  Deterministic, and independent of YAML order.
    """
    pending = sorted(sigs, key=lambda s: s.signature_str())
    out: list[PySignature] = []
    while pending:
        for i, s in enumerate(pending):
            if not any(_smaller(s, o) for o in pending if o is not s):
                out.append(pending.pop(i))
                break
        else:  # a cycle cannot happen (strict partial order); keep the sorted order
            out.extend(pending)
            break
    return out
