"""The in-place random distributions: uniform_, normal_, log_normal_, cauchy_,
exponential_, geometric_.

Statistically, at fixed seeds: the Kolmogorov-Smirnov distance of 20,000
draws from the distribution's CDF (numpy; below 0.015, the 1% critical
value is 1.63 / sqrt(n) = 0.0115 so a correct sampler fails about once in
10^4 runs), means and variances within bounds; reproducibility under
manual_seed and a Generator; dtypes, shapes, non-contiguous self, Meta;
PyTorch's errors (messages against torch when installed); gradients (zero,
as PyTorch's derivatives)."""
import math

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import torch

N = 20000


def ks_distance(x, cdf):
    x = np.sort(np.asarray(x, dtype=np.float64))
    f = cdf(x)
    n = x.size
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def _erf(v):
    return np.vectorize(math.erf)(v)


CASES = {
    "uniform_": ((2.0, 5.0), lambda x: np.clip((x - 2) / 3, 0, 1), 3.5, 0.75),
    "normal_": ((1.0, 2.0), lambda x: 0.5 * (1 + _erf((x - 1) / (2 * math.sqrt(2)))), 1.0, 4.0),
    "log_normal_": ((0.5, 0.4), lambda x: 0.5 * (1 + _erf((np.log(x) - 0.5) / (0.4 * math.sqrt(2)))),
                    math.exp(0.5 + 0.08), (math.exp(0.16) - 1) * math.exp(1 + 0.16)),
    "cauchy_": ((1.0, 0.5), lambda x: 0.5 + np.arctan((x - 1) / 0.5) / math.pi, None, None),
    "exponential_": ((2.5,), lambda x: 1 - np.exp(-2.5 * x), 0.4, 0.16),
}


@pytest.mark.parametrize("name", list(CASES))
def test_continuous_ks_and_moments(name):
    args, cdf, mean, var = CASES[name]
    tl.manual_seed(1234)
    x = getattr(tl.empty(N, dtype=tl.float64), name)(*args).numpy()
    assert ks_distance(x, cdf) < 0.015
    if mean is not None:
        se = math.sqrt(var / N)
        assert abs(x.mean() - mean) < 5 * se
        assert abs(x.var() - var) < 0.1 * var
    # float32 and a transposed (non-contiguous) self: same distribution
    t = tl.empty(200, 100).t()
    getattr(t, name)(*args)
    assert t.shape == (100, 200) and ks_distance(t.numpy().ravel(), cdf) < 0.015


def test_geometric():
    tl.manual_seed(7)
    p = 0.3
    x = tl.empty(N, dtype=tl.float64).geometric_(p).numpy()
    assert x.min() >= 1 and np.all(x == np.round(x))
    assert abs(x.mean() - 1 / p) < 5 * math.sqrt((1 - p) / p ** 2 / N)
    # P(X = k) = (1 - p)^(k-1) p
    for k in range(1, 6):
        assert abs(np.mean(x == k) - (1 - p) ** (k - 1) * p) < 0.015
    # integer dtypes too, as PyTorch
    xi = tl.zeros(1000, dtype=tl.int64).geometric_(0.5)
    assert xi.dtype == tl.int64 and xi.numpy().min() >= 1 and xi.numpy().max() > 1


def test_reproducible_and_generator():
    for name, (args, _, _, _) in CASES.items():
        tl.manual_seed(99)
        a = getattr(tl.empty(50), name)(*args).numpy()
        tl.manual_seed(99)
        b = getattr(tl.empty(50), name)(*args).numpy()
        np.testing.assert_array_equal(a, b)
        g = tl.Generator()
        g.manual_seed(5)
        c = getattr(tl.empty(50), name)(*args, generator=g).numpy()
        g.manual_seed(5)
        d = getattr(tl.empty(50), name)(*args, generator=g).numpy()
        np.testing.assert_array_equal(c, d)
        assert not np.array_equal(a, c)


def test_dtypes_meta_grad():
    for dt in (tl.float16, tl.bfloat16, tl.float32, tl.float64):
        t = tl.empty(100, dtype=dt)
        r = t.uniform_(-1, 1)
        assert r is t or r.data_ptr() == t.data_ptr()
        v = np.asarray(t.numpy(), dtype=np.float64)
        assert v.min() >= -1 and v.max() <= 1 and t.dtype == dt
    assert tl.empty(2, 3, device="meta").normal_().shape == (2, 3)
    assert tl.empty(0).exponential_().shape == (0,)
    x = tl.zeros(4, dtype=tl.float64).requires_grad_()
    y = x * 1
    y.normal_()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(4))


ERRORS = [
    ("uniform_", (1.0, 0.0), tl.float32, RuntimeError, "uniform_ expects to return a [from, to) range, but found from=1 > to=0"),
    ("uniform_", (-3e38, 3e38), tl.float32, RuntimeError, "which result in to-from to exceed the limit"),
    ("uniform_", (0.0, 1.0), tl.int64, NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("normal_", (0.0, -1.0), tl.float32, RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("normal_", (0.0, 1.0), tl.int32, NotImplementedError, "\"normal_kernel_cpu\" not implemented for 'Int'"),
    ("log_normal_", (0.0, -2.0), tl.float32, RuntimeError, "log_normal_ expects std > 0.0, but found std=-2"),
    ("log_normal_", (), tl.uint8, NotImplementedError, "\"log_normal_cpu\" not implemented for 'Byte'"),
    ("cauchy_", (0.0, -1.0), tl.float32, RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=-1"),
    ("cauchy_", (), tl.int64, RuntimeError, "dtype must be a floating point but you specified long int"),
    ("exponential_", (-1.0,), tl.float32, RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=-1"),
    ("exponential_", (), tl.int64, RuntimeError, "dtype must be a floating point but you specified Long"),
    ("geometric_", (1.5,), tl.float32, RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1.5"),
]


@pytest.mark.parametrize("name,args,dt,exc,msg", ERRORS)
def test_errors(name, args, dt, exc, msg):
    with pytest.raises(exc) as e:
        getattr(tl.empty(3, dtype=dt), name)(*args)
    assert msg in str(e.value)
    if torch is not None:
        with pytest.raises(exc) as te:
            getattr(torch.empty(3, dtype=getattr(torch, str(dt).split(".")[-1])), name)(*args)
        assert msg in str(te.value)


def test_bernoulli():
    tl.manual_seed(3)
    p = np.concatenate([np.full(N, 0.3), np.full(N, 0.8), np.zeros(100), np.ones(100)])
    x = tl.bernoulli(tl.from_numpy(p)).numpy()
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert abs(x[:N].mean() - 0.3) < 5 * math.sqrt(0.21 / N) and abs(x[N:2 * N].mean() - 0.8) < 5 * math.sqrt(0.16 / N)
    assert x[2 * N:2 * N + 100].sum() == 0 and x[-100:].sum() == 100
    y = tl.empty(N, dtype=tl.float32).bernoulli_(0.25).numpy()
    assert abs(y.mean() - 0.25) < 5 * math.sqrt(0.1875 / N)
    z = tl.bernoulli(tl.zeros(N, dtype=tl.int64), 0.6)   # every dtype, as PyTorch
    assert z.dtype == tl.int64 and abs(z.numpy().mean() - 0.6) < 0.02
    assert tl.zeros(10, dtype=tl.bool).bernoulli_(1.0).numpy().all()
    g = tl.Generator()
    g.manual_seed(11)
    a = tl.bernoulli(tl.full([64], 0.5), generator=g).numpy()
    g.manual_seed(11)
    np.testing.assert_array_equal(a, tl.bernoulli(tl.full([64], 0.5), generator=g).numpy())
    # gradients: zero (PyTorch's derivative); results of bernoulli(x, p) / bernoulli(x) require grad as there
    w = tl.full([4], 0.5, dtype=tl.float64).requires_grad_()
    tl.bernoulli(w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros(4))
    assert tl.bernoulli(w, 0.5).requires_grad
    with pytest.raises(RuntimeError, match=r"Expected p_in >= 0 && p_in <= 1 to be true, but got false"):
        tl.bernoulli(tl.tensor([0.5, 1.5]))
    with pytest.raises(NotImplementedError, match="\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"):
        tl.bernoulli(tl.tensor([1, 0]))
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"):
        tl.empty(3).bernoulli_(1.5)


def test_rand_like_randn_like():
    tl.manual_seed(5)
    base = tl.zeros(200, 100, dtype=tl.float64).t()
    u = tl.rand_like(base)
    assert u.shape == (100, 200) and u.dtype == tl.float64 and u.stride() == base.stride()
    assert ks_distance(u.numpy().ravel(), lambda x: np.clip(x, 0, 1)) < 0.015
    z = tl.randn_like(base, dtype=tl.float32)
    assert z.dtype == tl.float32
    assert ks_distance(z.numpy().ravel(), lambda x: 0.5 * (1 + _erf(x / math.sqrt(2)))) < 0.015
    g = tl.Generator()
    g.manual_seed(2)
    a = tl.randn_like(base, generator=g).numpy()
    g.manual_seed(2)
    np.testing.assert_array_equal(a, tl.randn_like(base, generator=g).numpy())
    assert not tl.rand_like(tl.zeros(3).requires_grad_()).requires_grad
    with pytest.raises(NotImplementedError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        tl.rand_like(tl.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="\"normal_kernel_cpu\" not implemented for 'Long'"):
        tl.randn_like(tl.tensor([1, 2]))


def test_normal_overloads():
    tl.manual_seed(21)
    mean = np.where(np.arange(N) % 2 == 0, -1.0, 3.0)
    x = tl.normal(tl.from_numpy(mean), 2.0).numpy()
    assert ks_distance(x[0::2], lambda v: 0.5 * (1 + _erf((v + 1) / (2 * math.sqrt(2))))) < 0.02
    assert ks_distance(x[1::2], lambda v: 0.5 * (1 + _erf((v - 3) / (2 * math.sqrt(2))))) < 0.02
    y = tl.normal(0.5, tl.full([N], 0.25, dtype=tl.float64)).numpy()
    assert ks_distance(y, lambda v: 0.5 * (1 + _erf((v - 0.5) / (0.25 * math.sqrt(2))))) < 0.015
    z = tl.normal(tl.zeros(4, 1), tl.ones(3))   # broadcast
    assert z.shape == (4, 3) and z.dtype == tl.float32
    w = tl.normal(2.0, 0.5, [N], dtype=tl.float64)
    assert w.dtype == tl.float64 and abs(w.numpy().mean() - 2) < 5 * 0.5 / math.sqrt(N)
    assert tl.normal(0.0, 1.0, size=[2, 3]).dtype == tl.float32
    out = tl.empty(0)
    assert tl.normal(1.0, 2.0, [5], out=out) is out and out.shape == (5,)
    out = tl.empty(3)
    assert tl.normal(tl.zeros(3), 1.0, out=out) is out
    g = tl.Generator()
    g.manual_seed(4)
    a = tl.normal(tl.zeros(8), tl.ones(8), generator=g).numpy()
    g.manual_seed(4)
    np.testing.assert_array_equal(a, tl.normal(tl.zeros(8), tl.ones(8), generator=g).numpy())
    m = tl.zeros(3, dtype=tl.float64).requires_grad_()
    tl.normal(m, 1.0).sum().backward()
    np.testing.assert_array_equal(m.grad.numpy(), np.zeros(3))
    errors = [(lambda L: L.normal(L.zeros(2), L.tensor([-1.0, 1.0])), RuntimeError,
               "normal expects all elements of std >= 0.0"),
              (lambda L: L.normal(L.zeros(2), -1.0), RuntimeError, "normal expects std >= 0.0, but found std -1"),
              (lambda L: L.normal(L.zeros(2), L.ones(3)), RuntimeError,
               "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
              (lambda L: L.normal(L.zeros(2, dtype=L.int64), 1.0), NotImplementedError,
               "\"normal_kernel_cpu\" not implemented for 'Long'")]
    for fn, exc, msg in errors:
        for lib in (tl, torch) if torch is not None else (tl,):
            with pytest.raises(exc) as e:
                fn(lib)
            assert msg in str(e.value)


def test_randint_like():
    tl.manual_seed(8)
    v = tl.randint_like(tl.zeros(70000, dtype=tl.int64), -3, 4).numpy()
    assert v.min() == -3 and v.max() == 3
    np.testing.assert_allclose(np.bincount(v + 3) / v.size, np.full(7, 1 / 7), atol=0.01)
    x = tl.zeros(3, 2).t()
    r = tl.randint_like(x, 10)
    assert r.dtype == tl.float32 and r.stride() == x.stride() and np.all(r.numpy() == np.round(r.numpy()))
    assert tl.randint_like(x, 2, 4, dtype=tl.float64).dtype == tl.float64
    assert tl.randint_like(tl.zeros(5, dtype=tl.bool), 2).dtype == tl.bool
    assert not tl.randint_like(tl.zeros(3).requires_grad_(), 3).requires_grad
    g = tl.Generator()
    g.manual_seed(1)
    a = tl.randint_like(x, 100, generator=g).numpy()
    g.manual_seed(1)
    np.testing.assert_array_equal(a, tl.randint_like(x, 0, 100, generator=g).numpy())
    for lib in (tl, torch) if torch is not None else (tl,):
        with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=2"):
            lib.randint_like(lib.zeros(3), 5, 2)


def test_multinomial():
    tl.manual_seed(13)
    w = np.array([1.0, 0.0, 3.0, 6.0])
    s = tl.multinomial(tl.from_numpy(w), N, replacement=True)
    assert s.dtype == tl.int64 and s.shape == (N,)
    np.testing.assert_allclose(np.bincount(s.numpy(), minlength=4) / N, w / w.sum(), atol=0.012)
    # without replacement: distinct categories; the first pick follows the weights
    rows = tl.multinomial(tl.from_numpy(np.tile(w, (4000, 1))), 3)
    r = rows.numpy()
    assert rows.shape == (4000, 3) and all(len(set(x)) == 3 for x in r)
    np.testing.assert_allclose(np.bincount(r[:, 0], minlength=4) / 4000, w / w.sum(), atol=0.03)
    assert not np.any(r[:, :2] == 1)   # the zero weight only once the positive ones are used up
    # a zero weight is picked only when nothing else is left
    np.testing.assert_array_equal(np.sort(tl.multinomial(tl.tensor([0.0, 1.0, 0.0]), 1).numpy()), [1])
    out = tl.empty(0, dtype=tl.int64)
    assert tl.multinomial(tl.ones(2, 5), 3, out=out) is out and out.shape == (2, 3)
    g = tl.Generator()
    g.manual_seed(3)
    a = tl.multinomial(tl.ones(10), 5, generator=g).numpy()
    g.manual_seed(3)
    np.testing.assert_array_equal(a, tl.ones(10).multinomial(5, generator=g).numpy())
    errors = [(lambda L: L.multinomial(L.ones(3), 4), "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
              (lambda L: L.multinomial(L.ones(3), 0), "cannot sample n_sample <= 0 samples"),
              (lambda L: L.multinomial(L.zeros(3), 1), "invalid multinomial distribution (sum of probabilities <= 0)"),
              (lambda L: L.multinomial(L.tensor([1.0, -1.0]), 1),
               "probability tensor contains either `inf`, `nan` or element < 0"),
              (lambda L: L.multinomial(L.tensor([1.0, float("nan")]), 1),
               "probability tensor contains either `inf`, `nan` or element < 0"),
              (lambda L: L.multinomial(L.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
              (lambda L: L.multinomial(L.ones(3, dtype=L.int64), 1),
               "multinomial only supports floating-point dtypes for input, got: Long")]
    for fn, msg in errors:
        for lib in (tl, torch) if torch is not None else (tl,):
            with pytest.raises(RuntimeError) as e:
                fn(lib)
            assert msg in str(e.value)
