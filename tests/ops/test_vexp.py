"""The in-house float32 exp and erf (kernels/ufunc/tl_vexp.h): exp, erf,
sigmoid, silu, gelu take them in the AVX-512 loops (libmvec's in the baseline
and AVX2 loops, where those are faster), softmax / logsumexp / attention on
every ISA. Accuracy over evenly spaced float32 bit patterns plus every edge
(the 0.89 ulp / 1.60 ulp maxima of the in-house code were found by
exhaustive sweeps of all 2^32 patterns), special values, and every CPU
capability's loop, since each is compiled (and rounds) differently."""
import math

import numpy as np
import pytest

import torchlet as tl
from ops_helpers import needs_torch, torch

CAPS = tl._supported_cpu_capabilities()


@pytest.fixture(params=CAPS)
def cap(request):
    before = tl.get_cpu_capability()
    tl._set_cpu_capability(request.param)
    yield request.param
    tl._set_cpu_capability(before)


def patterns(step_log2, lo=None, hi=None):
    """float32 values of every 2^step_log2-th bit pattern (both signs, NaNs
    dropped), plus every pattern in [lo, hi] when given"""
    bits = np.arange(0, 1 << 32, 1 << step_log2, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    parts = [x[~np.isnan(x)]]
    if lo is not None:
        parts.append(dense(lo, hi))
    return np.concatenate(parts)


def dense(lo, hi):
    """every float32 in [lo, hi] (lo < hi, same sign)"""
    a, b = np.float32(lo), np.float32(hi)
    ia, ib = sorted((int(np.array(a).view(np.uint32)), int(np.array(b).view(np.uint32))))
    return np.arange(ia, ib + 1, dtype=np.uint64).astype(np.uint32).view(np.float32)


def ulp_error(y, ref):
    """|y - ref| in units of the float32 ulp at ref (float64 ref); inf where
    one is infinite and the other is not"""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ref32 = ref.astype(np.float32)
        a = np.abs(ref)
        e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
        ulp = np.exp2(np.maximum(e, -126.0) - 23.0)
        err = np.abs(y.astype(np.float64) - ref) / ulp
    both_inf = np.isinf(y) & np.isinf(ref32) & (np.sign(y) == np.sign(ref32))
    err = np.where(both_inf, 0.0, err)
    return np.where(np.isinf(y) != np.isinf(ref32), np.inf, err)


def tl_apply(fn, x):
    return fn(tl.from_numpy(np.ascontiguousarray(x))).numpy()


# ---------------------------------------------------------------- exp
def test_exp_within_one_ulp(cap):
    # 2^21 patterns, and (every 7th) float where e^x meets the ends:
    # overflow, the subnormal boundary, the last nonzero results, tiny x
    x = np.concatenate([patterns(11), dense(88.5, 88.75), dense(-87.5, -87.2)[::7], dense(-104.0, -103.0)[::7],
                        dense(-1e-3, -1e-8)[::7], dense(1e-8, 1e-3)[::7]])
    y = tl_apply(tl.exp, x)
    with np.errstate(over="ignore"):
        ref = np.exp(x.astype(np.float64))
    err = ulp_error(y, ref)
    assert err.max() <= 1.0, (cap, x[np.argmax(err)], err.max())


def test_exp_special_values(cap):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 88.72283, 88.72284, 89.0, 1e30, -103.97,
                  -103.98, -104.0, -1e30, 1.0, -1.0], dtype=np.float32)
    y = tl_apply(tl.exp, x)
    with np.errstate(over="ignore"):
        ref = np.exp(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(x))
    ok = ~np.isnan(x)
    np.testing.assert_array_equal(y[ok], ref[ok])   # these are all exact in float32 (or the nearest)
    assert y[0] == 1.0 and y[1] == 1.0 and y[2] == np.inf and y[3] == 0.0 and y[6] < np.inf and y[7] == np.inf


def test_exp_subnormal_results_rounded_once(cap):
    x = dense(-103.9, -87.4)[::97]
    y = tl_apply(tl.exp, x)
    ref = np.exp(x.astype(np.float64))
    # subnormal spacing is 2^-149: within one of it
    assert np.abs(y.astype(np.float64) - ref).max() <= 2.0 ** -149


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_exp_strided_and_dtypes(cap, dt):
    x = (np.random.default_rng(1).standard_normal((37, 41)) * 20).astype(dt)
    tx = tl.from_numpy(x)
    got = tl.exp(tl.from_numpy(x.T.copy()).transpose(0, 1)).numpy()   # non-contiguous input
    with np.errstate(over="ignore"):
        ref = np.exp(x.astype(np.float64)).astype(dt)
    rtol = {np.float16: 1e-3, np.float32: 2.4e-7, np.float64: 1e-15}[dt]
    np.testing.assert_allclose(got, ref, rtol=rtol)
    np.testing.assert_allclose(tl.exp(tx).numpy(), ref, rtol=rtol)


def test_exp_same_bits_any_thread_count():
    x = (np.random.default_rng(2).standard_normal(1 << 21) * 30).astype(np.float32)
    n = tl.get_num_threads()
    try:
        tl.set_num_threads(1)
        a = tl_apply(tl.exp, x)
        tl.set_num_threads(2)
        b = tl_apply(tl.exp, x)
    finally:
        tl.set_num_threads(n)
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


# ---------------------------------------------------------------- erf
def test_erf_within_two_ulp(cap):
    # 2^19 patterns plus every float in the first branch's last stretch and
    # the second branch's first, and where erf reaches 1
    x = np.concatenate([patterns(13), dense(0.98, 1.0)[::7], dense(1.0, 1.05)[::7], dense(3.9, 3.95)[::3],
                        -dense(0.5, 0.5001)])
    y = tl_apply(tl.erf, x)
    ref = np.array([math.erf(v) for v in x.astype(np.float64).tolist()])
    err = ulp_error(y, ref)
    assert err.max() <= 2.0, (cap, x[np.argmax(err)], err.max())


def test_erf_special_values(cap):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.9375, -3.9375, 10.0, -1e30, 1e-30, -1e-40],
                 dtype=np.float32)
    y = tl_apply(tl.erf, x)
    assert y[0] == 0 and not np.signbit(y[0]) and y[1] == 0 and np.signbit(y[1])
    np.testing.assert_array_equal(y[2:4], [1.0, -1.0])
    assert np.isnan(y[4])
    np.testing.assert_array_equal(y[5:9], [1.0, -1.0, 1.0, -1.0])
    np.testing.assert_allclose(y[9:], np.float32(2 / math.sqrt(math.pi)) * x[9:], rtol=2.4e-7)


# ---------------------------------------------------------------- users
def _np_gelu(x):
    erf = np.vectorize(math.erf)(x.astype(np.float64) / math.sqrt(2))
    with np.errstate(invalid="ignore"):   # -inf * 0: NaN, as in torch
        return x.astype(np.float64) * 0.5 * (1 + erf)


def test_gelu_and_backward_accuracy(cap):
    x = np.concatenate([np.linspace(-8, 8, 20001, dtype=np.float32), np.float32([0, -0.0, np.inf, -np.inf])])
    y = tl_apply(tl._C._nn.gelu, x)
    ref = _np_gelu(x)
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=3e-7)
    g = np.random.default_rng(3).standard_normal(x.size).astype(np.float32)
    gi = tl._C._nn.gelu_backward(tl.from_numpy(g), tl.from_numpy(x)).numpy()
    xd = x[:-2].astype(np.float64)
    phi = np.exp(-0.5 * xd * xd) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(xd / math.sqrt(2)))
    np.testing.assert_allclose(gi[:-2], g[:-2] * (cdf + xd * phi), rtol=1e-5, atol=1e-6)


def test_sigmoid_silu_accuracy(cap):
    x = np.concatenate([np.linspace(-100, 100, 40001, dtype=np.float32), np.float32([np.inf, -np.inf, -0.0])])
    xd = x.astype(np.float64)
    with np.errstate(over="ignore"):
        sig = 1 / (1 + np.exp(-xd))
    # 1 / (1 + e^-x) as PyTorch computes it: 0 where e^-x overflows float32
    # (x < -88.72), subnormal results rounded
    sig[xd < -88.7228317] = 0.0
    np.testing.assert_allclose(tl_apply(tl.sigmoid, x), sig, rtol=5e-7, atol=3e-45)
    with np.errstate(invalid="ignore"):
        silu = np.where(np.isinf(xd) & (xd < 0), -0.0, xd * sig)
        got = tl_apply(tl.nn.functional.silu, x)
    np.testing.assert_allclose(got[:-3], silu[:-3], rtol=5e-7, atol=1e-42)
    assert got[-3] == np.inf


def test_softmax_masked_and_underflowing_rows(cap):
    # a causal-style mask (-inf) and scores far below the row maximum: masked
    # terms are exactly 0, the rest (subnormal ones too) as float64
    x = np.random.default_rng(4).standard_normal((5, 67)).astype(np.float32)
    x[0, 10:] = -np.inf
    x[1, ::3] -= 95.0
    x[2, :] = -np.inf
    x[2, 7] = 0.0
    x[3, 5] = np.nan
    got = tl.softmax(tl.from_numpy(x), -1).numpy()
    xd = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(xd - xd.max(-1, keepdims=True))
        ref = e / e.sum(-1, keepdims=True)
    assert (ref[1, ::3] < 2.0 ** -126).all() and (ref[1, ::3] > 2.0 ** -149).any()
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=2.0 ** -149)
    assert np.all(got[0, 10:] == 0) and got[2, 7] == 1.0 and np.all(np.isnan(got[3]))
    lse = tl.logsumexp(tl.from_numpy(x), 1).numpy()
    with np.errstate(invalid="ignore"):
        m = np.where(np.isinf(xd.max(-1)), 0, xd.max(-1))
        ref_lse = np.log(np.exp(xd - m[:, None]).sum(-1)) + m
    np.testing.assert_allclose(lse, ref_lse, rtol=1e-6)


def _subnormal_rows():
    """rows whose maximum is 0 and whose other entries (every float32 step
    of 1/97 of the way) have e^x in [2^-149, 2^-126); one row of them all
    -inf but the maximum, one -110 (e^x rounds to 0)"""
    d = dense(-103.97, -87.34)[::97]
    x = np.full((d.size // 511 + 3) * 512, -110.0, dtype=np.float32)
    x[:d.size] = d
    x = x.reshape(-1, 512)
    x[-2] = -np.inf
    x[:, 0] = 0.0
    return x


def test_softmax_subnormal_results(cap):
    # PyTorch's softmax gives the subnormal probabilities, not 0: within one
    # subnormal step (2^-149) of float64's, the correctly rounded bits for
    # nearly all (the polynomial's 2^-24 relative error can cross a rounding
    # midpoint near 2^-126); masked (-inf) and far-underflowed entries are 0
    x = _subnormal_rows()
    got = tl.softmax(tl.from_numpy(x), -1).numpy()
    e = np.exp(x.astype(np.float64))
    ref = e / e.sum(-1, keepdims=True)
    assert np.abs(got.astype(np.float64) - ref).max() <= 2.0 ** -149
    same = got.view(np.uint32) == ref.astype(np.float32).view(np.uint32)
    assert same.mean() > 0.97, same.mean()
    assert (got[:-2, 1:] > 0).mean() > 0.99 and (got[-2:, 1:] == 0).all() and (got[:, 0] == 1).all()
    # log_softmax sums the same terms: its results are x - log(1) = x exactly
    np.testing.assert_array_equal(tl.log_softmax(tl.from_numpy(x[:-2]), -1).numpy(), x[:-2])


@needs_torch
def test_softmax_subnormal_results_as_torch(cap):
    x = _subnormal_rows()
    got = tl.softmax(tl.from_numpy(x), -1).numpy()
    want = torch.softmax(torch.from_numpy(x), -1).numpy()
    # both exps round each result once from a ~2^-24-accurate value
    assert np.abs(got.astype(np.float64) - want).max() <= 2.0 ** -149
    assert (got.view(np.uint32) == want.view(np.uint32)).mean() > 0.99
    # attention's probabilities take the same exp: a value row weighted by a
    # subnormal probability (1e30 * ~1e-40) shows in the output as in torch's
    q = np.zeros((1, 1, 2, 1), np.float32)
    k = np.array([0.0, -95.0], np.float32).reshape(1, 1, 2, 1)
    q[..., 0, 0] = 1.0
    v = np.array([0.0, 1e30], np.float32).reshape(1, 1, 2, 1)
    F = tl.nn.functional
    got = F.scaled_dot_product_attention(*(tl.from_numpy(a) for a in (q, k, v)), scale=1.0).numpy()
    want = torch.nn.functional.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)),
                                                             scale=1.0).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got[0, 0, 0, 0] > 1e-12


@needs_torch
def test_against_torch(cap):
    x = (np.random.default_rng(5).standard_normal(4099) * 6).astype(np.float32)
    tx, px = tl.from_numpy(x), torch.from_numpy(x)
    # torch's float gelu takes erf from a 1.5e-7 absolute approximation
    for name, f, g, rtol, atol in [("exp", tl.exp, torch.exp, 2.4e-7, 0), ("erf", tl.erf, torch.erf, 3e-7, 1e-7),
                                   ("sigmoid", tl.sigmoid, torch.sigmoid, 5e-7, 0),
                                   ("gelu", tl._C._nn.gelu, torch.nn.functional.gelu, 1e-6, 1e-6)]:
        np.testing.assert_allclose(f(tx).numpy(), g(px).numpy(), rtol=rtol, atol=atol, err_msg=name)
