"""The in-process checks of the built myops library (run by
test_operator_library.py in a child pytest, with MYOPS_BUILD naming the
build folder): an operator library cannot be unloaded, and other tests define
a myops namespace of their own with torchlet.library."""
import ast
import os
import sys

import numpy as np
import pytest

import torchlet as tl


@pytest.fixture(scope="module")
def built():
    from pathlib import Path
    return Path(os.environ["MYOPS_BUILD"])


@pytest.fixture(scope="module")
def myops(built):
    sys.path.insert(0, str(built))
    import myops
    return myops


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


