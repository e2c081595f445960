"""The schema and formula parsers, fuzzed: only their own errors may escape."""

from __future__ import annotations

import yaml
from cgtest_util import CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.formula import FormulaParseError, parse_formula, to_source
from codegen.schema import SchemaParseError, parse_schema

SAMPLES = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor",
    "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
]
if (CORPUS / "native_functions.yaml").is_file():
    SAMPLES += [e["func"] for e in yaml.load((CORPUS / "native_functions.yaml").read_text(), Loader=yaml.CSafeLoader)[::7]]

ALPHABET = "abcTensorint[]()?!*|,.=->:'\" 0123456789_aS"
FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(text: str) -> None:
    try:
        s = parse_schema(text)
    except SchemaParseError as e:
        assert 0 <= e.offset <= len(text)
        return
    # whatever parses prints to a canonical text that parses to the same schema
    assert parse_schema(str(s)) == s


@FAST
@given(st.text(alphabet=ALPHABET, max_size=60))
def test_random_text(text):
    check(text)


@FAST
@given(st.text(max_size=40))
def test_random_unicode(text):
    check(text)


@FAST
@given(
    st.sampled_from(SAMPLES),
    st.lists(st.tuples(st.integers(0, 300), st.integers(0, 3), st.text(alphabet=ALPHABET, max_size=3)), min_size=1, max_size=4),
)
def test_mutated_real_schemas(schema, edits):
    s = schema
    for pos, dele, ins in edits:
        pos = pos % (len(s) + 1)
        s = s[:pos] + ins + s[pos + dele :]
    check(s)


FORMULA_ALPHABET = "abgrad_self.()[]{},+-*/<>=!?:&|\"' 0123456789std::"


@FAST
@given(st.text(alphabet=FORMULA_ALPHABET, max_size=50))
def test_formula_random_text(text):
    try:
        e = parse_formula(text)
    except FormulaParseError as err:
        assert 0 <= err.offset <= len(text)
        return
    assert parse_formula(to_source(e)) == e
