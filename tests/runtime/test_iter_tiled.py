"""TensorIterator's tiled walk (runtime/src/iter.c, kernels/cpu/tile_kernel.c):
operands transposed relative to the output are read in tiles, transposed by
SIMD register blocks into a scratch buffer, and large outputs are written with
streaming stores. Checked against numpy for every element size, every CPU
capability (each has its own block transposes), odd sizes (tile and block
tails), broadcasting, 3-D, unary / binary / ternary loops, out=, in place,
copies and casting copies, 1 and 2 threads."""
import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt
from torchlet._C import lib

from rt_helpers import ALL, BF16, NP, assert_same, random_array

add = _rt.test_binary_add     # a + b with the test hook's loop (every dtype)

# odd sizes around the block (2..16), tile-row (16..128 elements) and tile
# (256) edges; (m, n): the result's shape, b is (n, m) and read as b.T
SHAPES = [(16, 8), (17, 9), (31, 33), (33, 31), (7, 300), (300, 7), (257, 129), (255, 1025)]


def np_add(a, b, dt):
    if dt is tl.bool:
        return np.logical_or(a, b)
    with np.errstate(over="ignore"):
        return (a.astype(NP[dt]) + b.astype(NP[dt])).astype(NP[dt])


def tl_of(a):
    return tl.from_numpy(np.ascontiguousarray(a))


def need(dt):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")


@pytest.fixture
def threads():
    """runs the body at 1 and 2 threads with a tiny grain size (so small
    shapes split too); yields the thread counts"""
    before, grain = tl.get_num_threads(), lib.tl_get_grain_size()
    yield before, grain
    tl.set_num_threads(before)
    lib.tl_set_grain_size(grain)


def each_thread_count(fn):
    """fn() at 1 thread and at 2 threads with a grain of 1000: identical results"""
    grain = lib.tl_get_grain_size()
    try:
        tl.set_num_threads(1)
        r1 = fn()
        tl.set_num_threads(2)
        lib.tl_set_grain_size(1000)
        r2 = fn()
    finally:
        lib.tl_set_grain_size(grain)
    return r1, r2


@pytest.mark.parametrize("dt", ALL)
def test_add_transposed_every_dtype_and_size(cpu_capability, threads, dt):
    need(dt)
    rng = np.random.default_rng(3)
    for m, n in SHAPES:
        a = random_array(rng, (m, n), dt, small=True)
        b = random_array(rng, (n, m), dt, small=True)
        ta, tbT = tl_of(a), _rt.transpose(tl_of(b), 0, 1)
        r1, r2 = each_thread_count(lambda: add(ta, tbT).numpy())
        ref = np_add(a, b.T, dt)
        assert_same(add(ta, tbT), ref)
        np.testing.assert_array_equal(r1, r2)
        # the transposed operand first, and both transposed (output follows them)
        assert_same(add(tbT, ta), np_add(b.T, a, dt))
        assert_same(add(tbT, tbT), np_add(b.T, b.T, dt))


@pytest.mark.parametrize("dt", ALL)
def test_transposed_copy_and_contiguous_every_dtype(cpu_capability, threads, dt):
    need(dt)
    rng = np.random.default_rng(4)
    for m, n in SHAPES + [(1000, 1000), (1025, 1023)]:     # the last two stream their stores
        b = random_array(rng, (n, m), dt)
        tbT = _rt.transpose(tl_of(b), 0, 1)
        r1, r2 = each_thread_count(lambda: tbT.contiguous().numpy())
        np.testing.assert_array_equal(r1, b.T)
        np.testing.assert_array_equal(r2, b.T)
        out = tl.empty(m, n, dtype=dt)
        out.copy_(tbT)
        np.testing.assert_array_equal(out.numpy(), b.T)


@pytest.mark.parametrize("src,dst", [(tl.float32, tl.float16), (tl.float16, tl.float32), (tl.float32, tl.float64),
                                     (tl.int64, tl.float32), (tl.float64, tl.int32), (tl.bool, tl.float32),
                                     (tl.float32, tl.bfloat16), (tl.uint8, tl.int16)])
def test_transposed_casting_copy(cpu_capability, threads, src, dst):
    need(src), need(dst)
    rng = np.random.default_rng(5)
    for m, n in [(33, 17), (257, 129), (1000, 1001)]:
        b = random_array(rng, (n, m), src, small=True)
        out = tl.empty(m, n, dtype=dst)
        r1, r2 = each_thread_count(lambda: out.copy_(_rt.transpose(tl_of(b), 0, 1)).numpy().copy())
        ref = b.T.astype(NP[dst])
        np.testing.assert_array_equal(r1, ref)
        np.testing.assert_array_equal(r2, ref)


def test_large_float32_streams_same_as_numpy(cpu_capability, threads):
    """big enough for streaming stores; misaligned rows (odd widths), an offset view"""
    rng = np.random.default_rng(6)
    for m, n in [(1000, 1000), (1025, 1023), (4097, 65)]:
        a = rng.standard_normal((m, n)).astype(np.float32)
        b = rng.standard_normal((n + 1, m)).astype(np.float32)   # b[1:] starts mid-line
        ta, tbT = tl_of(a), tl_of(b)[1:].T
        r1, r2 = each_thread_count(lambda: (ta + tbT).numpy())
        np.testing.assert_array_equal(r1, a + b[1:].T)
        np.testing.assert_array_equal(r2, r1)
        out = tl.empty(m, n)
        tl.add(ta, tbT, out=out)
        np.testing.assert_array_equal(out.numpy(), r1)


def test_3d_last_two_swapped_and_broadcast(cpu_capability, threads):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 40, 70)).astype(np.float32)
    y = rng.standard_normal((3, 70, 40)).astype(np.float32)
    tx, ty = tl_of(x), tl_of(y)
    for got, ref in [
        (lambda: tx.transpose(-1, -2) + ty, x.transpose(0, 2, 1) + y),
        (lambda: ty + tx.transpose(-1, -2), y + x.transpose(0, 2, 1)),
        (lambda: tx.transpose(-1, -2) + ty[0], x.transpose(0, 2, 1) + y[0]),            # batch broadcast
        (lambda: tx[0].T + ty, x[0].T + y),                                               # 2-D over batch
        (lambda: tx.transpose(-1, -2) + ty[:, :, :1], x.transpose(0, 2, 1) + y[:, :, :1]),  # column broadcast
        (lambda: tx.transpose(-1, -2) + ty[:, :1, :], x.transpose(0, 2, 1) + y[:, :1, :]),  # row broadcast
        (lambda: tx.permute(2, 0, 1) + ty.permute(1, 0, 2), x.transpose(2, 0, 1) + y.transpose(1, 0, 2)),
        (lambda: tx.transpose(-1, -2) * 2.5, x.transpose(0, 2, 1) * np.float32(2.5)),
    ]:
        r1, r2 = each_thread_count(lambda: got().numpy())
        np.testing.assert_allclose(r1, ref, rtol=0, atol=0)
        np.testing.assert_array_equal(r2, r1)


def test_unary_ternary_out_and_in_place(cpu_capability, threads):
    rng = np.random.default_rng(8)
    m, n = 130, 77
    a = rng.standard_normal((m, n)).astype(np.float32)
    b = rng.standard_normal((n, m)).astype(np.float32)
    c = rng.standard_normal((n, m)).astype(np.float32)
    ta, tb, tc = tl_of(a), tl_of(b), tl_of(c)
    np.testing.assert_array_equal(tl.neg(tb.T).numpy(), -b.T)
    np.testing.assert_allclose(tl.exp(tb.T).numpy(), np.exp(b.T), rtol=1e-6)
    np.testing.assert_array_equal(tl.where(tb.T > 0, ta, tc.T).numpy(), np.where(b.T > 0, a, c.T))
    np.testing.assert_allclose(tl.addcmul(ta, tb.T, tc.T, value=0.5).numpy(), a + 0.5 * b.T * c.T, rtol=1e-6, atol=1e-6)
    # out= contiguous and out= transposed (then the inputs are the strided ones)
    out = tl.empty(m, n)
    tl.add(ta, tb.T, out=out)
    np.testing.assert_array_equal(out.numpy(), a + b.T)
    outT = tl.empty(n, m)
    tl.add(ta, tb.T, out=outT.T)
    np.testing.assert_array_equal(outT.numpy(), (a + b.T).T)
    # in place on a transposed view and with a transposed operand
    x = tl_of(b.copy())
    x.T.add_(ta)
    np.testing.assert_array_equal(x.numpy(), b + a.T)
    y = tl_of(a.copy())
    y.add_(tb.T)
    np.testing.assert_array_equal(y.numpy(), a + b.T)
    # in place, dtype of out= differs from the computation (temporary + copy back)
    z = tl.zeros(m, n, dtype=tl.float64)
    tl.add(ta, tb.T, out=z)
    np.testing.assert_array_equal(z.numpy(), (a + b.T).astype(np.float64))


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (1, 300), (300, 1), (1, 1), (16, 1), (2, 16)])
def test_degenerate_shapes(cpu_capability, shape):
    rng = np.random.default_rng(9)
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[::-1]).astype(np.float32)
    got = tl_of(a) + tl_of(b).T
    np.testing.assert_array_equal(got.numpy(), a + b.T)
    np.testing.assert_array_equal(tl_of(b).T.contiguous().numpy(), b.T)


def test_nan_inf_pass_through_transpose(cpu_capability):
    rng = np.random.default_rng(10)
    b = rng.standard_normal((67, 45)).astype(np.float32)
    b[::7, ::5] = np.nan
    b[3, :] = np.inf
    b[:, 4] = -np.inf
    a = np.zeros((45, 67), np.float32)
    got = (tl_of(a) + tl_of(b).T).numpy()
    np.testing.assert_array_equal(got, a + b.T)    # assert_array_equal treats NaN == NaN
    # bit patterns (NaN payloads, -0.0) survive the transposing copy
    bits = rng.integers(0, 2**32, size=(45, 67), dtype=np.uint64).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(tl_of(bits).T.contiguous().numpy().view(np.uint32), bits.T.view(np.uint32))


def test_tiled_walk_loop_calls():
    """the walk calls the loop once per tile row: ceil(300 / 256) tiles along
    the output's rows x 257 rows each (not 300 x 257 single elements)"""
    a = _rt.empty(257, 300)
    bT = _rt.transpose(_rt.empty(300, 257), 0, 1)
    assert lib.tl_test_count_loops(a._h, bT._h) == 2 * 257
