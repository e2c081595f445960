"""Large pointwise loop calls (>= 3 MiB moved: output + non-scalar inputs) compute
their output in chunks and write it with non-temporal stores (kernels/ufunc/tl_ustream.h):
values against numpy for every store width (bool / int8 / float32 / float64
outputs), misaligned outputs (views at odd offsets), in-place (the output is
an input), broadcast scalars, tails that are not whole chunks or vectors, and
every CPU capability level."""
import numpy as np
import pytest

import torchlet as tl

from ops_helpers import needs_torch, torch

N = (3 << 20) + 37   # >= 3 MiB moved for every dtype and case here, a tail of 37 elements


@pytest.fixture(autouse=True)
def one_thread():
    """one loop call over the whole tensor (threads would split it below 3 MiB)"""
    before = tl.get_num_threads()
    tl.set_num_threads(1)
    yield
    tl.set_num_threads(before)


def T(a):
    return tl.from_numpy(np.array(a, copy=True))


@pytest.mark.parametrize("npdt", [np.float32, np.float64, np.int8, np.int64])
def test_large_binary_outputs_vs_numpy(npdt, cpu_capability):
    rng = np.random.default_rng(3)
    if np.issubdtype(npdt, np.integer):
        a = rng.integers(-100, 100, N).astype(npdt)
        b = rng.integers(-100, 100, N).astype(npdt)
    else:
        a, b = rng.standard_normal(N).astype(npdt), rng.standard_normal(N).astype(npdt)
    ta, tb = T(a), T(b)
    np.testing.assert_array_equal((ta + tb).numpy(), a + b)
    np.testing.assert_array_equal((ta * 3).numpy(), a * npdt(3))           # broadcast scalar
    np.testing.assert_array_equal((ta < tb).numpy(), a < b)                 # bool output
    np.testing.assert_array_equal(tl.maximum(ta, tb).numpy(), np.maximum(a, b))
    # misaligned output: a view starting 3 elements into its storage
    buf = tl.from_numpy(np.zeros(N + 3, npdt))
    out = buf[3:]
    tl.add(ta, tb, out=out)
    np.testing.assert_array_equal(out.numpy(), a + b)
    assert (buf.numpy()[:3] == 0).all()
    # in place: the output is the first input; misaligned in-place too
    t = T(a)
    t.mul_(tb)
    np.testing.assert_array_equal(t.numpy(), a * b)
    u = tl.from_numpy(np.concatenate([np.zeros(1, npdt), a]))[1:]
    u.sub_(tb)
    np.testing.assert_array_equal(u.numpy(), a - b)


def test_large_unary_and_ternary_outputs_vs_numpy(cpu_capability):
    rng = np.random.default_rng(4)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    c = rng.random(N) < 0.5
    ta, tb, tc = T(a), T(b), T(c)
    np.testing.assert_allclose(tl.exp(ta).numpy(), np.exp(a), rtol=2e-6)
    np.testing.assert_array_equal(tl.where(tc, ta, tb).numpy(), np.where(c, a, b))
    np.testing.assert_array_equal(tl.where(tc, ta, 0.0).numpy(), np.where(c, a, np.float32(0)))
    np.testing.assert_array_equal(tl.neg(ta).numpy(), -a)
    np.testing.assert_array_equal(tl.clamp(ta, -0.5, 0.5).numpy(), np.clip(a, -0.5, 0.5))


@needs_torch
def test_large_outputs_vs_torch():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    for f in (lambda m, x, y: m.add(x, y, alpha=2), lambda m, x, y: m.div(x, y), lambda m, x, y: m.ne(x, y)):
        np.testing.assert_array_equal(f(tl, T(a), T(b)).numpy(), f(torch, torch.from_numpy(a), torch.from_numpy(b)).numpy())
