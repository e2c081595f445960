"""The in-house float32 tanh (kernels/ufunc/tl_vtanh.h, the AVX2 loops) and
the closed forms of gelu(approximate='tanh'), its backward and mish (one exp
and a division each, kernels/ufunc/gelu_tanh.h, gelu_backward_tanh.h,
mish.h), on every CPU capability's loop.

tl_tanhf's 1.56 ulp maximum was found by an exhaustive sweep of all 2^32
float32 patterns (AVX2 and AVX-512 builds of the function in a standalone C
loop against libm's double tanh); here: every 2^11-th pattern plus every
float around the branch point and where tanh reaches 1."""
import math

import numpy as np
import pytest

import torchlet as tl
from ops_helpers import needs_torch, torch
from test_vexp import cap, dense, patterns, tl_apply, ulp_error  # noqa: F401 (cap: the fixture)

NN = tl._C._nn
B, K = math.sqrt(2 / math.pi), 0.044715


def test_tanh_within_two_ulp(cap):
    x = np.concatenate([patterns(11), dense(0.54, 0.56), -dense(0.549, 0.5495), dense(8.9, 9.1)[::5],
                        dense(1e-4, 1e-3)[::11]])
    err = ulp_error(tl_apply(tl.tanh, x), np.tanh(x.astype(np.float64)))
    assert err.max() <= 2.0, (cap, x[np.argmax(err)], err.max())


def test_tanh_special_values(cap):
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 20.0, -20.0, 1e-30, -1e-40, 3e38])
    y = tl_apply(tl.tanh, x)
    assert y[0] == 0 and not np.signbit(y[0]) and y[1] == 0 and np.signbit(y[1])
    np.testing.assert_array_equal(y[[2, 3, 5, 6, 9]], [1, -1, 1, -1, 1])
    assert np.isnan(y[4])
    np.testing.assert_array_equal(y[7:9], x[7:9])   # tanh(x) rounds to x for tiny x


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_tanh_strided_and_dtypes(cap, dt):
    x = (np.random.default_rng(1).standard_normal((33, 17)) * 2).astype(dt)
    got = tl.tanh(tl.from_numpy(x.T.copy()).transpose(0, 1)).numpy()
    rtol = {np.float16: 1e-3, np.float32: 3e-7, np.float64: 1e-15}[dt]
    np.testing.assert_allclose(got, np.tanh(x.astype(np.float64)).astype(dt), rtol=rtol, atol=rtol * 1e-3)


def _grid():
    return np.concatenate([np.linspace(-12, 12, 240001, dtype=np.float32), dense(-0.01, -1e-6)[::1001],
                           dense(1e-6, 0.01)[::1001]])


def _sig2(xd):
    """0.5 (1 + tanh(y)) = 1 / (1 + e^(-2y)) and e^(-2y), y = b (x + k x^3),
    in float64 without the cancellation of 1 + tanh"""
    with np.errstate(over="ignore"):
        e = np.exp(-2 * B * (xd + K * xd ** 3))
    return 1 / (1 + e), e


def test_gelu_tanh_accuracy(cap):
    x = _grid()
    xd = x.astype(np.float64)
    s, _ = _sig2(xd)
    ref = xd * s
    y = tl_apply(lambda t: NN.gelu(t, approximate="tanh"), x)
    # y's float32 roundings (up to 5 * 2^-24 relative) scale e^(-2y)'s error
    # by |2y|: 4 + 6|y| ulp (the measured worst is ~4.6|y|, in the tail where
    # PyTorch's 1 + tanh(y) has no correct digit left)
    bound = 4 + 6 * B * np.abs(xd + K * xd ** 3)
    err = ulp_error(y, ref)
    tiny = np.abs(ref) < 2.0 ** -100   # e^(-2y) overflows: -0, as PyTorch's
    assert (err[~tiny] <= bound[~tiny]).all(), (cap, x[~tiny][np.argmax(err[~tiny] / bound[~tiny])])
    assert np.abs(y[tiny]).max() <= 2.0 ** -100


def test_gelu_backward_tanh_accuracy(cap):
    x = _grid()
    xd = x.astype(np.float64)
    g = np.random.default_rng(2).standard_normal(x.size).astype(np.float32)
    s, e = _sig2(xd)
    ref = g * (s + 2 * xd * s * np.where(s == 0, 1.0, e * s) * B * (1 + 3 * K * xd * xd))
    got = NN.gelu_backward(tl.from_numpy(g), tl.from_numpy(x), approximate="tanh").numpy()
    # the derivative crosses 0 near x = -0.75 (cancellation there): an
    # absolute part in units of |g| (measured: 2.3e-7 |g|; relative 3.1e-5
    # where |ref| > 1e-3 |g|)
    ok = np.abs(got - ref) <= 2e-6 * np.abs(ref) + 5e-7 * np.abs(g)
    assert ok.all(), (cap, x[~ok][:5])


def test_mish_accuracy(cap):
    x = np.concatenate([_grid(), np.linspace(-87, 90, 17701, dtype=np.float32)])
    xd = x.astype(np.float64)
    with np.errstate(over="ignore"):
        ref = xd * np.tanh(np.log1p(np.exp(xd)))
    err = ulp_error(tl_apply(NN.mish, x), ref)
    assert err.max() <= 6.0, (cap, x[np.argmax(err)], err.max())
    # below -87.3 e^x is subnormal (fewer digits, in PyTorch's formula too):
    # within a few subnormal steps times |x|
    x = np.linspace(-110, -87, 2301, dtype=np.float32)
    ref = x.astype(np.float64) * np.exp(x.astype(np.float64))
    assert (np.abs(tl_apply(NN.mish, x) - ref) <= 2 * np.abs(x) * 2.0 ** -149).all()


def test_special_values(cap):
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 30.0, -30.0, 1e20, -1e20, 1e-40, -1e-40])
    tx = tl.from_numpy(x)
    gt = NN.gelu(tx, approximate="tanh").numpy()
    gb = NN.gelu_backward(tl.from_numpy(np.ones_like(x)), tx, approximate="tanh").numpy()
    m = NN.mish(tx).numpy()
    with np.errstate(invalid="ignore"):
        # gelu_tanh: x for large x, -0 for very negative x, NaN at -inf (-inf * 0)
        np.testing.assert_array_equal(gt[[2, 5, 7]], x[[2, 5, 7]])
        assert np.isnan(gt[[3, 4]]).all() and (gt[[6, 8]] == 0).all() and np.signbit(gt[[1, 6, 8]]).all()
        # gelu_backward_tanh: 1 for large x, +0 for very negative x, 0.5 at 0;
        # NaN at +-inf and where x^3 overflows (inf * 0), as PyTorch's
        np.testing.assert_array_equal(gb[[0, 1, 5, 6]], [0.5, 0.5, 1, 0])
        assert not np.signbit(gb[6]) and np.isnan(gb[[2, 3, 4, 7, 8]]).all()
        # mish: x for large x, -0 / NaN at the bottom as x * tanh(softplus(x))
        np.testing.assert_array_equal(m[[0, 2, 5, 7]], x[[0, 2, 5, 7]])
        assert np.isnan(m[[3, 4]]).all() and np.signbit(m[1]) and m[6] < 0 and m[8] == 0 and np.signbit(m[8])


@needs_torch
def test_against_torch(cap):
    x = np.concatenate([(np.random.default_rng(5).standard_normal(4099) * 4).astype(np.float32),
                        np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 50.0, -50.0])])
    tx, px = tl.from_numpy(x), torch.from_numpy(x)
    g = np.random.default_rng(6).standard_normal(x.size).astype(np.float32)
    F = torch.nn.functional
    # torch's tanh form loses ~|x| ulp(1) (backward: ~|x|^3 ulp(1)) to the
    # cancellation in 1 + tanh and 1 - tanh^2: atol
    for name, got, want, rtol, atol in [
            ("tanh", tl.tanh(tx), torch.tanh(px), 3e-7, 0),
            ("gelu_tanh", NN.gelu(tx, approximate="tanh"), F.gelu(px, approximate="tanh"), 1e-6, 1e-6),
            ("gelu_backward_tanh", NN.gelu_backward(tl.from_numpy(g), tx, approximate="tanh"),
             torch.ops.aten.gelu_backward(torch.from_numpy(g), px, approximate="tanh"), 1e-5, 1e-5),
            ("mish", NN.mish(tx), F.mish(px), 1e-6, 0)]:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=atol, err_msg=name)
