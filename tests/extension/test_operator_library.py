"""The worked operator library (examples/extension, namespace myops), built by
``torchlet-gen build`` into a temporary folder against the installed torchlet
and imported: values against numpy (and torch when installed), gradcheck of
its derivatives.yaml backward, Meta shapes, torchlet.ops.myops objects with
their schemas, the .pyi stubs, ``--check`` on a stale generated folder, a
missing kernel failing the build with its YAML file and line, and the C ABI
version check."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import torchlet as tl

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "extension"
GEN_ARGS = ["--namespace", "myops", "--native-functions", str(EXAMPLE / "native_functions.yaml"),
            "--derivatives", str(EXAMPLE / "derivatives.yaml"), "--ufunc-dir", str(EXAMPLE / "ufunc")]


def torchlet_gen(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "codegen", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("myops_build")
    r = torchlet_gen("build", *GEN_ARGS, "--sources", str(EXAMPLE / "kernels" / "rms_norm.c"), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_the_built_library(built):
    """values, dtypes, out=, errors, torch, gradcheck, Meta, torchlet.ops, stubs: myops_checks.py,
    in a child process (a loaded library stays for the process; tests/library defines a myops of its own)"""
    env = dict(os.environ, MYOPS_BUILD=str(built))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(Path(__file__).with_name("myops_checks.py"))], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and " passed" in r.stdout, r.stdout[-6000:] + r.stderr[-2000:]


# ------------------------------------------------------- the author's loop

def test_check_fails_on_a_stale_generated_folder(tmp_path):
    gen = tmp_path / "generated"
    shutil.copytree(EXAMPLE / "generated", gen)
    r = torchlet_gen("generate", "--check", *GEN_ARGS, "--out", str(gen))
    assert r.returncode == 0, r.stdout + r.stderr
    p = gen / "csrc" / "ops_scale.c"
    p.write_text(p.read_text().replace("tl_structured_build_unary_float_op", "tl_structured_build_unary_op"))
    (gen / "python" / "myops" / "__init__.pyi").unlink()
    r = torchlet_gen("generate", "--check", *GEN_ARGS, "--out", str(gen))
    assert r.returncode == 1
    assert "csrc/ops_scale.c" in r.stderr and "python/myops/__init__.pyi" in r.stderr
    assert "-    return tl_structured_build_unary_op(s, x);" in r.stdout


def test_missing_kernel_fails_the_build_with_its_yaml_line(built):
    # the same build without the C file: the objects are cached, the check fails before linking
    r = torchlet_gen("build", *GEN_ARGS, "--out", str(built))
    assert r.returncode == 1
    yaml = str(EXAMPLE / "native_functions.yaml")
    lines = (EXAMPLE / "native_functions.yaml").read_text().splitlines()
    out_line = next(i for i, s in enumerate(lines, 1) if s.startswith("- func: myops::fused_rms_norm.out("))
    bwd_line = next(i for i, s in enumerate(lines, 1) if s.startswith("- func: myops::fused_rms_norm_backward("))
    err = r.stderr.replace(os.path.relpath(yaml, ROOT), yaml)
    assert f"{yaml}:{out_line}:3: error: myops::fused_rms_norm.out (CPU, Meta) calls 'tl_meta_myops_fused_rms_norm'" in err
    assert f"{yaml}:{out_line}:3: error: myops::fused_rms_norm.out (CPU) calls 'tl_impl_myops_fused_rms_norm_out'" in err
    assert f"calls 'tl_native_myops_fused_rms_norm_backward'" in err and f"{yaml}:{bwd_line + 2}:" in err
    assert "errors generated" in err
    assert (built / "myops" / "_myops.so").exists()  # the good library is left as it was


def test_misnamed_meta_function_is_named(built, tmp_path):
    """The copysign story: a meta function under the wrong name is a build error with a hint
    (built into the same folder: only the edited file compiles, the check fails before linking)."""
    src = tmp_path / "rms_norm.c"
    src.write_text((EXAMPLE / "kernels" / "rms_norm.c").read_text()
                   .replace("int tl_meta_myops_fused_rms_norm(", "int tl_meta_myops_fused_rms_norm_out("))
    r = torchlet_gen("build", *GEN_ARGS, "--sources", str(src), "--out", str(built))
    assert r.returncode == 1
    assert ("'tl_meta_myops_fused_rms_norm_out' is defined: the generator expects "
            "'tl_meta_myops_fused_rms_norm'") in r.stderr


# --------------------------------------------------------------- the ABI

def test_abi_version_is_checked(tmp_path):
    from torchlet.utils import cpp_extension

    assert cpp_extension.ABI_VERSION == tl._C.lib.tl_abi_version() >= 1
    src = tmp_path / "old.c"
    src.write_text("int tl_ext_oldops_abi_version(void) { return 0; }\nint tl_ext_oldops_init(void) { return 0; }\n")
    so = tmp_path / "_oldops.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
    with pytest.raises(ImportError, match=r"oldops .* was compiled against torchlet C ABI version 0, but this "
                                          r"torchlet has ABI version \d+: rebuild it"):
        cpp_extension.load_operator_library(so, "oldops")
    with pytest.raises(ImportError, match="the compiled library .* is missing"):
        cpp_extension.load_operator_library(tmp_path / "nothing.so", "nothing")
    assert tl._C.lib.tl_abi_check(b"lib", tl._C.lib.tl_abi_version()) == 0


def test_include_and_library_paths():
    from torchlet.utils import cpp_extension

    incs = cpp_extension.include_paths()
    assert any((Path(d) / "tl_abi.h").is_file() for d in incs)
    assert any((Path(d) / "tl_ops.h").is_file() for d in incs)
    assert any(Path(d).glob("_C*.so") for d in cpp_extension.library_paths())
