"""Native-function model and analysis: fields, implicit kernels, groups,
structured delegates, per-key kernel map."""

from __future__ import annotations

import pytest

from codegen.diagnostics import CodegenError
from codegen.model import Inputs, load_model
from codegen.native import DeviceCheckType, Variant
from codegen.schema import SchemaKind

NF = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  device_check: NoCheck   # TensorIterator
  structured_delegate: add.out
  variants: function, method
  tags: [core, pointwise]

- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  variants: method
  structured_delegate: add.out

- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  precomputed:
  - other -> int x, int y
  dispatch:
    CPU, CUDA: add_out
    SparseCPU: add_out_sparse_cpu
  python_module: nn
  cpp_no_default_args: ["alpha"]
  device_guard: False
  manual_cpp_binding: True
  use_const_ref_for_mutable_tensors: True
  category_override: dummy

- func: gelu(Tensor self) -> Tensor

- func: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
  dispatch:
    CompositeExplicitAutograd: add_scalar
  autogen: add.Scalar_out

- func: _bn(Tensor input, Tensor(a!) running_mean) -> Tensor
  dispatch:
    CPU: bn_cpu
  autogen: _bn_functional

- func: empty_op(Tensor self) -> Tensor
  dispatch: {}
"""


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "nf.yaml"
    p.write_text(NF)
    return load_model(Inputs(str(p)))


def test_fields(model):
    add, add_, add_out = model.functions[:3]
    assert add.variants == {Variant.function, Variant.method}
    assert add.device_check is DeviceCheckType.NoCheck
    assert add.tags == ("core", "pointwise")
    assert str(add.structured_delegate) == "add.out"
    assert add_out.structured and add_out.structured_inherits == "TensorIteratorBase"
    assert [(n, [str(a) for a in args]) for n, args in add_out.precomputed.replace] == [("other", ["int x", "int y"])]
    assert add_out.python_module == "nn"
    assert [str(a) for a in model.functions[4].autogen] == ["add.Scalar_out"]
    assert add_out.cpp_no_default_args == {"alpha"}
    assert not add_out.device_guard and add_out.manual_cpp_binding and add_out.use_const_ref_for_mutable_tensors
    assert add_out.category_override == "dummy"
    assert add.pos.line == 1 and add_out.pos.line == 11


def test_dispatch_is_kept_apart_and_complete(model):
    add, add_, add_out, gelu, add_scalar, bn, empty = model.functions[:7]
    assert {k: md.kernel for k, md in model.kernels(add_out).items()} == {"CPU": "add_out", "CUDA": "add_out", "SparseCPU": "add_out_sparse_cpu"}
    # delegates get the structured kernels of their out= op, not the sparse one
    k = model.kernels(add)
    assert {key: md.kernel for key, md in k.items()} == {"CPU": "add_out", "CUDA": "add_out"}
    assert str(k["CPU"].delegate) == "add.out" and k["CPU"].structured
    # no dispatch: -> implicit CompositeImplicitAutograd kernel named after the function
    g = model.kernels(gelu)
    assert list(g) == ["CompositeImplicitAutograd"] and g["CompositeImplicitAutograd"].kernel == "gelu"
    assert g["CompositeImplicitAutograd"].implicit and gelu.has_composite_implicit_autograd_kernel
    # "dispatch: {}" means no kernel at all
    assert model.kernels(empty) == {}


def test_groups(model):
    g = next(g for g in model.groups if g.root_name == "add")
    assert g.functional.func.name.overload_name == "Tensor"
    assert g.inplace is model.functions[1] and g.out is model.functions[2]
    assert g.structured
    assert str(g.signature) == "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"


def test_autogen_functional_variant(model):
    f = next(f for f in model.functions if str(f.func.name) == "_bn_functional")
    assert str(f.func) == "_bn_functional(Tensor input, Tensor running_mean) -> (Tensor, Tensor running_mean_out)"
    assert "generated" in f.tags and str(f.generated_from) == "_bn"
    g = next(g for g in model.groups if g.root_name == "_bn")
    assert g.mutable.func.kind() is SchemaKind.mutable and g.functional is f


def test_autogen_out_variant(model):
    f = next(f for f in model.functions if str(f.func.name) == "add.Scalar_out")
    assert str(f.func) == "add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)"
    assert f.tags == ("generated", "out") and str(f.generated_from) == "add.Scalar"
    assert {k: md.kernel for k, md in model.kernels(f).items()} == {"CompositeExplicitAutograd": "add_Scalar_out"}
    g = model.group_of(f)
    assert g.functional is model.functions[4] and g.out is f


def test_project_yaml_loads():
    from cgtest_util import REPO

    m = load_model(Inputs(str(REPO / "yaml/native_functions.yaml"), str(REPO / "yaml/derivatives.yaml"), str(REPO / "yaml/tags.yaml")))
    names = [str(f.func.name) for f in m.functions]
    for n in ("add.Tensor", "mul.Tensor", "relu", "sum"):
        assert n in names
    assert {d.function.func.name.name.base for d in m.derivatives} >= {"add", "mul", "relu", "sum"}


def test_no_module_level_state(tmp_path):
    """Loading twice gives equal, independent models (no caches between runs)."""
    p = tmp_path / "nf.yaml"
    p.write_text(NF)
    a = load_model(Inputs(str(p)))
    p.write_text(NF.replace("gelu", "silu"))
    b = load_model(Inputs(str(p)))
    assert "gelu" in [str(f.func.name) for f in a.functions]
    assert "silu" in [str(f.func.name) for f in b.functions] and "gelu" not in [str(f.func.name) for f in b.functions]


def test_codegen_error_carries_diagnostics(tmp_path):
    p = tmp_path / "nf.yaml"
    p.write_text("- func: relu(Tensr self) -> Tensor\n- func: relu(Tensor self) -> Tensor\n  varints: method\n")
    with pytest.raises(CodegenError) as e:
        load_model(Inputs(str(p)))
    d = e.value.diagnostics
    assert [(x.line, x.col) for x in d] == [(1, 14), (3, 3)]
    assert d[1].hint == "did you mean 'variants'?"
