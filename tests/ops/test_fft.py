"""torchlet.fft and the ATen operators under it (_fft_r2c, _fft_c2r, _fft_c2c:
kernels/native/fft.c, fft_plan.c; runtime/torchlet/fft.py; docs/FFT.md).

Against numpy.fft always (odd, prime, Bluestein and power-of-two lengths,
float32 / float64 / complex, non-contiguous inputs, n= / s= / dim= / norm=),
against torch.fft where installed (dtypes, errors and gradients)."""
import numpy as np
import pytest

import torchlet as tl
from ops_helpers import needs_torch, torch

R = np.random.default_rng(11)
NORMS = [None, "backward", "forward", "ortho"]
LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 15, 16, 17, 30, 31, 37, 64, 97, 100, 127, 243, 1000, 1024, 1031]


def tol(dt):
    return dict(rtol=2e-5, atol=2e-5) if dt in (np.float32, np.complex64) else dict(rtol=1e-10, atol=1e-10)


def crand(*shape, dtype=np.complex128):
    return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(dtype)


def T(a):
    return tl.from_numpy(np.ascontiguousarray(a) if a.ndim else a.copy())


def close(got, want, dt, scale=1.0):
    g = got.numpy()
    np.testing.assert_allclose(g, want, **{k: v * scale for k, v in tol(dt).items()})


# ------------------------------------------------------------------ 1-d against numpy

@pytest.mark.parametrize("n", LENGTHS)
def test_fft_ifft_lengths(n):
    a = crand(3, n)
    s = max(1.0, np.log2(n))
    close(tl.fft.fft(T(a)), np.fft.fft(a), np.complex128, s)
    close(tl.fft.ifft(T(a)), np.fft.ifft(a), np.complex128, s)
    x = R.standard_normal((2, n))
    close(tl.fft.rfft(T(x)), np.fft.rfft(x), np.float64, s)
    close(tl.fft.fft(T(x)), np.fft.fft(x), np.float64, s)
    close(tl.fft.ifft(T(x)), np.fft.ifft(x), np.float64, s)
    h = np.fft.rfft(x)
    close(tl.fft.irfft(T(h), n=n), np.fft.irfft(h, n=n), np.float64, s)
    close(tl.fft.hfft(T(h), n=n), np.fft.hfft(h, n=n), np.float64, s * n)
    close(tl.fft.ihfft(T(x)), np.fft.ihfft(x), np.float64, s)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_norm_modes_and_dtypes(norm, dt):
    x = R.standard_normal((4, 45)).astype(dt)
    cdt = np.complex64 if dt == np.float32 else np.complex128
    z = crand(4, 45, dtype=cdt)
    for f, arg in (("fft", z), ("ifft", z), ("rfft", x), ("ihfft", x)):
        got = getattr(tl.fft, f)(T(arg), norm=norm)
        assert got.dtype is (tl.complex64 if dt == np.float32 else tl.complex128)
        close(got, getattr(np.fft, f)(arg, norm=norm), dt, 10)
    h = np.fft.rfft(x)
    got = tl.fft.irfft(T(h.astype(cdt)), norm=norm)
    assert got.dtype is (tl.float32 if dt == np.float32 else tl.float64)
    close(got, np.fft.irfft(h, norm=norm), dt, 10)
    close(tl.fft.hfft(T(h.astype(cdt)), norm=norm), np.fft.hfft(h, norm=norm), dt, 100)


def test_n_trims_and_pads_and_dim():
    a = crand(6, 10)
    for n in (4, 10, 13):
        for dim in (0, 1, -1, -2):
            close(tl.fft.fft(T(a), n=n, dim=dim), np.fft.fft(a, n=n, axis=dim), np.complex128)
            close(tl.fft.ifft(T(a), n=n, dim=dim), np.fft.ifft(a, n=n, axis=dim), np.complex128)
            x = a.real.copy()
            close(tl.fft.rfft(T(x), n=n, dim=dim), np.fft.rfft(x, n=n, axis=dim), np.float64)
            close(tl.fft.irfft(T(a), n=n, dim=dim), np.fft.irfft(a, n=n, axis=dim), np.float64)


def test_non_contiguous_inputs():
    a = crand(8, 12)
    close(tl.fft.fft(T(a).T), np.fft.fft(a.T), np.complex128)
    close(tl.fft.fft(T(a)[:, ::3]), np.fft.fft(a[:, ::3]), np.complex128)
    x = R.standard_normal((7, 9))
    close(tl.fft.rfft(T(x).T, dim=0), np.fft.rfft(x.T, axis=0), np.float64)
    close(tl.fft.fftn(T(x)[1:, ::2]), np.fft.fftn(x[1:, ::2]), np.float64)


def test_integer_input_promotes():
    i = np.arange(10)
    got = tl.fft.fft(T(i))
    assert got.dtype is tl.complex64
    close(got, np.fft.fft(i), np.float32)


# ------------------------------------------------------------------ n-d

@pytest.mark.parametrize("norm", NORMS)
def test_nd_transforms(norm):
    a = crand(3, 5, 6)
    x = a.real.copy()
    close(tl.fft.fft2(T(a), norm=norm), np.fft.fft2(a, norm=norm), np.complex128)
    close(tl.fft.ifft2(T(a), norm=norm), np.fft.ifft2(a, norm=norm), np.complex128)
    close(tl.fft.fftn(T(a), norm=norm), np.fft.fftn(a, norm=norm), np.complex128)
    close(tl.fft.ifftn(T(a), norm=norm), np.fft.ifftn(a, norm=norm), np.complex128)
    close(tl.fft.rfft2(T(x), norm=norm), np.fft.rfft2(x, norm=norm), np.float64)
    close(tl.fft.rfftn(T(x), norm=norm), np.fft.rfftn(x, norm=norm), np.float64)
    h = np.fft.rfftn(x)
    close(tl.fft.irfftn(T(h), s=x.shape, norm=norm), np.fft.irfftn(h, s=x.shape, axes=(0, 1, 2), norm=norm),
          np.float64)
    close(tl.fft.irfft2(T(h), norm=norm), np.fft.irfft2(h, norm=norm), np.float64)
    close(tl.fft.fftn(T(a), s=(4, 7), dim=(0, 2)), np.fft.fftn(a, s=(4, 7), axes=(0, 2)), np.complex128)
    close(tl.fft.rfftn(T(x), s=(4, 9)), np.fft.rfftn(x, s=(4, 9), axes=(1, 2)), np.float64)
    close(tl.fft.irfftn(T(h), s=(2, 3, 7)), np.fft.irfftn(h, s=(2, 3, 7), axes=(0, 1, 2)), np.float64)
    close(tl.fft.fftn(T(a), dim=1), np.fft.fftn(a, axes=(1,)), np.complex128)


def test_freqs_and_shifts():
    for n in (1, 2, 7, 8):
        for d in (1.0, 0.3):
            np.testing.assert_allclose(tl.fft.fftfreq(n, d).numpy(), np.fft.fftfreq(n, d), rtol=1e-6)
            np.testing.assert_allclose(tl.fft.rfftfreq(n, d).numpy(), np.fft.rfftfreq(n, d), rtol=1e-6)
    assert tl.fft.fftfreq(4).dtype is tl.float32
    assert tl.fft.fftfreq(4, dtype=tl.float64).dtype is tl.float64
    a = np.arange(30.0).reshape(5, 6)
    np.testing.assert_array_equal(tl.fft.fftshift(T(a)).numpy(), np.fft.fftshift(a))
    np.testing.assert_array_equal(tl.fft.ifftshift(T(a)).numpy(), np.fft.ifftshift(a))
    np.testing.assert_array_equal(tl.fft.fftshift(T(a), dim=1).numpy(), np.fft.fftshift(a, axes=1))
    z = crand(5, 4)
    np.testing.assert_array_equal(tl.fft.fftshift(T(z), dim=(0,)).numpy(), np.fft.fftshift(z, axes=(0,)))


# ------------------------------------------------------------------ errors and torch

@needs_torch
def test_errors_match_torch():
    cases = [lambda m: m.fft.fft(m.ones(4), n=0),
             lambda m: m.fft.fft(m.ones(4), norm="bad"),
             lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64)),
             lambda m: m.fft.fftn(m.ones(4, 4), dim=(0, 0)),
             lambda m: m.fft.fftn(m.ones(4, 4), s=(2, 2, 2)),
             lambda m: m.fft.fftn(m.ones(4, 4), s=(2,), dim=(0, 1)),
             lambda m: m.fft.irfft(m.ones(1, dtype=m.complex64)),
             lambda m: m.fft.fft(m.ones(0))]
    for f in cases:
        with pytest.raises(RuntimeError) as want:
            f(torch)
        with pytest.raises(RuntimeError) as got:
            f(tl)
        assert str(got.value) == str(want.value)
    for f in (lambda m: m.fft.fft(m.tensor(1.0)), lambda m: m.fft.fft(m.ones(3), dim=2)):
        with pytest.raises(IndexError) as want:
            f(torch)
        with pytest.raises(IndexError) as got:
            f(tl)
        assert str(got.value) == str(want.value)


def _grads(m, f, x, w):
    t = m.from_numpy(x.copy()).requires_grad_(True)
    y = f(m, t)
    yr = m.view_as_real(y.resolve_conj()) if y.is_complex() else y
    (yr * m.from_numpy(w)).sum().backward()
    return t.grad.numpy()


@needs_torch
@pytest.mark.parametrize("name, f, make", [
    ("fft_real", lambda m, x: m.fft.fft(x, norm="ortho"), lambda: R.standard_normal((3, 7))),
    ("fft_complex", lambda m, x: m.fft.fft(m.view_as_complex(x), n=9), lambda: R.standard_normal((3, 7, 2))),
    ("ifft", lambda m, x: m.fft.ifft(m.view_as_complex(x)), lambda: R.standard_normal((5, 2))),
    ("rfft", lambda m, x: m.fft.rfft(x), lambda: R.standard_normal((4, 10))),
    ("rfft_odd", lambda m, x: m.fft.rfft(x, norm="forward"), lambda: R.standard_normal(9)),
    ("irfft", lambda m, x: m.fft.irfft(m.view_as_complex(x)), lambda: R.standard_normal((3, 6, 2))),
    ("irfft_odd", lambda m, x: m.fft.irfft(m.view_as_complex(x), n=11), lambda: R.standard_normal((6, 2))),
    ("hfft", lambda m, x: m.fft.hfft(m.view_as_complex(x)), lambda: R.standard_normal((5, 2))),
    ("ihfft", lambda m, x: m.fft.ihfft(x), lambda: R.standard_normal(8)),
    ("rfft2", lambda m, x: m.fft.rfft2(x), lambda: R.standard_normal((4, 6))),
    ("irfftn", lambda m, x: m.fft.irfftn(m.view_as_complex(x)), lambda: R.standard_normal((3, 4, 2))),
    ("fftn", lambda m, x: m.fft.fftn(x, s=(5, 3)), lambda: R.standard_normal((4, 4))),
])
def test_gradients_match_torch(name, f, make):
    x = make()
    y = f(torch, torch.from_numpy(x))
    shape = tuple(y.shape) + ((2,) if y.is_complex() else ())
    w = R.standard_normal(shape)
    np.testing.assert_allclose(_grads(tl, f, x, w), _grads(torch, f, x, w), rtol=1e-10, atol=1e-10)


@needs_torch
def test_float32_against_torch():
    x = R.standard_normal((16, 1000)).astype(np.float32)
    got, want = tl.fft.rfft(T(x)), torch.fft.rfft(torch.from_numpy(x))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


@needs_torch
@pytest.mark.parametrize("norm", NORMS)
def test_hfftn_ihfftn_match_torch(norm):
    z = crand(4, 5, 6)
    x = R.standard_normal((4, 5, 7))
    for name, arg, kw in (("hfftn", z, {}), ("hfft2", z, {}), ("hfftn", z, {"s": (3, 8)}),
                          ("ihfftn", x, {}), ("ihfft2", x, {}), ("ihfftn", x, {"dim": (0,)})):
        got = getattr(tl.fft, name)(T(arg), norm=norm, **kw)
        want = getattr(torch.fft, name)(torch.from_numpy(arg), norm=norm, **kw)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(got.numpy(), want.resolve_conj().numpy(), rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ out=

OUT_CASES = [  # (function, input kind, kwargs, out dtype)
    ("fft", "r", {}, "complex64"), ("fft", "c", {"n": 6}, "complex128"), ("ifft", "c", {"norm": "ortho"}, "complex64"),
    ("ifft", "r", {}, "complex64"), ("rfft", "r", {"n": 9}, "complex64"), ("irfft", "c", {}, "float32"),
    ("irfft", "c", {"n": 7}, "float64"), ("hfft", "c", {}, "float32"), ("ihfft", "r", {}, "complex64"),
    ("fft2", "c", {}, "complex64"), ("ifft2", "r", {"s": (3, 4)}, "complex64"), ("fftn", "r", {}, "complex128"),
    ("ifftn", "c", {"dim": (0,)}, "complex64"), ("rfft2", "r", {}, "complex64"), ("rfftn", "r", {}, "complex64"),
    ("irfft2", "c", {}, "float32"), ("irfftn", "c", {"s": (4, 6)}, "float32"), ("hfft2", "c", {}, "float32"),
    ("hfftn", "c", {}, "float64"), ("ihfft2", "r", {}, "complex64"), ("ihfftn", "r", {}, "complex64"),
    ("ihfft2", "r", {"dim": (0, 1)}, "complex64"),
]


@needs_torch
@pytest.mark.parametrize("name,kind,kw,odt", OUT_CASES)
@pytest.mark.parametrize("presized", [False, True])
def test_out_variants_match_torch(name, kind, kw, odt, presized):
    a = crand(4, 5, dtype=np.complex64) if kind == "c" else R.standard_normal((4, 5)).astype(np.float32)
    want = getattr(torch.fft, name)(torch.from_numpy(a), **kw)
    shape = tuple(want.shape) if presized else (0,)
    out_t = torch.empty(shape, dtype=getattr(torch, odt))
    got_t = getattr(torch.fft, name)(torch.from_numpy(a), **kw, out=out_t)
    out = tl.empty(shape, dtype=getattr(tl, odt))
    got = getattr(tl.fft, name)(T(a), **kw, out=out)
    assert got is out and got_t is out_t
    assert tuple(out.shape) == tuple(out_t.shape) and str(out.dtype) == str(out_t.dtype).replace("torch", "torchlet")
    np.testing.assert_allclose(out.numpy(), out_t.numpy(), rtol=1e-4, atol=1e-4)


@needs_torch
def test_out_errors_and_resize_warning_match_torch():
    import warnings
    a = R.standard_normal(8).astype(np.float32)
    c = crand(8, dtype=np.complex64)
    cases = [("fft", a, "float32"), ("rfft", a, "int64"), ("irfft", c, "complex64"), ("fftn", c, "float64"),
             ("ihfft", a, "float32"), ("hfftn", c, "complex64")]
    for name, x, odt in cases:
        with pytest.raises(RuntimeError) as te:
            getattr(torch.fft, name)(torch.from_numpy(x), out=torch.empty(8, dtype=getattr(torch, odt)))
        with pytest.raises(RuntimeError) as le:
            getattr(tl.fft, name)(T(x), out=tl.empty(8, dtype=getattr(tl, odt)))
        assert str(le.value) == str(te.value)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = tl.empty(3, dtype=tl.complex64)
        tl.fft.fft(T(a), out=out)
    assert tuple(out.shape) == (8,) and any("was resized since it had shape [3]" in str(m.message) for m in w)
    x = tl.randn(8, requires_grad=True)
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support automatic differentiation"):
        tl.fft.fft(x, out=tl.empty(8, dtype=tl.complex64))


@needs_torch
@pytest.mark.parametrize("n", [1, 4, 7])
def test_fftfreq_out(n):
    for name in ("fftfreq", "rfftfreq"):
        out_t = getattr(torch.fft, name)(n, 0.5, out=torch.empty(0, dtype=torch.float64))
        out = tl.empty(0, dtype=tl.float64)
        got = getattr(tl.fft, name)(n, 0.5, out=out)
        assert got is out and out.dtype == tl.float64
        np.testing.assert_allclose(out.numpy(), out_t.numpy())


def test_ihfftn_one_dim_out_is_the_conjugated_r2c():
    # torch 2.13's own ihfftn over one dim with out= resizes out to [0] and leaves it
    # unwritten (conj_physical_outf's arguments swapped): compare with the functional form
    a = R.standard_normal((4, 5)).astype(np.float32)
    for shape in [(0,), (4, 3)]:
        out = tl.empty(shape, dtype=tl.complex64)
        assert tl.fft.ihfftn(T(a), dim=(1,), out=out) is out
        np.testing.assert_allclose(out.numpy(), tl.fft.ihfftn(T(a), dim=(1,)).numpy(), rtol=1e-6)
        np.testing.assert_allclose(out.numpy(), np.conj(np.fft.rfft(a, axis=1)) / 5, rtol=1e-5, atol=1e-6)
