"""Saved-variable analysis on formula ASTs, with PyTorch's naming."""

from __future__ import annotations

import pytest
from cgtest_util import needs_corpus

from codegen.derivatives import SavedAnalysis, derivative_inputs, derivative_outputs
from codegen.formula import parse_formula, to_source
from codegen.model import Inputs, load_model
from codegen.schema import parse_schema


def saved(schema: str, formula: str) -> list[str]:
    f = parse_schema(schema)
    ins = SavedAnalysis(derivative_inputs(f))
    e = ins.run(parse_formula(formula))
    outs = SavedAnalysis(derivative_outputs(f))
    outs.run(e)
    return [v.name for v in ins.saved(list(derivative_inputs(f)))] + [v.name for v in outs.saved(list(derivative_outputs(f)))]


MUL = "mul.Tensor(Tensor self, Tensor other) -> Tensor"


def test_metadata_instead_of_tensor():
    assert saved(MUL, "mul_tensor_backward(grad, other, self.scalar_type())") == ["self_scalar_type", "other"]
    assert saved("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", "grad.expand_symint(self.sym_sizes())") == ["self_sym_sizes"]
    assert saved(MUL, "self.sym_size(-1) + self.sym_size(dim)") == ["self_sym_argsize_minus_1", "self_sym_argsize_dim"]
    assert saved(MUL, "f(self.numel(), self.dim(), self.options(), self.layout(), self.is_conj())") == [
        "self_options", "self_numel", "self_dim", "self_layout", "self_conjugate",
    ]  # fmt: skip
    assert saved(MUL, "zeros_like(self) + TensorGeometry(other)") == ["self_info", "other_geometry"]


def test_tensor_saved_when_also_used_whole():
    assert saved(MUL, "grad * self.sym_sizes()[0] + self") == ["self_sym_sizes", "self"]


def test_outputs_and_scalars():
    assert saved("relu(Tensor self) -> Tensor", "threshold_backward(grad, result, 0)") == ["result"]
    assert saved("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", "pow_backward(grad, self, exponent)") == ["self", "exponent"]
    assert saved("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                 "value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)") == [
        "self_sym_sizes", "dim", "keepdim", "indices",
    ]  # fmt: skip


def test_strings_members_and_callees_are_not_uses():
    # a regex would see "values" and "real" here; the AST knows they are a member and a callee
    assert saved("f(Tensor values, Tensor real) -> Tensor", 'at::real(grad.sparse_mask(x).values()) + not_implemented("values")') == []


def test_tensor_options_become_options():
    f = parse_schema("ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor")
    assert list(derivative_inputs(f)) == ["self", "options", "memory_format"]


def test_rejected_metadata_accessors():
    from codegen.derivatives import SavedAnalysis

    def problems(formula: str) -> list[str]:
        a = SavedAnalysis({"self": "Tensor"})
        a.run(parse_formula(formula))
        return [m for _, m, _ in a.problems]

    assert problems("grad.sizes()") == [".sizes() is not supported in derivative formulas"]
    assert problems("self.size(-1) + self.strides()[0]") == [
        ".size() is not supported in derivative formulas",
        ".strides() is not supported in derivative formulas",
    ]
    assert problems("self.size(dim) + self.sym_sizes()[0]") == []


def test_rewritten_formula():
    f = parse_schema(MUL)
    a = SavedAnalysis(derivative_inputs(f))
    e = a.run(parse_formula("zeros_like(self) * other.sym_sizes()[0]"))
    assert to_source(e) == "self_info.zeros() * other_sym_sizes[0]"


def test_yaml_project_entries(tmp_path):
    from cgtest_util import REPO

    m = load_model(Inputs(str(REPO / "yaml/native_functions.yaml"), str(REPO / "yaml/derivatives.yaml"), str(REPO / "yaml/tags.yaml")))
    got = {e.text.split("(")[0]: list(e.default.saved_names) for e in m.derivatives}
    # other operators may be added to yaml/; these five are checked
    assert {k: got[k] for k in ("add.Tensor", "mul.Tensor", "relu", "sum", "sum.dim_IntList")} == {
        "add.Tensor": ["self_scalar_type", "other_scalar_type", "alpha"],
        "mul.Tensor": ["self_scalar_type", "other", "self", "other_scalar_type"],
        "relu": ["result"],
        "sum": ["self_sym_sizes"],
        "sum.dim_IntList": ["self_sym_sizes", "dim", "keepdim"],
    }
    ops = {e.text.split("(")[0]: e.default.op for e in m.derivatives}
    assert {k: ops[k] for k in ("add.Tensor", "mul.Tensor", "relu", "sum", "sum.dim_IntList")} == {
        "add.Tensor": "AddBackward0", "mul.Tensor": "MulBackward0", "relu": "ReluBackward0",
        "sum": "SumBackward0", "sum.dim_IntList": "SumBackward1",
    }  # fmt: skip


@needs_corpus
@pytest.mark.parametrize(
    "schema, expected",
    [
        ("mul.Tensor(Tensor self, Tensor other) -> Tensor", {"self_scalar_type", "other", "other_scalar_type", "self"}),
        ("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", {"self", "exponent"}),
        ("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", {"self", "exponent", "result"}),
        ("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", {"self_sym_sizes"}),
        ("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", {"self_sym_sizes", "dim", "keepdim"}),
        ("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", {"self_sym_sizes"}),
        ("relu(Tensor self) -> Tensor", {"result"}),
        ("mm(Tensor self, Tensor mat2) -> Tensor", {"mat2", "mat2_layout", "mat2_sym_sizes", "mat2_sym_strides", "self", "self_layout", "self_sym_sizes", "self_sym_strides"}),
        ("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", {"dim", "keepdim", "self_sym_sizes", "indices"}),
    ],
)
def test_corpus_entries(corpus_model, schema, expected):
    entry = next(e for e in corpus_model.derivatives if e.text == schema)
    assert set(entry.default.saved_names) == expected
