"""The generated pointwise table (codegen/emit/pointwise_table.py): which
formula computes each functional pointwise operator, for torchlet.compile."""
from torchlet._generated._pointwise_table import POINTWISE


def test_structured_delegate_maps_to_its_out_functions_formula():
    row = POINTWISE["aten::add.Tensor"]
    assert row["args"] == (("self", "tensor"), ("other", "tensor"), ("alpha", "scalar"))
    assert row["dtypes"]["Float"] == "add" and row["entry"] == "add.out"
    assert row["headers"] == ("kernels/ufunc/add.h",) and row["result"] is None


def test_scalar_twin_wraps_its_number():
    row = POINTWISE["aten::mul.Scalar"]
    assert row["wrapped"] == ("other",) and row["dtypes"] == POINTWISE["aten::mul.Tensor"]["dtypes"]


def test_comparisons_store_bool_and_where_reads_a_bool_condition():
    assert POINTWISE["aten::lt.Tensor"]["result"] == "Bool"
    assert POINTWISE["aten::where.self"]["input_dtypes"] == {"condition": "Bool"}


def test_standalone_kernel_named_after_its_operator():
    row = POINTWISE["aten::relu"]
    assert row["entry"] == "kernels/ufunc/relu.h" and row["args"] == (("self", "tensor"),)


def test_out_and_inplace_variants_are_not_listed():
    assert "aten::add.out" not in POINTWISE and "aten::add_.Tensor" not in POINTWISE
    assert "aten::fmod.Tensor" in POINTWISE and POINTWISE["aten::fmod.Tensor"]["fallbacks"]
