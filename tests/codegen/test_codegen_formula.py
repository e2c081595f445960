"""The derivative formula language: tokenizer, parser, printer."""

from __future__ import annotations

import pytest

from codegen.formula import (
    Binary,
    BraceList,
    Call,
    Conditional,
    FormulaParseError,
    Index,
    Lambda,
    Member,
    Name,
    Number,
    Paren,
    String,
    Unary,
    parse_formula,
    to_source,
    tokenize,
)


def test_tokens_skip_comments():
    toks = tokenize('f(x, /*dim=*/ 0) // tail')
    assert [t.text for t in toks] == ["f", "(", "x", ",", "0", ")", ""]


def test_precedence():
    e = parse_formula("a + b * c - d")
    assert e == Binary("-", Binary("+", Name(("a",)), Binary("*", Name(("b",)), Name(("c",)))), Name(("d",)))
    e = parse_formula("a || b && c == d")
    assert e == Binary("||", Name(("a",)), Binary("&&", Name(("b",)), Binary("==", Name(("c",)), Name(("d",)))))


def test_conditional_is_right_associative():
    e = parse_formula("a ? b : c ? d : e")
    assert isinstance(e, Conditional) and isinstance(e.else_, Conditional)


def test_postfix_chain():
    e = parse_formula("grad.expand_symint(self.sym_sizes())[0]->x")
    assert isinstance(e, Member) and e.arrow and e.name == "x"
    assert isinstance(e.obj, Index)
    call = e.obj.obj
    assert isinstance(call, Call) and isinstance(call.func, Member) and call.func.name == "expand_symint"


def test_names_templates_and_literals():
    e = parse_formula('std::get<0>(at::foo(grads[1], "trunc", 1e-5, {dim}, ::std::nullopt))')
    assert e.func == Name(("std", "get"), ("0",))
    inner = e.args[0]
    assert inner.func == Name(("at", "foo"))
    assert inner.args[0] == Index(Name(("grads",)), Number("1"))
    assert inner.args[1] == String('"trunc"')
    assert inner.args[3] == BraceList((Name(("dim",)),))
    assert inner.args[4] == Name(("std", "nullopt"), None, True)
    assert to_source(parse_formula("std::tuple<Tensor, Tensor>()")) == "std::tuple<Tensor, Tensor>()"


def test_less_than_is_not_a_template():
    e = parse_formula("a < b ? c : d > e")
    assert isinstance(e, Conditional) and e.cond == Binary("<", Name(("a",)), Name(("b",)))


def test_unary_and_lambda():
    e = parse_formula("fmap(x, [](c10::SymInt i){return -i;})")
    lam = e.args[1]
    assert isinstance(lam, Lambda) and lam.params == ("c10::SymInt i",) and lam.body == Unary("-", Name(("i",)))
    assert to_source(e) == "fmap(x, [](c10::SymInt i) { return -i; })"
    assert parse_formula("!a.defined()") == Unary("!", Call(Member(Name(("a",)), "defined"), ()))
    assert parse_formula("*dtype") == Unary("*", Name(("dtype",)))


def test_printer_keeps_parentheses_and_is_stable():
    src = "(self == 0.) & (other <= -1.)"
    e = parse_formula(src)
    assert isinstance(e.left, Paren)
    assert to_source(e) == src
    assert parse_formula(to_source(e)) == e


def test_printer_keeps_numbers_apart_from_members():
    e = parse_formula("0 .f")
    assert to_source(e) == "0 .f" and parse_formula(to_source(e)) == e


def test_printer_adds_needed_parentheses():
    e = Binary("*", Binary("+", Name(("a",)), Name(("b",))), Name(("c",)))
    assert to_source(e) == "(a + b) * c"
    assert to_source(Unary("-", Unary("-", Name(("x",))))) == "- -x"


@pytest.mark.parametrize(
    "text, message, offset",
    [
        ("f(a, b", "expected ',' or ')', found end of formula", 6),
        ("a +", "expected an expression, found end of formula", 3),
        ("a ? b", "expected ':' of the conditional expression, found end of formula", 5),
        ("grads[0", "expected ']' to close the index, found end of formula", 7),
        ('f("abc)', "unterminated string literal", 2),
        ("a $ b", "unexpected character '$'", 2),
        ("a b", "expected an operator or end of formula, found 'b'", 2),
        ("x./*c*/", "expected a member name after '.', found end of formula", 7),
    ],
)
def test_errors(text, message, offset):
    with pytest.raises(FormulaParseError) as e:
        parse_formula(text)
    assert (e.value.message, e.value.offset) == (message, offset)
