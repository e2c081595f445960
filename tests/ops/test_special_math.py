"""Special pointwise math: lgamma, digamma, polygamma, erfinv, i0, special_i1,
sinc, deg2rad, rad2deg, xlogy, logaddexp, logaddexp2, fmax, fmin, nextafter,
heaviside, gcd, lcm, ldexp, float_power, and torchlet.special.

Against numpy / the math module always (np.i0, np.sinc, np.logaddexp,
np.fmax, np.gcd, np.ldexp, np.nextafter, np.heaviside, np.float_power,
math.lgamma, math.erf, and identities for digamma / polygamma), against torch
when installed (values and result dtypes for every dtype, PyTorch's error
types and messages): random and edge values (poles, negative arguments, large
arguments, +-0, +-inf, NaN), transposed views, 0-dim, empty, out= and in-place;
kernel tests run once per CPU capability level (the cpu_capability fixture)."""
import math

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import ALL, NAMES, np_of, tl_copy, torch, torch_copy

INTS = [tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64]
R = np.random.default_rng(2026)

EDGE = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, -1.0, -2.0, -0.5, -2.5, 0.5, 1e-30, -1e-30,
                 1e-8, 3.5, 10.0, 171.5, 1e5, 1e20, -100.25, -1e5 + 0.5, 9.999, 30.0, 30.5])


def rand_args():
    return np.concatenate([R.uniform(-20, 20, 300), R.uniform(0, 5, 100), EDGE])


# name -> (torchlet fn, numpy-input domain)
UNARY = {
    "lgamma": lambda t: tl.lgamma(t),
    "digamma": lambda t: tl.digamma(t),
    "polygamma1": lambda t: tl.polygamma(1, t),
    "polygamma2": lambda t: tl.polygamma(2, t),
    "polygamma5": lambda t: t.polygamma(5),
    "erfinv": lambda t: tl.erfinv(t),
    "i0": lambda t: tl.i0(t),
    "i1": lambda t: tl.special.i1(t),
    "sinc": lambda t: tl.sinc(t),
    "deg2rad": lambda t: tl.deg2rad(t),
    "rad2deg": lambda t: t.rad2deg(),
    "entr": lambda t: tl.special.entr(t),
    "ndtr": lambda t: tl.special.ndtr(t),
}


def torch_unary(name):
    return {
        "lgamma": torch.lgamma, "digamma": torch.digamma, "polygamma1": lambda t: torch.polygamma(1, t),
        "polygamma2": lambda t: torch.polygamma(2, t), "polygamma5": lambda t: torch.polygamma(5, t),
        "erfinv": torch.erfinv, "i0": torch.i0, "i1": torch.special.i1, "sinc": torch.sinc,
        "deg2rad": torch.deg2rad, "rad2deg": torch.rad2deg, "entr": torch.special.entr,
        "ndtr": torch.special.ndtr,
    }[name]


def inputs_for(name, dt):
    x = rand_args()
    if name == "erfinv":
        x = np.concatenate([R.uniform(-1, 1, 300), [0.0, -0.0, 1.0, -1.0, 1.5, -2, np.nan, 0.5, 0.999999, -0.9999999,
                                                   1 - 2.0 ** -52, 1e-300, 0.49999]])
    if name in ("i0", "i1"):
        x = np.concatenate([x, R.uniform(-700, 700, 50), [713.0, 714.0, -713.0, 29.9999, 30.00001]])
    if dt in INTS or dt is tl.bool:
        lo = 0 if dt in (tl.uint8, tl.bool) else -20
        hi = 2 if dt is tl.bool else 20
        x = R.integers(lo, hi, 200)
    return x


def tols(name, dt):
    """(rtol, atol) against torch: PyTorch's float kernels run the algorithms
    in float (a few ulp), its trigamma's series stops near 1e-9"""
    if dt is tl.float64:
        if name == "polygamma1":
            return 1e-8, 1e-12
        if name in ("digamma", "polygamma2", "polygamma5"):
            return 1e-10, 1e-10
        if name == "ndtr":
            return 1e-12, 1e-15   # 1 + erf(x) cancels in the left tail: erf's last bits differ between libraries
        return 1e-12, 1e-300
    if dt in (tl.float16, tl.bfloat16):
        return (2e-2, 1e-2) if dt is tl.bfloat16 else (2e-3, 1e-3)
    if name == "polygamma1":
        return 1e-3, 1e-3   # PyTorch's float trigamma: sin(pi x) in float near the poles
    if name in ("digamma", "polygamma2", "polygamma5"):
        return 2e-4, 2e-4   # float digamma near its root 1.4616 and the reflection: cancellation in float
    return 2e-5, 1e-6


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_against_torch(name, dt):
    x = inputs_for(name, dt)
    if dt is tl.float16:
        x = x[np.abs(x) < 6e4]
    got = UNARY[name](tl_copy(x, dt))
    want = torch_unary(name)(torch_copy(x, dt))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    g = np_of(got).astype(np.float64)
    w = (want.float() if want.dtype == torch.bfloat16 else want).numpy().astype(np.float64)
    xs = np_of(tl_copy(x, dt)).astype(np.float64)
    rtol, atol = tols(name, dt)
    if name == "lgamma" and dt is tl.float32:
        rtol = 1e-6   # both libm's lgammaf
    if name == "polygamma1":
        # poles: PyTorch's trigamma series gives a huge finite value at the
        # non-positive integers (sin(pi x) rounds away from 0), +inf at 0; torchlet
        # computes the same there (sin in the compute type: a few ulp apart)
        pole = (xs <= 0) & (xs == np.round(xs))
        np.testing.assert_allclose(g[pole], w[pole], rtol=1e-5 if dt is tl.float64 else 1e-2)
        g, w, xs = g[~pole], w[~pole], xs[~pole]
        if dt is not tl.float64:   # PyTorch's float sin(pi x) next to a pole: 1e-2 off
            near = (xs < 0) & (np.abs(xs - np.round(xs)) < 2e-2)
            g, w, xs = g[~near], w[~near], xs[~near]
    if name in ("polygamma2", "polygamma5"):
        # polygamma(n >= 2, +inf): 0 (scipy's zeta), PyTorch's sum makes inf * 0 = NaN
        top = xs == np.inf
        assert np.all(g[top] == 0)
        g, w, xs = g[~top], w[~top], xs[~top]
    if name in ("i0", "i1"):
        # I0(+-inf) = +inf, I1(+-inf) = +-inf (scipy's); PyTorch's give NaN
        inf = np.isinf(xs)
        assert np.all(g[inf] == (np.abs(xs[inf]) if name == "i0" else xs[inf]))
        g, w, xs = g[~inf], w[~inf], xs[~inf]
    if name in ("i0", "i1") and dt in (tl.float32, tl.float64):
        # PyTorch's i0 / i1 take e^|x| whole: inf from |x| > 709.78 (88.72 in float), where
        # I0 and I1 are finite up to 713.98 (91.9)
        beyond = np.isinf(w)
        assert np.all(np.abs(g[beyond]) > np.finfo(np.float64 if dt is tl.float64 else np.float32).max / 1e3)
        g, w = g[~beyond], w[~beyond]
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    # infinities and NaNs where torch has them (poles, +-1 of erfinv, overflow)
    nonfinite = ~np.isfinite(w)
    np.testing.assert_array_equal(g[nonfinite], w[nonfinite])


# --------------------------------------------------------- numpy / math always
def test_lgamma_against_math():
    x = np.concatenate([R.uniform(-30, 30, 500), R.uniform(1e-5, 3, 100), [1e10, 1e300, -0.5, 0.5, 1.0, 2.0]])
    got = tl.lgamma(tl.tensor(x, dtype=tl.float64)).numpy()
    want = np.array([math.lgamma(v) for v in x])
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    edge = tl.lgamma(tl.tensor([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan], dtype=tl.float64)).numpy()
    np.testing.assert_array_equal(edge, [np.inf, np.inf, np.inf, np.inf, np.inf, np.inf, np.nan])
    pos = x[(x > 0) & (x < 1e30)]   # lgammaf near the negative poles: libm's float error (PyTorch calls the same)
    f32 = tl.lgamma(tl.tensor(pos, dtype=tl.float32)).numpy()
    np.testing.assert_allclose(f32, [math.lgamma(float(np.float32(v))) for v in pos], rtol=2e-6, atol=2e-6)


def test_digamma_identities():
    x = np.concatenate([R.uniform(-25, 25, 400), R.uniform(0.01, 3, 100), [1e6, 1e15, 1e20]])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    t = tl.tensor(x, dtype=tl.float64)
    psi, psi1 = tl.digamma(t).numpy(), tl.digamma(t + 1).numpy()
    np.testing.assert_allclose(psi1, psi + 1 / x, rtol=1e-11, atol=1e-11)   # psi(x + 1) = psi(x) + 1/x
    euler = 0.57721566490153286061
    np.testing.assert_allclose(tl.digamma(tl.tensor([1.0, 0.5, 10.0], dtype=tl.float64)).numpy(),
                               [-euler, -euler - 2 * math.log(2), 2.251752589066721107647], rtol=1e-15)
    # poles: -inf / +inf at +0 / -0, NaN at the negative integers (scipy's)
    np.testing.assert_array_equal(tl.digamma(tl.tensor([0.0, -0.0, -1.0, -7.0, np.nan, np.inf])).numpy(),
                                  [-np.inf, np.inf, np.nan, np.nan, np.nan, np.inf])
    # reflection psi(1 - x) - psi(x) = pi / tan(pi x)
    xs = R.uniform(0.05, 0.95, 50) + R.integers(-5, 5, 50)
    a = tl.digamma(tl.tensor(1 - xs, dtype=tl.float64)).numpy() - tl.digamma(tl.tensor(xs, dtype=tl.float64)).numpy()
    np.testing.assert_allclose(a, np.pi / np.tan(np.pi * xs), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_polygamma_identities(n):
    x = np.concatenate([R.uniform(0.05, 20, 200), R.uniform(-6, -0.05, 100)])
    x = x[np.abs(x - np.round(x)) > 0.05]
    t = tl.tensor(x, dtype=tl.float64)
    p, p1 = tl.polygamma(n, t).numpy(), tl.polygamma(n, t + 1).numpy()
    step = (-1) ** n * math.factorial(n) / x ** (n + 1)   # psi_n(x + 1) = psi_n(x) + (-1)^n n! / x^(n+1)
    np.testing.assert_allclose(p1, p + step, rtol=1e-10, atol=1e-10 * np.abs(step).max())
    # psi_1(1) = pi^2 / 6, psi_n(1) = (-1)^(n+1) n! zeta(n + 1)
    zeta = {2: math.pi ** 2 / 6, 3: 1.2020569031595942854, 4: math.pi ** 4 / 90, 7: 1.0083492773819228268}
    got = tl.polygamma(n, tl.tensor([1.0], dtype=tl.float64)).item()
    assert got == pytest.approx((-1) ** (n + 1) * math.factorial(n) * zeta[n + 1], rel=1e-14)
    poles = tl.polygamma(n, tl.tensor([0.0, -1.0, -3.0])).numpy().tolist()
    if n == 1:   # PyTorch's trigamma at its poles: pi^2 / sin^2(pi x) with float's sin(pi x), inf at 0
        np.testing.assert_allclose(poles, [np.inf, 1.2913722e15, 1.7351288e16], rtol=1e-5)
    else:
        assert poles == [np.inf] * 3 or n % 2 == 0
    # polygamma(0, x) is digamma
    np.testing.assert_array_equal(tl.polygamma(0, t).numpy(), tl.digamma(t).numpy())


def test_erfinv_inverts_erf():
    y = np.concatenate([R.uniform(-1, 1, 1000), 1 - np.logspace(-16, -1, 30), -(1 - np.logspace(-16, -1, 30)),
                        np.logspace(-300, -1, 30)])
    x = tl.erfinv(tl.tensor(y, dtype=tl.float64)).numpy()
    back = np.array([math.erf(v) for v in x])
    tail = np.array([math.erfc(v) for v in np.abs(x)])
    assert np.all(np.abs(back - y) <= 4e-16 * np.maximum(np.abs(y), 1e-300) + 1e-300)
    far = np.abs(y) > 0.5
    np.testing.assert_allclose(tail[far], 1 - np.abs(y[far]), rtol=1e-13)   # the tails keep their digits
    np.testing.assert_array_equal(tl.erfinv(tl.tensor([1.0, -1.0, 1.5, -2.0, np.nan, 0.0, -0.0])).numpy(),
                                  [np.inf, -np.inf, np.nan, np.nan, np.nan, 0.0, -0.0])
    assert math.copysign(1, tl.erfinv(tl.tensor([-0.0])).item()) == -1


def test_i0_against_numpy():
    x = np.concatenate([R.uniform(-50, 50, 500), R.uniform(-700, 700, 100), [0.0, 29.999, 30.0, 30.001, 709.0]])
    got = tl.i0(tl.tensor(x, dtype=tl.float64)).numpy()
    np.testing.assert_allclose(got, np.i0(x), rtol=2e-14)
    x32 = x[np.abs(x) < 80].astype(np.float32)
    f32 = tl.i0(tl.tensor(x32, dtype=tl.float32)).numpy()
    np.testing.assert_allclose(f32, np.i0(x32.astype(np.float64)).astype(np.float32), rtol=1e-6)
    # np.i0 takes e^x whole and overflows from 709.78; I0 itself from 713.98
    big = tl.i0(tl.tensor([713.0, -713.0], dtype=tl.float64)).numpy()
    series, term = 1.0, 1.0
    for k in range(1, 12):   # Hankel: sum ((2k-1)!!)^2 / (k! (8x)^k)
        term *= (2 * k - 1) ** 2 / (k * 8 * 713.0)
        series += term
    asym = math.exp(713.0 - 0.5 * math.log(2 * math.pi * 713.0) - 700) * series
    np.testing.assert_allclose(big / math.exp(700), [asym, asym], rtol=1e-13)
    assert tl.i0(tl.tensor([714.0, -800.0, np.inf, -np.inf], dtype=tl.float64)).numpy().tolist() == [np.inf] * 4
    assert np.isnan(tl.i0(tl.tensor([np.nan])).item())


def _i1_series(x):
    """I1(x) = sum (x/2)^(2k+1) / (k! (k+1)!), positive terms, in Python floats"""
    term, total, k = x / 2, 0.0, 0
    while term > 1e-18 * total or k < 5:
        total += term
        k += 1
        term *= (x / 2) ** 2 / (k * (k + 1))
    return total


def test_i1_against_series():
    x = np.concatenate([R.uniform(0.1, 60, 200), [29.5, 30.0, 31.0, 59.9]])
    got = tl.special.i1(tl.tensor(x, dtype=tl.float64)).numpy()
    np.testing.assert_allclose(got, [_i1_series(v) for v in x], rtol=5e-15)
    np.testing.assert_array_equal(tl.special.i1(tl.tensor(-x, dtype=tl.float64)).numpy(), -got)   # odd


def test_sinc_degrees_against_numpy():
    x = np.concatenate([R.uniform(-10, 10, 300), [0.0, -0.0, 1.0, -3.0, np.inf, np.nan]])
    np.testing.assert_allclose(tl.sinc(tl.tensor(x, dtype=tl.float64)).numpy(), np.sinc(x), rtol=1e-13,
                               atol=1e-15, equal_nan=True)
    np.testing.assert_allclose(tl.deg2rad(tl.tensor(x, dtype=tl.float64)).numpy(), np.deg2rad(x), rtol=1e-15)
    np.testing.assert_allclose(tl.rad2deg(tl.tensor(x, dtype=tl.float64)).numpy(), np.rad2deg(x), rtol=1e-15)
    # integers and bool promote to the default float dtype
    assert tl.rad2deg(tl.tensor([1, 2])).dtype == tl.float32
    assert tl.deg2rad(tl.tensor([True, False])).dtype == tl.float32
    assert tl.sinc(tl.tensor([1, 0])).numpy().tolist() == pytest.approx([0.0, 1.0], abs=1e-7)


# ------------------------------------------------------------ binary vs numpy
def pairs(n=400):
    a = np.concatenate([R.uniform(-30, 30, n), [0.0, -0.0, np.inf, -np.inf, np.nan, np.inf, 1.0, np.nan, -np.inf]])
    b = np.concatenate([R.uniform(-30, 30, n), [0.0, 0.0, np.inf, -np.inf, 1.0, -np.inf, np.nan, np.nan, 5.0]])
    return a, b


NP_BINARY = {
    "logaddexp": (tl.logaddexp, np.logaddexp),
    "logaddexp2": (tl.logaddexp2, np.logaddexp2),
    "fmax": (tl.fmax, np.fmax),
    "fmin": (tl.fmin, np.fmin),
    "nextafter": (tl.nextafter, np.nextafter),
    "heaviside": (tl.heaviside, np.heaviside),
}


@pytest.mark.parametrize("dt", [tl.float32, tl.float64], ids=lambda d: NAMES[d])
@pytest.mark.parametrize("name", list(NP_BINARY))
def test_binary_against_numpy(name, dt, cpu_capability):
    a, b = pairs()
    npdt = np.float32 if dt is tl.float32 else np.float64
    a, b = a.astype(npdt), b.astype(npdt)
    fn, ref = NP_BINARY[name]
    if name == "heaviside":
        a = np.where(np.isnan(a), 1.0, a).astype(npdt)   # numpy: NaN for a NaN self; PyTorch (test below): 0
    got = fn(tl.tensor(a, dtype=dt), tl.tensor(b, dtype=dt)).numpy()
    with np.errstate(invalid="ignore"):
        want = ref(a, b)
    rtol = 0 if name in ("fmax", "fmin", "nextafter", "heaviside") else (2e-7 if dt is tl.float32 else 1e-15)
    # max + log1p(...) cancels near 0: a few ulp of the inputs (|x| <= 30) absolute
    atol = 0 if rtol == 0 else 4 * np.finfo(npdt).eps * 30
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    # a transposed view and broadcasting give the same values
    A, B = a[:400].reshape(20, 20), b[:20]
    got2 = fn(tl.tensor(A.T.copy(), dtype=dt).t(), tl.tensor(B, dtype=dt)).numpy()
    np.testing.assert_allclose(got2, ref(A, B), rtol=rtol, atol=atol, equal_nan=True)


def test_heaviside_nan_and_signed_zero():
    x = tl.tensor([float("nan"), -0.0, float("-inf"), float("inf"), 0.0])
    assert tl.heaviside(x, tl.tensor([0.5] * 5)).tolist() == [0.0, 0.5, 0.0, 1.0, 0.5]
    assert tl.heaviside(tl.tensor([-3, 0, 2]), tl.tensor([7, 7, 7])).tolist() == [0, 7, 1]


def test_fmax_fmin_integers_and_bool():
    a, b = R.integers(-100, 100, 50), R.integers(-100, 100, 50)
    for dt, npdt in [(tl.int8, np.int8), (tl.int32, np.int32), (tl.int64, np.int64), (tl.uint8, np.uint8)]:
        x, y = a.astype(npdt), b.astype(npdt)
        assert np.array_equal(tl.fmax(tl.tensor(x, dtype=dt), tl.tensor(y, dtype=dt)).numpy(), np.fmax(x, y))
        assert np.array_equal(tl.fmin(tl.tensor(x, dtype=dt), tl.tensor(y, dtype=dt)).numpy(), np.fmin(x, y))
    t, f = tl.tensor([True, False, True]), tl.tensor([False, False, True])
    assert tl.fmax(t, f).tolist() == [True, False, True] and tl.fmin(t, f).tolist() == [False, False, True]
    # promotion: int with float computes in float
    r = tl.fmax(tl.tensor([1, 5]), tl.tensor([2.5, float("nan")]))
    assert r.dtype == tl.float32 and r.tolist() == [2.5, 5.0]


@pytest.mark.parametrize("dt", INTS, ids=lambda d: NAMES[d])
def test_gcd_lcm_against_numpy(dt, cpu_capability):
    npdt = {tl.uint8: np.uint8, tl.int8: np.int8, tl.int16: np.int16, tl.int32: np.int32, tl.int64: np.int64}[dt]
    lo = 0 if dt is tl.uint8 else -60
    a = np.concatenate([R.integers(lo, 60, 300), [0, 0, 12, 7]]).astype(npdt)
    b = np.concatenate([R.integers(lo, 60, 300), [0, 5, 18, 0]]).astype(npdt)
    assert np.array_equal(tl.gcd(tl.tensor(a, dtype=dt), tl.tensor(b, dtype=dt)).numpy(), np.gcd(a, b))
    want = np.lcm(a.astype(np.int64), b.astype(np.int64)).astype(npdt)   # numpy's lcm of int8 may overflow alike
    assert np.array_equal(tl.lcm(tl.tensor(a, dtype=dt), tl.tensor(b, dtype=dt)).numpy(), want)
    x = tl.tensor(a, dtype=dt)
    x.gcd_(tl.tensor(b, dtype=dt))
    assert np.array_equal(x.numpy(), np.gcd(a, b))


def test_ldexp_float_power_against_numpy():
    a = R.uniform(-10, 10, 100)
    e = R.integers(-20, 20, 100)
    np.testing.assert_allclose(tl.ldexp(tl.tensor(a), tl.tensor(e)).numpy(),
                               np.ldexp(a.astype(np.float32), e), rtol=1e-6)
    np.testing.assert_array_equal(tl.ldexp(tl.tensor(a, dtype=tl.float64), tl.tensor(e)).numpy(), np.ldexp(a, e))
    b = R.uniform(0.1, 10, 100)
    p = R.uniform(-3, 3, 100)
    r = tl.float_power(tl.tensor(b, dtype=tl.float32), tl.tensor(p, dtype=tl.float32))
    assert r.dtype == tl.float64
    np.testing.assert_allclose(r.numpy(), np.float_power(b.astype(np.float32), p.astype(np.float32)), rtol=1e-15)
    r = tl.float_power(tl.tensor([1, 2, 3]), 2)
    assert r.dtype == tl.float64 and r.tolist() == [1.0, 4.0, 9.0]
    r = tl.float_power(2, tl.tensor([1, 2, -1]))
    assert r.dtype == tl.float64 and r.tolist() == [2.0, 4.0, 0.5]
    x = tl.tensor([1.5, 2.0], dtype=tl.float64)
    x.float_power_(2)
    assert x.tolist() == [2.25, 4.0]
    out = tl.empty(3, dtype=tl.float64)
    tl.float_power(tl.tensor([1, 2, 3]), tl.tensor([2, 2, 2]), out=out)
    assert out.tolist() == [1.0, 4.0, 9.0]


def test_xlogy_rules():
    x = np.array([0.0, 0.0, 1.0, 2.0, 0.0, 3.0, -1.0, 0.0])
    y = np.array([0.0, -1.0, np.e, 4.0, np.nan, 0.0, 2.0, np.inf])
    got = tl.xlogy(tl.tensor(x, dtype=tl.float64), tl.tensor(y, dtype=tl.float64)).numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))
    np.testing.assert_array_equal(got, want)
    assert tl.xlogy(tl.tensor([1, 2]), tl.tensor([2, 3])).dtype == tl.float32
    assert tl.xlogy(2, tl.tensor([1.0, 4.0])).tolist() == pytest.approx([0.0, 2 * math.log(4)])
    assert tl.xlogy(tl.tensor([1.0, 0.0]), 3).tolist() == pytest.approx([math.log(3), 0.0])
    t = tl.tensor([2.0, 0.0])
    t.xlogy_(2)
    assert t.tolist() == pytest.approx([2 * math.log(2), 0.0])
    assert math.copysign(1, tl.xlogy(tl.tensor([-0.0]), tl.tensor([2.0])).item()) == 1   # PyTorch's literal 0


def test_xlog1py_rules():
    x = np.array([0.0, 0.0, 1.0, 2.0, 0.0, 3.0, -1.0, 0.0, 1.5])
    y = np.array([-1.0, -2.0, np.e - 1, 3.0, np.nan, -1.0, 1.0, np.inf, 1e-12])
    got = tl.special.xlog1py(tl.tensor(x, dtype=tl.float64), tl.tensor(y, dtype=tl.float64)).numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log1p(y)))
    np.testing.assert_allclose(got, want, rtol=5e-16, atol=0, equal_nan=True)   # libmvec's log1p: 1 ulp
    assert tl.special.xlog1py(tl.tensor([1, 2]), tl.tensor([2, 3])).dtype == tl.float32
    assert tl.special.xlog1py(2, tl.tensor([0.0, 3.0])).tolist() == pytest.approx([0.0, 2 * math.log(4)])
    out = tl.empty(2)
    tl.special.xlog1py(tl.tensor([1.0, 0.0]), 3, out=out)
    assert out.tolist() == pytest.approx([math.log(4), 0.0])


def test_out_inplace_and_shapes():
    x = tl.tensor(R.uniform(0.5, 4, (3, 4)), dtype=tl.float32)
    out = tl.empty(3, 4)
    r = tl.lgamma(x, out=out)
    assert r is out or r.data_ptr() == out.data_ptr()
    np.testing.assert_array_equal(out.numpy(), tl.lgamma(x).numpy())
    y = x.clone()
    y.lgamma_()
    np.testing.assert_array_equal(y.numpy(), out.numpy())
    z = x.clone()
    z.polygamma_(2)
    np.testing.assert_array_equal(z.numpy(), tl.polygamma(2, x).numpy())
    # transposed input
    np.testing.assert_array_equal(tl.digamma(x.t()).numpy(), tl.digamma(x).numpy().T)
    # 0-dim and empty
    assert tl.erfinv(tl.tensor(0.5)).shape == () and tl.i0(tl.empty(0, 3)).shape == (0, 3)
    assert tl.logaddexp(tl.empty(0), tl.empty(0)).shape == (0,)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv", "i0", "sinc"])
def test_unary_every_capability(name, cpu_capability):
    x = np.concatenate([R.uniform(-0.99, 0.99, 1000), R.uniform(0.5, 9, 1000)])
    fn = getattr(tl, name)
    f64 = fn(tl.tensor(x, dtype=tl.float64)).numpy()
    f32 = fn(tl.tensor(x, dtype=tl.float32)).numpy()
    np.testing.assert_allclose(f32, f64.astype(np.float32), rtol=3e-6, atol=1e-6)
    h = fn(tl.tensor(x, dtype=tl.float16)).numpy().astype(np.float64)
    np.testing.assert_allclose(h, fn(tl.tensor(x.astype(np.float16), dtype=tl.float64)).numpy(), rtol=1e-3,
                               atol=1e-3)


# ------------------------------------------------------ errors and dtype rules
@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("case", [
    "polygamma_neg", "gcd_float", "gcd_bool", "lcm_float", "logaddexp_int", "logaddexp2_bool", "nextafter_int",
    "heaviside_dtypes", "float_power_out", "float_power_inplace", "deg2rad_int_inplace", "lgamma_out_int",
])
def test_errors_like_torch(case):
    def run(m, lib):
        i, f = lib.tensor([1, 2, 3]), lib.tensor([1.0, 2.0, 3.0])
        return {
            "polygamma_neg": lambda: m.polygamma(-1, f),
            "gcd_float": lambda: m.gcd(f, f),
            "gcd_bool": lambda: m.gcd(lib.tensor([True]), lib.tensor([False])),
            "lcm_float": lambda: m.lcm(f, f),
            "logaddexp_int": lambda: m.logaddexp(i, i),
            "logaddexp2_bool": lambda: m.logaddexp2(lib.tensor([True]), lib.tensor([True])),
            "nextafter_int": lambda: m.nextafter(i, i),
            "heaviside_dtypes": lambda: m.heaviside(i, f),
            "float_power_out": lambda: m.float_power(f, 2, out=lib.empty(3)),
            "float_power_inplace": lambda: f.float_power_(2),
            "deg2rad_int_inplace": lambda: i.deg2rad_(),
            "lgamma_out_int": lambda: m.lgamma(f, out=lib.empty(3, dtype=lib.int64)),
        }[case]()
    with pytest.raises(Exception) as want:
        run(torch, torch)
    with pytest.raises(type(want.value)) as got:
        run(tl, tl)
    assert str(got.value) == str(want.value)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "fmax", "fmin", "xlogy", "heaviside", "gcd", "lcm",
                                  "nextafter", "ldexp", "float_power"])
@pytest.mark.parametrize("pair", [("float32", "float32"), ("int64", "int64"), ("int32", "float64"),
                                  ("float16", "float16"), ("bfloat16", "float32"), ("bool", "bool"),
                                  ("uint8", "int8")])
def test_binary_dtypes_like_torch(name, pair):
    a = R.uniform(0.5, 6, 17)
    b = R.uniform(0.5, 6, 17)
    if "int" in pair[0] or pair[0] == "bool":
        a = np.round(a)
    if "int" in pair[1] or pair[1] == "bool":
        b = np.round(b)
    ta, tb = (torch_copy(a, getattr(tl, pair[0])), torch_copy(b, getattr(tl, pair[1])))
    la, lb = (tl_copy(a, getattr(tl, pair[0])), tl_copy(b, getattr(tl, pair[1])))
    try:
        want = getattr(torch, name)(ta, tb)
    except Exception as e:
        with pytest.raises(type(e)) as got:
            getattr(tl, name)(la, lb)
        assert str(got.value) == str(e)
        return
    got = getattr(tl, name)(la, lb)
    assert NAMES[got.dtype] == str(want.dtype).split(".")[-1]
    w = (want.float() if want.dtype == torch.bfloat16 else want).numpy().astype(np.float64)
    np.testing.assert_allclose(np_of(got).astype(np.float64), w, rtol=1e-2 if "16" in str(want.dtype) else 1e-6,
                               equal_nan=True)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_nextafter_16bit_steps_on_the_type_like_torch(dt):
    """float16 / bfloat16 step by their own ulp (c10's nextafter on the 16-bit
    pattern): zeros of both signs, subnormals, infinities, NaN, equal values."""
    v = [0.0, -0.0, 1.0, -1.0, 6e-8, -6e-8, 1e-30, 65504.0, float("inf"), -float("inf"), float("nan"), 3.0, 2.5e-5]
    a = np.array([x for x in v for _ in v])
    b = np.array([y for _ in v for y in v])
    want = torch.nextafter(torch.tensor(a).to(getattr(torch, dt)), torch.tensor(b).to(getattr(torch, dt)))
    got = tl.nextafter(tl.tensor(a).to(getattr(tl, dt)), tl.tensor(b).to(getattr(tl, dt)))
    assert got.dtype == getattr(tl, dt)
    w = want.float().numpy()
    g = got.float().numpy()
    np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


# ---------------------------------------------------------- torchlet.special
SPECIAL_ALIASES = [
    ("expit", tl.sigmoid), ("gammaln", tl.lgamma), ("psi", tl.digamma), ("digamma", tl.digamma),
    ("erf", tl.erf), ("erfc", tl.erfc), ("erfinv", tl.erfinv), ("exp2", tl.exp2), ("expm1", tl.expm1),
    ("log1p", tl.log1p), ("i0", tl.i0), ("sinc", tl.sinc),
]


@pytest.mark.parametrize("name, base", SPECIAL_ALIASES, ids=[n for n, _ in SPECIAL_ALIASES])
def test_special_aliases(name, base):
    x = tl.tensor(R.uniform(-0.9, 0.9, (4, 5)), dtype=tl.float64)
    np.testing.assert_array_equal(getattr(tl.special, name)(x).numpy(), base(x).numpy())
    out = tl.empty(4, 5, dtype=tl.float64)
    getattr(tl.special, name)(x, out=out)
    np.testing.assert_array_equal(out.numpy(), base(x).numpy())


def test_special_composites():
    x = tl.tensor(R.uniform(0.1, 0.9, (3, 4)), dtype=tl.float64)
    np.testing.assert_array_equal(tl.special.logit(x, eps=0.2).numpy(), tl.logit(x, eps=0.2).numpy())
    np.testing.assert_array_equal(tl.special.polygamma(2, x).numpy(), tl.polygamma(2, x).numpy())
    np.testing.assert_array_equal(tl.special.round(x * 10, decimals=1).numpy(), tl.round(x * 10, decimals=1).numpy())
    np.testing.assert_array_equal(tl.special.softmax(x, 1).numpy(), tl.softmax(x, 1).numpy())
    np.testing.assert_array_equal(tl.special.log_softmax(x, 0).numpy(), tl.log_softmax(x, 0).numpy())
    np.testing.assert_array_equal(tl.special.logsumexp(x, [1]).numpy(), tl.logsumexp(x, [1]).numpy())
    np.testing.assert_array_equal(tl.special.xlogy(x, x).numpy(), tl.xlogy(x, x).numpy())
    np.testing.assert_array_equal(tl.special.xlogy(2.0, x).numpy(), tl.xlogy(2.0, x).numpy())
    v = R.uniform(-5, 5, 50)
    np.testing.assert_allclose(tl.special.ndtr(tl.tensor(v, dtype=tl.float64)).numpy(),
                               [0.5 * math.erfc(-t / math.sqrt(2)) for t in v], rtol=1e-12, atol=1e-16)
    e = tl.special.entr(tl.tensor([0.5, 0.0, -1.0, float("nan"), 2.0], dtype=tl.float64)).numpy()
    np.testing.assert_array_equal(e[[1, 2]], [0.0, -np.inf])
    assert np.isnan(e[3]) and e[0] == pytest.approx(0.5 * math.log(2)) and e[4] == pytest.approx(-2 * math.log(2))
    assert set(tl.special.__all__) <= set(dir(tl.special))


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_special_against_torch():
    x = R.uniform(-3, 3, (5, 6))
    for name in ["expit", "gammaln", "psi", "erf", "erfc", "exp2", "expm1", "i0", "i1", "sinc", "ndtr", "entr"]:
        got = getattr(tl.special, name)(tl.tensor(x, dtype=tl.float64)).numpy()
        want = getattr(torch.special, name)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)
    for name in ["xlogy", "xlog1py"]:
        got = getattr(tl.special, name)(tl.tensor(x), 2.5).numpy()
        want = getattr(torch.special, name)(torch.tensor(x, dtype=torch.float32), 2.5).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
        got = getattr(tl.special, name)(tl.tensor(x, dtype=tl.float64), tl.tensor(np.abs(x), dtype=tl.float64))
        want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(np.abs(x)))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-14)


def test_grad_values():
    """derivatives from the YAML against the analytic ones"""
    x = tl.tensor([0.7, 1.5, 3.0], dtype=tl.float64, requires_grad=True)
    tl.lgamma(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tl.digamma(x.detach()).numpy())
    y = tl.tensor([0.1, -0.4, 0.8], dtype=tl.float64, requires_grad=True)
    tl.erfinv(y).sum().backward()
    e = tl.erfinv(y.detach()).numpy()
    np.testing.assert_allclose(y.grad.numpy(), 0.5 * math.sqrt(math.pi) * np.exp(e ** 2), rtol=1e-14)
    z = tl.tensor([0.0, 1.0, 2.0], dtype=tl.float64, requires_grad=True)
    tl.special.i1(z).sum().backward()
    assert z.grad.numpy()[0] == 0.5


# ------------------------------------------------------------------ mvlgamma
@pytest.mark.parametrize("p", [1, 2, 5])
def test_mvlgamma_against_math(p):
    x = R.uniform((p - 1) / 2 + 0.01, 20, (3, 7))
    got = tl.mvlgamma(tl.tensor(x, dtype=tl.float64), p).numpy()
    want = np.vectorize(lambda v: p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(v - i / 2) for i in range(p)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    t = tl.tensor(x, dtype=tl.float64)
    t.mvlgamma_(p)
    np.testing.assert_array_equal(t.numpy(), got)
    out = tl.empty(0, dtype=tl.float64)
    tl.mvlgamma(tl.tensor(x, dtype=tl.float64), p, out=out)
    np.testing.assert_array_equal(out.numpy(), got)
    assert tl.mvlgamma(tl.tensor([5, 6]), p).dtype == tl.float32
    assert tl.mvlgamma(tl.tensor(2.5), p).shape == ()


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.int64, tl.bfloat16], ids=lambda d: NAMES[d])
def test_mvlgamma_against_torch(dt):
    x = R.uniform(1.6, 12, 40)
    if dt is tl.int64:
        x = np.round(x) + 1
    got = tl.mvlgamma(tl_copy(x, dt), 3)
    want = torch.mvlgamma(torch_copy(x, dt), 3)
    assert NAMES[got.dtype] == str(want.dtype).split(".")[-1]
    w = (want.float() if want.dtype == torch.bfloat16 else want).numpy()
    np.testing.assert_allclose(np_of(got), w, rtol=2e-2 if dt is tl.bfloat16 else 1e-5)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("case", ["bool", "p0", "out_int"])
def test_mvlgamma_errors_like_torch(case):
    def run(lib):
        f = lib.tensor([2.5, 3.0])
        return {"bool": lambda: lib.mvlgamma(lib.tensor([True]), 2),
                "p0": lambda: lib.mvlgamma(f, 0),
                "out_int": lambda: lib.mvlgamma(f, 2, out=lib.empty(2, dtype=lib.int64))}[case]()
    with pytest.raises(Exception) as want:
        run(torch)
    with pytest.raises(type(want.value)) as got:
        run(tl)
    assert str(got.value) == str(want.value)


# --------------------------------------------------------------------- frexp
@pytest.mark.parametrize("dt", [tl.float32, tl.float64], ids=lambda d: NAMES[d])
def test_frexp_against_numpy(dt):
    npdt = np.float32 if dt is tl.float32 else np.float64
    x = np.concatenate([R.standard_normal(200) * 10.0 ** R.integers(-30, 30, 200),
                        [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40]]).astype(npdt)
    m, e = tl.frexp(tl.tensor(x, dtype=dt))
    want_m, want_e = np.frexp(x)
    np.testing.assert_array_equal(m.numpy(), want_m)
    fin = np.isfinite(x)
    np.testing.assert_array_equal(e.numpy()[fin], want_e[fin])
    assert m.dtype == dt and e.dtype == tl.int32
    t = tl.tensor(x.reshape(13, 16), dtype=dt).t()   # transposed input
    m2, e2 = t.frexp()
    np.testing.assert_array_equal(m2.numpy(), np.frexp(x.reshape(13, 16).T)[0])
    mo, eo = tl.empty(0, dtype=dt), tl.empty(0, dtype=tl.int32)
    tl.frexp(tl.tensor(x, dtype=dt), out=(mo, eo))
    np.testing.assert_array_equal(mo.numpy(), want_m)
    assert tl.frexp(tl.empty(0, 3))[0].shape == (0, 3)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("case", ["int", "mantissa_dtype", "exponent_dtype"])
def test_frexp_errors_like_torch(case):
    def run(lib):
        f = lib.tensor([2.5, 3.0])
        return {"int": lambda: lib.frexp(lib.tensor([1, 2])),
                "mantissa_dtype": lambda: lib.frexp(f, out=(lib.empty(2, dtype=lib.float64),
                                                            lib.empty(2, dtype=lib.int32))),
                "exponent_dtype": lambda: lib.frexp(f, out=(lib.empty(2), lib.empty(2, dtype=lib.int64)))}[case]()
    with pytest.raises(Exception) as want:
        run(torch)
    with pytest.raises(type(want.value)) as got:
        run(tl)
    assert str(got.value) == str(want.value)
