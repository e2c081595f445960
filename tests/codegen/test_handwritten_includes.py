"""Hand-written C includes the operator headers it uses (codegen.emit.includes,
`python -m codegen includes`): the umbrella becomes a marked block, the block
follows the file's calls, --check catches a stale block, and torchlet's own
files are current."""

from __future__ import annotations

from pathlib import Path

from codegen.cli import main
from codegen.emit.includes import MARKER, UMBRELLA, handwritten_block, owner_map

ROOT = Path(__file__).resolve().parents[2]

HEADERS = {
    "include/ops/add.h": "tl_tensor *tl_ops_add_Tensor(tl_tensor *self, tl_tensor *other, tl_scalar alpha);\n"
                         "TL_WEAK tl_tensor *tl_native_add_Scalar(tl_keyset ks, tl_tensor *self);\n",
    "include/ops/mul.h": "tl_tensor *tl_ops_mul_Tensor(tl_tensor *self, tl_tensor *other);\n",
    "include/ops/exp.h": "extern tl_operator *tl_ops_exp_op;\n",
}
OWNER = owner_map(HEADERS)


def source(include: str, body: str) -> str:
    return f'#include <stdio.h>\n{include}\n#include "tl_tensor.h"\n\n{body}\n'


def test_the_umbrella_becomes_the_headers_the_file_calls():
    text = source(UMBRELLA, "x = tl_ops_mul_Tensor(a, b); y = tl_ops_add_Tensor(x, a, one);")
    out = handwritten_block(text, OWNER)
    assert out == source(f'{MARKER}\n#include "ops/add.h"\n#include "ops/mul.h"',
                         "x = tl_ops_mul_Tensor(a, b); y = tl_ops_add_Tensor(x, a, one);")
    assert handwritten_block(out, OWNER) == out  # a second run changes nothing


def test_a_definition_of_a_weak_kernel_includes_its_declaration():
    # the family header's prototype checks the hand-written definition
    out = handwritten_block(source(UMBRELLA, "tl_tensor *tl_native_add_Scalar(tl_keyset ks, tl_tensor *self) {}"), OWNER)
    assert '#include "ops/add.h"' in out and '"ops/mul.h"' not in out


def test_the_block_follows_new_and_dropped_calls():
    old = source(f'{MARKER}\n#include "ops/add.h"\n#include "ops/mul.h"', "tl_ops_mul_Tensor(a, b); tl_ops_exp_op;")
    assert handwritten_block(old, OWNER) == source(f'{MARKER}\n#include "ops/exp.h"\n#include "ops/mul.h"',
                                                   "tl_ops_mul_Tensor(a, b); tl_ops_exp_op;")


def test_a_file_without_operator_includes_is_left_alone():
    assert handwritten_block(source('#include "tl_iter.h"', "tl_ops_mul_Tensor(a, b);"), OWNER) is None


def _tree(tmp_path, body):
    gen = tmp_path / "generated" / "include" / "ops"
    gen.mkdir(parents=True)
    for rel, text in HEADERS.items():
        (tmp_path / "generated" / rel).write_text(text)
    src = tmp_path / "kernels" / "k.c"
    src.parent.mkdir()
    src.write_text(source(UMBRELLA, body))
    return src, ["includes", str(tmp_path / "kernels"), "--generated", str(tmp_path / "generated")]


def test_the_command_rewrites_and_check_fails_only_when_stale(tmp_path, capsys):
    src, argv = _tree(tmp_path, "tl_ops_mul_Tensor(a, b);")
    assert main([*argv, "--check"]) == 1
    assert "run `make includes`" in capsys.readouterr().err
    assert main(argv) == 0
    assert '#include "ops/mul.h"' in src.read_text()
    assert main([*argv, "--check"]) == 0
    src.write_text(src.read_text().replace("tl_ops_mul_Tensor(a, b);", "tl_ops_add_Tensor(a, b, one);"))
    assert main([*argv, "--check"]) == 1


def test_torchlets_hand_written_files_are_current(capsys):
    assert main(["includes", "--check"]) == 0, capsys.readouterr().err
    umbrella = [p for d in ("autograd", "kernels", "runtime/src") for p in (ROOT / d).rglob("*.[ch]")
                if UMBRELLA in p.read_text()]
    assert not umbrella  # none pulls in every operator


def test_names_a_macro_pastes_together_come_from_the_preprocessor(tmp_path):
    from codegen.emit.includes import macro_expansion

    (tmp_path / "tl_ops_base.h").write_text("#define TL_BASE 1\n")
    (tmp_path / "tl_tensor.h").write_text("")
    text = source(UMBRELLA, "#define CALL(op) tl_ops_##op##_Tensor(a, b)\nx = CALL(mul);")
    expanded = macro_expansion(text, [str(tmp_path)])
    assert "tl_ops_mul_Tensor" in expanded and "TL_BASE" not in expanded  # the file's own lines only
    assert '#include "ops/mul.h"' in handwritten_block(text, OWNER, expanded)
    assert '"ops/mul.h"' not in handwritten_block(text, OWNER)  # the text alone does not name it
    assert macro_expansion(source(UMBRELLA, "tl_ops_mul_Tensor(a, b);"), []) == ""  # no ## : no compiler run
