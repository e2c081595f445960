"""The formula -> C expression compiler: :class:`FormulaCompiler` turns a
derivatives.yaml formula (its AST from :mod:`codegen.formula`, after the
saved-variable rewrite) into C statements of a node's ``apply``.  Every call
becomes one statement assigning a numbered temporary, failures jump to one
cleanup label, and each temporary is released right after its last use.
Names resolve, in order, to ``grad``, unpacked saved tensors, saved metadata
fields of the node, the helpers of :mod:`.c_autograd_helpers`, and finally
torchlet's own operators (``grad.t()`` -> ``tl_ops_t(grad)``), whose overload
is picked by the argument kinds, so gradients stay differentiable.
"""

from __future__ import annotations

import math

from .. import api_c
from ..formula import Binary, Call, Conditional, Expr, Index, Member, Name, Number, Paren, String, Unary, to_source
from ..model import Model
from ..native import NativeFunction
from .c_autograd_helpers import HELPERS, HeaderHelper, header_helpers
from .c_autograd_values import UnsupportedFormula, Val, convert, default_c

# <math.h>'s constants that derivatives.yaml formulas use (exp2, ldexp, erf ...)
_MATH_CONSTANTS = {
    "M_PI": math.pi,
    "M_LN2": math.log(2.0),
    "M_SQRT1_2": math.sqrt(0.5),
    "M_2_SQRTPI": 2.0 / math.sqrt(math.pi),
    "M_SQRT2": math.sqrt(2.0),
}


class FormulaCompiler:
    """Compiles formula ASTs of one node's ``apply`` into C statements.

    ``env`` maps formula names to values.  Temporaries ``t0_``, ``t1_`` ...
    are numbered per node; :attr:`temps` lists them for the declarations and
    the cleanup (tensor lists: :attr:`list_temps`, ``l0_`` with its length
    ``l0_n``).  Every statement that can fail is followed by ``goto done``.
    """

    def __init__(self, m: Model, env: dict[str, Val]):
        self.m = m
        self.env = env
        self.temps: list[str] = []
        self.list_temps: list[str] = []
        self.lines: list[str] = []
        self.used: set[str] = set()  # env names used

    # -- temporaries
    def _new_temp(self) -> str:
        t = f"t{len(self.temps)}_"
        self.temps.append(t)
        return t

    def _release(self, vals: list[Val]) -> list[str]:
        out = []
        for v in vals:
            if not v.temp:
                continue
            if v.kind == "tensorlist":
                out.append(f"tl_ag_tensor_list_release({v.temp}, {v.temp}n); {v.temp} = NULL;")
            elif v.kind == "tuple":
                out.extend(f"tl_tensor_release({t}); {t} = NULL;" for t in v.c)
            else:
                out.append(f"tl_tensor_release({v.temp}); {v.temp} = NULL;")
        return out

    def call_tensor(self, fn: str, args: list[str], consumed: list[Val], what: str) -> Val:
        t = self._new_temp()
        self.lines.append(f"{t} = {fn}({', '.join(args)});")
        self.lines.extend(self._release(consumed))
        self.lines.append(f"if (!{t}) goto done;")
        return Val("tensor", (t,), temp=t)

    def call_tuple(self, fn: str, args: list[str], n: int, consumed: list[Val]) -> Val:
        """An operator with ``n`` tensor outputs (trailing ``tl_tensor **`` parameters)."""
        ts = tuple(self._new_temp() for _ in range(n))
        self.lines.append(f"if ({fn}({', '.join(args + [f'&{t}' for t in ts])}) < 0) goto done;")
        self.lines.extend(self._release(consumed))
        return Val("tuple", ts, temp=ts[0])

    def call_list(self, fn: str, args: list[str], consumed: list[Val]) -> Val:
        """An operator or helper returning Tensor[] (``tl_tensor ***ret, int64_t *ret_len``)."""
        t = f"l{len(self.list_temps)}_"
        self.list_temps.append(t)
        self.lines.append(f"if ({fn}({', '.join(args + [f'&{t}', f'&{t}n'])}) < 0) goto done;")
        self.lines.extend(self._release(consumed))
        return Val("tensorlist", (t, f"{t}n"), temp=t)

    # -- expressions
    def compile(self, e: Expr) -> Val:
        if isinstance(e, Paren):
            v = self.compile(e.expr)
            if v.kind == "number":
                return Val("number", (), text=f"({v.text})")
            return v
        if isinstance(e, Name):
            return self._name(e)
        if isinstance(e, Number):
            return Val("number", (), text=e.text)
        if isinstance(e, String):
            return Val("str", (e.text,))
        if isinstance(e, Unary):
            return self._unary(e)
        if isinstance(e, Binary):
            return self._binary(e)
        if isinstance(e, Conditional):
            return self._conditional(e)
        if isinstance(e, Call):
            return self._call(e)
        if isinstance(e, Index) and isinstance(e.obj, Name) and e.obj.simple == "grads" and isinstance(e.index, Number):
            return self._name(Name((f"grads[{e.index.text}]",)))
        if isinstance(e, Index) and isinstance(e.index, Number) and e.index.text.isdigit():
            obj = self.compile(e.obj)  # grad_input_mask[1]: one flag of a bool array (false past its end)
            if obj.kind == "boolarray":
                return Val("bool", (f"({obj.c[1]} > {e.index.text} && {obj.c[0]}[{e.index.text}])",))
        raise UnsupportedFormula(f"'{to_source(e)}'")

    def _name(self, e: Name) -> Val:
        key = "::".join(e.parts)
        if key in self.env:
            self.used.add(key)
            return self.env[key]
        if key in ("true", "false"):
            return Val("bool", (key,))
        if key in ("c10::nullopt", "std::nullopt", "::std::nullopt", "None"):
            return Val("none", ())
        if key in _MATH_CONSTANTS:  # as literals: the generated file need not include <math.h>
            return Val("double", (f"{_MATH_CONSTANTS[key]!r} /* {key} */",))
        raise UnsupportedFormula(f"unknown name '{key}'")

    def _unary(self, e: Unary) -> Val:
        v = self.compile(e.operand)
        if e.op == "-":
            if v.kind == "tensor":
                return self._op_call("neg", None, [v], to_source(e))
            if v.kind == "number":
                return Val("number", (), text="-" + v.text)
            if v.kind in ("int", "double"):
                return Val(v.kind, (f"(-{v.c[0]})",))
            if v.kind == "scalar":
                return Val("double", (f"(-tl_ag_scalar_to_double({v.c[0]}))",))
        if e.op == "!":
            if v.kind == "dtype":  # an optional ScalarType: "is None"
                return Val("bool", (f"({v.c[0]} == TL_DTYPE_UNDEFINED)",))
            if v.kind == "bool":
                return Val("bool", (f"(!{v.c[0]})",))
            if v.kind == "number":
                return Val("bool", (f"(!{v.text})",))
        if e.op == "*":
            if v.kind == "dtype":  # the value of an optional ScalarType
                return v
        raise UnsupportedFormula(f"unary '{e.op}' on {v.kind} in '{to_source(e)}'")

    def _numeric(self, v: Val) -> tuple[str, str] | None:
        """(C kind int|double|bool, C expression) of a plain number-like value, else None."""
        if v.kind == "number":
            t = v.text.rstrip("fFlLuU")
            is_float = any(ch in t for ch in ".eE") and not t.lower().startswith("0x")
            return ("double" if is_float else "int"), t
        if v.kind in ("int", "double", "bool"):
            return v.kind, v.c[0]
        if v.kind == "scalar":
            return "double", f"tl_ag_scalar_to_double({v.c[0]})"
        return None

    _CMP = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
    _FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
    _ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
    _BITWISE = {"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor"}  # at::Tensor's operator&, |, ^

    def _binary(self, e: Binary) -> Val:
        a = self.compile(e.left)
        b = self.compile(e.right)
        src = to_source(e)
        if e.op in ("||", "&&") and a.kind == "bool" and b.kind == "bool":
            return Val("bool", (f"({a.c[0]} {e.op} {b.c[0]})",))
        if a.kind == "tensor" and (b.kind == "tensor" or b.kind in ("scalar", "number", "int", "double")):
            if e.op in self._ARITH:
                return self._op_call(self._ARITH[e.op], None, [a, b], src)
            if e.op in self._CMP:  # self > 0, result == self: bool tensors
                return self._op_call(self._CMP[e.op], None, [a, b], src)
            if e.op in self._BITWISE:  # (self == 0.) & (other <= 0.): masks
                return self._op_call(self._BITWISE[e.op], None, [a, b], src)
        if a.kind in ("scalar", "number", "int", "double") and b.kind == "tensor":
            if e.op in ("*", "+"):
                return self._op_call(self._ARITH[e.op], None, [b, a], src)
            if e.op == "-":  # 1 - x: rsub(x, 1)
                return self._op_call("rsub", None, [b, a], src)
            if e.op == "/":  # 2 / x: x.reciprocal() * 2
                r = self._op_call("reciprocal", None, [b], src)
                return self._op_call("mul", None, [r, a], src)
            if e.op in self._CMP:
                return self._op_call(self._CMP[self._FLIP[e.op]], None, [b, a], src)
        if a.kind == "number" and b.kind == "number" and e.op in ("+", "-", "*", "/"):
            return Val("number", (), text=f"({a.text} {e.op} {b.text})")
        na, nb = self._numeric(a), self._numeric(b)
        if na and nb:
            if e.op in self._CMP:
                return Val("bool", (f"({na[1]} {e.op} {nb[1]})",))
            if e.op in ("+", "-", "*", "/"):
                kind = "double" if "double" in (na[0], nb[0]) else "int"
                return Val(kind, (f"({na[1]} {e.op} {nb[1]})",))
        raise UnsupportedFormula(f"operator '{e.op}' on {a.kind} and {b.kind} in '{src}'")

    def _block(self, e: Expr) -> tuple[Val, list[str]]:
        saved, self.lines = self.lines, []
        try:
            v = self.compile(e)
            return v, self.lines
        finally:
            self.lines = saved

    def _conditional(self, e: Conditional) -> Val:
        """``c ? a : b``: a C conditional for numbers, an if/else block for tensors and tuples."""
        src = to_source(e)
        c = self.compile(e.cond)
        if c.kind == "number":
            c = Val("bool", (f"({c.text} != 0)",))
        if c.kind != "bool":
            raise UnsupportedFormula(f"condition of kind {c.kind} in '{src}'")
        a, la = self._block(e.then)
        b, lb = self._block(e.else_)
        na, nb = self._numeric(a), self._numeric(b)
        if na and nb and not la and not lb:
            kind = "double" if "double" in (na[0], nb[0]) else ("bool" if na[0] == nb[0] == "bool" else "int")
            return Val(kind, (f"({c.c[0]} ? {na[1]} : {nb[1]})",))
        if a.kind == b.kind == "tensor":
            r = self._new_temp()
            self.lines.append(f"if ({c.c[0]}) {{")
            self.lines += ["    " + ln for ln in la + self._move(a, r)]
            self.lines.append("} else {")
            self.lines += ["    " + ln for ln in lb + self._move(b, r)]
            self.lines.append("}")
            return Val("tensor", (r,), temp=r)
        if a.kind == b.kind == "tuple" and len(a.c) == len(b.c):
            rs = tuple(self._new_temp() for _ in a.c)
            moves_a = [ln for i, r in enumerate(rs) for ln in self._move(Val("tensor", (a.c[i],), temp=a.c[i] if a.temp else None), r)]
            moves_b = [ln for i, r in enumerate(rs) for ln in self._move(Val("tensor", (b.c[i],), temp=b.c[i] if b.temp else None), r)]
            self.lines.append(f"if ({c.c[0]}) {{")
            self.lines += ["    " + ln for ln in la + moves_a]
            self.lines.append("} else {")
            self.lines += ["    " + ln for ln in lb + moves_b]
            self.lines.append("}")
            return Val("tuple", rs, temp=rs[0])
        raise UnsupportedFormula(f"'?:' with branches of kinds {a.kind} and {b.kind} in '{src}'")

    @staticmethod
    def _move(v: Val, r: str) -> list[str]:
        """Statements making temporary ``r`` own the tensor ``v`` (NULL stays NULL)."""
        if v.temp:
            return [f"{r} = {v.temp}; {v.temp} = NULL;"]
        if v.c[0] == "NULL":
            return [f"{r} = NULL;"]
        return [f"{r} = {v.c[0]}; tl_tensor_retain({r});"]

    # tensor methods that read metadata (no operator call)
    _TENSOR_META = {
        "defined": ("bool", "({0} != NULL)"),
        "scalar_type": ("dtype", "tl_tensor_dtype({0})"),
        "dim": ("int", "tl_tensor_ndim({0})"),
        "numel": ("int", "tl_tensor_numel({0})"),
        "sym_numel": ("int", "tl_tensor_numel({0})"),
        "is_complex": ("bool", "(tl_dtype_is_complex(tl_tensor_dtype({0})) != 0)"),
        "requires_grad": ("bool", "(tl_autograd_requires_grad({0}) != 0)"),
    }

    def _call(self, e: Call) -> Val:
        f = e.func
        src = to_source(e)
        if isinstance(f, Member):
            obj = self.compile(f.obj)
            args = [self.compile(a) for a in e.args]
            name = f.name
            if name == "conj" and not args and obj.kind in ("scalar", "number", "double", "int"):
                return obj  # real numbers only: conj is the identity (tensors: the conj operator)
            if obj.kind == "info" and name == "zeros" and not args:
                return self.call_tensor("tl_ag_zeros_info", list(obj.c), [], src)
            if obj.kind == "tensor":
                if name in self._TENSOR_META and not args:
                    kind, fmt = self._TENSOR_META[name]
                    return Val(kind, (fmt.format(obj.c[0]),))
                if name in ("sym_sizes", "sizes") and not args:
                    return Val("intlist", (f"tl_tensor_sizes({obj.c[0]})", f"tl_tensor_ndim({obj.c[0]})"))
                if name in ("sym_strides", "strides") and not args:
                    return Val("intlist", (f"tl_tensor_strides({obj.c[0]})", f"tl_tensor_ndim({obj.c[0]})"))
                if name in ("sym_size", "size") and len(args) == 1 and args[0].kind in ("int", "number"):
                    d = args[0].c[0] if args[0].kind == "int" else args[0].text
                    return Val("int", (f"tl_tensor_size({obj.c[0]}, {d})",))
                if name == "options" and not args:
                    return Val("options", (f"tl_tensor_dtype({obj.c[0]})", f"(int)tl_tensor_device({obj.c[0]})"))
                if name in ("new_zeros", "new_zeros_symint") and len(args) in (1, 2) \
                        and args[0].kind == "intlist" and (len(args) == 1 or args[1].kind == "options"):
                    # x.new_zeros(sizes[, options]): zeros of x's (or the given) dtype and device
                    # (directly, also where the new_zeros operator exists: a formula's zeros need no dispatch)
                    opts = args[1].c if len(args) == 2 else (f"tl_tensor_dtype({obj.c[0]})", f"(int)tl_tensor_device({obj.c[0]})")
                    return self.call_tensor("tl_ag_zeros_info", list(args[0].c) + list(opts), [a for a in [obj] + args if a.temp], src)
                if name == "expand_as" and len(args) == 1 and args[0].kind == "tensor":
                    sizes = Val("intlist", (f"tl_tensor_sizes({args[0].c[0]})", f"tl_tensor_ndim({args[0].c[0]})"))
                    return self._op_call("expand", obj, [sizes], src)  # x.expand(other.sizes())
                return self._op_call(name, obj, args, src)
            if obj.kind in ("scalar", "number", "double", "int"):
                if name in ("isComplex", "is_complex") and not args:
                    return Val("bool", ("false",))
                n = self._numeric(obj)
                if name == "toDouble" and not args and n:
                    return Val("double", (n[1] if n[0] == "double" else f"(double){n[1]}",))
                if name == "toFloat" and not args and n:  # c10::Scalar::toFloat: rounded to float
                    return Val("double", (f"(double)(float){n[1]}",))
            if obj.kind == "intlist" and name == "back" and not args:   # c10::ArrayRef::back: the last item
                return Val("int", (f"{obj.c[0]}[{obj.c[1]} - 1]",))
            if obj.kind in ("optbool", "optint", "optdouble", "optscalar") and not args:
                if name == "has_value":
                    return Val("bool", (obj.c[1] if obj.kind != "optscalar" else f"({obj.c[0]} != NULL)",))
                if name == "value":
                    if obj.kind == "optscalar":
                        return Val("scalar", (f"(*{obj.c[0]})",))
                    return Val({"optbool": "bool", "optint": "int", "optdouble": "double"}[obj.kind], (obj.c[0],))
            raise UnsupportedFormula(f"method '{name}' on {obj.kind} in '{src}'")
        if isinstance(f, Name):
            key = "::".join(f.parts)
            args = [self.compile(a) for a in e.args]
            if key == "isDifferentiableType" and len(args) == 1 and args[0].kind == "dtype":
                return Val("bool", (f"tl_ag_is_differentiable_type({args[0].c[0]})",))
            if key in ("GradMode::is_enabled", "at::GradMode::is_enabled") and not args:
                return Val("bool", ("(tl_grad_mode_is_enabled() != 0)",))
            if key == "not_implemented" and len(args) == 1 and args[0].kind == "str":
                # FunctionsManual's not_implemented(name): the backward raises when it runs
                self.lines.append(f"tl_set_error(TL_ERR_NOT_IMPLEMENTED, \"the derivative for '%s' is not implemented.\", {args[0].c[0]});")
                self.lines.append("(void)grad_inputs;")
                self.lines.append("goto done;")
                return Val("tensor", ("NULL",))
            if key in ("Tensor", "at::Tensor") and not args:
                return Val("tensor", ("NULL",))  # an undefined tensor
            if key == "std::tuple" and not args and f.template_args and all(t.strip() == "Tensor" for t in f.template_args):
                return Val("tuple", ("NULL",) * len(f.template_args))
            if key in HELPERS:
                return self._helper(key, args, src)
            base = key[4:] if key.startswith("at::") else key
            base = base[: -len("_symint")] if base.endswith("_symint") else base
            if base in HELPERS:
                return self._helper(base, args, src)
            helper = header_helpers().get(base)
            if helper is not None and not self._has_op(base):
                return self._helper_call(base, helper, args, src)
            return self._op_call(base, None, args, src)
        raise UnsupportedFormula(f"call of '{to_source(f)}'")

    def _has_op(self, base: str) -> bool:
        return bool(self.m.callable_named(base))

    def _helper(self, key: str, args: list[Val], src: str) -> Val:
        for kinds, cname in HELPERS[key]:
            if len(kinds) != len(args):
                continue
            conv = [convert(a, k) for a, k in zip(args, kinds)]
            if any(c is None for c in conv):
                continue
            flat = [x for c in conv for x in c]  # type: ignore[union-attr]
            return self.call_tensor(cname, flat, [a for a in args if a.temp], src)
        kinds_s = ", ".join(a.kind for a in args)
        raise UnsupportedFormula(f"no overload of helper '{key}' takes ({kinds_s}) in '{src}'")

    def _helper_call(self, key: str, h: "HeaderHelper", args: list[Val], src: str) -> Val:
        """A helper found in tl_autograd_formulas.h by its name ``tl_ag_<key>``."""
        if len(h.kinds) != len(args):
            raise UnsupportedFormula(f"helper '{key}' ({h.cname}) takes {len(h.kinds)} arguments, not {len(args)}, in '{src}'")
        flat: list[str] = []
        for a, k in zip(args, h.kinds):
            c = convert(a, k)
            if c is None:
                raise UnsupportedFormula(f"helper '{key}' ({h.cname}) takes {k}, not {a.kind}, in '{src}'")
            flat.extend(c)
        consumed = [a for a in args if a.temp]
        if h.ret == "tensor":
            return self.call_tensor(h.cname, flat, consumed, src)
        if h.ret == "tensorlist":
            return self.call_list(h.cname, flat, consumed)
        return self.call_tuple(h.cname, flat, int(h.ret[len("tuple"):]), consumed)

    def _op_call(self, name: str, self_val: Val | None, args: list[Val], src: str) -> Val:
        base = name[: -len("_symint")] if name.endswith("_symint") else name
        cands = [f for f in self.m.callable_named(base) if not f.func.is_out_fn()]
        best = None
        for f in cands:
            bound = self._bind(f, self_val, args)
            if bound is not None and (best is None or bound[0] < best[0]):
                best = (bound[0], f, bound[1])
        if best is None:
            kinds_s = ", ".join(a.kind for a in ([self_val] if self_val else []) + args)
            raise UnsupportedFormula(f"no operator '{base}' takes ({kinds_s}) in '{src}'")
        _, f, flat = best
        r = api_c.c_return(f)
        consumed = [a for a in ([self_val] if self_val else []) + args if a.temp]
        if r.kind == "tensor":
            return self.call_tensor(api_c.c_entry_name(f), flat, consumed, src)
        if r.kind == "tensors":
            return self.call_tuple(api_c.c_entry_name(f), flat, len(r.returns), consumed)
        if r.kind == "tensor_list":
            return self.call_list(api_c.c_entry_name(f), flat, consumed)
        raise UnsupportedFormula(f"'{f.func.name}' does not return tensors")

    def _bind(self, f: NativeFunction, self_val: Val | None, args: list[Val]) -> tuple[tuple[int, int], list[str]] | None:
        """(cost, C arguments) passing ``args`` to ``f``, or None; the cost counts
        converted arguments, then defaults filled in (``x.to(dtype)`` is to.dtype,
        not to.dtype_layout)."""
        params = [a for a in f.func.arguments.flat_all if a not in f.func.arguments.out]
        given = list(args)
        if self_val is not None:
            if not params or params[0].name != "self":
                return None
            given = [self_val] + given
        if len(given) > len(params):
            return None
        flat: list[str] = []
        cost = defaults = 0
        for i, p in enumerate(params):
            try:
                ca = api_c.c_arg(p, str(f.func.name))
            except api_c.UnsupportedCType:
                return None
            if i < len(given):
                c = convert(given[i], ca.kind)
                if c is None:
                    return None
                if given[i].kind != _EXACT.get(ca.kind, ""):
                    cost += 1
                flat.extend(c)
            else:
                if p.default is None:
                    return None
                try:
                    flat.extend(default_c(p, ca.kind))
                except UnsupportedFormula:
                    return None
                defaults += 1
        return (cost, defaults), flat


# the value kind that matches a schema argument kind exactly (overload ranking)
_EXACT = {"tensor": "tensor", "opt_tensor": "tensor", "int": "int", "opt_int": "optint", "int_list": "intlist",
          "opt_int_list": "optintlist", "scalar": "scalar", "bool": "bool", "dtype": "dtype", "double": "double",
          "tensor_list": "tensorlist", "opt_scalar": "optscalar", "opt_bool": "optbool", "opt_double": "optdouble",
          "str": "str", "bool_list": "boolarray"}  # fmt: skip

