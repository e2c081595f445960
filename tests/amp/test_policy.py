"""yaml/autocast.yaml: the generator's checks (diagnostics with file and line),
the generated table, torchlet.amp.policy, and agreement with PyTorch's
registrations at the autocast keys."""
from __future__ import annotations

import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NF = ROOT / "yaml" / "native_functions.yaml"


def load_rules(tmp_path, text):
    from codegen.diagnostics import DiagnosticSink
    from codegen.autocast import load_autocast
    from codegen.native import load_native_functions

    sink = DiagnosticSink()
    functions = load_native_functions(str(NF), sink).functions
    assert not sink
    p = tmp_path / "autocast.yaml"
    p.write_text(textwrap.dedent(text))
    rules = load_autocast(str(p), sink, functions)
    return rules, [str(d) for d in sink.diagnostics]


def test_valid_file(tmp_path):
    rules, diags = load_rules(tmp_path, """\
        cpu:
          lower_precision_fp: [mm, linear]
          promote:
            - cat
        cuda:
          fp32_set_opt_dtype: [sum.dim_IntList]
        """)
    assert not diags
    assert [(r.device, r.policy, r.op) for r in rules] == [
        ("cpu", "lower_precision_fp", "mm"), ("cpu", "lower_precision_fp", "linear"), ("cpu", "promote", "cat"),
        ("cuda", "fp32_set_opt_dtype", "sum.dim_IntList")]
    assert rules[-1].dtype_arg == 3  # sum.dim_IntList(self, dim, keepdim, *, dtype)


def test_unknown_operator_names_file_and_line(tmp_path):
    rules, diags = load_rules(tmp_path, """\
        cpu:
          lower_precision_fp:
            - mm
            - conv_tbc
            - mmm
        """)
    path = str(tmp_path / "autocast.yaml")
    assert diags[0].startswith(f"{path}:4:")
    assert "unknown operator 'conv_tbc' in the cpu lower_precision_fp list" in diags[0]
    assert diags[1].startswith(f"{path}:5:") and "did you mean 'mm'?" in diags[1]
    assert [r.op for r in rules] == ["mm"]


@pytest.mark.parametrize("entry, message", [
    ("add_.Tensor", "'add_.Tensor' is an in-place overload"),
    ("mm.out", "'mm.out' is an out= or mutable overload"),
])
def test_inplace_and_out_rejected(tmp_path, entry, message):
    _, diags = load_rules(tmp_path, f"cpu:\n  fp32:\n    - {entry}\n")
    assert len(diags) == 1 and ":3:" in diags[0] and message in diags[0]


def test_other_diagnostics(tmp_path):
    _, diags = load_rules(tmp_path, """\
        cpu:
          fp32: [mm, mm]
          fp64: [mm]
          fp32_set_opt_dtype: [bmm]
        tpu:
          fp32: [mm]
        """)
    text = "\n".join(diags)
    assert "'mm' is listed twice for cpu" in text
    assert ":3:3: error: unknown autocast policy 'fp64'" in text
    assert ":4:" in text and "'bmm' has no 'ScalarType? dtype' argument" in text
    assert ":5:" in text and "unknown device type 'tpu'" in text


def test_cli_reports_yaml_errors(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "autocast.yaml"
    bad.write_text("cpu:\n  fp32:\n    - nope_op\n")
    r = subprocess.run([sys.executable, "-m", "codegen", "generate", "--dry-run", "--autocast", str(bad)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1
    assert f"{bad}:3:7: error: unknown operator 'nope_op'" in r.stderr.replace(str(ROOT) + "/", "")


def test_policy_object():
    import torchlet as tl

    p = tl.amp.policy("cpu")
    assert p.policy_of("mm") == "lower_precision_fp"
    assert p.policy_of("aten::mse_loss") == "fp32"
    assert p.policy_of("cat") == "promote"
    assert p.policy_of("add.Tensor") is None and "relu" not in p
    assert "linear" in p["lower_precision_fp"]
    text = str(p)
    assert text.splitlines()[0] == "autocast policy for cpu (yaml/autocast.yaml)"
    assert any(line.split()[0] == "promote" and "cat" in line for line in text.splitlines()[1:])
    assert tl.amp.policy("cuda").policy_of("exp") == "fp32"
    with pytest.raises(KeyError):
        p["fp64"]
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'meta'"):
        tl.amp.policy("meta")


def test_generated_kernels_registered():
    import torchlet as tl

    table = tl._C._dispatch_dump_table("aten::mm")
    assert "AutocastCPU: autocast lower_precision_fp kernel for cpu (yaml/autocast.yaml:" in table
    assert "AutocastCUDA: autocast lower_precision_fp kernel for cuda" in table
    add = tl._C._dispatch_dump_table("aten::add.Tensor")
    assert "AutocastCPU: fallthrough registered in torchlet runtime [backend fallback]" in add


def _torch_has(torch, op, key):
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(op, key)
    except RuntimeError:
        return False


@pytest.mark.parametrize("device, key", [("cpu", "AutocastCPU"), ("cuda", "AutocastCUDA")])
def test_lists_agree_with_pytorch(device, key):
    torch = pytest.importorskip("torch")
    import torchlet as tl

    ours = {("aten::" + op) for op, _ in tl.amp.policy(device)}
    # every listed operator has an autocast kernel in PyTorch ...
    assert sorted(op for op in ours if not _torch_has(torch, op, key)) == []
    # ... and every torchlet operator PyTorch casts on this device is listed
    theirs = {n for n in _torchlet_aten_ops(tl) if _torch_has(torch, n, key)}
    assert sorted(theirs - ours) == []


def _torchlet_aten_ops(tl):
    lib, ffi = tl._C.lib, tl._C.ffi
    names, i = [], 0
    while (op := lib.tl_dispatch_operator_at(i)) != ffi.NULL:
        names.append(ffi.string(lib.tl_op_name(op)).decode())
        i += 1
    return [n for n in names if n.startswith("aten::")]


def test_binary_cross_entropy_is_banned_on_cuda_only():
    """PyTorch's one banned operator: its AutocastCUDA kernel raises "unsafe
    to autocast"; on CPU it is an fp32 operator"""
    import torchlet as tl
    assert tl.amp.policy("cuda").policy_of("binary_cross_entropy") == "banned"
    assert tl.amp.policy("cuda")["banned"] == ("binary_cross_entropy",)
    assert tl.amp.policy("cpu").policy_of("binary_cross_entropy") == "fp32"
