"""Layer 2: the function-schema language.

    schema      ::= opname "(" [argument ("," argument)*] ")" "->" returns
    opname      ::= [IDENT "::"] IDENT ["." IDENT]
    argument    ::= "*" | type IDENT ["=" default]
    type        ::= BASETYPE [annotation] ("?" | "[" [INT] "]")*
    annotation  ::= "(" aliasset ["!"] ["->" aliasset] ")"
    aliasset    ::= (IDENT | "*") ("|" (IDENT | "*"))*
    returns     ::= "(" [return ("," return)*] ")" | return
    return      ::= type [IDENT]
    default     ::= NUMBER | STRING | IDENT | "[" [default ("," default)*] "]"

A hand-written tokenizer feeds a recursive-descent parser; the result is a
tree of frozen dataclasses whose ``str()`` prints exactly the canonical text
(``str(parse(s)) == s`` for every schema PyTorch ships).  Errors raise
:class:`SchemaParseError` carrying the offset of the offending character, so
callers can point at the right column of the YAML line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Iterator, TypeVar, Union

T = TypeVar("T")

from .diagnostics import TextParseError, did_you_mean


class SchemaParseError(TextParseError):
    """A malformed schema: ``message`` about the character at ``offset``."""


# --------------------------------------------------------------------------
# tokens

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<arrow>->)
  | (?P<num>-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<punct>::|[()\[\],?!|*=.])
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)

# token kinds
IDENT, NUM, STR, PUNCT, ARROW, EOF = "ident", "num", "str", "punct", "arrow", "eof"

# The parser's fast path splits the text with one findall (no per-token
# match objects) and classifies each token by its first character; token
# offsets are only needed for diagnostics and are computed then (tokens
# carry their index, see _Parser.offset).
_FAST_RE = re.compile(
    r"""\s*(->|::|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'"""
    r"|-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)"
    r"|[A-Za-z_][A-Za-z0-9_]*|\S)",
    re.DOTALL,
)
_FIRST = {c: IDENT for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"}
_FIRST.update({c: NUM for c in "0123456789"})
_FIRST.update({c: PUNCT for c in "()[],?!|*=:"})


def _kind(tok: str) -> str | None:
    k = _FIRST.get(tok[0])
    if k is not None:
        return k
    c = tok[0]
    if c == "-":
        return ARROW if tok == "->" else (NUM if len(tok) > 1 else None)
    if c == ".":
        return NUM if len(tok) > 1 else PUNCT
    if c in "\"'" and len(tok) > 1:
        return STR
    return None


def tokenize(text: str) -> list[tuple[str, str, int]]:
    """Split ``text`` into ``(kind, text, offset)`` tokens ending with EOF."""
    out: list[tuple[str, str, int]] = []
    for m in _FAST_RE.finditer(text):
        tok = m.group(1)
        kind = _kind(tok)
        if kind is None:
            pos = m.start(1)
            if tok in "\"'":
                raise SchemaParseError("unterminated string literal", pos)
            raise SchemaParseError(f"unexpected character {tok!r}", pos)
        out.append((kind, tok, m.start(1)))
    out.append((EOF, "", len(text)))
    return out


def _fast_tokens(text: str) -> list[tuple[str, str, int]]:
    """Tokens as ``(kind, text, index)``; raises like :func:`tokenize`."""
    toks = _FAST_RE.findall(text)
    first = _FIRST
    kinds = [first.get(tok[0]) or _kind(tok) for tok in toks]
    if None in kinds:
        tokenize(text)  # raises with the right offset
    out = list(zip(kinds, toks, range(len(toks))))
    out.append((EOF, "", len(toks)))
    return out


# --------------------------------------------------------------------------
# types


class BaseTy(Enum):
    Tensor = "Tensor"
    int = "int"
    SymInt = "SymInt"
    SymBool = "SymBool"
    float = "float"
    bool = "bool"
    str = "str"
    Scalar = "Scalar"
    ScalarType = "ScalarType"
    Layout = "Layout"
    Device = "Device"
    DeviceIndex = "DeviceIndex"
    MemoryFormat = "MemoryFormat"
    Generator = "Generator"
    Storage = "Storage"
    Stream = "Stream"
    Dimname = "Dimname"
    QScheme = "QScheme"
    ConstQuantizerPtr = "ConstQuantizerPtr"
    GraphModule = "GraphModule"
    Any = "Any"

    # members are singletons compared by identity: hash them so too (Enum's
    # __hash__ is a Python call hashing the name; type tables look these up ~10^5 times)
    __hash__ = object.__hash__


_BASE_TYS = {t.value: t for t in BaseTy}


@dataclass(frozen=True, slots=True)
class BaseType:
    name: BaseTy

    def render(self, annotation: "Annotation | None" = None) -> str:
        # _value_ is the enum member's plain attribute (faster than .value)
        if annotation is None:
            return self.name._value_
        return f"{self.name._value_}({annotation})"

    def __str__(self) -> str:
        return self.name._value_

    @property
    def base(self) -> BaseTy:
        return self.name

    def is_tensor_like(self) -> bool:
        return self.name is BaseTy.Tensor

    def is_list_like(self) -> "ListType | None":
        return None

    def is_nullable(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class OptionalType:
    elem: "Type"

    def render(self, annotation: "Annotation | None" = None) -> str:
        return self.elem.render(annotation) + "?"

    def __str__(self) -> str:
        return self.render()

    @property
    def base(self) -> BaseTy:
        return self.elem.base

    def is_tensor_like(self) -> bool:
        return self.elem.is_tensor_like()

    def is_list_like(self) -> "ListType | None":
        return self.elem.is_list_like()

    def is_nullable(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class ListType:
    elem: "Type"
    size: int | None = None

    def render(self, annotation: "Annotation | None" = None) -> str:
        size = "" if self.size is None else str(self.size)
        return f"{self.elem.render(annotation)}[{size}]"

    def __str__(self) -> str:
        return self.render()

    @property
    def base(self) -> BaseTy:
        return self.elem.base

    def is_tensor_like(self) -> bool:
        return self.elem.is_tensor_like()

    def is_list_like(self) -> "ListType | None":
        return self

    def is_nullable(self) -> bool:
        return self.elem.is_nullable()


Type = Union[BaseType, OptionalType, ListType]

# one shared (immutable) instance per base type
_BASE_TYPES = {name: BaseType(ty) for name, ty in _BASE_TYS.items()}


# --------------------------------------------------------------------------
# alias annotations


@dataclass(frozen=True, slots=True)
class Annotation:
    """``a``, ``a!``, ``a|b``, ``a -> *``, ``a! -> a|b``."""

    alias_set: tuple[str, ...]
    is_write: bool = False
    alias_set_after: tuple[str, ...] = ()

    def __str__(self) -> str:
        s = "|".join(self.alias_set) + ("!" if self.is_write else "")
        if self.alias_set_after:
            s += " -> " + "|".join(self.alias_set_after)
        return s


# --------------------------------------------------------------------------
# defaults


@dataclass(frozen=True, slots=True)
class Default:
    """A default value: its exact source ``text`` and its parsed ``value``.

    ``kind`` is one of none, bool, int, float, str, enum (a bare name such as
    ``Mean`` or ``contiguous_format``) and list (``value`` is then a tuple of
    :class:`Default`).
    """

    text: str
    kind: str
    value: object

    def __str__(self) -> str:
        return self.text


# --------------------------------------------------------------------------
# arguments and returns


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    type: Type
    default: Default | None = None
    annotation: Annotation | None = None

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        s = f"{self.type.render(self.annotation)} {self.name}"
        if self.default is not None:
            s += f"={self.default.text}"
        return s


@dataclass(frozen=True, slots=True)
class Return:
    name: str | None
    type: Type
    annotation: Annotation | None = None

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        t = self.type.render(self.annotation)
        return t if self.name is None else f"{t} {self.name}"


TENSOR_OPTIONS = ("dtype", "layout", "device", "pin_memory")


@dataclass(frozen=True, slots=True)
class Arguments:
    """The arguments of a schema, split the way later layers consume them.

    ``self_arg`` is the positional argument named ``self`` (None for
    functions without one); ``out`` are the keyword-only arguments written to
    (``Tensor(a!) out``), kept apart from the other keyword-only ones.
    """

    pre_self_positional: tuple[Argument, ...] = ()
    self_arg: Argument | None = None
    post_self_positional: tuple[Argument, ...] = ()
    kwarg_only: tuple[Argument, ...] = ()
    out: tuple[Argument, ...] = ()

    @property
    def positional(self) -> tuple[Argument, ...]:
        mid = (self.self_arg,) if self.self_arg is not None else ()
        return self.pre_self_positional + mid + self.post_self_positional

    @property
    def flat_kwarg_only(self) -> tuple[Argument, ...]:
        return self.kwarg_only + self.out

    @property
    def flat_all(self) -> tuple[Argument, ...]:
        return self.positional + self.kwarg_only + self.out

    @property
    def non_out(self) -> tuple[Argument, ...]:
        return self.positional + self.kwarg_only

    @property
    def tensor_options(self) -> tuple[Argument, ...] | None:
        """dtype, layout, device, pin_memory when all four are kw-only in a row."""
        names = [a.name for a in self.kwarg_only]
        for i in range(len(names) - 3):
            if tuple(names[i : i + 4]) == TENSOR_OPTIONS:
                return self.kwarg_only[i : i + 4]
        return None

    def __str__(self) -> str:
        parts = [str(a) for a in self.positional]
        if self.kwarg_only or self.out:
            parts.append("*")
            parts.extend(str(a) for a in self.kwarg_only)
            parts.extend(str(a) for a in self.out)
        return ", ".join(parts)


# --------------------------------------------------------------------------
# names

_AUGMENTED = {
    "add", "sub", "mul", "div", "truediv", "floordiv", "mod", "pow",
    "and", "or", "xor", "lshift", "rshift", "matmul",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class BaseOperatorName:
    """``add`` / ``add_`` (inplace) / ``__iand__`` (dunder, inplace) ..."""

    base: str
    inplace: bool = False
    dunder_method: bool = False
    functional_overload: bool = False  # name ends in ``_functional``

    @staticmethod
    def parse(name: str) -> "BaseOperatorName":
        if len(name) > 4 and name.startswith("__") and name.endswith("__"):
            inner = name[2:-2]
            if inner.startswith("i") and inner[1:] in _AUGMENTED:
                return BaseOperatorName(inner[1:], inplace=True, dunder_method=True)
            return BaseOperatorName(inner, dunder_method=True)
        inplace = name.endswith("_") and not name.endswith("__")
        if inplace:
            name = name[:-1]
        functional = False
        if name.endswith("_functional") and not inplace:
            name = name[: -len("_functional")]
            functional = True
        return BaseOperatorName(name, inplace, False, functional)

    def __str__(self) -> str:
        if self.dunder_method:
            return f"__{'i' if self.inplace else ''}{self.base}__"
        s = self.base + ("_functional" if self.functional_overload else "")
        return s + ("_" if self.inplace else "")


@dataclass(frozen=True, slots=True)
class OperatorName:
    name: BaseOperatorName
    overload_name: str = ""
    namespace: str | None = None

    @staticmethod
    def parse(text: str) -> "OperatorName":
        ns = None
        if "::" in text:
            ns, text = text.split("::", 1)
        base, _, overload = text.partition(".")
        return OperatorName(BaseOperatorName.parse(base), overload, ns)

    @property
    def unqualified(self) -> str:
        s = str(self.name)
        return f"{s}.{self.overload_name}" if self.overload_name else s

    def __str__(self) -> str:
        s = self.unqualified
        return f"{self.namespace}::{s}" if self.namespace else s


# --------------------------------------------------------------------------
# schema


class SchemaKind(Enum):
    functional = "functional"
    inplace = "inplace"
    out = "out"
    mutable = "mutable"
    scratch = "scratch"


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    name: OperatorName
    arguments: Arguments
    returns: tuple[Return, ...]

    @staticmethod
    def parse(text: str) -> "FunctionSchema":
        return parse_schema(text)

    def __str__(self) -> str:
        if len(self.returns) == 1:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{self.name}({self.arguments}) -> {rets}"

    def kind(self) -> SchemaKind:
        if self.name.name.inplace:
            return SchemaKind.inplace
        if self.arguments.out:
            if any(a.name.startswith("_scratch_") for a in self.arguments.out):
                return SchemaKind.scratch
            return SchemaKind.out
        if any(a.is_write for a in self.arguments.post_self_positional):
            return SchemaKind.mutable
        return SchemaKind.functional

    def is_out_fn(self) -> bool:
        return bool(self.arguments.out)

    def signature(self, keep_return_names: bool = False) -> "FunctionSchema":
        """The schema shared by the functional / inplace / out variants.

        The overload name, inplace ``_``, out arguments, alias annotations,
        return names and the TensorOptions keywords are dropped; mutated
        inputs that are not returned become extra returns.
        """
        a = self.arguments

        def strip(arg: Argument) -> Argument:
            return arg if arg.annotation is None else Argument(arg.name, arg.type, arg.default, None)

        written_returns = {r.annotation for r in self.returns if r.annotation is not None}
        extra = tuple(
            Return(f"{arg.name}_out" if keep_return_names else None, arg.type, None)
            for arg in (((a.self_arg,) if a.self_arg else ()) + a.out + a.post_self_positional)
            if arg.is_write and arg.annotation not in written_returns
        )
        topts = a.tensor_options or ()
        sig_args = Arguments(
            tuple(map(strip, a.pre_self_positional)),
            strip(a.self_arg) if a.self_arg is not None else None,
            tuple(map(strip, a.post_self_positional)),
            tuple(strip(k) for k in a.kwarg_only if k not in topts),
            (),
        )
        n = self.name.name
        return FunctionSchema(
            OperatorName(BaseOperatorName(n.base, False, n.dunder_method, False), "", self.name.namespace),
            sig_args,
            tuple(Return(r.name if keep_return_names else None, r.type, None) for r in self.returns) + extra,
        )

    def signature_key(self) -> str:
        """``str(self.signature())``, computed without building the signature."""
        a = self.arguments
        topts = a.tensor_options or ()

        def arg(x: Argument) -> str:
            s = f"{x.type} {x.name}"
            return s if x.default is None else f"{s}={x.default.text}"

        parts = [arg(x) for x in a.positional]
        kw = [arg(x) for x in a.kwarg_only if x not in topts]
        if kw:
            parts.append("*")
            parts.extend(kw)
        written = {r.annotation for r in self.returns if r.annotation is not None}
        rets = [str(r.type) for r in self.returns]
        rets.extend(
            str(x.type)
            for x in (((a.self_arg,) if a.self_arg else ()) + a.out + a.post_self_positional)
            if x.is_write and x.annotation not in written
        )
        n = self.name.name
        name = f"__{n.base}__" if n.dunder_method else n.base
        if self.name.namespace:
            name = f"{self.name.namespace}::{name}"
        ret = rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"
        return f"{name}({', '.join(parts)}) -> {ret}"

    def schema_order_arguments(self) -> Iterator[Argument]:
        yield from self.arguments.flat_all


# --------------------------------------------------------------------------
# parser


class _Parser:
    """Recursive descent over the tokens of one text.

    Tokens are ``(kind, text, index)``; errors are raised with the token
    index and :func:`_located` turns it into a character offset.
    """

    __slots__ = ("text", "toks", "i")

    def __init__(self, text: str):
        self.text = text
        self.toks = _fast_tokens(text)
        self.i = 0

    # -- helpers
    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def next(self) -> tuple[str, str, int]:
        t = self.toks[self.i]
        if t[0] != EOF:
            self.i += 1
        return t

    def at(self, text: str) -> bool:
        # punctuation never collides with other kinds: strings keep their quotes
        return self.toks[self.i][1] == text

    def accept(self, text: str) -> bool:
        if self.toks[self.i][1] == text:
            self.i += 1
            return True
        return False

    def fail(self, expected: str, tok: tuple[str, str, int] | None = None) -> SchemaParseError:
        tok = tok or self.peek()
        found = "end of schema" if tok[0] == EOF else repr(tok[1])
        return SchemaParseError(f"expected {expected}, found {found}", tok[2])

    def expect(self, text: str, expected: str | None = None) -> tuple[str, str, int]:
        if not self.at(text):
            raise self.fail(expected or f"'{text}'")
        return self.next()

    def ident(self, what: str) -> tuple[str, str, int]:
        t = self.peek()
        if t[0] != IDENT:
            raise self.fail(what)
        return self.next()

    # -- grammar
    def schema(self) -> FunctionSchema:
        name = self.operator_name()
        self.expect("(", "'(' after the operator name")
        arguments = self.arguments()
        self.expect(")", "',' or ')' in the argument list")
        self.expect("->", "'->' before the returns")
        ret_at = self.i
        returns = self.returns()
        if self.peek()[0] != EOF:
            raise self.fail("end of schema")
        out = tuple(a for a in arguments.out if not a.name.startswith("_scratch_"))
        if out and returns and (
            len(returns) != len(out) or any(r.annotation != a.annotation for r, a in zip(returns, out))
        ):
            expected = ", ".join(a.type.render(a.annotation) for a in out)
            raise SchemaParseError(
                "an out= function must return its out arguments",
                ret_at,
                f"write '-> {expected if len(out) == 1 else '(' + expected + ')'}'",
            )
        return FunctionSchema(name, arguments, returns)

    def operator_name(self) -> OperatorName:
        t = self.ident("an operator name")
        ns = None
        base = t[1]
        if self.accept("::"):
            ns = base
            base = self.ident("an operator name after '::'")[1]
        overload = ""
        if self.accept("."):
            t2 = self.peek()
            if t2[0] not in (IDENT, NUM):
                raise self.fail("an overload name after '.'")
            self.next()
            overload = t2[1]
            if t2[0] == NUM:
                raise SchemaParseError(f"overload name {overload!r} must be an identifier", t2[2])
        return OperatorName(BaseOperatorName.parse(base), overload, ns)

    def arguments(self) -> Arguments:
        positional: list[Argument] = []
        kwarg_only: list[Argument] = []
        out: list[Argument] = []
        seen: dict[str, int] = {}
        star_at = -1
        if self.at(")"):
            return Arguments()
        while True:
            t = self.peek()
            if self.accept("*"):
                if star_at >= 0:
                    raise SchemaParseError("'*' may appear only once in an argument list", t[2])
                star_at = t[2]
            else:
                arg, name_off = self.argument()
                if arg.name in seen:
                    raise SchemaParseError(f"duplicate argument name '{arg.name}'", name_off)
                seen[arg.name] = name_off
                if star_at < 0:
                    positional.append(arg)
                elif arg.is_write:
                    out.append(arg)
                else:
                    if out:
                        raise SchemaParseError(
                            f"keyword-only argument '{arg.name}' follows the out arguments",
                            name_off,
                            "out arguments (Tensor(a!) ...) must come last",
                        )
                    kwarg_only.append(arg)
            if not self.accept(","):
                break
        if star_at >= 0 and not kwarg_only and not out:
            raise SchemaParseError("'*' must be followed by keyword-only arguments", star_at)
        pre: list[Argument] = []
        self_arg = None
        post: list[Argument] = []
        for a in positional:
            if self_arg is None and a.name == "self":
                self_arg = a
            elif self_arg is None:
                pre.append(a)
            else:
                post.append(a)
        if self_arg is None:  # no self: everything is "post" positional
            pre, post = [], pre
        return Arguments(tuple(pre), self_arg, tuple(post), tuple(kwarg_only), tuple(out))

    def argument(self) -> tuple[Argument, int]:
        typ, annotation = self.type()
        t = self.peek()
        if t[0] != IDENT:
            raise self.fail("an argument name")
        self.next()
        default = None
        if self.accept("="):
            default = self.default()
            self.check_default(typ, default, t[1])
        return Argument(t[1], typ, default, annotation), t[2]

    def type(self) -> tuple[Type, Annotation | None]:
        t = self.peek()
        if t[0] != IDENT:
            raise self.fail("a type")
        typ: Type | None = _BASE_TYPES.get(t[1])
        if typ is None:
            raise SchemaParseError(
                f"unknown type '{t[1]}'", t[2], did_you_mean(t[1], _BASE_TYS)
            )
        self.i += 1
        annotation = None
        if self.toks[self.i][1] == "(":
            annotation = self.annotation()
        toks = self.toks
        while True:
            nxt = toks[self.i][1]
            if nxt != "?" and nxt != "[":
                break
            if self.accept("?"):
                if isinstance(typ, OptionalType):
                    raise SchemaParseError("type is already optional", self.toks[self.i - 1][2])
                typ = OptionalType(typ)
            elif self.accept("["):
                size = None
                s = self.peek()
                if s[0] == NUM:
                    if not s[1].isdigit():
                        raise SchemaParseError(f"list size must be a non-negative integer, not {s[1]!r}", s[2])
                    size = int(s[1])
                    self.next()
                self.expect("]", "']' to close the list type")
                typ = ListType(typ, size)
            else:
                break
        return typ, annotation

    def alias_set(self) -> tuple[str, ...]:
        names = []
        while True:
            t = self.peek()
            if t[0] == IDENT or (t[0] == PUNCT and t[1] == "*"):
                names.append(t[1])
                self.next()
            else:
                raise self.fail("an alias set name (like 'a') in the annotation")
            if not self.accept("|"):
                return tuple(names)

    def annotation(self) -> Annotation:
        open_tok = self.next()  # "("
        before = self.alias_set()
        write = self.accept("!")
        if write and len(before) > 1:
            raise SchemaParseError(
                "a written (!) alias annotation must name exactly one alias set",
                open_tok[2] + 1,
            )
        after: tuple[str, ...] = ()
        if self.accept("->"):
            after = self.alias_set()
        if not self.at(")"):
            raise self.fail("')' to close the alias annotation")
        self.next()
        return Annotation(before, write, after)

    def default(self) -> Default:
        start = self.i
        value = self.default_value()
        return Default("".join(t[1] for t in self.toks[start : self.i]), value[0], value[1])

    def default_value(self) -> tuple[str, object]:
        t = self.next()
        kind, text, off = t
        if kind == NUM:
            if re.fullmatch(r"-?\d+", text):
                return "int", int(text)
            return "float", float(text)
        if kind == STR:
            return "str", _unquote(text)
        if kind == IDENT:
            if text == "None":
                return "none", None
            if text in ("True", "False"):
                return "bool", text == "True"
            return "enum", text
        if kind == PUNCT and text == "[":
            items: list[Default] = []
            if not self.accept("]"):
                while True:
                    items.append(self.default())
                    if self.accept("]"):
                        break
                    if not self.accept(","):
                        raise self.fail("',' or ']' in the default list")
            return "list", tuple(items)
        raise self.fail("a default value", t)

    def check_default(self, typ: Type, d: Default, name: str) -> None:
        off = self.toks[self.i - 1][2]
        if d.kind == "none" and not typ.is_nullable():
            raise SchemaParseError(
                f"argument '{name}' of non-optional type '{typ}' cannot default to None",
                off,
                f"make the type optional: '{typ}?'",
            )
        if d.kind == "bool" and typ.base is not BaseTy.bool and not typ.is_list_like():
            if typ.base not in (BaseTy.Scalar, BaseTy.SymBool):
                raise SchemaParseError(
                    f"argument '{name}' of type '{typ}' cannot default to {d.text}", off
                )
        # a Device may default to its text ("cpu", "cuda:0"), as TorchScript schemas do
        if d.kind == "str" and typ.base not in (BaseTy.str, BaseTy.Device):
            raise SchemaParseError(
                f"argument '{name}' of type '{typ}' cannot default to a string", off
            )

    def returns(self) -> tuple[Return, ...]:
        if self.accept("("):
            rets: list[Return] = []
            if not self.accept(")"):
                while True:
                    rets.append(self.ret())
                    if self.accept(")"):
                        break
                    if not self.accept(","):
                        raise self.fail("',' or ')' in the returns")
            return tuple(rets)
        t = self.peek()
        if t[0] != IDENT:
            raise self.fail("a return type")
        r = self.ret()
        return (r,)

    def ret(self) -> Return:
        typ, annotation = self.type()
        name = None
        if self.peek()[0] == IDENT:
            name = self.next()[1]
        return Return(name, typ, annotation)


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"', "0": "\0", "r": "\r"}


def _unquote(text: str) -> str:
    body = text[1:-1]
    if "\\" not in body:
        return body
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _located(text: str, e: SchemaParseError) -> SchemaParseError:
    """``e`` with its token index replaced by the token's character offset."""
    offsets = [t[2] for t in tokenize(text)]
    e.offset = offsets[min(e.offset, len(offsets) - 1)]
    return e


def run_parser(text: str, rule: Callable[[_Parser], T]) -> T:
    """Apply one grammar rule to the whole of ``text``."""
    try:
        p = _Parser(text)
        result = rule(p)
        if p.peek()[0] != EOF:
            raise p.fail("end of text")
        return result
    except SchemaParseError as e:
        if getattr(e, "located", False):
            raise
        raise _located(text, e) from None


def parse_schema(text: str) -> FunctionSchema:
    """Parse one schema; raises :class:`SchemaParseError` on malformed text."""
    if not isinstance(text, str):
        raise TypeError("schema must be a string")
    try:
        return _Parser(text).schema()
    except SchemaParseError as e:
        raise _located(text, e) from None


def parse_operator_name(text: str) -> OperatorName:
    return run_parser(text, _Parser.operator_name)


def parse_type(text: str) -> Type:
    def rule(p: _Parser) -> Type:
        typ, annotation = p.type()
        if annotation is not None:
            raise SchemaParseError("unexpected alias annotation in a bare type", 0)
        return typ

    return run_parser(text, rule)


def parse_annotation(text: str) -> Annotation:
    """``a! -> a|b`` (the text between the parentheses)."""
    try:
        return run_parser(f"({text})", _Parser.annotation)
    except SchemaParseError as e:
        e.offset = max(0, e.offset - 1)
        raise
