"""Broken inputs: every author error is reported at its line and column,
all of a run's errors are printed together, the exit status is 1 and there
is no traceback."""

from __future__ import annotations

import textwrap

import pytest

from codegen.cli import main

from cgtest_util import run_cli

TAGS = """\
- tag: pointwise
  desc: pointwise
- tag: core
  desc: core
"""

GOOD_NF = """\
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  structured_delegate: mul.out
  variants: function, method

- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: mul_out
"""


def run(tmp_path, monkeypatch, capsys, nf: str, deriv: str | None = None):
    (tmp_path / "nf.yaml").write_text(textwrap.dedent(nf))
    (tmp_path / "tags.yaml").write_text(TAGS)
    args = ["inspect", "--native-functions", "nf.yaml", "--tags", "tags.yaml"]
    if deriv is not None:
        (tmp_path / "d.yaml").write_text(textwrap.dedent(deriv))
        args += ["--derivatives", "d.yaml"]
    monkeypatch.chdir(tmp_path)
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.err


# (id, native_functions.yaml, derivatives.yaml or None, expected stderr lines)
CASES = [
    (
        "misspelled-field",
        """\
        - func: relu(Tensor self) -> Tensor
          dispach:
            CPU: relu
        """,
        None,
        ["nf.yaml:2:3: error: unknown field 'dispach' in native function entry", "  hint: did you mean 'dispatch'?"],
    ),
    (
        "missing-func",
        """\
        - variants: function
        """,
        None,
        ["nf.yaml:1:3: error: native function entry has no 'func:' field"],
    ),
    (
        "func-not-a-string",
        """\
        - func: [relu]
        """,
        None,
        ["nf.yaml:1:9: error: 'func' must be a schema string, not a list"],
    ),
    (
        "unbalanced-parenthesis",
        """\
        - func: relu(Tensor self -> Tensor
        """,
        None,
        ["nf.yaml:1:26: error: invalid schema: expected ',' or ')' in the argument list, found '->'"],
    ),
    (
        "unknown-type",
        """\
        - func: relu(Tensr self) -> Tensor
        """,
        None,
        ["nf.yaml:1:14: error: invalid schema: unknown type 'Tensr'", "  hint: did you mean 'Tensor'?"],
    ),
    (
        "bad-alias-annotation",
        """\
        - func: relu_(Tensor(a|b!) self) -> Tensor(a!)
        """,
        None,
        ["nf.yaml:1:22: error: invalid schema: a written (!) alias annotation must name exactly one alias set"],
    ),
    (
        "unclosed-alias-annotation",
        """\
        - func: relu_(Tensor(a! self) -> Tensor(a!)
        """,
        None,
        ["nf.yaml:1:25: error: invalid schema: expected ')' to close the alias annotation, found 'self'"],
    ),
    (
        "unknown-dispatch-key",
        """\
        - func: relu(Tensor self) -> Tensor
          dispatch:
            CPUU: relu
        """,
        None,
        ["nf.yaml:3:5: error: unknown dispatch key 'CPUU'", "  hint: did you mean 'CPU'?"],
    ),
    (
        "unknown-key-in-joined-keys",
        """\
        - func: relu(Tensor self) -> Tensor
          dispatch:
            CPU, CUDDA: relu
        """,
        None,
        ["nf.yaml:3:10: error: unknown dispatch key 'CUDDA'", "  hint: did you mean 'CUDA'?"],
    ),
    (
        "dispatch-not-a-mapping",
        """\
        - func: relu(Tensor self) -> Tensor
          dispatch: relu
        """,
        None,
        ["nf.yaml:2:13: error: 'dispatch' must be a mapping of dispatch keys to kernel names, not a string"],
    ),
    (
        "kernel-not-a-name",
        """\
        - func: relu(Tensor self) -> Tensor
          dispatch:
            CPU: True
        """,
        None,
        ["nf.yaml:3:10: error: kernel for 'CPU' must be a kernel name, not a boolean"],
    ),
    (
        "dispatch-key-twice",
        """\
        - func: relu(Tensor self) -> Tensor
          dispatch:
            CPU, CUDA: relu
            CUDA: relu_cuda
        """,
        None,
        ["nf.yaml:4:5: error: dispatch key 'CUDA' is listed twice", "  hint: first given on line 3"],
    ),
    (
        "misspelled-variant",
        """\
        - func: relu(Tensor self) -> Tensor
          variants: functon, method
        """,
        None,
        ["nf.yaml:2:13: error: unknown variant 'functon'", "  hint: did you mean 'function'?"],
    ),
    (
        "structured-not-a-bool",
        """\
        - func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: 1
        """,
        None,
        ["nf.yaml:2:15: error: 'structured' must be True or False, not an integer"],
    ),
    (
        "structured-functional",
        """\
        - func: relu(Tensor self) -> Tensor
          structured: True
          dispatch:
            CPU: relu
        """,
        None,
        [
            "nf.yaml:2:3: error: only out= functions can be structured; 'relu' is functional",
            "  hint: mark the out= variant 'structured: True' and give this one 'structured_delegate'",
        ],
    ),
    (
        "delegate-to-missing-op",
        """\
        - func: mul.Tensor(Tensor self, Tensor other) -> Tensor
          structured_delegate: mul.outt

        - func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          dispatch:
            CPU: mul_out
        """,
        None,
        ["nf.yaml:2:24: error: structured_delegate 'mul.outt' of 'mul.Tensor' is not a known operator", "  hint: did you mean 'mul.out'?"],
    ),
    (
        "delegate-not-structured",
        """\
        - func: mul.Tensor(Tensor self, Tensor other) -> Tensor
          structured_delegate: mul.out

        - func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
          dispatch:
            CPU: mul_out
        """,
        None,
        [
            "nf.yaml:2:24: error: structured_delegate 'mul.out' of 'mul.Tensor' is not structured",
            "  hint: mark 'mul.out' (line 4) 'structured: True'",
        ],
    ),
    (
        "delegate-signature-mismatch",
        """\
        - func: mul.Scalar(Tensor self, Scalar other) -> Tensor
          structured_delegate: mul.out

        - func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          dispatch:
            CPU: mul_out
        """,
        None,
        [
            "nf.yaml:2:24: error: structured_delegate 'mul.out' of 'mul.Scalar' has a different signature",
            "  hint: 'mul(Tensor self, Scalar other) -> Tensor' vs 'mul(Tensor self, Tensor other) -> Tensor'",
        ],
    ),
    (
        "duplicate-overload",
        """\
        - func: relu(Tensor self) -> Tensor

        - func: relu(Tensor self, int x) -> Tensor
        """,
        None,
        ["nf.yaml:3:9: error: duplicate operator 'relu'", "  hint: first declared on line 1"],
    ),
    (
        "same-signature-twice",
        """\
        - func: relu.a(Tensor self) -> Tensor

        - func: relu.b(Tensor self) -> Tensor
        """,
        None,
        [
            "nf.yaml:3:9: error: 'relu.b' and 'relu.a' are both functional variants of the same signature",
            "  hint: 'relu.a' is on line 1; two overloads must differ in their arguments",
        ],
    ),
    (
        "unknown-tag",
        """\
        - func: relu(Tensor self) -> Tensor
          tags: [core, pointwize]
        """,
        None,
        ["nf.yaml:2:16: error: unknown tag 'pointwize'", "  hint: did you mean 'pointwise'?"],
    ),
    (
        "bad-device-check",
        """\
        - func: relu(Tensor self) -> Tensor
          device_check: NoChek
        """,
        None,
        ["nf.yaml:2:17: error: unknown device_check 'NoChek'", "  hint: did you mean 'NoCheck'?"],
    ),
    (
        "cpp-no-default-args-unknown",
        """\
        - func: std(Tensor self, bool unbiased=True) -> Tensor
          cpp_no_default_args: ["unbaised"]
        """,
        None,
        ["nf.yaml:2:25: error: cpp_no_default_args names unknown argument 'unbaised'", "  hint: did you mean 'unbiased'?"],
    ),
    (
        "duplicate-yaml-key",
        """\
        - func: relu(Tensor self) -> Tensor
          variants: function
          variants: method
        """,
        None,
        ["nf.yaml:3:3: error: duplicate key 'variants'", "  hint: the first 'variants' is on line 2"],
    ),
    (
        "yaml-syntax",
        """\
        - func: relu(Tensor self) -> Tensor
          dispatch:
            CPU: relu
           CUDA: relu
        """,
        None,
        ["nf.yaml:4:4: error: invalid YAML: did not find expected key (while parsing a block mapping)"],
    ),
    (
        "not-a-list",
        """\
        func: relu(Tensor self) -> Tensor
        """,
        None,
        ["nf.yaml:1:1: error: native functions file must be a list of '- func:' entries"],
    ),
    (
        "precomputed-unknown-argument",
        """\
        - func: f.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          precomputed:
          - dimm -> int dim
          dispatch:
            CPU: f_out
        """,
        None,
        ["nf.yaml:4:5: error: precomputed replaces unknown argument 'dimm'", "  hint: did you mean 'dim'?"],
    ),
    (
        "ufunc-not-structured",
        """\
        - func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          ufunc_inner_loop:
            Generic: f (AllAndComplex)
        """,
        None,
        ["nf.yaml:2:3: error: ufunc_inner_loop needs 'structured: True'"],
    ),
    (
        "two-composite-keys",
        """\
        - func: relu(Tensor self) -> Tensor
          dispatch:
            CompositeImplicitAutograd: relu
            CompositeExplicitAutograd: relu_explicit
        """,
        None,
        [
            "nf.yaml:2:3: error: cannot combine CompositeImplicitAutograd and CompositeExplicitAutograd in one dispatch table",
            "  hint: each composite key subsumes the others; keep one (CompositeExplicitAutograd if you also write an autograd formula)",
        ],
    ),
    (
        "redundant-dispatch",
        """\
        - func: relu(Tensor self) -> Tensor
          dispatch:
            CompositeImplicitAutograd: relu
        """,
        None,
        [
            "nf.yaml:2:3: error: unnecessary dispatch table: CompositeImplicitAutograd with the default kernel name is implied",
            "  hint: delete the 'dispatch:' entry",
        ],
    ),
    (
        "none-default-non-optional",
        """\
        - func: f(Tensor self, int dim=None) -> Tensor
        """,
        None,
        ["nf.yaml:1:32: error: invalid schema: argument 'dim' of non-optional type 'int' cannot default to None", "  hint: make the type optional: 'int?'"],
    ),
    (
        "non-canonical-schema",
        """\
        - func: relu(Tensor  self) ->Tensor
        """,
        None,
        ["nf.yaml:1:9: error: schema is not written in canonical form", "  hint: write 'relu(Tensor self) -> Tensor'"],
    ),
    (
        "out-function-returns",
        """\
        - func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor
        """,
        None,
        [
            "nf.yaml:1:53: error: invalid schema: an out= function must return its out arguments",
            "  hint: write '-> Tensor(a!)'",
        ],
    ),
    (
        "method-without-self",
        """\
        - func: relu(Tensor input) -> Tensor
          variants: method
        """,
        None,
        ["nf.yaml:2:13: error: a method variant needs an argument named 'self'; 'relu' has none"],
    ),
    (
        "derivative-schema-spacing",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self,Tensor other) -> Tensor
          self: grad * other
        """,
        [
            "d.yaml:1:9: error: schema in 'name' does not match the declaration exactly",
            "  hint: write 'mul.Tensor(Tensor self, Tensor other) -> Tensor'",
        ],
    ),
    (
        "autogen-wrong-name",
        """\
        - func: relu_(Tensor(a!) self) -> Tensor(a!)
          dispatch:
            CPU: relu_
          autogen: relu_.out
        """,
        None,
        ["nf.yaml:4:12: error: autogen 'relu_.out' does not name the generated variant 'relu.out'", "  hint: write 'relu.out'"],
    ),
    (
        "autogen-existing-variant",
        """\
        - func: relu(Tensor self) -> Tensor
          dispatch:
            CPU: relu
          autogen: relu.out

        - func: relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          dispatch:
            CPU: relu_out
        """,
        None,
        [
            "nf.yaml:4:12: error: autogen 'relu.out' names an operator declared on line 6",
            "  hint: remove 'relu.out' from autogen",
        ],
    ),
    (
        "derivative-for-unknown-schema",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Scalar other) -> Tensor
          self: grad * other
        """,
        [
            "d.yaml:1:9: error: no native function has the schema 'mul.Tensor(Tensor self, Scalar other) -> Tensor'",
            "  hint: functions with this name:",
            "    mul.Tensor(Tensor self, Tensor other) -> Tensor",
            "    mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
        ],
    ),
    (
        "mixing-grad-and-grads",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          self: grad * other
          other: grads[0] * self
        """,
        [
            "d.yaml:3:10: error: derivative of 'mul.Tensor' mixes 'grad' and 'grads'",
            "  hint: use 'grads[0]' instead of 'grad' when the function has several differentiable outputs",
        ],
    ),
    (
        "only-grads-0",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          self: grads[0] * other
        """,
        [
            "d.yaml:2:9: error: derivative of 'mul.Tensor' only uses 'grads[0]'",
            "  hint: if the first output is the only differentiable one, write 'grad' instead",
        ],
    ),
    (
        "grads-out-of-range",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          self: grads[0] * grads[2]
        """,
        ["d.yaml:2:20: error: 'grads[2]' is out of range: 'mul.Tensor' returns 1 output"],
    ),
    (
        "unknown-input",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          selff: grad * other
        """,
        ["d.yaml:2:3: error: 'selff' is not an argument or output of 'mul.Tensor'", "  hint: did you mean 'self'?"],
    ),
    (
        "formula-syntax",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          self: mul_tensor_backward(grad, other, self.scalar_type()
        """,
        ["d.yaml:2:60: error: invalid formula: expected ',' or ')', found end of formula"],
    ),
    (
        "formula-uses-sizes",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          self: grad.expand(self.sizes())
        """,
        ["d.yaml:2:21: error: .sizes() is not supported in derivative formulas", "  hint: use the SymInt version, .sym_sizes()"],
    ),
    (
        "formula-not-a-string",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          self: [grad]
        """,
        ["d.yaml:2:9: error: formula for 'self' must be a string, not a list"],
    ),
    (
        "bad-autograd-key",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          dispatch:
            Default:
              self: grad * other
            AutogradCPUU:
              self: grad * other
        """,
        ["d.yaml:5:5: error: invalid autograd dispatch key 'AutogradCPUU'", "  hint: did you mean 'AutogradCPU'?"],
    ),
    (
        "duplicate-derivative",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          self: grad * other

        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          self: grad * other
        """,
        ["d.yaml:4:9: error: duplicate derivative for 'mul.Tensor'", "  hint: first defined on line 1"],
    ),
    (
        "output-differentiability-too-long",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          output_differentiability: [True, False]
          self: grad * other
        """,
        ["d.yaml:2:29: error: 'output_differentiability' has 2 entries but 'mul.Tensor' returns 1 outputs"],
    ),
    (
        "derivative-without-name",
        GOOD_NF,
        """\
        - self: grad * other
        """,
        ["d.yaml:1:3: error: derivative entry has no 'name:' field", "  hint: every entry starts with '- name: schema'"],
    ),
    (
        "non-differentiable-and-formula",
        GOOD_NF,
        """\
        - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
          self, other: mul_backward(grad, self, other)
          other: non_differentiable
        """,
        ["d.yaml:3:3: error: 'other' is both non_differentiable and given a formula"],
    ),
]


@pytest.mark.parametrize("nf, deriv, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broken_input(tmp_path, monkeypatch, capsys, nf, deriv, expected):
    rc, err = run(tmp_path, monkeypatch, capsys, nf, deriv)
    assert rc == 1
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines[: len(expected)] == expected, err
    assert lines[-1] == "1 error generated."


def test_enough_cases():
    assert len(CASES) >= 30


def test_all_errors_are_reported_together(tmp_path, monkeypatch, capsys):
    rc, err = run(
        tmp_path,
        monkeypatch,
        capsys,
        """\
        - func: relu(Tensor self) -> Tensor
          dispach:
            CPU: relu

        - func: gelu(Tensr self) -> Tensor

        - func: silu(Tensor self) -> Tensor
          tags: pointwize
        """,
    )
    assert rc == 1
    lines = [l for l in err.splitlines() if ": error: " in l]
    assert [l.split(": error:")[0] for l in lines] == ["nf.yaml:2:3", "nf.yaml:5:14", "nf.yaml:8:9"]
    assert err.splitlines()[-1] == "3 errors generated."


@pytest.mark.parametrize("case", ["misspelled-field", "delegate-to-missing-op", "mixing-grad-and-grads"])
def test_cli_subprocess_exit_code(tmp_path, case):
    _, nf, deriv, expected = next(c for c in CASES if c[0] == case)
    (tmp_path / "nf.yaml").write_text(textwrap.dedent(nf))
    (tmp_path / "tags.yaml").write_text(TAGS)
    args = ["inspect", "--native-functions", str(tmp_path / "nf.yaml"), "--tags", str(tmp_path / "tags.yaml")]
    if deriv:
        (tmp_path / "d.yaml").write_text(textwrap.dedent(deriv))
        args += ["--derivatives", str(tmp_path / "d.yaml")]
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines()[0] == expected[0]
    assert r.stdout == ""


def test_internal_errors_keep_their_traceback(tmp_path, monkeypatch):
    import codegen.model

    def boom(*a, **k):
        raise KeyError("bug")

    monkeypatch.setattr(codegen.model, "load_native_functions", boom)
    (tmp_path / "nf.yaml").write_text("- func: relu(Tensor self) -> Tensor\n")
    with pytest.raises(KeyError):
        main(["inspect", "--native-functions", str(tmp_path / "nf.yaml")])
