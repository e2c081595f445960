"""Values of the formula -> C compiler (:mod:`.c_autograd_compiler`): a
compiled value's kind and C expressions (:class:`Val`), and the conversions
that pass a value to an operator's schema argument or to a helper's C
parameter (:func:`convert`), schema defaults included (:func:`default_c`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import api_c

class UnsupportedFormula(ValueError):
    """A formula uses something the C translation does not cover (yet);
    reported as a diagnostic at the formula (``pos``) or its entry."""

    pos = None


# ------------------------------------------------------------------ values

@dataclass(frozen=True)
class Val:
    """A compiled value: its ``kind`` and the C expressions that pass it.

    kinds: tensor (``c`` = one ``tl_tensor *`` expression; ``temp`` names an
    owned temporary), scalar, int, double, bool, dtype, device, layout,
    optstr (``const char *`` or NULL), geometry (sizes, strides, storage offset),
    intlist (data, len), optintlist (data or NULL, len), optint (value, has),
    options (dtype, device), info (sizes, len, dtype, device), none, number
    (a literal that converts to int/double/scalar/bool).
    """

    kind: str
    c: tuple[str, ...]
    temp: str | None = None
    text: str = ""  # literal text for numbers


def _number_as(v: Val, kind: str) -> Val | None:
    t = v.text.rstrip("fFlLuU")
    is_float = any(ch in t for ch in ".eE") and not t.lower().startswith("0x")
    if kind == "scalar":
        return Val("scalar", (f"tl_scalar_from_double({t})" if is_float else f"tl_scalar_from_int({t})",))
    if kind == "double":
        return Val("double", (t if is_float else f"{t}.0",))
    if kind in ("int", "layout") and not is_float:
        return Val(kind, (t,))
    if kind == "optint" and not is_float:
        return Val("optint", (t, "true"))
    if kind == "bool" and not is_float:
        return Val("bool", ("true" if t != "0" else "false",))
    return None


# schema argument kind (api_c) -> the value kinds that can be passed to it
_ACCEPTS = {
    "tensor": ("tensor",),
    "opt_tensor": ("tensor", "none"),
    "tensor_list": ("tensorlist",),
    "opt_tensor_list": ("tensorlist",),
    "scalar": ("scalar", "number", "int", "double"),
    "opt_scalar": ("optscalar", "scalar", "none"),
    "int": ("int", "number"),
    "opt_int": ("optint", "int", "number", "none"),
    "int_list": ("intlist",),
    "opt_int_list": ("optintlist", "intlist", "none"),
    "double": ("double", "number", "int"),
    "opt_double": ("optdouble", "double", "number", "none"),
    "bool": ("bool", "number"),
    "opt_bool": ("optbool", "bool", "none"),
    "bool_list": ("boolarray",),
    "dtype": ("dtype", "none"),
    "device": ("device", "none"),
    "enum": ("layout", "none"),
    "str": ("str", "optstr", "none"),
}
# helper parameter kinds (tl_autograd_formulas.h) that take other value kinds too
_HELPER_ACCEPTS = {
    "optintlist": ("intlist", "none"),
    "optint": ("int", "number", "none"),
    "optdouble": ("double", "number", "int", "none"),
    "optbool": ("bool", "none"),
    "optscalar": ("scalar", "none"),
    "optstr": ("str", "none"),
    "double": ("int", "number"),
    "int": ("number",),
    "bool": ("number",),
    "scalar": ("number", "int", "double"),
    "layout": ("number",),
}


def _lvalue_addr(c: str) -> str | None:
    """``&x`` for a node member (Scalar? arguments take a pointer), else None."""
    return f"&{c}" if c.startswith("n_->") or c.startswith("(*") else None


def convert(v: Val, want: str) -> tuple[str, ...] | None:
    """C argument expressions passing value ``v`` to a parameter of kind ``want``
    (an api_c kind or a helper kind), or None when it does not fit."""
    if want not in _ACCEPTS:  # a helper kind: a value kind
        if v.kind == want:
            return v.c
        if v.kind not in _HELPER_ACCEPTS.get(want, ()):
            return None
        if v.kind == "none":
            return {"optintlist": ("NULL", "0"), "optint": ("0", "false"), "optdouble": ("0.0", "false"),
                    "optbool": ("false", "false"), "optscalar": ("NULL",), "optstr": ("NULL",)}[want]  # fmt: skip
        if v.kind == "number":
            base = {"optint": "int", "optdouble": "double"}.get(want, want)
            n = _number_as(v, base)
            if n is None:
                return None
            return (n.c[0], "true") if want in ("optint", "optdouble") else n.c
        if want == "optscalar":
            a = _lvalue_addr(v.c[0])
            return (a,) if a else None
        if want == "scalar":
            return (f"tl_scalar_from_{'int' if v.kind == 'int' else 'double'}({v.c[0]})",)
        if want == "double":
            return (f"(double){v.c[0]}",)
        if want in ("optint", "optdouble", "optbool"):
            return (v.c[0], "true")
        return v.c
    if v.kind not in _ACCEPTS[want]:
        return None
    if v.kind == "number":
        target = {"scalar": "scalar", "opt_scalar": "scalar", "int": "int", "opt_int": "optint", "double": "double",
                  "opt_double": "double", "bool": "bool"}[want]  # fmt: skip
        n = _number_as(v, target)
        if n is None:
            return None
        if want == "opt_double":
            return (n.c[0], "true")
        if want == "opt_scalar":
            return None  # would need an lvalue
        return n.c
    if v.kind == "none":
        return {"opt_tensor": ("NULL",), "opt_scalar": ("NULL",), "opt_int": ("0", "false"), "opt_int_list": ("NULL", "0"),
                "opt_double": ("0.0", "false"), "opt_bool": ("false", "false"), "dtype": ("TL_DTYPE_UNDEFINED",),
                "device": ("-1",), "enum": ("-1",), "str": ("NULL",)}[want]  # fmt: skip
    if want == "scalar" and v.kind == "int":
        return (f"tl_scalar_from_int({v.c[0]})",)
    if want == "scalar" and v.kind == "double":
        return (f"tl_scalar_from_double({v.c[0]})",)
    if want == "double" and v.kind == "int":
        return (f"(double){v.c[0]}",)
    if want == "opt_scalar" and v.kind == "scalar":
        a = _lvalue_addr(v.c[0])
        return (a,) if a else None
    if want == "opt_int" and v.kind == "int":
        return (v.c[0], "true")
    if want in ("opt_double", "opt_bool") and v.kind in ("double", "bool"):
        return (v.c[0], "true")
    return v.c


def default_c(arg, kind: str) -> tuple[str, ...]:
    """C expressions for a schema default."""
    d = arg.default
    if d is None:
        raise UnsupportedFormula(f"argument '{arg.name}' has no default")
    if d.kind == "none":
        return convert(Val("none", ()), kind) or ()
    if d.kind == "bool":
        b = "true" if d.value else "false"
        return (b, "true") if kind == "opt_bool" else (b,)
    if d.kind in ("int", "float"):
        v = convert(Val("number", (), text=d.text), kind)
        if v is None:
            raise UnsupportedFormula(f"default '{d.text}' of '{arg.name}'")
        return v
    if d.kind == "enum":
        return (str(api_c.ENUM_VALUES[d.text]),)
    if d.kind == "list" and not d.value:
        return ("NULL", "0")
    raise UnsupportedFormula(f"default '{d.text}' of '{arg.name}'")

