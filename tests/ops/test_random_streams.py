"""torchlet's CPU generator draws PyTorch's numbers (runtime/src/generator.c,
kernels/native/random_draws.h, kernels/native/distributions.c).

The engine against numpy's legacy RandomState (the same MT19937 with the same
init_genrand seeding): always runs. Every distribution against torch, draw for
draw, after the same manual_seed: where torch is installed."""
import numpy as np
import pytest

import torchlet as tl
from ops_helpers import needs_torch, torch


def mt_words(seed, n):
    """the first n 32-bit outputs of MT19937 seeded as PyTorch / numpy's RandomState"""
    return np.frombuffer(np.random.RandomState(seed).bytes(4 * n), dtype="<u4").astype(np.uint64)


def test_engine_is_mt19937_with_pytorch_seeding():
    w = mt_words(1234, 10)
    tl.manual_seed(1234)
    got = tl.empty(5, dtype=tl.int64).random_().tolist()
    want = [int(((int(w[2 * i]) << 32) | int(w[2 * i + 1])) % (1 << 63)) for i in range(5)]
    assert got == want
    tl.manual_seed(1234)
    assert tl.empty(10, dtype=tl.int32).random_().tolist() == [int(x % (1 << 31)) for x in w]


def test_rand_is_24_bit_uniforms_of_the_stream():
    w = mt_words(7, 1000)
    tl.manual_seed(7)
    got = tl.rand(1000).numpy()
    np.testing.assert_array_equal(got, ((w & 0xFFFFFF).astype(np.float32) * np.float32(2.0 ** -24)))
    tl.manual_seed(7)
    d = tl.rand(500, dtype=tl.float64).numpy()
    r64 = (w[0::2] << np.uint64(32)) | w[1::2]
    np.testing.assert_array_equal(d, (r64 & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53)


def test_state_round_trip_and_generators_are_independent():
    g = tl.Generator().manual_seed(3)
    s = g.get_state()
    assert s.dtype == tl.uint8 and s.numel() == 5056
    a = tl.randn(20, generator=g)
    g.set_state(s)
    assert tl.equal(tl.randn(20, generator=g), a)
    tl.manual_seed(3)
    assert tl.equal(tl.randn(20), a)
    assert g.initial_seed() == 3
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056"):
        g.set_state(tl.zeros(16, dtype=tl.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(tl.zeros(5056, dtype=tl.int32))


# ------------------------------------------------------------------ against torch, draw for draw

def _both(fn, seed=0):
    torch.manual_seed(seed)
    want = fn(torch)
    tl.manual_seed(seed)
    got = fn(tl)
    return got, want


def _same(got, want):
    if isinstance(want, (list, tuple)):
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    if str(want.dtype).endswith("bfloat16"):
        got, want = got.float(), want.float()
    g, w = got.numpy(), want.numpy()
    if g.dtype.kind == "c":
        g, w = g.view(g.real.dtype), w.view(w.real.dtype)
    np.testing.assert_array_equal(g, w)


CASES = {
    "rand": lambda m: m.rand(3, 7),
    "rand float64": lambda m: m.rand(11, dtype=m.float64),
    "rand half / bfloat16": lambda m: [m.rand(40, dtype=m.float16), m.rand(40, dtype=m.bfloat16)],
    "randn small (normal_distribution<double>)": lambda m: [m.randn(5), m.randn(3, dtype=m.float64), m.randn(7)],
    "randn 16 and more (normal_fill)": lambda m: [m.randn(16), m.randn(37), m.randn(4, 100), m.randn(33, dtype=m.float64)],
    "randn half / bfloat16": lambda m: [m.randn(50, dtype=m.float16), m.randn(9, dtype=m.bfloat16)],
    "randn complex": lambda m: [m.randn(20, dtype=m.complex64), m.randn(3, dtype=m.complex128)],
    "rand complex": lambda m: m.rand(9, dtype=m.complex64),
    "uniform_ bounds": lambda m: [m.empty(100).uniform_(-0.37, 0.37), m.empty(30, dtype=m.float64).uniform_(-2, 5)],
    "normal_ mean std": lambda m: [m.empty(10).normal_(0.3, 2.5), m.empty(50).normal_(-1, 0.02),
                                   m.empty(9, dtype=m.float64).normal_(3, 4)],
    "normal_ non-contiguous": lambda m: m.empty(20, 8).t().normal_(1, 2),
    "uniform_ non-contiguous": lambda m: m.empty(6, 5).t().uniform_(),
    "randint": lambda m: [m.randint(0, 10, (20,)), m.randint(-5, 5, (3, 4)), m.randint(3, (7,), dtype=m.int32),
                          m.randint(0, 2 ** 40, (5,)), m.randint(0, 100, (6,), dtype=m.float32)],
    "randperm": lambda m: [m.randperm(10), m.randperm(1), m.randperm(0), m.randperm(100, dtype=m.int32)],
    "random_": lambda m: [m.empty(5, dtype=m.int64).random_(), m.empty(5, dtype=m.int32).random_(),
                          m.empty(5).random_(), m.empty(5, dtype=m.float64).random_(),
                          m.empty(8, dtype=m.bool).random_(), m.empty(5, dtype=m.uint8).random_(),
                          m.empty(4, dtype=m.int16).random_(10), m.empty(4).random_(-3, 3),
                          m.empty(4, dtype=m.int64).random_(-(2 ** 63), None)],
    "exponential / cauchy / log_normal / geometric": lambda m: [
        m.empty(9, dtype=m.float64).exponential_(2.0), m.empty(9).exponential_(),
        m.empty(9, dtype=m.float64).cauchy_(1.0, 2.0), m.empty(9).cauchy_(),
        m.empty(9, dtype=m.float64).log_normal_(0.5, 0.25), m.empty(9).log_normal_(),
        m.empty(9, dtype=m.float64).geometric_(0.3), m.empty(9, dtype=m.int64).geometric_(0.6)],
    "bernoulli": lambda m: [m.empty(20).bernoulli_(0.3), m.empty(20, dtype=m.float64).bernoulli_(0.5),
                            m.bernoulli(m.full((15,), 0.4)), m.bernoulli(m.full((15,), 0.4, dtype=m.float64))],
    "normal(mean, std) forms": lambda m: [m.normal(m.arange(6.0), 2.0), m.normal(1.5, m.arange(1.0, 7.0)),
                                          m.normal(m.arange(20.0), m.arange(1.0, 21.0)),
                                          m.normal(2.0, 3.0, (18,))],
    "*_like": lambda m: [m.rand_like(m.zeros(3, 3)), m.randn_like(m.zeros(17)),
                         m.randint_like(m.zeros(6), 0, 9)],
}


@needs_torch
@pytest.mark.parametrize("name", list(CASES))
def test_draws_equal_torch(name):
    got, want = _both(CASES[name])
    _same(got, want)


@needs_torch
def test_init_and_dropout_equal_torch():
    def build(m):
        lin = m.nn.Linear(20, 7)
        conv = m.nn.Conv2d(3, 4, 3)
        emb = m.nn.Embedding(11, 5)
        w = m.empty(8, 9)
        m.nn.init.xavier_uniform_(w)
        n = m.empty(8, 9)
        m.nn.init.kaiming_normal_(n, nonlinearity="relu")
        d = m.nn.functional.dropout(m.ones(40), 0.3)
        return [lin.weight.detach(), lin.bias.detach(), conv.weight.detach(), conv.bias.detach(),
                emb.weight.detach(), w, n, d]
    got, want = _both(build, seed=42)
    _same(got, want)


@needs_torch
def test_state_bytes_interchange_with_torch():
    torch.manual_seed(99)
    torch.randn(5)          # leaves a cached normal behind
    s = torch.get_rng_state()
    tl.set_rng_state(tl.from_numpy(s.numpy().copy()))
    np.testing.assert_array_equal(tl.randn(7).numpy(), torch.randn(7).numpy())
    np.testing.assert_array_equal(tl.get_rng_state().numpy(), torch.get_rng_state().numpy())
    tl.manual_seed(5)
    tl.rand(3)
    torch.set_rng_state(torch.from_numpy(tl.get_rng_state().numpy().copy()))
    np.testing.assert_array_equal(tl.rand(4).numpy(), torch.rand(4).numpy())


def test_seeded_draws_are_reproducible_and_respect_generators():
    tl.manual_seed(0)
    a = [tl.randn(30), tl.rand(5), tl.randint(0, 9, (4,)), tl.randperm(6)]
    tl.manual_seed(0)
    b = [tl.randn(30), tl.rand(5), tl.randint(0, 9, (4,)), tl.randperm(6)]
    for x, y in zip(a, b):
        assert tl.equal(x, y)
    g = tl.Generator().manual_seed(0)
    tl.manual_seed(0)
    assert tl.equal(tl.randn(30, generator=g), tl.randn(30))
