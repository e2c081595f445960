"""The derivative formula language: the C++ expression subset derivatives.yaml uses.

    expr        ::= conditional
    conditional ::= binary ["?" expr ":" conditional]
    binary      ::= unary (BINOP unary)*            (C precedence, left associative)
    unary       ::= ("-" | "+" | "!" | "~" | "*" | "&") unary | postfix
    postfix     ::= primary ( "(" [args] ")" | "[" expr "]" | "." IDENT | "->" IDENT )*
    primary     ::= NAME [template-args] | NUMBER | STRING | CHAR
                  | "(" expr ")" | "{" [args] "}" | lambda
    NAME        ::= ["::"] IDENT ("::" IDENT)*
    template-args ::= "<" type ("," type)* ">"     (only where a call or "::" follows)
    lambda      ::= "[" captures "]" "(" params ")" "{" "return" expr ";" "}"

Comments (``/* ... */`` and ``// ...``) are skipped.  The AST is a set of
frozen dataclasses; :func:`to_source` prints it back (keeping the author's
parentheses), and parsing the printed text gives the same tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Iterator, NamedTuple, Union

from .diagnostics import TextParseError


class FormulaParseError(TextParseError):
    """A malformed derivative formula: ``message`` about the character at ``offset``."""


# --------------------------------------------------------------------------
# tokens

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+|/\*.*?\*/|//[^\n]*)
  | (?P<num>(?:\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|0[xX][0-9a-fA-F]+|\d+)[fFlLuU]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<char>'(?:[^'\\\n]|\\.)')
  | (?P<op>::|->|&&|\|\||==|!=|<=|>=|<<|[-+*/%<>!~&|^?:.,;()\[\]{}=])
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)


class Token(NamedTuple):
    kind: str  # ident, num, str, char, op, eof
    text: str
    offset: int


def tokenize(text: str) -> list[Token]:
    toks: list[Token] = []
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        if kind == "ws":
            if m.group().startswith("/*") and not m.group().endswith("*/"):
                raise FormulaParseError("unterminated comment", m.start())
            continue
        if kind == "bad":
            ch = text[m.start()]
            if ch == '"':
                raise FormulaParseError("unterminated string literal", m.start())
            if ch == "/" and text.startswith("/*", m.start()):
                raise FormulaParseError("unterminated comment", m.start())
            raise FormulaParseError(f"unexpected character {ch!r}", m.start())
        toks.append(Token(kind, m.group(), m.start()))  # type: ignore[arg-type]
    toks.append(Token("eof", "", len(text)))
    return toks


# --------------------------------------------------------------------------
# AST


@dataclass(frozen=True)
class Node:
    def children(self) -> Iterator["Expr"]:
        return iter(())


@dataclass(frozen=True)
class Name(Node):
    """``grad``, ``at::sum``, ``::std::nullopt``, ``std::get<0>``."""

    _children: ClassVar[tuple[str, ...]] = ()
    _seq_children: ClassVar[tuple[str, ...]] = ()

    parts: tuple[str, ...]
    template_args: tuple[str, ...] | None = None
    global_scope: bool = False
    offset: int = field(default=0, compare=False)

    @property
    def simple(self) -> str | None:
        """The name when it is a single unqualified identifier, else None."""
        if len(self.parts) == 1 and not self.global_scope and self.template_args is None:
            return self.parts[0]
        return None


@dataclass(frozen=True)
class Number(Node):
    _children: ClassVar[tuple[str, ...]] = ()
    _seq_children: ClassVar[tuple[str, ...]] = ()

    text: str
    offset: int = field(default=0, compare=False)


@dataclass(frozen=True)
class String(Node):
    _children: ClassVar[tuple[str, ...]] = ()
    _seq_children: ClassVar[tuple[str, ...]] = ()

    text: str  # with its quotes, as written
    offset: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Paren(Node):
    _children: ClassVar[tuple[str, ...]] = ('expr',)
    _seq_children: ClassVar[tuple[str, ...]] = ()

    expr: "Expr"
    offset: int = field(default=0, compare=False)

    def children(self) -> Iterator["Expr"]:
        yield self.expr


@dataclass(frozen=True)
class Call(Node):
    _children: ClassVar[tuple[str, ...]] = ('func',)
    _seq_children: ClassVar[tuple[str, ...]] = ('args',)

    func: "Expr"
    args: tuple["Expr", ...]
    offset: int = field(default=0, compare=False)

    def children(self) -> Iterator["Expr"]:
        yield self.func
        yield from self.args


@dataclass(frozen=True)
class Member(Node):
    _children: ClassVar[tuple[str, ...]] = ('obj',)
    _seq_children: ClassVar[tuple[str, ...]] = ()

    obj: "Expr"
    name: str
    arrow: bool = False
    offset: int = field(default=0, compare=False)

    def children(self) -> Iterator["Expr"]:
        yield self.obj


@dataclass(frozen=True)
class Index(Node):
    _children: ClassVar[tuple[str, ...]] = ('obj', 'index')
    _seq_children: ClassVar[tuple[str, ...]] = ()

    obj: "Expr"
    index: "Expr"
    offset: int = field(default=0, compare=False)

    def children(self) -> Iterator["Expr"]:
        yield self.obj
        yield self.index


@dataclass(frozen=True)
class Unary(Node):
    _children: ClassVar[tuple[str, ...]] = ('operand',)
    _seq_children: ClassVar[tuple[str, ...]] = ()

    op: str
    operand: "Expr"
    offset: int = field(default=0, compare=False)

    def children(self) -> Iterator["Expr"]:
        yield self.operand


@dataclass(frozen=True)
class Binary(Node):
    _children: ClassVar[tuple[str, ...]] = ('left', 'right')
    _seq_children: ClassVar[tuple[str, ...]] = ()

    op: str
    left: "Expr"
    right: "Expr"
    offset: int = field(default=0, compare=False)

    def children(self) -> Iterator["Expr"]:
        yield self.left
        yield self.right


@dataclass(frozen=True)
class Conditional(Node):
    _children: ClassVar[tuple[str, ...]] = ('cond', 'then', 'else_')
    _seq_children: ClassVar[tuple[str, ...]] = ()

    cond: "Expr"
    then: "Expr"
    else_: "Expr"
    offset: int = field(default=0, compare=False)

    def children(self) -> Iterator["Expr"]:
        yield self.cond
        yield self.then
        yield self.else_


@dataclass(frozen=True)
class BraceList(Node):
    _children: ClassVar[tuple[str, ...]] = ()
    _seq_children: ClassVar[tuple[str, ...]] = ('items',)

    items: tuple["Expr", ...]
    offset: int = field(default=0, compare=False)

    def children(self) -> Iterator["Expr"]:
        yield from self.items


@dataclass(frozen=True)
class Lambda(Node):
    """``[](c10::SymInt i){return -i;}``: captures and params kept as text."""

    _children: ClassVar[tuple[str, ...]] = ('body',)
    _seq_children: ClassVar[tuple[str, ...]] = ()

    captures: str
    params: tuple[str, ...]
    body: "Expr"
    offset: int = field(default=0, compare=False)

    def children(self) -> Iterator["Expr"]:
        yield self.body


Expr = Union[Name, Number, String, Paren, Call, Member, Index, Unary, Binary, Conditional, BraceList, Lambda]

# binary operators and their C precedence (higher binds tighter)
BINARY_PRECEDENCE = {
    "*": 13, "/": 13, "%": 13,
    "+": 12, "-": 12,
    "<<": 11, ">>": 11,
    "<": 10, "<=": 10, ">": 10, ">=": 10,
    "==": 9, "!=": 9,
    "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4,
}  # fmt: skip
_COND_PREC = 3
_UNARY_PREC = 14
_POSTFIX_PREC = 15
_UNARY_OPS = {"-", "+", "!", "~", "*", "&"}


def walk(e: Expr) -> Iterator[Expr]:
    """Every node of ``e``, parents before children."""
    stack = [e]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(n.children())))


# --------------------------------------------------------------------------
# parser


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0

    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def at(self, text: str) -> bool:
        t = self.toks[self.i]
        return t.kind == "op" and t.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def fail(self, expected: str, tok: Token | None = None) -> FormulaParseError:
        tok = tok or self.peek()
        found = "end of formula" if tok.kind == "eof" else repr(tok.text)
        return FormulaParseError(f"expected {expected}, found {found}", tok.offset)

    def expect(self, text: str, expected: str | None = None) -> Token:
        if not self.at(text):
            raise self.fail(expected or f"'{text}'")
        return self.next()

    def parse(self) -> Expr:
        e = self.expr()
        if self.peek().kind != "eof":
            raise self.fail("an operator or end of formula")
        return e

    def expr(self) -> Expr:
        return self.conditional()

    def conditional(self) -> Expr:
        cond = self.binary(4)
        if self.at("?"):
            q = self.next()
            then = self.expr()
            self.expect(":", "':' of the conditional expression")
            else_ = self.conditional()
            return Conditional(cond, then, else_, q.offset)
        return cond

    def binary_op(self) -> str | None:
        t = self.peek()
        if t.kind != "op":
            return None
        if t.text == ">" and self.peek(1).text == ">" and self.peek(1).offset == t.offset + 1:
            return ">>"
        return t.text if t.text in BINARY_PRECEDENCE else None

    def binary(self, min_prec: int) -> Expr:
        left = self.unary()
        while True:
            op = self.binary_op()
            if op is None or BINARY_PRECEDENCE[op] < min_prec:
                return left
            t = self.next()
            if op == ">>":
                self.next()
            right = self.binary(BINARY_PRECEDENCE[op] + 1)
            left = Binary(op, left, right, t.offset)

    def unary(self) -> Expr:
        t = self.peek()
        if t.kind == "op" and t.text in _UNARY_OPS:
            self.next()
            return Unary(t.text, self.unary(), t.offset)
        return self.postfix(self.primary())

    def postfix(self, e: Expr) -> Expr:
        while True:
            t = self.peek()
            if t.kind != "op":
                return e
            if t.text == "(":
                self.next()
                e = Call(e, self.expr_list(")"), e.offset)
            elif t.text == "[":
                self.next()
                idx = self.expr()
                self.expect("]", "']' to close the index")
                e = Index(e, idx, e.offset)
            elif t.text in (".", "->"):
                self.next()
                n = self.peek()
                if n.kind != "ident":
                    raise self.fail(f"a member name after '{t.text}'")
                self.next()
                e = Member(e, n.text, t.text == "->", e.offset)
            else:
                return e

    def expr_list(self, close: str) -> tuple[Expr, ...]:
        items: list[Expr] = []
        if self.accept(close):
            return ()
        while True:
            items.append(self.expr())
            if self.accept(close):
                return tuple(items)
            if not self.accept(","):
                raise self.fail(f"',' or '{close}'")

    def primary(self) -> Expr:
        t = self.peek()
        if t.kind == "num":
            self.next()
            return Number(t.text, t.offset)
        if t.kind in ("str", "char"):
            self.next()
            return String(t.text, t.offset)
        if t.kind == "ident" or (t.kind == "op" and t.text == "::"):
            return self.name()
        if t.kind == "op":
            if t.text == "(":
                self.next()
                e = self.expr()
                self.expect(")", "')' to close the parenthesis")
                return Paren(e, t.offset)
            if t.text == "{":
                self.next()
                return BraceList(self.expr_list("}"), t.offset)
            if t.text == "[":
                return self.lambda_()
        raise self.fail("an expression", t)

    def name(self) -> Name:
        start = self.peek()
        global_scope = self.accept("::")
        parts = []
        while True:
            t = self.peek()
            if t.kind != "ident":
                raise self.fail("a name after '::'")
            self.next()
            parts.append(t.text)
            template = None
            if self.at("<"):
                template = self.try_template_args()
            if template is not None and not self.at("::"):
                return Name(tuple(parts), template, global_scope, start.offset)
            if template is not None:  # std::vector<T>::foo: keep it in the name
                parts[-1] += "<" + ", ".join(template) + ">"
            if not self.accept("::"):
                return Name(tuple(parts), None, global_scope, start.offset)

    def try_template_args(self) -> tuple[str, ...] | None:
        """Parse ``<T, U>`` when it is a template argument list, else leave ``<`` alone.

        It is one when the tokens up to the matching ``>`` are names, numbers,
        ``::``, ``,``, ``*``, ``&`` or nested brackets, and the next token is
        ``(``, ``{`` or ``::``.
        """
        j = self.i + 1
        depth = 1
        args: list[str] = []
        cur: list[Token] = []
        while True:
            t = self.toks[j]
            if t.kind == "eof":
                return None
            if t.kind == "op" and t.text == "<":
                depth += 1
            elif t.kind == "op" and t.text == ">":
                depth -= 1
                if depth == 0:
                    break
            elif t.kind == "op" and t.text == "," and depth == 1:
                args.append(_join_type(cur))
                cur = []
                j += 1
                continue
            elif not (t.kind in ("ident", "num") or (t.kind == "op" and t.text in ("::", ",", "*", "&"))):
                return None
            cur.append(t)
            j += 1
        after = self.toks[j + 1]
        if not (after.kind == "op" and after.text in ("(", "{", "::")):
            return None
        if cur:
            args.append(_join_type(cur))
        if not args or any(not a for a in args):
            return None
        self.i = j + 1
        return tuple(args)

    def lambda_(self) -> Lambda:
        start = self.next()  # [
        caps = []
        while not self.at("]"):
            t = self.next()
            if t.kind == "eof":
                raise self.fail("']' to close the lambda captures")
            caps.append(t.text)
        self.next()
        self.expect("(", "'(' before the lambda parameters")
        params: list[str] = []
        cur: list[Token] = []
        while not self.at(")"):
            t = self.next()
            if t.kind == "eof":
                raise self.fail("')' to close the lambda parameters")
            if t.kind == "op" and t.text == ",":
                params.append(_join_type(cur))
                cur = []
            else:
                cur.append(t)
        if cur:
            params.append(_join_type(cur))
        self.next()
        self.expect("{", "'{' to open the lambda body")
        ret = self.peek()
        if not (ret.kind == "ident" and ret.text == "return"):
            raise self.fail("'return' (a lambda body is one return statement)")
        self.next()
        body = self.expr()
        self.expect(";", "';' after the returned expression")
        self.expect("}", "'}' to close the lambda body")
        return Lambda("".join(caps), tuple(params), body, start.offset)


def _join_type(toks: list[Token]) -> str:
    """Join the tokens of a C++ type or parameter with canonical spacing."""
    out = ""
    prev = None
    for t in toks:
        glue = prev is not None and (prev.kind in ("ident", "num") and t.kind in ("ident", "num"))
        out += (" " if glue else "") + t.text
        prev = t
    return out.replace(",", ", ")


def parse_formula(text: str) -> Expr:
    """Parse one formula; raises :class:`FormulaParseError`."""
    return _Parser(text).parse()


# --------------------------------------------------------------------------
# printer


def _prec(e: Expr) -> int:
    if isinstance(e, Binary):
        return BINARY_PRECEDENCE[e.op]
    if isinstance(e, Conditional):
        return _COND_PREC
    if isinstance(e, Unary):
        return _UNARY_PREC
    return _POSTFIX_PREC + 1


def to_source(e: Expr) -> str:
    """Print ``e`` as C++ with canonical spacing; parentheses are added where
    precedence needs them (parsed trees keep their own :class:`Paren` nodes)."""

    def sub(x: Expr, min_prec: int) -> str:
        s = to_source(x)
        return f"({s})" if _prec(x) < min_prec else s

    if isinstance(e, Name):
        s = ("::" if e.global_scope else "") + "::".join(e.parts)
        if e.template_args is not None:
            s += "<" + ", ".join(e.template_args) + ">"
        return s
    if isinstance(e, (Number, String)):
        return e.text
    if isinstance(e, Paren):
        return f"({to_source(e.expr)})"
    if isinstance(e, Call):
        return f"{sub(e.func, _POSTFIX_PREC)}({', '.join(to_source(a) for a in e.args)})"
    if isinstance(e, Member):
        obj = sub(e.obj, _POSTFIX_PREC)
        # "0 .f" must not print as "0.f", which reads back as one number
        sep = " " if isinstance(e.obj, Number) and not e.arrow else ""
        return f"{obj}{sep}{'->' if e.arrow else '.'}{e.name}"
    if isinstance(e, Index):
        return f"{sub(e.obj, _POSTFIX_PREC)}[{to_source(e.index)}]"
    if isinstance(e, Unary):
        inner = sub(e.operand, _UNARY_PREC)
        # keep "- -x" and "& &x" apart so they do not re-lex as "--" or "&&"
        sep = " " if inner[:1] == e.op or (e.op == "-" and inner[:1] == "-") else ""
        return f"{e.op}{sep}{inner}"
    if isinstance(e, Binary):
        p = BINARY_PRECEDENCE[e.op]
        return f"{sub(e.left, p)} {e.op} {sub(e.right, p + 1)}"
    if isinstance(e, Conditional):
        return f"{sub(e.cond, 4)} ? {to_source(e.then)} : {sub(e.else_, _COND_PREC)}"
    if isinstance(e, BraceList):
        return "{" + ", ".join(to_source(i) for i in e.items) + "}"
    if isinstance(e, Lambda):
        return f"[{e.captures}]({', '.join(e.params)}) {{ return {to_source(e.body)}; }}"
    raise TypeError(f"not a formula node: {e!r}")  # pragma: no cover


def map_names(e: Expr, fn: Callable[[Name], Expr]) -> Expr:
    """A copy of ``e`` with every :class:`Name` replaced by ``fn(name)``."""
    import dataclasses

    if isinstance(e, Name):
        return fn(e)
    changes = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, Node):
            changes[f.name] = map_names(v, fn)
        elif isinstance(v, tuple) and v and isinstance(v[0], Node):
            changes[f.name] = tuple(map_names(x, fn) for x in v)
    return dataclasses.replace(e, **changes) if changes else e
