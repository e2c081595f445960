"""The worked operator library (examples/extension, namespace myops), built by
``torchlet-gen build`` into a temporary folder against the installed torchlet
and imported: values against numpy (and torch when installed), gradcheck of
its derivatives.yaml backward, Meta shapes, torchlet.ops.myops objects with
their schemas, the .pyi stubs, ``--check`` on a stale generated folder, a
missing kernel failing the build with its YAML file and line, and the C ABI
version check."""
import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
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


@pytest.fixture(scope="module")
def myops(built):
    sys.path.insert(0, str(built))
    try:
        import myops
        yield myops
    finally:
        sys.path.remove(str(built))


def T(a):
    return tl.from_numpy(np.array(a, copy=True))


def rms_ref(x, w, eps):
    x = np.asarray(x, np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


# ------------------------------------------------------------------ values

@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_scale_values(myops, dt, cpu_capability):
    rng = np.random.default_rng(0)
    for shape in [(7, 33), (), (0, 4), (1031,)]:
        x = rng.standard_normal(shape).astype(dt)
        got = myops.scale(T(x), 2.5)
        assert got.dtype is tl.from_numpy(x).dtype and tuple(got.shape) == shape
        np.testing.assert_allclose(got.numpy(), x * dt(2.5), rtol=1e-6)


def test_scale_dtypes_and_out(myops):
    h = tl.from_numpy(np.array([1.5, -2.0], np.float16))
    np.testing.assert_array_equal(myops.scale(h, 2.0).numpy(), np.array([3.0, -4.0], np.float16))
    # integers compute in the default float dtype (promotes_int_to_float -> derived float meta)
    r = myops.scale(T(np.array([1, 2, 3])), 0.5)
    assert r.dtype is tl.float32
    np.testing.assert_array_equal(r.numpy(), np.array([0.5, 1.0, 1.5], np.float32))
    out = tl.empty((3,))
    r = myops.scale(T(np.array([1.0, 2.0, 3.0], np.float32)), 3.0, out=out)
    assert r.data_ptr() == out.data_ptr()   # the out tensor (torchlet.ops returns a new wrapper of it)
    np.testing.assert_array_equal(out.numpy(), [3.0, 6.0, 9.0])
    x = T(np.arange(12, dtype=np.float64).reshape(3, 4))
    np.testing.assert_array_equal(myops.scale(x.t(), -1.0).numpy(), -np.arange(12.0).reshape(3, 4).T)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_fused_rms_norm_values(myops, dt):
    rng = np.random.default_rng(1)
    for shape in [(4, 16), (2, 3, 7), (5,), (0, 8)]:
        x = rng.standard_normal(shape).astype(dt)
        w = rng.standard_normal(shape[-1:]).astype(dt)
        got = myops.fused_rms_norm(T(x), T(w), 1e-5)
        assert got.dtype is tl.from_numpy(x).dtype
        np.testing.assert_allclose(got.numpy(), rms_ref(x, w, 1e-5), rtol=1e-5 if dt == np.float32 else 1e-12)
    x = rng.standard_normal((6, 10))
    w = rng.standard_normal(10)
    np.testing.assert_allclose(myops.fused_rms_norm(T(x).t().contiguous().t(), T(w)).numpy(), rms_ref(x, w, 1e-6))
    out = tl.empty((10, 6), dtype=tl.float64).t()          # a non-contiguous out=
    assert myops.fused_rms_norm(T(x), T(w), out=out).data_ptr() == out.data_ptr()
    np.testing.assert_allclose(out.numpy(), rms_ref(x, w, 1e-6), rtol=1e-12)


def test_fused_rms_norm_errors(myops):
    with pytest.raises(RuntimeError, match=r"expected weight of shape \[4\]"):
        myops.fused_rms_norm(tl.ones((2, 4)), tl.ones((3,)))
    with pytest.raises(RuntimeError, match="\"fused_rms_norm\" not implemented for 'Long'"):
        myops.fused_rms_norm(T(np.ones((2, 4), np.int64)), T(np.ones(4, np.int64)))
    with pytest.raises(ValueError, match="eps must be >= 0"):
        myops.fused_rms_norm(tl.ones((2, 4)), tl.ones((4,)), -1.0)


def test_against_torch(myops):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 5, 8))
    w = rng.standard_normal(8)
    want = torch.nn.functional.rms_norm(torch.from_numpy(x), (8,), torch.from_numpy(w), eps=1e-6)
    np.testing.assert_allclose(myops.fused_rms_norm(T(x), T(w)).numpy(), want.numpy(), rtol=1e-12)
    tx, tw = torch.from_numpy(x).requires_grad_(), torch.from_numpy(w).requires_grad_()
    torch.nn.functional.rms_norm(tx, (8,), tw, eps=1e-6).pow(2).sum().backward()
    lx, lw = T(x).requires_grad_(), T(w).requires_grad_()
    myops.fused_rms_norm(lx, lw).pow(2).sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- autograd

def test_gradcheck(myops):
    rng = np.random.default_rng(3)
    x = T(rng.standard_normal((3, 6))).requires_grad_()
    w = T(rng.standard_normal(6)).requires_grad_()
    assert tl.autograd.gradcheck(lambda a, b: myops.fused_rms_norm(a, b, 1e-3), (x, w))
    assert tl.autograd.gradcheck(lambda a: myops.scale(a, -1.5), (x,))
    y = myops.fused_rms_norm(x, w)
    assert type(y.grad_fn).__name__ == "FusedRmsNormBackward0" or "FusedRmsNorm" in str(y.grad_fn)


# -------------------------------------------------------------- Meta, ops

def test_meta_shapes(myops):
    x = tl.empty((2, 3, 8), device="meta", dtype=tl.float64)
    r = myops.fused_rms_norm(x, tl.empty((8,), device="meta", dtype=tl.float64))
    assert r.device.type == "meta" and tuple(r.shape) == (2, 3, 8) and r.dtype is tl.float64
    with pytest.raises(RuntimeError, match=r"expected weight of shape \[8\]"):
        myops.fused_rms_norm(x, tl.empty((7,), device="meta", dtype=tl.float64))
    s = myops.scale(tl.empty((4, 0, 2), device="meta", dtype=tl.int32), 2.0)
    assert tuple(s.shape) == (4, 0, 2) and s.dtype is tl.float32 and s.device.type == "meta"


def test_ops_objects_and_schemas(myops):
    assert myops.scale is tl.ops.myops.scale
    assert str(tl.ops.myops.scale.default._schema) == "myops::scale(Tensor x, float alpha) -> Tensor"
    assert str(tl.ops.myops.fused_rms_norm.out._schema) == (
        "myops::fused_rms_norm.out(Tensor input, Tensor weight, float eps=1e-06, *, Tensor(a!) out) -> Tensor(a!)")
    assert sorted(tl.ops.myops.scale.overloads()) == ["default", "out"]
    dump = tl._C._dispatch_dump_table("myops::fused_rms_norm")
    assert "CPU" in dump and "Meta" in dump and "Autograd" in dump
    assert myops.__all__ == ["scale", "fused_rms_norm", "fused_rms_norm_backward"]


def test_stubs(built):
    stub = (built / "myops" / "__init__.pyi").read_text()
    tree = ast.parse(stub)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert names.count("scale") == 2 and names.count("fused_rms_norm") == 2
    assert "def scale(x: Tensor, alpha: float) -> Tensor: ..." in stub
    assert "def fused_rms_norm_backward(grad_out: Tensor, input: Tensor, weight: Tensor, eps: float) " \
           "-> tuple[Tensor, Tensor]: ..." in stub


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
