"""Complex dtypes (complex64 / complex128): the dtype facts and promotion,
numpy interop, printing, item(), factories, casts to and from every dtype,
save / load, and the complex operators (view_as_real / view_as_complex, real /
imag, conj / conj_physical, complex, polar, angle) with their gradients
(kernels/native/complex_ops.c, docs/RUNTIME.md "Complex dtypes").

Against numpy always; against torch where installed (promotion table,
printing, error messages, gradients under PyTorch's conjugate Wirtinger
convention)."""
import io

import numpy as np
import pytest

import torchlet as tl
from ops_helpers import needs_torch, torch

R = np.random.default_rng(5)
REAL = [tl.bool, tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64, tl.float16, tl.bfloat16, tl.float32, tl.float64]
CPLX = [tl.complex64, tl.complex128]
NPC = {tl.complex64: np.complex64, tl.complex128: np.complex128}


def crandn(*shape, dtype=np.complex128):
    return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(dtype)


# ------------------------------------------------------------------ dtype facts

def test_dtype_facts():
    assert tl.cfloat is tl.complex64 and tl.cdouble is tl.complex128
    assert tl.complex64.itemsize == 8 and tl.complex128.itemsize == 16
    assert tl.complex64.is_complex and not tl.complex64.is_floating_point
    assert not tl.float32.is_complex
    assert tl.complex64.to_real() is tl.float32 and tl.complex128.to_real() is tl.float64
    assert tl.float64.to_complex() is tl.complex128
    assert repr(tl.complex64) == "torchlet.complex64"
    assert tl.get_default_complex_dtype() is tl.complex64
    tl.set_default_dtype(tl.float64)
    try:
        assert tl.get_default_complex_dtype() is tl.complex128
        assert tl.tensor(1 + 2j).dtype is tl.complex128
    finally:
        tl.set_default_dtype(tl.float32)


@needs_torch
def test_promote_types_matches_torch():
    for a in REAL + CPLX:
        for b in CPLX:
            ta, tb = getattr(torch, str(a).split(".")[-1]), getattr(torch, str(b).split(".")[-1])
            want = str(torch.promote_types(ta, tb)).split(".")[-1]
            assert str(tl.promote_types(a, b)).split(".")[-1] == want, (a, b)
            assert str(tl.promote_types(b, a)).split(".")[-1] == want, (b, a)
            assert tl.can_cast(b, a) == torch.can_cast(tb, ta), (b, a)


@needs_torch
def test_result_type_with_complex_scalars():
    for dt in (tl.float32, tl.float64, tl.int64):   # (float16 + 1j is complex32 in PyTorch: not in torchlet)
        t = tl.ones(2, dtype=dt)
        tt = torch.ones(2, dtype=getattr(torch, str(dt).split(".")[-1]))
        assert str(tl.result_type(t, 1j)).split(".")[-1] == str(torch.result_type(tt, 1j)).split(".")[-1]
    z = tl.ones(2, dtype=tl.complex64)
    assert tl.result_type(z, tl.tensor(1.0, dtype=tl.float64)) is tl.complex64
    assert tl.result_type(z, tl.ones(2, dtype=tl.float64)) is tl.complex128


# ------------------------------------------------------------------ construction, interop, printing

@pytest.mark.parametrize("dt", CPLX)
def test_numpy_roundtrip(dt):
    a = crandn(3, 4, dtype=NPC[dt])
    t = tl.from_numpy(a)
    assert t.dtype is dt and t.shape == (3, 4)
    np.testing.assert_array_equal(t.numpy(), a)
    a[0, 0] = 7 - 1j   # shares memory
    assert t[0, 0].item() == 7 - 1j
    np.testing.assert_array_equal(np.asarray(t.T), a.T)
    assert isinstance(t[1, 2].item(), complex)


def test_tensor_from_python_complex():
    t = tl.tensor([1 + 2j, 3 - 4j, 5])
    assert t.dtype is tl.complex64
    np.testing.assert_array_equal(t.numpy(), np.array([1 + 2j, 3 - 4j, 5], np.complex64))
    s = tl.tensor(1 + 2j)
    assert s.dim() == 0 and s.item() == 1 + 2j
    assert tl.tensor([1j], dtype=tl.complex128).dtype is tl.complex128
    assert tl.tensor(np.complex128(2j)).dtype is tl.complex128
    assert tl.is_complex(t) and t.is_complex() and not t.is_floating_point() and not t.is_conj()


@needs_torch
@pytest.mark.parametrize("vals", [[1 + 2j, 3 - 4j], [[1.5 + 2j, 3j]], [0.001 + 1e5j, -2.5 - 0.0j],
                                  [complex("nan+1j"), complex("inf-2j")], [1 + 1j] * 10])
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_repr_matches_torch(vals, dt):
    assert repr(tl.tensor(vals, dtype=getattr(tl, dt))).replace("torchlet", "torch") == \
        repr(torch.tensor(vals, dtype=getattr(torch, dt)))


@needs_torch
def test_repr_scalar_and_default_dtype():
    assert repr(tl.tensor(1 + 2j)) == repr(torch.tensor(1 + 2j))
    assert repr(tl.zeros(2, dtype=tl.cfloat)) == repr(torch.zeros(2, dtype=torch.cfloat))


@pytest.mark.parametrize("dt", CPLX)
def test_factories(dt):
    np.testing.assert_array_equal(tl.zeros(2, 3, dtype=dt).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(tl.ones(4, dtype=dt).numpy(), np.ones(4))
    np.testing.assert_array_equal(tl.full((2,), 1 - 3j, dtype=dt).numpy(), np.full(2, 1 - 3j))
    assert tl.full((2,), 1 - 3j).dtype is tl.complex64
    assert tl.empty(3, dtype=dt).dtype is dt
    t = tl.zeros(3, dtype=dt)
    t.fill_(2 + 5j)
    np.testing.assert_array_equal(t.numpy(), np.full(3, 2 + 5j))


@pytest.mark.parametrize("dt", CPLX)
def test_randn_complex(dt):
    """PyTorch's complex randn: real and imaginary parts each N(0, 1/2)."""
    tl.manual_seed(3)
    z = tl.randn(200000, dtype=dt).numpy()
    assert z.dtype == NPC[dt]
    assert abs(z.real.var() - 0.5) < 0.01 and abs(z.imag.var() - 0.5) < 0.01
    assert abs(np.mean(np.abs(z) ** 2) - 1.0) < 0.02


# ------------------------------------------------------------------ casts

@pytest.mark.parametrize("src", CPLX)
@pytest.mark.parametrize("dst", REAL + CPLX)
def test_cast_from_complex(src, dst):
    a = np.array([1.5 - 2j, -3.25 + 0j, 0 + 1j, 0j, 100.75 + 7j], NPC[src])
    if dst.is_complex:
        t = tl.from_numpy(a).to(dst)
    else:   # PyTorch's (once per process) warning
        with pytest.warns(UserWarning, match="discards the imaginary part"):
            t = tl.from_numpy(a).to(dst)
    assert t.dtype is dst
    if dst.is_complex:
        want = a.astype(NPC[dst])
    elif dst is tl.bool:
        want = a != 0                       # either part nonzero
    elif dst is tl.bfloat16:   # the real part rounded to bfloat16 (through float32), compared as float32
        want = tl.from_numpy(a.real.astype(np.float32)).to(tl.bfloat16).to(tl.float32).numpy()
    else:
        want = a.real.astype(dst.to_numpy()) if dst.is_floating_point else a.real.astype(np.int64).astype(dst.to_numpy())
    got = t.to(tl.float32).numpy() if dst is tl.bfloat16 else t.numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src", [tl.bool, tl.uint8, tl.int32, tl.int64, tl.float16, tl.float32, tl.float64])
@pytest.mark.parametrize("dst", CPLX)
def test_cast_to_complex(src, dst):
    a = np.array([0, 1, 3, 7], dtype=src.to_numpy())
    t = tl.from_numpy(a).to(dst)
    np.testing.assert_array_equal(t.numpy(), a.astype(NPC[dst]))
    # strided source
    b = np.arange(12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_array_equal(tl.from_numpy(b).T.to(dst).numpy(), b.T.astype(NPC[dst]))


def test_copy_into_complex_and_back():
    z = tl.zeros(3, 2, dtype=tl.complex128)
    z.copy_(tl.from_numpy(np.arange(6.0).reshape(3, 2)))
    np.testing.assert_array_equal(z.numpy(), np.arange(6.0).reshape(3, 2))
    r = tl.zeros(3, 2)
    a = crandn(3, 2)
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        r.copy_(tl.from_numpy(a))
    np.testing.assert_array_equal(r.numpy(), a.real.astype(np.float32))


def test_save_load_roundtrip():
    t = tl.from_numpy(crandn(2, 3))
    buf = io.BytesIO()
    tl.save({"z": t, "w": t.to(tl.complex64)}, buf)
    buf.seek(0)
    d = tl.load(buf)
    np.testing.assert_array_equal(d["z"].numpy(), t.numpy())
    assert d["w"].dtype is tl.complex64


@needs_torch
def test_save_load_torch_interop(tmp_path):
    p = tmp_path / "z.pt"
    z = torch.randn(3, dtype=torch.complex64)
    torch.save(z, p)
    t = tl.load(p)
    assert t.dtype is tl.complex64
    np.testing.assert_array_equal(t.numpy(), z.numpy())
    tl.save(t, p)
    np.testing.assert_array_equal(torch.load(p).numpy(), z.numpy())


# ------------------------------------------------------------------ operators

@pytest.mark.parametrize("dt", CPLX)
def test_view_as_real_and_complex(dt):
    a = crandn(3, 4, dtype=NPC[dt])
    t = tl.from_numpy(a)
    r = tl.view_as_real(t)
    assert r.dtype is dt.to_real() and r.shape == (3, 4, 2) and r.stride() == (8, 2, 1)
    np.testing.assert_array_equal(r.numpy(), np.stack([a.real, a.imag], -1))
    r[0, 0, 1] = 9.0     # a view: writes reach the complex tensor
    assert t[0, 0].item().imag == 9.0
    c = tl.view_as_complex(r)
    np.testing.assert_array_equal(c.numpy(), t.numpy())
    # non-contiguous complex: strides doubled, offset doubled
    v = t[1:, ::2]
    rv = tl.view_as_real(v)
    np.testing.assert_array_equal(rv.numpy(), np.stack([a[1:, ::2].real, a[1:, ::2].imag], -1))
    np.testing.assert_array_equal(tl.view_as_complex(rv).numpy(), a[1:, ::2])
    # 0-dim
    z = tl.tensor(1 + 2j, dtype=dt)
    np.testing.assert_array_equal(tl.view_as_real(z).numpy(), [1, 2])


@needs_torch
def test_view_errors_match_torch():
    cases = [(lambda m: m.view_as_real(m.ones(3)), "view_as_real"),
             (lambda m: m.view_as_complex(m.ones(3, 3)), "size 2"),
             (lambda m: m.view_as_complex(m.ones(2, 3).T), "stride 1"),
             (lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.int64)), "scalar type"),
             (lambda m: m.view_as_complex(m.ones(3, 3)[:, :2]), "divisible by 2"),
             (lambda m: m.view_as_complex(m.ones(5)[1:].reshape(2, 2)), "storage_offset"),
             (lambda m: m.view_as_complex(m.tensor(1.0)), "dimensions"),
             (lambda m: m.imag(m.ones(2)), "imag")]
    for f, _ in cases:
        with pytest.raises(RuntimeError) as want:
            f(torch)
        with pytest.raises(RuntimeError) as got:
            f(tl)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dt", CPLX)
def test_real_imag_conj(dt):
    a = crandn(4, 3, dtype=NPC[dt])
    t = tl.from_numpy(a)
    np.testing.assert_array_equal(tl.real(t).numpy(), a.real)
    np.testing.assert_array_equal(tl.imag(t).numpy(), a.imag)
    np.testing.assert_array_equal(t.real.numpy(), a.real)
    np.testing.assert_array_equal(t.imag.numpy(), a.imag)
    np.testing.assert_array_equal(t.conj().numpy(), a.conj())
    np.testing.assert_array_equal(tl.conj_physical(t.T).numpy(), a.T.conj())
    np.testing.assert_array_equal(t.resolve_conj().numpy(), a)
    x = tl.ones(3)
    assert tl.real(x) is x or np.array_equal(tl.real(x).numpy(), np.ones(3))


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_complex_polar_angle(dt):
    re, im = R.standard_normal((3, 1)).astype(dt), R.standard_normal((4,)).astype(dt)
    c = tl.complex(tl.from_numpy(re), tl.from_numpy(im))
    want = torch.complex(torch.from_numpy(re), torch.from_numpy(im))
    assert str(c.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(c.numpy(), want.numpy())
    ab = np.abs(R.standard_normal(5)).astype(dt)
    an = R.standard_normal(5).astype(dt)
    p = tl.polar(tl.from_numpy(ab), tl.from_numpy(an))
    np.testing.assert_allclose(p.numpy(), torch.polar(torch.from_numpy(ab), torch.from_numpy(an)).numpy(),
                               rtol=1e-6 if dt == "float32" else 1e-14)
    z = crandn(6, dtype=np.complex64 if dt == "float32" else np.complex128)
    z[0] = 0
    np.testing.assert_allclose(tl.angle(tl.from_numpy(z)).numpy(), torch.angle(torch.from_numpy(z)).numpy(),
                               rtol=1e-6)
    x = np.array([-1.5, 0.0, 2.0, np.nan, -0.0], dt)
    np.testing.assert_array_equal(tl.angle(tl.from_numpy(x)).numpy(), torch.angle(torch.from_numpy(x)).numpy())
    i = np.array([-3, 0, 4])
    got, want = tl.angle(tl.from_numpy(i)), torch.angle(torch.from_numpy(i))
    assert got.dtype is tl.float32 and want.dtype == torch.float32
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for f in (lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
              lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64))):
        with pytest.raises(RuntimeError) as w:
            f(torch)
        with pytest.raises(RuntimeError) as g:
            f(tl)
        assert str(g.value) == str(w.value)


def test_unsupported_ops_raise_not_implemented():
    z = tl.ones(3, dtype=tl.complex64)
    with pytest.raises(NotImplementedError, match="ComplexFloat"):
        tl.log10(z)
    with pytest.raises(NotImplementedError, match="ComplexDouble"):
        tl.asin(z.to(tl.complex128))


# ------------------------------------------------------------------ gradients

def _loss_grads(m, fn, inputs, weight):
    """d/dx of sum(view_as_real(fn(x)) * weight) for each input (real-valued loss)."""
    xs = [m.from_numpy(x.copy()).requires_grad_(True) for x in inputs]
    y = fn(m, *xs)
    yr = m.view_as_real(y) if y.is_complex() else y
    (yr * m.from_numpy(weight)).sum().backward()
    return [x.grad.numpy() for x in xs]


@needs_torch
@pytest.mark.parametrize("name, fn, make", [
    ("view_as_real", lambda m, x: x, lambda: [crandn(3, 2)]),
    ("real", lambda m, x: m.stack([m.real(x), m.imag(x)], -1), lambda: [crandn(3, 2)]),
    ("conj", lambda m, x: m.conj_physical(x), lambda: [crandn(4)]),
    ("view_as_complex", lambda m, x: m.view_as_complex(x), lambda: [R.standard_normal((3, 2))]),
    ("complex", lambda m, a, b: m.complex(a, b), lambda: [R.standard_normal((3, 1)), R.standard_normal(4)]),
    ("angle", lambda m, x: m.angle(m.view_as_complex(x)), lambda: [np.concatenate([R.standard_normal((5, 2)),
                                                                                  np.zeros((1, 2))])]),
    ("angle_real", lambda m, x: m.angle(x), lambda: [R.standard_normal(5)]),
    ("polar", lambda m, a, b: m.polar(a, b), lambda: [np.abs(R.standard_normal(5)), R.standard_normal(5)]),
    ("mul_div", lambda m, x, y: m.view_as_complex(x) * m.view_as_complex(y) / (m.view_as_complex(y) + 3),
     lambda: [R.standard_normal((4, 2)), R.standard_normal((4, 2))]),
    ("mm_sum", lambda m, x, y: (m.view_as_complex(x) @ m.view_as_complex(y)).sum(0) - m.view_as_complex(y).mean(),
     lambda: [R.standard_normal((3, 4, 2)), R.standard_normal((4, 2, 2))]),
])
def test_gradients_match_torch(name, fn, make):
    inputs = make()
    y = fn(torch, *[torch.from_numpy(x) for x in inputs])
    shape = (tuple(y.shape) + (2,)) if y.is_complex() else tuple(y.shape)
    w = R.standard_normal(shape)
    got = _loss_grads(tl, fn, inputs, w)
    want = _loss_grads(torch, fn, inputs, w)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ other operators: right values or refusals

def test_data_movement_and_products_on_complex():
    a = crandn(3, 4, dtype=np.complex64)
    b = crandn(4, 2, dtype=np.complex64)
    z, w = tl.from_numpy(a), tl.from_numpy(b)
    cases = [(tl.flip(z, [0]), a[::-1]), (tl.roll(z, 1, 0), np.roll(a, 1, 0)), (tl.cat([z, z]), np.concatenate([a, a])),
             (tl.trace(z), np.trace(a)), (tl.diag(z), np.diag(a)), (tl.tril(z), np.tril(a)), (tl.triu(z), np.triu(a)),
             (tl.dot(z[0], z[1]), np.dot(a[0], a[1])), (tl.vdot(z[0], z[1]), np.vdot(a[0], a[1])),
             (tl.mv(z, z[0]), a @ a[0]), (z @ w, a @ b), (tl.bmm(z[None], w[None]), (a @ b)[None]),
             (tl.addmm(tl.from_numpy(a @ b), z, w, beta=2), 3 * (a @ b)), (tl.einsum("ij,jk->ik", z, w), a @ b),
             (tl.outer(z[0], z[1]), np.outer(a[0], a[1])), (z.T.contiguous(), a.T), (z[tl.tensor([2, 0])], a[[2, 0]]),
             (z * (1 + 2j), a * (1 + 2j)), (1 - z, 1 - a), (z / 2j, a / 2j), (tl.ones(3, 4) * z, a),
             (z.sum(0, keepdim=True), a.sum(0, keepdims=True)), (z.mean(1), a.mean(1)),
             (tl.nonzero(tl.from_numpy(np.array([0, 1j, 2, 0], np.complex64))), np.array([[1], [2]])),
             (tl.count_nonzero(tl.from_numpy(np.array([0, 1j, 2, 0], np.complex64))), 2)]
    for got, want in cases:
        g = got.numpy()
        assert g.shape == np.shape(want)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_matrix_products_through_blas_layouts(dt):
    """cgemm / zgemm: transposed and strided operands, batches, a column-major out,
    complex alpha / beta, and an out that aliases an input"""
    tol = dict(rtol=1e-4, atol=1e-4) if dt == np.complex64 else dict(rtol=1e-12, atol=1e-12)
    a, b, c = crandn(37, 19, dtype=dt), crandn(19, 23, dtype=dt), crandn(37, 23, dtype=dt)
    A, B, C = tl.from_numpy(a), tl.from_numpy(b), tl.from_numpy(c)
    np.testing.assert_allclose((A @ B).numpy(), a @ b, **tol)
    np.testing.assert_allclose((B.T @ A.T).numpy(), b.T @ a.T, **tol)
    np.testing.assert_allclose((A[::2, ::3] @ B[::3, :5]).numpy(), a[::2, ::3] @ b[::3, :5], **tol)
    got = tl.addmm(C, A, B, beta=0.5 - 2j, alpha=1.5 + 0.25j).numpy()
    np.testing.assert_allclose(got, (0.5 - 2j) * c + (1.5 + 0.25j) * (a @ b), **tol)
    out = tl.empty(23, 37, dtype=A.dtype).T  # column-major
    tl.mm(A, B, out=out)
    np.testing.assert_allclose(out.numpy(), a @ b, **tol)
    sq = crandn(19, 19, dtype=dt)
    S = tl.from_numpy(sq.copy())
    tl.mm(S, S, out=S)
    np.testing.assert_allclose(S.numpy(), sq @ sq, **tol)
    ba, bb = crandn(5, 7, 3, dtype=dt), crandn(5, 3, 4, dtype=dt)
    np.testing.assert_allclose(tl.bmm(tl.from_numpy(ba), tl.from_numpy(bb)).numpy(), ba @ bb, **tol)
    np.testing.assert_allclose(tl.matmul(tl.from_numpy(ba), tl.from_numpy(bb[0])).numpy(), ba @ bb[0], **tol)


@needs_torch
def test_refusals_match_torch():
    """operators PyTorch itself refuses for complex inputs: its exception type and message"""
    z = crandn(3, 4, dtype=np.complex64)
    for f in (lambda m, x: m.max(x, 0), lambda m, x: m.argmax(x), lambda m, x: m.argmin(x),
              lambda m, x: m.sort(x), lambda m, x: m.topk(x.flatten(), 2), lambda m, x: m.nansum(x),
              lambda m, x: m.max(x), lambda m, x: m.amax(x), lambda m, x: m.kthvalue(x.flatten(), 1),
              lambda m, x: m.median(x)):
        with pytest.raises(RuntimeError) as want:
            f(torch, torch.from_numpy(z))
        with pytest.raises(RuntimeError) as got:
            f(tl, tl.from_numpy(z))
        assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


def test_torchlet_limits_refuse_not_compute():
    """what PyTorch computes for complex but torchlet's kernels do not: NotImplementedError, never wrong numbers"""
    z = tl.from_numpy(crandn(3, 4, dtype=np.complex64))
    for f in (lambda: tl.log10(z), lambda: tl.asin(z), lambda: tl.linspace(0, 1j, 3), lambda: tl.add(z, z, alpha=1j)):
        with pytest.raises(NotImplementedError):
            f()


@needs_torch
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_allclose_match_torch(equal_nan):
    a = np.array([1 + 1j, 2 + 2j, 3, complex("nan"), complex("inf"), 1j], np.complex128)
    b = a + np.array([1e-9, 0.5j, 1e-3, 0, 0, 1e-6j])
    got = tl.isclose(tl.from_numpy(a), tl.from_numpy(b), equal_nan=equal_nan).numpy()
    want = torch.isclose(torch.from_numpy(a), torch.from_numpy(b), equal_nan=equal_nan).numpy()
    np.testing.assert_array_equal(got, want)
    assert tl.allclose(tl.from_numpy(a[:1]), tl.from_numpy(b[:1])) == torch.allclose(torch.from_numpy(a[:1]),
                                                                                   torch.from_numpy(b[:1]))


_NOT_SWEPT = {"save", "load", "manual_seed", "seed", "set_default_dtype", "compile", "set_num_threads",
              "set_printoptions", "set_default_device", "empty", "empty_like", "rand_like", "randn_like", "bernoulli",
              "multinomial", "normal", "poisson", "rand", "randn", "randint", "randperm", "empty_strided",
              "randint_like", "use_deterministic_algorithms"}


@needs_torch
def test_no_function_silently_differs_on_complex():
    """every torchlet.<f>(z) that torch computes for a complex z gives torch's values and dtype, or raises
    NotImplementedError: never a silently wrong result"""
    a = crandn(3, 4, dtype=np.complex64)
    wrong = []
    for n in sorted(n for n in dir(tl) if n.islower() and not n.startswith("_") and callable(getattr(tl, n))):
        if n in _NOT_SWEPT or not hasattr(torch, n):
            continue
        try:
            want = getattr(torch, n)(torch.from_numpy(a.copy()))   # a copy: in-place functions (exp_) write it
        except Exception:   # noqa: BLE001  (torch refuses it: nothing to compare)
            continue
        try:
            got = getattr(tl, n)(tl.from_numpy(a.copy()))
        except (NotImplementedError, RuntimeError):
            continue
        if isinstance(want, torch.Tensor) and isinstance(got, tl.Tensor):
            w, g = want.resolve_conj().resolve_neg().detach().numpy(), got.detach().numpy()
            if w.shape != g.shape or w.dtype != g.dtype or not np.allclose(g, w, atol=1e-4, equal_nan=True):
                wrong.append(n)
    assert wrong == []


INDEX_CASES = [("gather", lambda m, x, i: m.gather(x, 0, i)),
               ("scatter", lambda m, x, i: m.zeros(4, 5, dtype=x.dtype).scatter(0, i[:1], x[:1])),
               ("index", lambda m, x, i: x[m.tensor([3, 0, 0])]), ("index dim 1", lambda m, x, i: x[:, m.tensor([4, 1])]),
               ("index_select", lambda m, x, i: m.index_select(x, 1, m.tensor([2, 2, 0]))),
               ("index_put", lambda m, x, i: x.clone().index_put_((m.tensor([1, 2]),), x[:2])),
               ("take", lambda m, x, i: m.take(x, m.tensor([7, 3]))),
               ("masked_fill", lambda m, x, i: x.masked_fill(x.real > 0, 0)),
               ("index_copy", lambda m, x, i: x.clone().index_copy(0, m.tensor([2, 0]), x[:2]))]


@needs_torch
@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=["complex64", "complex128"])
@pytest.mark.parametrize("name,f", INDEX_CASES, ids=[c[0] for c in INDEX_CASES])
def test_indexing_moves_whole_complex_elements(name, f, dt):
    """complex128 elements are 16 bytes: the index kernels move them whole"""
    z = crandn(4, 5, dtype=dt)
    i = R.integers(0, 4, (3, 5))
    got = f(tl, tl.from_numpy(z.copy()), tl.from_numpy(i)).numpy()
    want = f(torch, torch.from_numpy(z.copy()), torch.from_numpy(i)).numpy()
    np.testing.assert_array_equal(got, want)


@needs_torch
def test_setitem_python_complex_and_numpy_scalars_match_torch():
    values = [2 + 3j, 2 + 0j, np.float32(1.5), np.int64(2), np.complex64(1j), 7]
    for dt in ("float32", "float64", "int64", "int32", "uint8", "bool", "float16", "complex64", "complex128"):
        for v in values:
            outcome = []
            for m in (torch, tl):
                x = m.zeros(3, dtype=getattr(m, dt))
                try:
                    x[1] = v
                    outcome.append(("ok", [complex(c) for c in x.tolist()]))
                except Exception as e:  # noqa: BLE001 - the comparison is the point
                    outcome.append((type(e).__name__, str(e).replace("torch.", "")))
            assert outcome[1] == outcome[0], (dt, v)


@needs_torch
def test_where_on_complex_matches_torch():
    a = crandn(3, 4, dtype=np.complex64)
    b = crandn(4, dtype=np.complex128)
    c = R.standard_normal((3, 4)) > 0
    got = tl.where(tl.from_numpy(c), tl.from_numpy(a), tl.from_numpy(b))
    want = torch.where(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = tl.where(tl.from_numpy(c), tl.from_numpy(a), 2.5)
    want = torch.where(torch.from_numpy(c), torch.from_numpy(a), 2.5)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    x = tl.from_numpy(a.copy()).requires_grad_()
    tl.where(tl.from_numpy(c), x, 0).abs().sum().backward()
    xt = torch.from_numpy(a.copy()).requires_grad_()
    torch.where(torch.from_numpy(c), xt, 0).abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
