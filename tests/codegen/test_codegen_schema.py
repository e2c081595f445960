"""Schema tokenizer, parser, printer and model."""

from __future__ import annotations

import pytest

from codegen.schema import (
    Annotation,
    BaseTy,
    BaseType,
    ListType,
    OptionalType,
    SchemaKind,
    SchemaParseError,
    parse_annotation,
    parse_schema,
    parse_type,
    tokenize,
)


def test_tokenizer_kinds_and_offsets():
    toks = tokenize("add.Tensor(Tensor(a!) self, int[2] k=-1) -> Tensor")
    assert [t[1] for t in toks[:6]] == ["add", ".", "Tensor", "(", "Tensor", "("]
    assert toks[0] == ("ident", "add", 0)
    assert ("num", "-1", 37) in toks
    assert ("arrow", "->", 41) in toks
    assert toks[-1][0] == "eof"


def test_tokenizer_strings_and_errors():
    toks = tokenize("""f(str a="x\\"y", str b='z') -> ()""")
    assert ("str", '"x\\"y"', 8) in toks
    with pytest.raises(SchemaParseError) as e:
        tokenize('f(str a="abc) -> ()')
    assert e.value.message == "unterminated string literal" and e.value.offset == 8
    with pytest.raises(SchemaParseError) as e:
        tokenize("f(int a) -> int$")
    assert e.value.message == "unexpected character '$'" and e.value.offset == 15


@pytest.mark.parametrize(
    "s",
    [
        "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
        "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
        "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
        "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
        "__and__.Scalar(Tensor self, Scalar other) -> Tensor",
        "rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor",
        "fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor",
        "f(Tensor? a, Tensor?[] b, int[2]? c=None, float eps=1e-05, str s='\"\\'\\\\') -> Tensor",
        "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
        "f(Tensor(a! -> a|b) self) -> Tensor(a|b)",
        "cudnn_grid_sampler(Tensor self, Tensor grid) -> Tensor output",
        "aten::abs(Tensor self) -> Tensor",
    ],
)
def test_round_trip(s):
    assert str(parse_schema(s)) == s


def test_model_structure():
    f = parse_schema("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    a = f.arguments
    assert a.self_arg.name == "self"
    assert [x.name for x in a.post_self_positional] == ["other"]
    assert [x.name for x in a.kwarg_only] == ["alpha"]
    assert [x.name for x in a.out] == ["out"]
    assert a.out[0].annotation == Annotation(("a",), True)
    assert a.kwarg_only[0].default.kind == "int" and a.kwarg_only[0].default.value == 1
    assert f.kind() is SchemaKind.out
    assert f.name.name.base == "add" and f.name.overload_name == "out"
    assert f.returns[0].annotation.is_write


def test_pre_self_positional():
    f = parse_schema("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor")
    assert [a.name for a in f.arguments.pre_self_positional] == ["condition"]
    assert f.arguments.self_arg.name == "self"


def test_names_inplace_and_dunder():
    f = parse_schema("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    n = f.name.name
    assert (n.base, n.inplace, n.dunder_method) == ("and", True, True)
    assert f.kind() is SchemaKind.inplace
    g = parse_schema("relu_(Tensor(a!) self) -> Tensor(a!)")
    assert (g.name.name.base, g.name.name.inplace) == ("relu", True)
    assert str(g.name) == "relu_"


def test_kinds():
    assert parse_schema("f(Tensor self) -> Tensor").kind() is SchemaKind.functional
    assert parse_schema("f(Tensor self, Tensor(a!) buf) -> Tensor").kind() is SchemaKind.mutable
    assert parse_schema("f.out(Tensor self, *, Tensor(a!) _scratch_x, Tensor(b!) out) -> Tensor(b!)").kind() is SchemaKind.scratch


def test_types():
    assert parse_type("int[2]?") == OptionalType(ListType(BaseType(BaseTy.int), 2))
    assert parse_type("Tensor?[]") == ListType(OptionalType(BaseType(BaseTy.Tensor)))
    assert str(parse_type("SymInt[1]?")) == "SymInt[1]?"
    assert parse_type("Tensor?[]").is_tensor_like()


def test_annotations():
    assert parse_annotation("a! -> a|b") == Annotation(("a",), True, ("a", "b"))
    assert str(parse_annotation("a -> *")) == "a -> *"
    with pytest.raises(SchemaParseError, match="exactly one alias set"):
        parse_annotation("a|b!")


def test_signature_groups_variants():
    fs = [
        parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"),
        parse_schema("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"),
        parse_schema("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"),
    ]
    assert len({f.signature() for f in fs}) == 1
    assert str(fs[0].signature()) == "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert fs[0].signature() != parse_schema("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor").signature()


def test_signature_drops_tensor_options_and_returns_mutated():
    f = parse_schema("ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor")
    g = parse_schema("ones.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)")
    assert f.signature() == g.signature()
    m = parse_schema("_bn(Tensor input, Tensor(a!) running_mean) -> Tensor")
    assert str(m.signature()) == "_bn(Tensor input, Tensor running_mean) -> (Tensor, Tensor)"


@pytest.mark.parametrize(
    "text, message, offset",
    [
        ("add(Tensor self", "expected ',' or ')' in the argument list, found end of schema", 15),
        ("add(Tensor self) Tensor", "expected '->' before the returns, found 'Tensor'", 17),
        ("add(Tenser self) -> Tensor", "unknown type 'Tenser'", 4),
        ("add(Tensor self, Tensor self) -> Tensor", "duplicate argument name 'self'", 24),
        ("add(Tensor self, *, *, int a) -> Tensor", "'*' may appear only once in an argument list", 20),
        ("add(Tensor self, *) -> Tensor", "'*' must be followed by keyword-only arguments", 17),
        ("add(Tensor(a|b!) self) -> Tensor", "a written (!) alias annotation must name exactly one alias set", 11),
        ("add(Tensor() self) -> Tensor", "expected an alias set name (like 'a') in the annotation, found ')'", 11),
        ("add(int[x] a) -> Tensor", "expected ']' to close the list type, found 'x'", 8),
        ("add(int a=None) -> Tensor", "argument 'a' of non-optional type 'int' cannot default to None", 10),
        ("add(int a=) -> Tensor", "expected a default value, found ')'", 10),
        ("add.(Tensor a) -> Tensor", "expected an overload name after '.', found '('", 4),
        ("add(Tensor a) -> Tensor b junk", "expected end of schema, found 'junk'", 26),
        ("add(*, Tensor(a!) out, int b) -> Tensor", "keyword-only argument 'b' follows the out arguments", 27),
        ("add(int[1.5] a) -> Tensor", "list size must be a non-negative integer, not '1.5'", 8),
    ],
)
def test_parse_errors(text, message, offset):
    with pytest.raises(SchemaParseError) as e:
        parse_schema(text)
    assert e.value.message == message
    assert e.value.offset == offset


def test_unknown_type_hint():
    with pytest.raises(SchemaParseError) as e:
        parse_schema("f(Tensr a) -> Tensor")
    assert e.value.hint == "did you mean 'Tensor'?"


def test_frozen_and_hashable():
    f = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert hash(f) == hash(parse_schema(str(f)))
    with pytest.raises(Exception):
        f.name = None  # type: ignore[misc]
