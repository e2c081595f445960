"""An operator library's own files (``torchlet-gen generate --namespace myops``):

* ``csrc/extension.c``: ``tl_ext_<ns>_init(abi)``, the one function the
  Python package calls after loading the library: it checks the C ABI the
  library was compiled against and registers every operator and autograd
  kernel (``tl_autograd_register_all``, which runs ``tl_ops_register_all``);
* ``python/<ns>/__init__.py``: loads the compiled library
  (``torchlet.utils.cpp_extension.load_operator_library``) and binds each
  operator name as a module function (``myops.scale`` is
  ``torchlet.ops.myops.scale``);
* ``python/<ns>/__init__.pyi``: its stubs, one ``@overload`` per overload.

The C of the operators themselves comes from the same emitters as torchlet's
own (c_ops, c_autograd, ufunc), with names carrying the namespace
(``tl_ops_myops_scale``; codegen/api.py ``op_symbol``).
"""

from __future__ import annotations

import re

from .. import api_c
from ..api_python import arg_kind, pyi_type
from ..diagnostics import NOWHERE, CodegenError, Diagnostic
from ..native import NativeFunction, Variant
from ..schema import Argument
from . import EmitContext

C_COMMENT = ("/*", " * ", "")
PY_COMMENT = ("", "# ", "")

NAMESPACE_RE = re.compile(r"[a-z_][a-z0-9_]*")


def check_namespace(ctx: EmitContext) -> None:
    """Every operator of the library is declared in its namespace."""
    ns = ctx.namespace
    assert ns is not None
    errors = []
    if not NAMESPACE_RE.fullmatch(ns) or ns in ("aten", "prim", "torchlet"):
        errors.append(Diagnostic.at(ctx.model.functions[0].pos if ctx.model.functions else NOWHERE,
                                    f"'{ns}' cannot name an operator library",
                                    "a lower-case Python identifier other than aten, prim and torchlet"))
    for f in ctx.model.functions:
        if f.func.name.namespace != ns:
            got = f.func.name.namespace or "aten (no namespace)"
            errors.append(Diagnostic.at(f.fpos("func"), f"'{f.func.name}' is in namespace {got}, not '{ns}'",
                                        f"write `func: {ns}::{str(f.func).split('::')[-1]}`"))
    if errors:
        raise CodegenError(errors)


def _stub_params(f: NativeFunction) -> str:
    ps: list[str] = []
    args = f.func.arguments
    for a in args.positional:
        ps.append(_stub_arg(a))
    kw = [_stub_arg(a) for a in (*args.kwarg_only, *args.out)]
    if kw:
        ps.append("*")
        ps.extend(kw)
    return ", ".join(ps)


def _stub_arg(a: Argument) -> str:
    t = pyi_type(a.type, arg_kind(a.type), False)
    return f"{a.name}: {t}" + (" = ..." if a.default is not None else "")


def _stub_return(f: NativeFunction) -> str:
    r = api_c.c_return(f)
    if r.kind == "tensor":
        return "Tensor"
    if r.kind == "none":
        return "None"
    if r.kind == "tensors":
        return "tuple[" + ", ".join(["Tensor"] * len(r.out_params)) + "]"
    if r.kind == "tensor_list":
        return "list[Tensor]"
    return {"int64_t *": "int", "double *": "float", "bool *": "bool"}.get(r.out_params[0].ctype, "Any")


def emit_extension(ctx: EmitContext) -> dict[str, str]:
    check_namespace(ctx)
    ns = ctx.namespace
    assert ns is not None
    names: dict[str, list[NativeFunction]] = {}
    for f in ctx.model.functions:
        if Variant.function in f.variants:
            names.setdefault(str(f.func.name.name), []).append(f)
    functions = []
    for name, fs in names.items():
        stubs = [f"def {name}({_stub_params(f)}) -> {_stub_return(f)}: ..." for f in fs]
        functions.append({"name": name, "stubs": stubs, "schemas": [str(f.func) for f in fs]})
    ops = [{"qualified": api_c.qualified_name(f), "line": f.pos.line} for f in ctx.model.functions]
    return {
        "csrc/extension.c": ctx.render("ext_init.c.j2", C_COMMENT, namespace=ns),
        f"python/{ns}/__init__.py": ctx.render("ext_package.py.j2", PY_COMMENT, namespace=ns, functions=functions,
                                               ops=ops),
        f"python/{ns}/__init__.pyi": ctx.render("ext_package.pyi.j2", PY_COMMENT, namespace=ns, functions=functions),
    }
