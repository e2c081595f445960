"""The Python bindings: ``generated/python/_ops.py`` and its stub ``_ops.pyi``.

For every name a YAML entry exposes (``variants: function`` -> module
function, ``variants: method`` -> Tensor method) this emitter writes one
Python function.  A name with one Python signature gets a plain ``def`` with
that signature; a name with several gets a *decision procedure*: the
overloads in PyTorch's order (api_python.sort_overloads), each guarded by
type checks of the call's arguments, then PyTorch's "invalid combination"
TypeError.  Operator dunders come from api_python.DUNDERS.  The code of each
function is built here from api_python's model; the template only lays the
pieces out (docs/PYTHON_BINDINGS.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import api_c
from ..api_python import (
    DUNDERS,
    RETURNS_SELF_WHEN_UNCHANGED,
    SKIP_PYTHON_BINDINGS,
    SKIP_PYTHON_FUNCTIONS,
    SKIP_PYTHON_OVERLOADS,
    is_optional,
    python_type_name,
    PyArg,
    PySignature,
    make_signature,
    pyi_type,
    sort_overloads,
)
from ..native import NativeFunction, Variant
from ..schema import SchemaKind
from . import EmitContext

PY_COMMENT = ("", "# ", "")
C_COMMENT = ("/*", " * ", " */")

_TWO_PARAM = {"opt_int", "opt_double", "opt_bool", "tensor_list", "opt_tensor_list", "int_list",
              "opt_int_list", "double_list", "opt_double_list", "bool_list"}


@dataclass
class Binding:
    """All Python signatures of one name (function or method)."""

    name: str
    method: bool
    sigs: list[PySignature] = field(default_factory=list)
    sources: list[NativeFunction] = field(default_factory=list)
    module: str | None = None  # python_module (``nn``, ``linalg``): bound in torchlet._C._<module>, not torchlet.<name>

    @property
    def pyname(self) -> str:
        """The identifier defined in _ops.py."""
        if self.method:
            return f"_m_{self.name}"
        return f"_{self.module}_{self.name}" if self.module else self.name


def collect(ctx: EmitContext) -> tuple[dict[str, Binding], dict[str, Binding], list[str], dict[str, dict[str, Binding]]]:
    """(functions, methods, skipped notes, {python_module: functions}) from the model.

    A function whose entry has ``python_module: nn`` is bound like PyTorch's:
    in the module ``torchlet._C._nn`` (generated/python/_nn.py), not as
    ``torchlet.<name>``; its method variant (if any) is a Tensor method as usual.
    """
    m = ctx.model
    functions: dict[str, Binding] = {}
    methods: dict[str, Binding] = {}
    modules: dict[str, dict[str, Binding]] = {}
    skipped: list[str] = []
    for f in m.functions:
        name = f.func.name
        if name.unqualified in SKIP_PYTHON_OVERLOADS:
            skipped.append(f"{name.unqualified}: the Tensor overload takes numbers (PyTorch does not bind it)")
            continue
        kind = f.func.kind()
        if kind is SchemaKind.scratch:
            continue
        g = m.group_of(f)
        out_f = None
        if kind is SchemaKind.out:
            # bound through its functional variant's out= (or alone when it has none)
            if g is not None and g.functional is not None and Variant.function in g.functional.variants:
                continue
        elif kind is SchemaKind.functional and g is not None and g.out is not None:
            out_f = g.out  # one out: out=t; several: out=(values, indices) (PyTorch's tuple of Tensors)
        try:
            _check_python_convertible(f)
        except api_c.UnsupportedCType as e:
            skipped.append(f"{name.unqualified}: {e}")
            continue
        tags = tuple(f.tags)
        if str(name.name) in SKIP_PYTHON_BINDINGS:
            continue
        if (Variant.function in f.variants or kind is SchemaKind.out) and str(name.name) not in SKIP_PYTHON_FUNCTIONS:
            table = modules.setdefault(f.python_module, {}) if f.python_module else functions
            b = table.setdefault(str(name.name), Binding(str(name.name), False, module=f.python_module))
            b.sigs.append(make_signature(f.func, out_f.func if out_f else None, False, tags))
            b.sources.append(f)
            if out_f is not None:
                b.sources.append(out_f)
        if Variant.method in f.variants and f.func.arguments.self_arg is not None:
            b = methods.setdefault(str(name.name), Binding(str(name.name), True))
            b.sigs.append(make_signature(f.func, None, True, tags))
            b.sources.append(f)
    mod_bindings = [b for t in modules.values() for b in t.values()]
    for b in list(functions.values()) + list(methods.values()) + mod_bindings:
        b.sigs = sort_overloads(b.sigs)
    return (dict(sorted(functions.items())), dict(sorted(methods.items())), skipped,
            {k: dict(sorted(v.items())) for k, v in sorted(modules.items())})


# ---------------------------------------------------------------------------
# code for one signature


def _pred(a: PyArg, x: str) -> str:
    """A Python expression: value ``x`` is acceptable for argument ``a``."""
    k = a.kind
    opt = "True" if a.type.is_nullable() else "False"
    if k == "tensor":
        if a.numbers_ok:
            return f"({x}.__class__ in _NUMBERS or isinstance({x}, _Tensor) or _is_number({x}))"
        return f"isinstance({x}, _Tensor)"
    if k == "opt_tensor":
        return f"({x} is None or isinstance({x}, _Tensor))"
    if k == "scalar":
        return f"_is_scalar({x})"
    if k in ("int_list", "opt_int_list", "double_list", "opt_double_list"):
        return f"_cv_{k}({x}, {a.size or 0}) is not _BAD"
    if k in ("dtype", "device", "enum", "str"):
        return f"_cv_{k}({x}, {opt}) is not _BAD"
    return f"_cv_{k}({x}) is not _BAD"


@dataclass(frozen=True)
class Shim:
    """A generated C helper of the Python ABI (generated/csrc/python_abi.c):
    one cffi call instead of several.

    ``number_arg``: a Tensor parameter that arrives as a Python number; the
    shim takes a ``tl_scalar`` there and makes the wrapped-number tensor in C.
    ``release``: an in-place / out= call; the shim drops the returned
    reference to the Python-owned tensor and returns 0, -1 (error) or 1 (a
    warning is pending, e.g. out= was resized)."""

    func: object  # FunctionSchema
    number_arg: str | None
    release: bool

    @property
    def name(self) -> str:
        n = f"tl_pyabi_{api_c.unambiguous_name(self.func)}"
        if self.number_arg:
            n += f"_n_{self.number_arg}"
        if self.release:
            n += "_r"
        return n

    @property
    def py(self) -> str:
        return "_P_" + self.name[len("tl_pyabi_"):]

    def params(self) -> list:
        ps = []
        for a in api_c.c_args(self.func):
            if a.arg.name == self.number_arg:
                ps.append(api_c.CParam(a.name, "tl_scalar"))
            else:
                ps.extend(a.params)
        return ps

    def c_lines(self) -> list[str]:
        ps = self.params()
        ret = "int" if self.release else "tl_tensor *"
        sep = "" if ret.endswith("*") else " "
        head = f"{ret}{sep}{self.name}({api_c.c_param_decls(ps)})"
        call_args = []
        for a in api_c.c_args(self.func):
            if a.arg.name == self.number_arg:
                call_args.append(f"{a.name}_t")
            else:
                call_args.extend(p.name for p in a.params)
        body = [f"/* {self.func} */", head + " {"]
        if self.number_arg:
            n = api_c.c_ident(self.number_arg)
            body.append(f"    tl_tensor *{n}_t = tl_wrapped_scalar({n});")
            body.append(f"    if (!{n}_t) return {'-1' if self.release else 'NULL'};")
        body.append(f"    tl_tensor *r = {api_c.c_entry_name(self.func)}({', '.join(call_args)});")
        if self.number_arg:
            body.append(f"    tl_tensor_release({api_c.c_ident(self.number_arg)}_t);")
        if self.release:
            body.append("    if (!r) return -1;")
            body.append("    tl_tensor_release(r);")
            body.append("    return tl_has_warning() ? 1 : 0;")
        else:
            body.append("    return tl_pyabi_tensor(r);  /* NULL + parked result: a warning is pending */")
        body.append("}")
        return body

    def prototype(self) -> str:
        ps = self.params()
        ret = "int" if self.release else "tl_tensor *"
        sep = "" if ret.endswith("*") else " "
        return f"{ret}{sep}{self.name}({api_c.c_param_decls(ps)});"


SHIMS: dict[str, Shim] = {}  # filled while the bindings are emitted (reset per run)

#: python_module values bound as torchlet._C._<module> (PyTorch's torch._C._nn,
#: torch._C._linalg, torch._C._special); torchlet.nn.functional, torchlet.linalg
#: and torchlet.special build on them
BOUND_MODULES = ("nn", "linalg", "special")

#: entry points the bindings call through cffi without a shim (name -> schema):
#: the cffi module wraps them to report a pending warning (py_abi.h.j2)
DIRECT: dict[str, object] = {}


def _shim(func, number_arg: str | None, release: bool) -> Shim:
    sh = Shim(func, number_arg, release)
    SHIMS.setdefault(sh.name, sh)
    return sh


class _Body:
    """Statements converting one signature's arguments and calling C."""

    def __init__(self, fname: str, sig: PySignature, notimpl: bool, consts: dict[str, str] | None = None):
        self.fname = fname
        self.sig = sig
        self.notimpl = notimpl
        self.lines: list[str] = []
        self.cexpr: dict[str, list[str]] = {}
        self.consts = consts or {}  # arguments fixed to their default (dunders)
        nums = [a for a in sig.args if a.numbers_ok]
        # one Tensor parameter that takes numbers: the number crosses as a
        # tl_scalar and a C shim wraps it (no Python wrapped-number object)
        self.num: PyArg | None = nums[0] if len(nums) == 1 else None

    def fail(self, a: PyArg, indent: str) -> None:
        if self.notimpl:
            self.lines.append(f"{indent}return NotImplemented")
            return
        pos = 0
        if not a.kwarg_only:
            pos = [x.name for x in self.sig.positional].index(a.name) + 1
        tname = python_type_name(a.type)
        self.lines.append(f"{indent}raise _arg_error({self.fname!r}, {a.name!r}, {pos}, {tname!r}, {a.name})")

    def convert(self, a: PyArg) -> None:
        v, k, L = a.name, a.kind, self.lines
        if a.is_self and self.sig.method:
            self.cexpr[a.schema_name] = [f"{v}._p"]
            return
        if k == "tensor":
            if a is self.num:
                L.append(f"    {v}_n = None")
            L.append(f"    if {v}.__class__ is not _Tensor:")
            if a is self.num:
                L.append(f"        if {v}.__class__ in _NUMBERS:")
                L.append(f"            {v}_n = _SC_INT.get({v}) if {v}.__class__ is int else None")
                L.append(f"            if {v}_n is None:")
                L.append(f"                {v}_n = _cv_scalar({v})")
                L.append(f"        elif _is_number({v}):  # numpy scalars and other numbers")
                L.append(f"            {v}_n = _cv_scalar({v})")
                L.append(f"        elif not isinstance({v}, _Tensor):")
            elif a.numbers_ok:
                L.append(f"        if {v}.__class__ in _NUMBERS or _is_number({v}):")
                L.append(f"            {v} = _wrapped({v})")
                L.append(f"        elif not isinstance({v}, _Tensor):")
            else:
                L.append(f"        if not isinstance({v}, _Tensor):")
            self.fail(a, "            ")
            self.cexpr[a.schema_name] = [f"{v}._p"]
            return
        c = f"{v}_c"
        if k == "scalar" and v in self.consts and self.consts[v].lstrip("-").isdigit() \
                and -256 <= int(self.consts[v]) <= 1024:
            # a default of a fixed-arity dunder: the cached tl_scalar itself
            self.cexpr[a.schema_name] = [f"_SC_INT[{self.consts[v]}]"]
            return
        if k == "scalar":
            L.append(f"    {c} = _SC_INT.get({v}) if {v}.__class__ is int else None")
            L.append(f"    if {c} is None:")
            L.append(f"        {c} = _cv_scalar({v})")
            L.append(f"        if {c} is _BAD:")
            self.fail(a, "            ")
            self.cexpr[a.schema_name] = [c]
            return
        opt = "True" if a.type.is_nullable() else "False"
        if k in ("int_list", "opt_int_list", "double_list", "opt_double_list"):
            call = f"_cv_{k}({v}, {a.size or 0})"
        elif k in ("dtype", "device", "enum", "str"):
            call = f"_cv_{k}({v}, {opt})"
        else:
            call = f"_cv_{k}({v})"
        L.append(f"    {c} = {call}")
        L.append(f"    if {c} is _BAD:")
        self.fail(a, "        ")
        self.cexpr[a.schema_name] = [f"{c}[0]", f"{c}[1]"] if k in _TWO_PARAM else [c]

    def call(self, func, extra: list[str], number: bool = False, release: bool = False) -> str:
        """The C call; ``number``: the numbers-as-tensor argument is a
        tl_scalar (``<name>_n``); ``release``: through a releasing shim."""
        args: list[str] = []
        for x in func.arguments.flat_all:
            if x in func.arguments.out:
                continue
            if number and self.num is not None and x.name == self.num.schema_name:
                args.append(f"{self.num.name}_n")
            else:
                args.extend(self.cexpr[x.name])
        args.extend(extra)
        if number or release:
            sh = _shim(func, self.num.schema_name if number and self.num else None, release)
            return f"{sh.py}({', '.join(args)})"
        DIRECT.setdefault(api_c.unambiguous_name(func), func)
        return f"_C_{api_c.unambiguous_name(func)}({', '.join(args)})"

    def any_call(self, func, extra: list[str], release: bool = False) -> str:
        """The call, choosing the number shim when a number was given."""
        plain = self.call(func, extra, False, release)
        if self.num is None:
            return plain
        return f"({plain} if {self.num.name}_n is None else {self.call(func, extra, True, release)})"

    def result(self, func, indent: str, returns_var: str | None, out_call: bool) -> None:
        L = self.lines
        r = api_c.c_return(func)
        outs = ["out._p"] if out_call else []
        if out_call and len(func.arguments.out) > 1:
            outs = [f"out[{i}]._p" for i in range(len(func.arguments.out))]
        if r.kind == "tensor":
            if returns_var is not None:
                # in-place / out=: one C call that also drops the returned reference
                L.append(f"{indent}rc_ = {self.any_call(func, outs, release=True)}")
                L.append(f"{indent}if rc_:")
                L.append(f"{indent}    _after(rc_)")
                if self.sig.factory:  # requires_grad=True on out=
                    L.append(f"{indent}if requires_grad:")
                    L.append(f"{indent}    from torchlet.autograd import _factory_requires_grad")
                    L.append(f"{indent}    _factory_requires_grad({returns_var})")
                L.append(f"{indent}return {returns_var}")
            else:
                # the result object, inlined (_wrap): it owns the new reference
                L.append(f"{indent}h_ = {self.any_call(func, outs)}")
                L.append(f"{indent}if not h_:  # the error, or the result parked while warnings are raised")
                L.append(f"{indent}    h_ = _pending_result()")
                sa = func.arguments.self_arg
                ra = func.returns[0].annotation
                if sa is not None and ra is not None and sa.annotation is not None \
                        and ra.alias_set == sa.annotation.alias_set \
                        and str(func.name.name) in RETURNS_SELF_WHEN_UNCHANGED:
                    # Tensor(a) returned as self itself (x.contiguous(), x.to(x.dtype)): same object
                    me = "self" if self.sig.method else "input"
                    L.append(f"{indent}if h_ == {me}._p:")
                    L.append(f"{indent}    _release(h_)")
                    L.append(f"{indent}    return {me}")
                L.append(f"{indent}r_ = _new(_Tensor)")
                L.append(f"{indent}r_._p = h_")
                L.append(f"{indent}if _subclassed:  # the result may be a subclass tensor (torchlet._subclass)")
                L.append(f"{indent}    r_ = _as_subclass(r_)")
                if self.sig.factory:  # requires_grad=True: a leaf (torchlet.autograd)
                    L.append(f"{indent}if requires_grad:")
                    L.append(f"{indent}    from torchlet.autograd import _factory_requires_grad")
                    L.append(f"{indent}    _factory_requires_grad(r_)")
                L.append(f"{indent}return r_")
        elif r.kind == "none":
            L.append(f"{indent}_check_rc({self.call(func, outs)})")
            L.append(f"{indent}return None")
        elif r.kind == "value":
            ctype = r.out_params[0].ctype
            vk = _PY_VALUE_CTYPES[ctype]
            L.append(f"{indent}p_ = _ffi.new({ctype!r})")
            L.append(f"{indent}_check_rc({self.call(func, outs + ['p_'])})")
            L.append(f"{indent}return _value_result(p_, {vk!r})")
        elif r.kind == "tensors" and out_call:
            # out=(a, b): the same Python objects come back, as torch.return_types.<op>_out
            n = len(r.out_params)
            L.append(f"{indent}p_ = _ffi.new('tl_tensor *[{n}]')")
            L.append(f"{indent}_check_rc({self.call(func, outs + [f'p_ + {i}' for i in range(n)])})")
            L.append(f"{indent}for i_ in range({n}):")
            L.append(f"{indent}    _release(p_[i_])")
            names = tuple(ret.name for ret in self.sig.func.returns)
            if all(names):
                L.append(f"{indent}return _out_tuple_result(out, {str(func.name.name.base) + '_out'!r}, {names!r})")
            else:
                L.append(f"{indent}return tuple(out)")
        elif r.kind == "tensors":
            n = len(r.out_params)
            L.append(f"{indent}p_ = _ffi.new('tl_tensor *[{n}]')")
            L.append(f"{indent}_check_rc({self.call(func, outs + [f'p_ + {i}' for i in range(n)])})")
            names = tuple(ret.name for ret in func.returns)
            if all(names):  # named results: torchlet.return_types.<op> (torch.return_types)
                L.append(f"{indent}return _tensors_result(p_, {n}, {str(func.name.name.base)!r}, {names!r})")
            else:
                L.append(f"{indent}return _tensors_result(p_, {n})")
        elif r.kind == "tensor_list":
            L.append(f"{indent}p_ = _ffi.new('tl_tensor ***')")
            L.append(f"{indent}n_ = _ffi.new('int64_t *')")
            L.append(f"{indent}_check_rc({self.call(func, outs + ['p_', 'n_'])})")
            L.append(f"{indent}return _tensor_list_result(p_, n_)")


def _params(sig: PySignature) -> str:
    """The ``def`` parameter list of one signature."""
    ps: list[str] = ["self"] if sig.method else []
    pos = sig.positional
    if sig.varargs:
        ps.append("*_args")
    else:
        for a in pos:
            ps.append(a.name if a.default is None else f"{a.name}={a.default}")
    kw = [a for a in sig.kwonly]
    extra = []
    if sig.varargs:
        extra.append(f"{pos[0].name}=None")
    for a in kw:
        extra.append(a.name if a.default is None else f"{a.name}={a.default}")
    if sig.factory:
        extra.append("requires_grad=False")
    if extra:
        if not sig.varargs:
            ps.append("*")
        ps.extend(extra)
    return ", ".join(ps)


def signature_body(fname: str, sig: PySignature, notimpl: bool = False, bound: dict[str, str] | None = None) -> list[str]:
    """Statements of a function implementing one signature (4-space indented)."""
    consts = {k: v for k, v in (bound or {}).items() if k != "other" and v != "other"}
    b = _Body(fname, sig, notimpl, consts)
    L = b.lines
    for name, expr in (bound or {}).items():
        if name in consts and any(a.name == name and a.kind == "scalar" for a in sig.args):
            continue  # converted at import time (see _Body.convert)
        L.append(f"    {name} = {expr}")
    if sig.varargs:
        a = sig.positional[0]
        L.append(f"    if _args and {a.name} is None and _args[0].__class__ is int:")
        L.append(f"        {a.name} = _args  # f(2, 3): the common case")
        L.append("    else:")
        L.append(f"        {a.name} = _varargs(_args, {a.name})")
        L.append(f"    if {a.name} is None:")
        L.append(f"        raise _missing_error({fname!r}, {a.name!r})")
        L.append(f"    if {a.name} is _BAD:")
        L.append(f"        raise TypeError(\"{fname}() got multiple values for argument '{a.name}'\")")
    if sig.self_arg is not None:
        b.convert(sig.self_arg)
    out = None
    for a in sig.args:
        if a.is_out:
            out = a
            continue
        b.convert(a)
    ret_var = None
    if sig.returns_self:
        ret_var = "self" if sig.method else "input"
    if out is not None and sig.out_func is not None:
        L.append("    if out is None:")
        b.result(sig.func, "        ", ret_var, False)
        if out.kind == "out_tuple":
            n = len(sig.out_func.arguments.out)
            pos = len(sig.positional) + len(sig.kwonly) - 1
            L.append(f"    _check_out_tuple(out, {n}, {pos})")
        else:
            L.append("    if not isinstance(out, _Tensor):")
            b.fail(out, "        ")
            opts = [n for n in ("dtype", "device") if n in b.cexpr]
            if sig.factory and opts:  # zeros(2, out=t, dtype=...): PyTorch's check_out_type_matches
                args = ", ".join(b.cexpr[n][0] if n in opts else "-1" for n in ("dtype", "device"))
                L.append(f"    if {' or '.join(f'{n} is not None' for n in opts)}:")
                L.append(f"        _check_out_type(out, {args})")
        b.result(sig.out_func, "    ", "out", True)
    elif out is not None:
        # an out-only function: out= is required
        L.append("    if not isinstance(out, _Tensor):")
        b.fail(out, "        ")
        b.result(sig.func, "    ", "out", True)
    else:
        b.result(sig.func, "    ", ret_var, False)
    return L


def _guard(sig: PySignature, kwname: str) -> str:
    """The generated type checks that select ``sig`` for ``(args, kwargs)``."""
    conds: list[str] = []
    pos = sig.positional
    if sig.varargs:
        a = pos[0]
        conds.append(
            f"((n == 0 and {a.name!r} in kwargs) or (n > 0 and {_pred(a, '_varargs(args, None)')}))"
        )
    else:
        conds.append(f"n <= {len(pos)}" if pos else "n == 0")
        for i, a in enumerate(pos):
            p = _pred(a, f"args[{i}]")
            if a.required:
                conds.append(f"({p} if n > {i} else {a.name!r} in kwargs)")
            else:
                conds.append(f"(n <= {i} or {p})")
    for a in sig.kwonly:
        if a.required:  # a keyword-only parameter without default must be given
            conds.append(f"{a.name!r} in kwargs")
    # a keyword naming a parameter already given by position rejects the overload
    # (arange(0, end=3) is arange.start, not arange(end) with end twice)
    taken = "()" if sig.varargs else f"({''.join(f'{a.name!r}, ' for a in pos)})[:n]"
    conds.append(f"(not kwargs or _kw_ok(kwargs, {kwname}, {taken}))")
    return " and ".join(conds)


def _checks(sig: PySignature) -> tuple[str, str]:
    """(positional checks, keyword checks) as ``((name, predicate), ...)`` source."""
    pos = ", ".join(f"({a.name!r}, lambda x: {_pred(a, 'x')})" for a in sig.positional)
    kws = [f"({a.name!r}, lambda x: {_pred(a, 'x') if not a.is_out else _out_pred(a)})"
           for a in sig.kwonly]
    if sig.factory:
        kws.append("('requires_grad', lambda x: x.__class__ is bool)")
    return f"({pos}{',' if sig.positional else ''})", f"({', '.join(kws)}{',' if kws else ''})"


@dataclass
class PyFunction:
    """One generated ``def`` plus the module-level tables it needs."""

    pyname: str  # the Python identifier in _ops.py
    lines: list[str]  # the full text, one line per item
    sources: list[str]  # "yaml/native_functions.yaml:5 add.Tensor(...)"
    tables: list[str] = field(default_factory=list)  # module-level statements placed before it


def _sources(ctx: EmitContext, fs: list[NativeFunction]) -> list[str]:
    out = []
    for f in fs:
        out.append(f"{ctx.inputs[0]}: {f.schema_text}")  # no line numbers: edits elsewhere leave this file alone
    return out


def _tf_check(func: str, args: str | None = None) -> list[str]:
    """The torch-function mode check that opens each public entry point: one
    module-global load and truth test while no thread has a mode
    (runtime/torchlet/_function_mode.py); `func` is what the mode is told."""
    call = f"_tf({func}, locals())" if args is None else f"_tf_args({func}, ({args},))"
    return [f"    if _TF and (r_ := {call}) is not _GO:", "        return r_"]


def emit_binding(ctx: EmitContext, b: Binding) -> PyFunction:
    fname = b.name
    pyname = b.pyname
    tables: list[str] = []
    sigs_src = []
    for i, s in enumerate(b.sigs):
        pc, kc = _checks(s)
        sigs_src.append(f"    ({s.signature_str()!r}, {pc}, {kc}, {s.varargs}),")
    tables.append(f"_SIGS_{pyname} = (")
    tables.extend(sigs_src)
    tables.append(")")
    lines: list[str] = []
    if len(b.sigs) == 1:
        s = b.sigs[0]
        lines.append(f"def {pyname}({_params(s)}):")
        lines.append(f"    {s.signature_str()!r}")
        lines.extend(_tf_check(pyname))
        fast = _cached_sizes_call(fname, s, "_args") if s.varargs else []
        if fast:  # x.reshape(2, 3)
            lines.append(f"    if {s.positional[0].name} is None and _args and _args[0].__class__ is int "
                         "and _args[-1].__class__ is int:")
            lines.extend(fast)
        lines.extend(signature_body(fname, s))
        return PyFunction(pyname, lines, _sources(ctx, b.sources), tables)
    # several signatures: one implementation each, then the decision procedure
    for i, s in enumerate(b.sigs):
        tables.append(f"_KW_{pyname}_{i} = {{{', '.join(f'{k}: {v}' for k, v in _kw_table(s))}}}")
    for i, s in enumerate(b.sigs):
        lines.append(f"def _impl{pyname}_{i}({_params(s)}):")
        lines.append(f"    {s.signature_str()!r}")
        lines.extend(signature_body(fname, s))
        lines.append("")
        lines.append("")
    head = "self, *args, **kwargs" if b.method else "*args, **kwargs"
    lines.append(f"def {pyname}({head}):")
    doc = " | ".join(s.signature_str() for s in b.sigs)
    lines.append(f"    {doc!r}")
    lines.extend(_tf_check(pyname))
    j = _int_varargs_first(b.sigs)
    if j is not None:  # x.view(2, 3): straight to the size overload
        call_head = "self, *args" if b.method else "*args"
        lines.append("    if not kwargs and args and args[0].__class__ is int and args[-1].__class__ is int:")
        lines.extend(_cached_sizes_call(fname, b.sigs[j]))
        lines.append(f"        return _impl{pyname}_{j}({call_head})")
    lines.append("    n = len(args)")
    for i, s in enumerate(b.sigs):
        lines.append(f"    if {_guard(s, f'_KW_{pyname}_{i}')}:")
        call_head = "self, *args, **kwargs" if b.method else "*args, **kwargs"
        lines.append(f"        return _impl{pyname}_{i}({call_head})")
    lines.append(f"    raise _invalid_combination({fname!r}, args, kwargs, _SIGS_{pyname})")
    return PyFunction(pyname, lines, _sources(ctx, b.sources), tables)


def _cached_sizes_call(fname: str, s: PySignature, args: str = "args") -> list[str]:
    """``x.view(2, 3)`` without the size overload's own frame: a method whose
    only argument is the ``*size`` list calls C at once with the size tuple's
    cached C array (torchlet._pyargs.INT_ARRAYS holds only tuples that
    converted as plain ints). Up to three sizes, all checked to be ints by
    class (the first and last by the caller): ``(2, 3.0)`` equals and hashes
    like ``(2, 3)`` but must raise, so it never reaches the lookup."""
    if not s.method or s.kwonly or s.factory or s.returns_self or len(s.args) != 1:
        return []
    if api_c.c_return(s.func).kind != "tensor":
        return []
    size = s.positional[0]
    if size.kind != "int_list" or size.size:  # int[2]: one int stands for two, not the tuple as given
        return []
    b = _Body(fname, s, False)
    b.convert(s.self_arg)
    b.cexpr[size.schema_name] = ["a_", f"len({args})"]
    b.result(s.func, "            ", None, False)
    return [f"        if len({args}) <= 3 and {args}[len({args}) // 2].__class__ is int and "
            f"(a_ := _INT_ARRAYS.get({args})) is not None:", *b.lines]


def _int_varargs_first(sigs) -> int | None:
    """The index of the `*size` overload that every call whose first
    positional argument is a plain int selects: the first varargs int-list
    signature, when no signature before it takes an int first (view.dtype
    takes a dtype, so ``x.view(2, 3)`` is always view(size)); signatures with
    a required keyword-only argument cannot be chosen without keywords."""
    for j, s in enumerate(sigs):
        if any(a.required for a in s.kwonly):
            continue  # never chosen without keywords (rand's generator= overload)
        if s.varargs:
            return j if python_type_name(s.positional[0].type) == "tuple of ints" else None
        pos = s.positional
        if not pos:
            continue
        first = pos[0]
        if python_type_name(first.type) == "Tensor" and not first.numbers_ok:
            continue
        if python_type_name(first.type) == "torchlet.dtype":
            continue
        return None
    return None


def _out_pred(a: PyArg) -> str:
    """out= accepts a Tensor, or for several outputs a tuple / list (its
    length and elements are checked by the body, with PyTorch's messages)"""
    return "isinstance(x, (tuple, list))" if a.kind == "out_tuple" else "isinstance(x, _Tensor)"


def _kw_table(s: PySignature) -> list[tuple[str, str]]:
    out = []
    for a in s.args:
        pred = "isinstance(x, _Tensor)" if a.is_out else _pred(a, "x")
        if a.is_out:
            pred = f"(x is None or {_out_pred(a)})"
        out.append((repr(a.name), f"lambda x: {pred}"))
    if s.factory:
        out.append(("'requires_grad'", "lambda x: x.__class__ is bool"))
    return out


def _unary_ok(s: PySignature, nargs: int) -> bool:
    """Can ``s`` (a method signature) be called with exactly ``nargs`` positional arguments?"""
    pos = s.positional
    if s.varargs or len(pos) < nargs:
        return False
    rest = list(pos[nargs:]) + list(s.kwonly)
    return all(not a.required for a in rest)


# Dunders a torch-function mode sees as themselves (torch/_tensor.py's Python
# dunders and the C ones PyTorch binds under their own name); the others report
# the method they call (`a + b` -> add, `a += b` -> add_), as PyTorch does.
TF_SELF_DUNDERS = frozenset(
    "__rsub__ __rtruediv__ __rdiv__ __floordiv__ __rfloordiv__ __rmod__ __rpow__ __rmatmul__ __and__ __iand__ __or__ "
    "__ior__ __xor__ __ixor__ __lshift__ __rlshift__ __ilshift__ __rshift__ __rrshift__ __irshift__ __eq__ "
    "__invert__".split())


def emit_dunder(dunder: str, op: str, form: str, methods: dict[str, Binding], functions: dict[str, Binding]) -> list[str] | None:
    L = _emit_dunder(dunder, op, form, methods, functions)
    if L is not None:
        func = f"_d{dunder}" if dunder in TF_SELF_DUNDERS else f"_m_{op}"
        L[1:1] = _tf_check(func, "self" if form == "unary" else "self, other")
    return L


def _number_overload(b: Binding, num_pos: int) -> str | None:
    """The Python callable of the overload of `b` that takes exactly two
    positional arguments, a Number at `num_pos` and a Tensor at the other (the
    rest defaulted): what ``2 - a`` (rsub.Scalar) and ``2 ** a`` (pow.Scalar)
    call directly."""
    for i, s in enumerate(b.sigs):
        pos = s.positional
        if s.varargs or len(pos) < 2 or any(a.required for a in list(pos[2:]) + list(s.kwonly)):
            continue
        num, ten = pos[num_pos], pos[1 - num_pos]
        if python_type_name(num.type) == "Number" and python_type_name(ten.type) == "Tensor" \
                and not is_optional(num.type) and not is_optional(ten.type):
            return b.pyname if len(b.sigs) == 1 else f"_impl{b.pyname}_{i}"
    return None


def _emit_dunder(dunder: str, op: str, form: str, methods: dict[str, Binding], functions: dict[str, Binding]) -> list[str] | None:
    pyname = f"_d{dunder}"
    L: list[str] = []
    if form in ("reflect_function", "swap_function"):
        # torch/_tensor.py's dunders: the module function with the number as it is
        # (its Scalar overload: pow.Scalar, rsub.Scalar ...) or a Tensor as it is
        # (rsub.Tensor); TypeError -> NotImplemented
        if op not in functions:
            return None
        args = "other, self" if form == "reflect_function" else "self, other"
        L.append(f"def {pyname}(self, other):")
        L.append(f"    # {dunder}: {op}({args}), as torch.Tensor.{dunder}")
        fast = _number_overload(functions[op], 0 if form == "reflect_function" else 1)
        L.append("    if other.__class__ not in _NUMBERS and not _is_number(other) and not isinstance(other, _Tensor):")
        L.append("        return NotImplemented")
        L.append("    try:")
        if fast is not None:  # a Python number: its Scalar overload, without the overload resolution
            L.append("        if other.__class__ in _NUMBERS:")
            L.append(f"            return {fast}({args})")
        L.append(f"        return {op}({args})")
        L.append("    except TypeError:")
        L.append("        return NotImplemented")
        return L
    if form == "reciprocal_mul":
        if op not in methods or "mul" not in methods:
            return None
        L.append(f"def {pyname}(self, other):")
        L.append(f"    # {dunder}: self.reciprocal() * other, as torch.Tensor.{dunder} (a number or a tensor)")
        L.append("    if other.__class__ not in _NUMBERS and not _is_number(other) and not isinstance(other, _Tensor):")
        L.append("        return NotImplemented")
        L.append(f"    return _m_{op}(self) * other")
        return L
    b = methods.get(op)
    if b is None:
        return None
    if form == "unary":
        cands = [s for s in b.sigs if _unary_ok(s, 0)]
        if not cands:
            return None
        L.append(f"def {pyname}(self):")
        L.extend(signature_body(dunder, cands[0]))
        return L
    if form == "reflect_tensor":
        # other @ self: PyTorch's __rmatmul__ calls matmul(other, self) and turns its TypeError
        # for a non-tensor into NotImplemented (`2 @ t`: Python's "unsupported operand type(s)")
        L.append(f"def {pyname}(self, other):")
        L.append("    if not isinstance(other, _Tensor):")
        L.append("        return NotImplemented")
        L.append(f"    return _m_{op}(other, self)")
        return L
    if form == "reflect":
        L.append(f"def {pyname}(self, other):")
        L.append(f"    # {dunder}: other {op} self, with the number as a wrapped 0-dim tensor")
        L.append("    if other.__class__ not in _NUMBERS and not _is_number(other):")
        L.append("        return NotImplemented")
        L.append("    try:")
        L.append(f"        return _m_{op}(_wrapped(other), self)")
        L.append("    except TypeError:")
        L.append("        return NotImplemented")
        return L
    cands = [s for s in b.sigs if _unary_ok(s, 1)]
    if not cands:
        return None
    L.append(f"def {pyname}(self, other):")
    for s in cands:
        first = s.positional[0]
        bound = {a.name: a.default for a in list(s.positional[1:]) + list(s.kwonly) if a.default is not None}
        if s.factory:
            bound["requires_grad"] = "False"
        body = signature_body(dunder, s, notimpl=True, bound={first.name: "other", **bound} if first.name != "other" else bound)
        if len(cands) == 1:
            L.extend(body)
        else:
            L.append(f"    if {_pred(first, 'other')}:")
            L.extend("    " + line for line in body)
    if len(cands) > 1:
        L.append("    return NotImplemented")
    return L


# ---------------------------------------------------------------------------
# stubs


def _pyi_params(sig: PySignature, varargs_form: bool) -> str:
    ps = ["self"] if sig.method else []
    pos = sig.positional
    if varargs_form:
        ps.append(f"*{pos[0].name}: int")
    else:
        for a in pos:
            t = pyi_type(a.type, a.kind, a.numbers_ok)
            ps.append(f"{a.name}: {t}" + ("" if a.required else " = ..."))
    kw = []
    for a in sig.kwonly:
        t = ("tuple[Tensor, ...] | None" if a.kind == "out_tuple" else "Tensor | None") if a.is_out \
            else pyi_type(a.type, a.kind, a.numbers_ok)
        kw.append(f"{a.name}: {t}" + ("" if a.required else " = ..."))
    if sig.factory:
        kw.append("requires_grad: bool = ...")
    if kw:
        if not varargs_form:
            ps.append("*")
        ps.extend(kw)
    return ", ".join(ps)


# C return value types the bindings convert (_value_result)
_PY_VALUE_CTYPES = {"int64_t *": "int", "double *": "double", "bool *": "bool", "tl_scalar *": "scalar"}
# argument kinds of the C ABI the bindings have no Python conversion for yet
_PY_UNCONVERTED_KINDS = frozenset({"scalar_list", "opt_scalar_list", "storage"})


def _check_python_convertible(f) -> None:
    """Raise UnsupportedCType when ``f``'s C convention has no Python binding conversion."""
    r = api_c.c_return(f)
    if r.kind == "tuple" or (r.kind == "value" and r.out_params[0].ctype not in _PY_VALUE_CTYPES):
        raise api_c.UnsupportedCType(f"{f.func.name}: the Python bindings do not convert '{r.kind}' returns of this type yet")
    for a in f.func.arguments.flat_all:
        if api_c.c_arg(a).kind in _PY_UNCONVERTED_KINDS:
            raise api_c.UnsupportedCType(f"{f.func.name}: the Python bindings do not convert '{a.type}' arguments yet")


def _pyi_return(sig: PySignature) -> str:
    r = api_c.c_return(sig.func)
    if r.kind == "tensor":
        return "Tensor"
    if r.kind == "none":
        return "None"
    if r.kind == "tensors":
        return "tuple[" + ", ".join(["Tensor"] * len(r.out_params)) + "]"
    if r.kind == "tensor_list":
        return "list[Tensor]"
    ctype = r.out_params[0].ctype
    return {"int64_t *": "int", "double *": "float", "bool *": "bool"}.get(ctype, "Number")


def stub_defs(b: Binding, name: str, indent: str) -> list[str]:
    forms = []
    for s in b.sigs:
        if s.varargs:
            forms.append((s, True))
        forms.append((s, False))
    lines = []
    for s, va in forms:
        if len(forms) > 1:
            lines.append(f"{indent}@overload")
        lines.append(f"{indent}def {name}({_pyi_params(s, va)}) -> {_pyi_return(s)}: ...")
    return lines


# ---------------------------------------------------------------------------


def emit_python_bindings(ctx: EmitContext) -> dict[str, str]:
    SHIMS.clear()
    DIRECT.clear()
    functions, methods, skipped, modules = collect(ctx)
    # the python_module values torchlet binds, as PyTorch's torch._C._<module>
    bound = {mod: modules.pop(mod, {}) for mod in BOUND_MODULES}
    for mod, bs in modules.items():
        skipped.extend(f"{n}: python_module {mod} is not bound yet" for n in bs)
    in_modules = [b for bs in bound.values() for b in bs.values()]
    funcs = [emit_binding(ctx, b) for b in list(functions.values()) + in_modules]
    meths = [emit_binding(ctx, b) for b in methods.values()]
    dunders = []
    for dunder, op, form in DUNDERS:
        lines = emit_dunder(dunder, op, form, methods, functions)
        if lines is not None:
            dunders.append({"name": dunder, "pyname": f"_d{dunder}", "op": op, "form": form, "lines": lines})
    c_names = sorted({api_c.unambiguous_name(s.func) for b in list(functions.values()) + list(methods.values())
                      + in_modules for s in b.sigs}
                     | {api_c.unambiguous_name(s.out_func) for b in list(functions.values()) + in_modules
                        for s in b.sigs if s.out_func is not None})
    signatures = []
    for kind, bs in (("function", functions), ("method", methods), *bound.items()):
        for b in bs.values():
            signatures.append((kind, b.name, [s.signature_str() for s in b.sigs]))
    text = ctx.render(
        "py_ops.py.j2",
        PY_COMMENT,
        c_names=c_names,
        shim_names=[(SHIMS[k].py, SHIMS[k].name) for k in sorted(SHIMS)],
        functions=funcs,
        methods=meths,
        method_names=[(b.name, f"_m_{b.name}") for b in methods.values()],
        module_names=[(b.pyname, b.name) for b in in_modules],
        dunders=dunders,
        all_names=[b.name for b in functions.values()],
        signatures=signatures,
        skipped=skipped,
        dunder_table=[(d, op, form, d in {x["name"] for x in dunders}) for d, op, form in DUNDERS],
    )
    stub = ctx.render(
        "py_ops.pyi.j2",
        PY_COMMENT,
        functions=[stub_defs(b, b.name, "") for b in functions.values()],
        methods=[stub_defs(b, b.name, "    ") for b in methods.values()],
        dunders=[(d["name"], d["form"]) for d in dunders],
        all_names=[b.name for b in functions.values()],
    )
    module_files = {}
    for mod, bs in bound.items():  # generated/python/_nn.py, _linalg.py (+ stubs)
        module_files[f"python/_{mod}.py"] = ctx.render(
            "py_nn.py.j2", PY_COMMENT, module=mod, names=[(b.name, b.pyname) for b in bs.values()])
        module_files[f"python/_{mod}.pyi"] = ctx.render(
            "py_nn.pyi.j2", PY_COMMENT, functions=[stub_defs(b, b.name, "") for b in bs.values()], all_names=list(bs))
    init = ctx.render("py_init.py.j2", PY_COMMENT)
    shims = [SHIMS[k] for k in sorted(SHIMS)]
    abi_c = ctx.render("py_abi.c.j2", C_COMMENT, shims=[sh.c_lines() for sh in shims])
    wraps = [(api_c.c_entry_name(f), "tensor" if api_c.c_return(f).kind == "tensor" else "rc")
             for _, f in sorted(DIRECT.items())]
    abi_h = ctx.render("py_abi.h.j2", C_COMMENT, prototypes=[sh.prototype() for sh in shims], wraps=wraps)
    return {"python/_ops.py": text, "python/_ops.pyi": stub, **module_files,
            "python/__init__.py": init,
            "csrc/python_abi.c": abi_c, "cdef/python_abi.h": abi_h}
