"""Derived meta functions (api_c.derived_meta_builder) and the link-time check
that every hand-written kernel the YAML names is defined
(codegen/kernel_check.py): the error names the YAML file and line."""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codegen import api_c
from codegen.emit import EmitContext
from codegen.emit.c_ops import emit_c_ops
from codegen.kernel_check import check, required_kernels
from codegen.model import Inputs, load_model
from codegen.templating import make_environment
from cgtest_util import declarations

REPO = Path(__file__).resolve().parents[2]

YAML = textwrap.dedent(
    """\
    - func: hyp.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
      structured: True
      structured_inherits: TensorIteratorBase
      dispatch:
        CPU: hyp_out
      tags: pointwise

    - func: hyp(Tensor self, Tensor other) -> Tensor
      structured_delegate: hyp.out
      tags: pointwise

    - func: cs.out(Tensor self, Tensor other, *, str? rounding_mode=None, Tensor(a!) out) -> Tensor(a!)
      structured: True
      structured_inherits: TensorIteratorBase
      dispatch:
        CPU: cs_out
      tags: pointwise

    - func: cs.Tensor(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor
      structured_delegate: cs.out
      tags: pointwise

    - func: fl.out(Tensor self, float k, *, Tensor(a!) out) -> Tensor(a!)
      structured: True
      structured_inherits: TensorIteratorBase
      dispatch:
        CPU: fl_out
      tags: [pointwise, promotes_int_to_float]

    - func: nat(Tensor self) -> Tensor
      dispatch:
        CPU: nat_k
    """
)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("kc")
    p = d / "native_functions.yaml"
    p.write_text(YAML)
    return load_model(Inputs(str(p), None, str(REPO / "yaml" / "tags.yaml")))


def group(model, name):
    return next(g for g in model.groups if g.out is not None and str(g.out.func.name) == name)


def test_derived_builders(model):
    assert api_c.derived_meta_builder(group(model, "hyp.out")) == "tl_structured_build_binary_op"
    assert api_c.derived_meta_builder(group(model, "fl.out")) == "tl_structured_build_unary_float_op"
    # a str argument is work for a hand-written meta function: not derived
    assert api_c.derived_meta_builder(group(model, "cs.out")) is None
    assert api_c.derived_meta_definition(group(model, "fl.out")) == (
        "__attribute__((weak)) int tl_meta_fl_out(tl_structured *s, tl_tensor *self, double k) {\n"
        "    (void)k;\n"
        "    return tl_structured_build_unary_float_op(s, self);\n}")


def test_derived_meta_is_emitted_and_not_required(model):
    ctx = EmitContext(model, make_environment(), ("native_functions.yaml",), "test")
    files = emit_c_ops(ctx)
    hyp = files["csrc/ops_hyp.c"]
    assert "__attribute__((weak)) int tl_meta_hyp(tl_structured *s, tl_tensor *self, tl_tensor *other) {\n" \
           "    return tl_structured_build_binary_op(s, self, other);\n}" in hyp
    assert "TL_KERNEL_MISSING(tl_meta_hyp)" not in hyp      # defined here: never missing
    assert "tl_meta_cs_Tensor(" not in files["csrc/ops_cs.c"].split("tl_operator *")[0]
    h = declarations(files)
    # declared plain, so that a hand-written definition (which sees this) is strong and wins
    assert "\nint tl_meta_hyp(tl_structured *s, tl_tensor *self, tl_tensor *other);" in h
    assert "TL_WEAK int tl_meta_cs_Tensor(" in h
    syms = {r.symbol for r in required_kernels(model)}
    assert syms == {"tl_impl_hyp_out", "tl_meta_cs_Tensor", "tl_impl_cs_out", "tl_impl_fl_out", "tl_native_nat_k"}


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_missing_kernels_are_errors_at_their_yaml_line(model, tmp_path):
    src = tmp_path / "kernels.c"
    # tl_meta_cs is misnamed (the generator expects tl_meta_cs_Tensor); nat_k is not written
    src.write_text("int tl_impl_hyp_out(void) { return 0; }\nint tl_impl_cs_out(void) { return 0; }\n"
                   "int tl_impl_fl_out(void) { return 0; }\nint tl_meta_cs(void) { return 0; }\n")
    obj = tmp_path / "kernels.o"
    subprocess.run(["cc", "-c", str(src), "-o", str(obj)], check=True)
    diags = check(model, [str(obj)])
    text = "\n".join(str(d) for d in diags)
    path = model.inputs.native_functions
    assert len(diags) == 2, text
    assert f"{path}:12:3: error: aten::cs.out (CPU, Meta) calls 'tl_meta_cs_Tensor', which no source file of " \
           "the build defines\n  hint: 'tl_meta_cs' is defined: the generator expects 'tl_meta_cs_Tensor'" in text
    assert f"{path}:32:5: error: aten::nat (CPU) calls 'tl_native_nat_k'" in text
    # defining them clears the check
    src.write_text(src.read_text() + "int tl_meta_cs_Tensor(void) { return 0; }\nint tl_native_nat_k(void) { return 0; }\n")
    subprocess.run(["cc", "-c", str(src), "-o", str(obj)], check=True)
    assert check(model, [str(obj)]) == []


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_command_line(tmp_path):
    nf = tmp_path / "native_functions.yaml"
    nf.write_text(YAML)
    obj = tmp_path / "empty.o"
    (tmp_path / "empty.c").write_text("int unrelated(void) { return 0; }\n")
    subprocess.run(["cc", "-c", str(tmp_path / "empty.c"), "-o", str(obj)], check=True)
    r = subprocess.run([sys.executable, "-m", "codegen.kernel_check", "--native-functions", str(nf),
                        "--tags", str(REPO / "yaml" / "tags.yaml"), str(obj)],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.rstrip().endswith("5 errors generated.")
    assert ":1:3: error: aten::hyp.out (CPU) calls 'tl_impl_hyp_out'" in r.stderr


def test_torchlet_own_yaml_requires_defined_kernels_only():
    """torchlet's build runs this check (setup.py check_kernels): the aten
    operators' required kernels are the ones kernels/native and the generated
    ufunc loops define; hypot and copysign need none by hand."""
    m = load_model(Inputs(str(REPO / "yaml/native_functions.yaml"), None, str(REPO / "yaml/tags.yaml")))
    req = {r.symbol: r for r in required_kernels(m)}
    assert "tl_meta_hypot" not in req and "tl_meta_copysign_Tensor" not in req
    assert req["tl_impl_ufunc_hypot"].qualified == "aten::hypot.out"
    assert req["tl_meta_div_Tensor_mode"].pos.line > 0 and "tl_meta_add_Tensor" not in req  # add: derived, hand-written wins
