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


# --------------------------------------------------------------------------
# whole files: a mutated YAML file is either accepted or reported as author
# errors (CodegenError); nothing else may escape (no KeyError, TypeError ...)

NF_TEXT = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  structured_delegate: add.out
  variants: function, method
  tags: [core, pointwise]

- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  precomputed:
  - other -> int x, int y
  ufunc_inner_loop:
    Generic: add (AllAndComplex, BFloat16)
  dispatch:
    SparseCPU, SparseCUDA: add_out_sparse
  cpp_no_default_args: ["alpha"]
  device_check: NoCheck

- func: _bn(Tensor input, Tensor(a!) running_mean) -> (Tensor, Tensor)
  dispatch:
    CPU: bn_cpu
  autogen: _bn_functional, _bn.out
"""
D_TEXT = """\
- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  self: handle_r_to_c(self.scalar_type(), grad)
  other: handle_r_to_c(other.scalar_type(), maybe_multiply(grad, alpha.conj()))
  result: self_t + maybe_multiply(other_t, alpha)

- name: _bn(Tensor input, Tensor(a!) running_mean) -> (Tensor, Tensor)
  output_differentiability: [True, False]
  dispatch:
    Default:
      input: grads[0] * running_mean.sym_sizes()[0] + grads[1]
      running_mean: non_differentiable
    AutogradNestedTensor:
      input: grads[1]
"""
TAGS_TEXT = "- tag: core\n  desc: c\n- tag: pointwise\n  desc: p\n"
YAML_ALPHABET = " \n-:[]{},'\"#!&*|>%@`abcself()->Tensor0123._"


def _mutate(text: str, edits) -> str:
    for pos, dele, ins in edits:
        pos = pos % (len(text) + 1)
        text = text[:pos] + ins + text[pos + dele :]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    st.booleans(),
    st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 6), st.text(alphabet=YAML_ALPHABET, max_size=4)), min_size=1, max_size=3),
)
def test_mutated_yaml_files(tmp_path_factory, mutate_derivatives, edits):
    from codegen.diagnostics import CodegenError
    from codegen.model import Inputs, load_model

    d = tmp_path_factory.mktemp("fuzz")
    nf, der = (NF_TEXT, _mutate(D_TEXT, edits)) if mutate_derivatives else (_mutate(NF_TEXT, edits), D_TEXT)
    (d / "nf.yaml").write_text(nf)
    (d / "d.yaml").write_text(der)
    (d / "tags.yaml").write_text(TAGS_TEXT)
    try:
        load_model(Inputs(str(d / "nf.yaml"), str(d / "d.yaml"), str(d / "tags.yaml")))
    except CodegenError as e:
        assert e.diagnostics
        for diag in e.diagnostics:
            assert diag.line >= 1 and diag.col >= 1 and diag.message


def test_unmutated_fuzz_inputs_are_valid(tmp_path):
    from codegen.model import Inputs, load_model

    (tmp_path / "nf.yaml").write_text(NF_TEXT)
    (tmp_path / "d.yaml").write_text(D_TEXT)
    (tmp_path / "tags.yaml").write_text(TAGS_TEXT)
    m = load_model(Inputs(str(tmp_path / "nf.yaml"), str(tmp_path / "d.yaml"), str(tmp_path / "tags.yaml")))
    assert len(m.derivatives) == 2
