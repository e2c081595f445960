"""`torchlet-gen generate --namespace`: an operator library's generated files
(names carrying the namespace, its headers including torchlet's, its Python
package and stubs, no cffi declarations) and its diagnostics."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

NF = textwrap.dedent(
    """\
    - func: lib1::twice.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
      structured: True
      structured_inherits: TensorIteratorBase
      ufunc_inner_loop:
        Generic: twice (Floating)
      tags: pointwise

    - func: lib1::twice(Tensor self) -> Tensor
      structured_delegate: twice.out
      tags: pointwise

    - func: lib1::rms(Tensor x, int[1] dim, *, float eps=1e-06) -> Tensor
      dispatch:
        CPU: lib1_rms
    """
)
DERIV = textwrap.dedent(
    """\
    - name: lib1::twice(Tensor self) -> Tensor
      self: grad * 2
      result: self_t * 2
    """
)


def generate(tmp: Path, nf: str = NF, deriv: str = DERIV, *extra: str) -> subprocess.CompletedProcess:
    (tmp / "native_functions.yaml").write_text(nf)
    (tmp / "derivatives.yaml").write_text(deriv)
    (tmp / "ufunc").mkdir(exist_ok=True)
    (tmp / "ufunc" / "twice.h").write_text("#define TL_UFUNC_twice(self) ((self) + (self))\n")
    return subprocess.run(
        [sys.executable, "-m", "codegen", "generate", "--namespace", "lib1", "--native-functions",
         str(tmp / "native_functions.yaml"), "--derivatives", str(tmp / "derivatives.yaml"),
         "--ufunc-dir", str(tmp / "ufunc"), "--out", str(tmp / "gen"), *extra],
        cwd=tmp, capture_output=True, text=True)


def test_library_files(tmp_path):
    r = generate(tmp_path)
    assert r.returncode == 0, r.stderr
    gen = tmp_path / "gen"
    files = sorted(p.relative_to(gen).as_posix() for p in gen.rglob("*") if p.is_file())
    assert files == ["MANIFEST", "csrc/autograd_register_all.c", "csrc/autograd_rms.c", "csrc/autograd_twice.c",
                     "csrc/extension.c", "csrc/ops_rms.c", "csrc/ops_twice.c", "csrc/register_all.c",
                     "include/tl_autograd_ops.h", "include/tl_ops.h", "kernels/ufunc_twice.c",
                     "kernels/ufunc_twice.h", "python/lib1/__init__.py", "python/lib1/__init__.pyi"]
    h = (gen / "include" / "tl_ops.h").read_text()
    assert "#ifndef TL_OPS_H_LIB1\n#define TL_OPS_H_LIB1\n\n#include_next \"tl_ops.h\"" in h
    assert "tl_tensor *tl_ops_lib1_twice(tl_tensor *self);" in h
    assert "TL_WEAK tl_tensor *tl_native_lib1_rms(tl_keyset ks, tl_tensor *x, const int64_t *dim, int64_t dim_len, " \
           "double eps);" in h
    ops = (gen / "csrc" / "ops_twice.c").read_text()
    assert 'tl_ops_lib1_twice_op = tl_op_define("lib1::twice", "lib1::twice(Tensor self) -> Tensor");' in ops
    assert "__attribute__((weak)) int tl_meta_lib1_twice(tl_structured *s, tl_tensor *self) {\n" \
           "    return tl_structured_build_unary_op(s, self);" in ops
    ag = (gen / "csrc" / "autograd_twice.c").read_text()
    assert "tl_ops_mul_Scalar(grad," in ag          # `grad * 2`: an aten operator from the library's formula
    ext = (gen / "csrc" / "extension.c").read_text()
    assert "int tl_ext_lib1_abi_version(void) { return TL_ABI_VERSION; }" in ext
    assert 'if (tl_abi_check("lib1", TL_ABI_VERSION) != 0) return -1;' in ext
    init = (gen / "python" / "lib1" / "__init__.py").read_text()
    assert "twice = _torchlet.ops.lib1.twice\nrms = _torchlet.ops.lib1.rms\n" in init
    stub = (gen / "python" / "lib1" / "__init__.pyi").read_text()
    assert "def rms(x: Tensor, dim: int | Sequence[int], *, eps: float = ...) -> Tensor: ..." in stub
    # --check: up to date, then stale after an edit of the YAML
    assert generate(tmp_path, NF, DERIV, "--check").returncode == 0
    r = generate(tmp_path, NF.replace("float eps=1e-06", "float eps=1e-05"), DERIV, "--check")
    assert r.returncode == 1 and "csrc/ops_rms.c" in r.stderr and "+" in r.stdout


def test_operators_must_be_in_the_namespace(tmp_path):
    r = generate(tmp_path, NF.replace("lib1::rms(", "rms("))
    assert r.returncode == 1
    assert "native_functions.yaml:12:9: error: 'rms' is in namespace aten (no namespace), not 'lib1'" in r.stderr
    assert "hint: write `func: lib1::rms(Tensor x, int[1] dim, *, float eps=1e-06) -> Tensor`" in r.stderr


def test_missing_formula_names_the_library_folder(tmp_path):
    r = generate(tmp_path, NF.replace("Generic: twice (Floating)", "Generic: thrice (Floating)"))
    assert r.returncode == 1
    assert "error: no ufunc formula 'thrice'" in r.stderr and "ufunc/thrice.h (--ufunc-dir)" in r.stderr
