"""Indexing operators (kernels/native/index_ops.c): index_select (+ out=), index_add, gather (+ out=), scatter (src, value, reduce,
in-place, out=), scatter_add, masked_fill (Scalar / Tensor value, in-place),
embedding (+ embedding_dense_backward), tril / triu (diagonal, in-place, out=).

Values against numpy always (exact: these operators move elements), against
torch when installed; every dtype, negative dims, non-contiguous inputs and
indices, int32 indices, 0-dim, empty, out-of-range indices (never read out of
bounds: errors with PyTorch's types and wording), wrong index dtypes, Meta
tensors, and gradients against PyTorch's formulas."""
import warnings

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import ALL, NAMES, needs_torch, torch
from shape_index_helpers import ix, leaf, make_vals, mk, npv, raises, same, tt

R = np.random.default_rng(62)
vals = make_vals(R)


def np_gather(a, dim, idx):
    out = np.zeros(idx.shape)
    for pos in np.ndindex(*idx.shape):
        src = list(pos)
        src[dim] = idx[pos]
        out[pos] = a[tuple(src)]
    return out


def np_scatter(a, dim, idx, src, reduce=None):
    out = a.copy()
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        v = src[pos] if np.ndim(src) else src
        if reduce == "add":
            out[tuple(tgt)] += v
        elif reduce == "multiply":
            out[tuple(tgt)] *= v
        else:
            out[tuple(tgt)] = v
    return out


# ------------------------------------------------------------ index_select


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_index_select_dtypes(dt):
    a = vals((4, 5, 3), dt)
    i = R.integers(0, 5, size=7)
    for d, idt in ((1, tl.int64), (-2, tl.int32)):
        same(tl.index_select(mk(a, dt), d, ix(i, idt)), np.take(a, i, 1), dt)
    i0 = R.integers(0, 4, size=6)
    same(mk(a, dt).index_select(0, ix(i0)), a[i0], dt)
    same(mk(a, dt).index_select(2, ix([2, 2, 0])), a[..., [2, 2, 0]], dt)


def test_index_select_shapes():
    a = vals((6, 4))
    x = mk(a).t()                                  # non-contiguous self (4, 6)
    i = ix(np.array([[5, 0, 3, 3]]))[0]             # a view as the index
    same(tl.index_select(x, 1, i), a.T[:, [5, 0, 3, 3]])
    same(tl.index_select(x, 0, ix(np.array([3, 9, 1, 9, 0]))[::2]), a.T[[3, 1, 0]])   # stepped index
    same(tl.index_select(x, 0, ix(2)), a.T[[2]])   # 0-dim index: one row
    same(tl.index_select(mk(5.0), 0, ix([0])), np.array(5.0))
    same(tl.index_select(mk(5.0), -1, ix(0)), np.array(5.0))
    same(tl.index_select(x, 0, ix(np.zeros(0, np.int64))), np.zeros((0, 6)))
    same(tl.index_select(mk(np.zeros((0, 3))), 1, ix([2, 0])), np.zeros((0, 2)))


def test_index_select_out():
    a = vals((3, 4))
    out = tl.empty(0)
    assert tl.index_select(mk(a), 1, ix([3, 1]), out=out) is out
    same(out, a[:, [3, 1]])
    out = tl.empty(2, 3).t()                        # strided out=
    tl.index_select(mk(a), 1, ix([3, 1]), out=out)
    same(out, a[:, [3, 1]])
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        tl.index_select(mk(a), 0, ix([1]), out=tl.empty(5, 5))
    raises(RuntimeError, "index_select(): self and result must have the same scalar type",
           lambda: tl.index_select(mk(a), 0, ix([1]), out=tl.empty(1, 4, dtype=tl.int64)))
    x = mk(a)
    raises(RuntimeError, "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
           "single memory location. Please clone() the tensor before performing the operation.",
           lambda: tl.index_select(x, 0, ix([0, 1, 2]), out=x))


def test_index_select_errors():
    x = mk(vals((2, 3)))
    raises(IndexError, "index out of range in self", lambda: tl.index_select(x, 1, ix([0, 3])))
    raises(IndexError, "index out of range in self", lambda: tl.index_select(x, 0, ix([-1])))
    raises(IndexError, "index out of range in self", lambda: tl.index_select(x, 1, ix([2**40], tl.int64)))
    raises(IndexError, "index out of range in self", lambda: tl.index_select(mk(1.0), 0, ix([1])))
    raises(RuntimeError, "index_select(): Expected dtype int32 or int64 for index",
           lambda: tl.index_select(x, 0, mk([0.0])))
    raises(RuntimeError, "index_select(): Expected dtype int32 or int64 for index",
           lambda: tl.index_select(x, 0, ix([0], tl.int16)))
    raises(IndexError, "index_select(): Index is supposed to be a vector", lambda: tl.index_select(x, 0, ix([[0]])))
    raises(IndexError, "index_select(): Index to scalar can have only 1 value, got 2 value(s)",
           lambda: tl.index_select(mk(1.0), 0, ix([0, 0])))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: tl.index_select(x, 2, ix([0])))
    raises(RuntimeError, "index_select(): self indexing axis dim should be positive",
           lambda: tl.index_select(mk(np.zeros((0, 3))), 0, ix([0])))


def test_index_select_meta():
    r = tl.index_select(tl.empty(4, 5, device="meta"), 1, tl.empty(3, dtype=tl.int64, device="meta"))
    assert r.device.type == "meta" and r.shape == (4, 3)


# --------------------------------------------------------------- index_add


@pytest.mark.parametrize("dt", [tl.uint8, tl.int32, tl.int64, tl.float16, tl.bfloat16, tl.float32, tl.float64],
                         ids=lambda d: NAMES[d])
def test_index_add(dt):
    a, src = vals((4, 5), dt) // 4, vals((4, 3), dt) // 4     # sums stay small: exact in every dtype
    i = np.array([4, 0, 4])
    ref = a.copy()
    np.add.at(ref, (slice(None), i), src)
    same(tl.index_add(mk(a, dt), 1, ix(i), mk(src, dt)), ref, dt)
    same(mk(a, dt).index_add(-1, ix(i, tl.int32), mk(src, dt)), ref, dt)
    x = mk(a, dt)
    assert x.index_add_(1, ix(i), mk(src, dt)) is x
    same(x, ref, dt)
    ref2 = a.copy()
    np.add.at(ref2, (slice(None), i), 2 * src)
    out = tl.empty(0, dtype=dt)
    assert tl.index_add(mk(a, dt), 1, ix(i), mk(src, dt), alpha=2, out=out) is out
    same(out, ref2, dt)


def test_index_add_shapes_errors():
    a, src = vals((5, 4)), vals((3, 4))
    same(tl.index_add(mk(a).t(), 1, ix([1, 1, 3]), mk(src).t()),
         (lambda r: (np.add.at(r, (slice(None), [1, 1, 3]), src.T), r)[1])(a.T.copy()))
    same(tl.index_add(mk(2.0), 0, ix([0]), mk(3.0)), np.array(5.0))
    same(tl.index_add(mk(a), 0, ix(np.zeros(0, np.int64)), mk(np.zeros((0, 4)))), a)
    x = mk(a)
    raises(RuntimeError, "index 5 is out of bounds for dimension 0 with size 5",
           lambda: tl.index_add(x, 0, ix([0, 5, 1]), mk(src)))
    raises(RuntimeError, "index -1 is out of bounds for dimension 0 with size 5",
           lambda: tl.index_add(x, 0, ix([0, -1, 1]), mk(src)))
    raises(IndexError, "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and size: [1, 1]",
           lambda: tl.index_add(x, 0, ix([[0]]), mk(src[:1])))
    raises(RuntimeError, "index_add_(): Expected dtype int32/int64 for index but got: Float",
           lambda: tl.index_add(x, 0, mk([0.0]), mk(src[:1])))
    raises(RuntimeError, "index_add_(): self (Float) and source (Double) must have the same scalar type",
           lambda: tl.index_add(x, 0, ix([0]), mk(src[:1], tl.float64)))
    raises(RuntimeError, "index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for dim: 0",
           lambda: tl.index_add(x, 0, ix([0, 1]), mk(src)))
    raises(RuntimeError, "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
           "self.shape = [5, 4] source.shape = [1, 3]", lambda: tl.index_add(x, 0, ix([0]), mk(vals((1, 3)))))
    raises(RuntimeError, "index_add_(): Indexing dim 1 is out of bounds of the source tensor with dim 1",
           lambda: tl.index_add(x, 1, ix([2]), mk(vals((5,)))))
    same(x, a)     # nothing written by the refused calls
    s = leaf(src)
    tl.index_add(leaf(a), 0, ix([4, 0, 4]), s, alpha=3).backward(mk(np.arange(20.0).reshape(5, 4), tl.float64))
    same(s.grad, 3 * np.arange(20.0).reshape(5, 4)[[4, 0, 4]])


@needs_torch
def test_index_add_against_torch():
    a, src = R.standard_normal((4, 6, 3)), R.standard_normal((4, 5, 3))
    i = R.integers(0, 6, size=5)
    r = tl.index_add(mk(a, tl.float64), 1, ix(i), mk(src, tl.float64), alpha=-1.5)
    e = torch.index_add(torch.from_numpy(a), 1, torch.from_numpy(i), torch.from_numpy(src), alpha=-1.5)
    np.testing.assert_allclose(npv(r), e.numpy(), rtol=1e-15, atol=1e-15)


# ------------------------------------------------------------------ gather


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_gather_dtypes(dt):
    a = vals((3, 5, 4), dt)
    for d in (0, 1, 2, -1):
        shape = [2, 3, 3]
        shape[d] = 6
        i = R.integers(0, a.shape[d], size=shape)
        same(tl.gather(mk(a, dt), d, ix(i)), np_gather(a, d % 3, i), dt)
    i = R.integers(0, 5, size=(3, 2, 4))
    same(mk(a, dt).gather(1, ix(i, tl.int32)), np_gather(a, 1, i), dt)


def test_gather_shapes_and_out():
    a = vals((5, 4))
    x = mk(a).t()                                      # (4, 5) non-contiguous
    i = R.integers(0, 5, size=(3, 6))
    it = ix(i.T.copy()).t()                             # non-contiguous index
    same(tl.gather(x, 1, it[:, :4]), np_gather(a.T, 1, i[:, :4]))
    same(tl.gather(mk(5.0), 0, ix(0)), np.array(5.0))
    same(tl.gather(mk(5.0), 0, ix([0, 0])), np.array([5.0, 5.0]))
    same(tl.gather(x, 1, ix(np.zeros((2, 0), np.int64))), np.zeros((2, 0)))
    same(tl.gather(x, 0, ix(np.zeros((0, 2), np.int64))), np.zeros((0, 2)))
    out = tl.empty(0)
    assert tl.gather(x, 0, ix([[1, 0]]), out=out) is out
    same(out, np_gather(a.T, 0, np.array([[1, 0]])))
    raises(RuntimeError, "Expected out tensor to have dtype float, but got long int instead",
           lambda: tl.gather(x, 0, ix([[1, 0]]), out=tl.empty(1, 2, dtype=tl.int64)))


def test_gather_errors():
    a = mk(vals((2, 3)))
    raises(RuntimeError, "index 5 is out of bounds for dimension 1 with size 3", lambda: tl.gather(a, 1, ix([[0, 5]])))
    raises(RuntimeError, "index -1 is out of bounds for dimension 1 with size 3", lambda: tl.gather(a, -1, ix([[0, -1]])))
    raises(RuntimeError, "index 1 is out of bounds for dimension 0 with size 1",
           lambda: tl.gather(mk(1.0), 0, ix([0, 1])))
    raises(RuntimeError, "gather(): Expected dtype int32/int64 for index", lambda: tl.gather(a, 1, mk([[0.0]])))
    raises(RuntimeError, "gather(): Expected dtype int32/int64 for index", lambda: tl.gather(a, 1, ix([[0]], tl.uint8)))
    raises(RuntimeError, "Index tensor must have the same number of dimensions as input tensor",
           lambda: tl.gather(a, 1, ix([0])))
    raises(RuntimeError, "Size does not match at dimension 1 expected index [1, 4] to be no larger than self [2, 3] "
           "apart from dimension 0", lambda: tl.gather(a, 0, ix([[0, 0, 0, 0]])))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: tl.gather(a, 2, ix([[0]])))


# ----------------------------------------------------------------- scatter


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_scatter_dtypes(dt):
    a, src = vals((4, 5), dt), vals((3, 6), dt)
    for d in (0, 1, -1):
        i = R.integers(0, a.shape[d], size=(3, 4))
        i[0] = np.arange(4) % a.shape[d]          # row 0 distinct targets for dim 1
        if d == 0:   # distinct targets per column: the result does not depend on the order
            i = np.stack([R.permutation(4)[:3] for _ in range(4)], 1)
        else:
            i = np.stack([R.permutation(5)[:4] for _ in range(3)], 0)
        same(tl.scatter(mk(a, dt), d, ix(i), mk(src, dt)), np_scatter(a, d % 2, i, src), dt)
        same(tl.scatter(mk(a, dt), d, ix(i, tl.int32), 1), np_scatter(a, d % 2, i, 1.0), dt)
        if dt is not tl.bool:   # halves: sums stay within int8
            h, hs = a // 2, src // 2
            same(tl.scatter_add(mk(h, dt), d, ix(i), mk(hs, dt)), np_scatter(h, d % 2, i, hs, "add"), dt)


def test_scatter_add_duplicates_and_reduce():
    a, src = vals((3, 4)), vals((3, 4))
    i = R.integers(0, 3, size=(3, 4))
    same(tl.scatter_add(mk(a, tl.float64), 0, ix(i), mk(src, tl.float64)), np_scatter(a, 0, i, src, "add"))
    same(tl.scatter_add(mk(a, tl.int32), 0, ix(i), mk(src, tl.int32)), np_scatter(a, 0, i, src, "add"))
    with _warnings_off():   # PyTorch's deprecation warning (once per process)
        r = tl.scatter(mk(a), 0, ix(i), mk(src), reduce="add")
    same(r, np_scatter(a, 0, i, src, "add"))
    s = vals((3, 4)) % 3
    with _warnings_off():
        r = tl.scatter(mk(a, tl.int64), 0, ix(i), mk(s, tl.int64), reduce="multiply")
    same(r, np_scatter(a, 0, i, s, "multiply"))
    same(tl.scatter(mk(a), 1, ix(i), 2.5, reduce="add"), np_scatter(a, 1, i, 2.5, "add"))
    same(tl.scatter(mk(a, tl.float16), 1, ix(i), 2, reduce="multiply"), np_scatter(a, 1, i, 2.0, "multiply"))
    b = vals((2, 2), tl.bool)
    same(tl.scatter(mk(b, tl.bool), 0, ix([[0, 0]]), True, reduce="add"), np.maximum(b, [[1, 1], [0, 0]]))
    raises(RuntimeError, "reduce argument must be either add or multiply.",
           lambda: tl.scatter(mk(a), 1, ix(i), 2.5, reduce="mean"))


def test_scatter_inplace_out_shapes():
    a, src = vals((4, 3)), vals((5, 5))
    x = mk(a)
    i = np.array([[3, 0, 1], [2, 1, 0]])
    r = x.scatter_(0, ix(i), mk(src))
    assert r is x
    same(x, np_scatter(a, 0, i, src))
    y = mk(a)
    y.scatter_(1, ix([[2], [0]]), -1.0)
    same(y, np_scatter(a, 1, np.array([[2], [0]]), -1.0))
    z = mk(a)
    z.scatter_add_(0, ix(i), mk(src))
    same(z, np_scatter(a, 0, i, src, "add"))
    out = tl.empty(0)
    assert tl.scatter(mk(a), 0, ix(i), mk(src), out=out) is out
    same(out, np_scatter(a, 0, i, src))
    xt = mk(a.T.copy()).t()                        # non-contiguous self, src, index
    st = mk(src.T.copy()).t()
    it = ix(i.T.copy()).t()
    same(tl.scatter(xt, 0, it, st), np_scatter(a, 0, i, src))
    same(tl.scatter(mk(5.0), 0, ix(0), mk(7.0)), np.array(7.0))
    same(tl.scatter(mk(a), 0, ix(np.zeros((0, 3), np.int64)), mk(src)), a)
    r = tl.scatter(tl.empty(4, 3, device="meta"), 0, ix(i).to("meta"), 1.0)
    assert r.device.type == "meta" and r.shape == (4, 3)


def test_scatter_errors():
    a = mk(vals((2, 3)))
    raises(RuntimeError, "index 5 is out of bounds for dimension 1 with size 3",
           lambda: tl.scatter(a, 1, ix([[0, 5]]), a))
    raises(RuntimeError, "index -1 is out of bounds for dimension 0 with size 2",
           lambda: tl.scatter(a, 0, ix([[-1]]), 1.0))
    raises(RuntimeError, "index 7 is out of bounds for dimension 1 with size 3",
           lambda: tl.scatter_add(a, 1, ix([[0, 7]]), a))
    raises(RuntimeError, "scatter(): Expected self.dtype to be equal to src.dtype",
           lambda: tl.scatter(a, 1, ix([[0, 1]]), mk(vals((2, 3)), tl.float64)))
    raises(RuntimeError, "scatter(): Expected self.dtype to be equal to src.dtype",
           lambda: tl.scatter_add(a, 1, ix([[0, 1]]), mk(vals((2, 3)), tl.int32)))
    raises(RuntimeError, "scatter(): Expected dtype int32/int64 for index", lambda: tl.scatter(a, 1, mk([[0.0]]), 1.0))
    raises(RuntimeError, "Expected index [1, 4] to be no larger than self [2, 3] apart from dimension 1 and to be no "
           "larger size than src [2, 3]", lambda: tl.scatter(a, 1, ix([[0, 1, 2, 0]]), a))
    raises(RuntimeError, "Expected index [3, 1] to be no larger than self [2, 3] apart from dimension 1",
           lambda: tl.scatter(a, 1, ix([[0], [0], [0]]), 1.0))
    raises(RuntimeError, "Index tensor must have the same number of dimensions as self tensor",
           lambda: tl.scatter(a, 1, ix([0]), 1.0))
    raises(RuntimeError, "Index tensor must have the same number of dimensions as src tensor",
           lambda: tl.scatter(a, 1, ix([[0]]), mk([1.0])))


@needs_torch
@pytest.mark.parametrize("dt", [tl.int32, tl.float16, tl.float32, tl.float64], ids=lambda d: NAMES[d])
def test_gather_scatter_against_torch(dt):
    a, src = vals((4, 6, 5), dt), vals((4, 6, 5), dt)
    x, s = mk(a, dt).transpose(0, 2), mk(src, dt).transpose(0, 2)
    i = ix(R.integers(0, 6, size=(5, 6, 3)))
    ti = torch.from_numpy(npv(i).astype(np.int64))
    for fn in (lambda m, x, s, i: m.gather(x, 1, i), lambda m, x, s, i: m.scatter_add(x, 1, i, s),
               lambda m, x, s, i: m.scatter(x, 2, i[:, :4] % 4, 3), lambda m, x, s, i: m.index_select(x, 1, i[0, 0]),
               lambda m, x, s, i: m.scatter(x, 1, i, s, reduce="multiply") if dt is not tl.float16 else m.tril(x, -2)):
        with _warnings_off():
            r, e = fn(tl, x, s, i), fn(torch, tt(x), tt(s), ti)
        assert r.shape == tuple(e.shape) and NAMES[r.dtype] == str(e.dtype).split(".")[-1]
        np.testing.assert_array_equal(npv(r), e.double().numpy())


def _warnings_off():
    return _Quiet(warnings.catch_warnings())


class _Quiet:
    def __init__(self, c):
        self.c = c

    def __enter__(self):
        self.c.__enter__()
        warnings.simplefilter("ignore")
        return self

    def __exit__(self, *a):
        return self.c.__exit__(*a)


# ------------------------------------------------------------- masked_fill


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_masked_fill_dtypes(dt):
    a = vals((3, 4), dt)
    m = R.random((3, 4)) < 0.5
    same(mk(a, dt).masked_fill(mk(m, tl.bool), 1), np.where(m, 1.0, a), dt)
    same(tl.masked_fill(mk(a, dt), mk(m, tl.bool), mk(0.0, tl.float64)), np.where(m, 0.0, a), dt)
    x = mk(a, dt)
    assert x.masked_fill_(mk(m[0], tl.bool), True) is x                  # mask broadcast to self
    same(x, np.where(m[0], 1.0, a), dt)


def test_masked_fill_broadcast_noncontig_values():
    a = vals((4, 3))
    x = mk(a).t()                                          # (3, 4) non-contiguous
    m = R.random((3, 1)) < 0.5
    same(x.masked_fill(mk(m, tl.bool), -2.5), np.where(m, -2.5, a.T))
    m2 = R.random((2, 1, 4)) < 0.5                          # mask broadcasts self up
    same(x.masked_fill(mk(m2, tl.bool), 9), np.where(m2, 9.0, a.T))
    same(mk(3.0).masked_fill(mk([True, False, True], tl.bool), 1), np.array([1.0, 3.0, 1.0]))
    same(mk(vals((2, 3)), tl.int64).masked_fill(mk(np.ones((2, 3)), tl.bool), 2.5), np.full((2, 3), 2.0))
    same(mk(np.zeros((2, 3)), tl.bool).masked_fill(mk(np.ones(3), tl.bool), 2.5), np.ones((2, 3)))
    same(mk(np.zeros((0, 3))).masked_fill(mk(np.ones(3), tl.bool), 1.0), np.zeros((0, 3)))
    y = mk(a)
    y[:, 1].masked_fill_(mk([True, False, True, False], tl.bool), 7.0)   # through a view
    b = a.copy()
    b[[0, 2], 1] = 7.0
    same(y, b)
    r = tl.empty(2, 3, device="meta").masked_fill(tl.empty(3, dtype=tl.bool, device="meta"), 1.0)
    assert r.device.type == "meta" and r.shape == (2, 3)


def test_masked_fill_errors():
    a = mk(vals((2, 3)))
    raises(RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype long int",
           lambda: a.masked_fill(ix([1, 0, 1]), 2.0))
    raises(RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype float",
           lambda: a.masked_fill_(mk([1, 0, 1]), 2.0))
    raises(RuntimeError, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
           lambda: a.masked_fill(mk([1, 0, 1], tl.bool), mk([2.0, 3.0])))
    raises(RuntimeError, "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1",
           lambda: a.masked_fill(mk([1, 0, 1, 1], tl.bool), 2.0))
    raises(RuntimeError, "output with shape [3] doesn't match the broadcast shape [2, 3]",
           lambda: a[0].masked_fill_(mk(np.ones((2, 3)), tl.bool), 2.0))


# --------------------------------------------------------------- embedding


@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16, tl.float32, tl.float64, tl.int64], ids=lambda d: NAMES[d])
def test_embedding(dt):
    w = vals((10, 4), dt)
    i = R.integers(0, 10, size=(2, 3))
    same(tl.embedding(mk(w, dt), ix(i)), w[i], dt)
    same(tl.embedding(mk(w, dt), ix(i[0], tl.int32)), w[i[0]], dt)
    same(tl.embedding(mk(w, dt), ix(4)), w[4], dt)
    same(tl.embedding(mk(w.T, dt).t(), ix(i.T).t()), w[i], dt)     # non-contiguous weight and indices


def test_embedding_errors():
    w = mk(vals((4, 3)))
    raises(IndexError, "index out of range in self", lambda: tl.embedding(w, ix([[0, 5]])))
    raises(IndexError, "index out of range in self", lambda: tl.embedding(w, ix([-1])))
    raises(RuntimeError, "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
           "Int; but got torch.FloatTensor instead (while checking arguments for embedding)",
           lambda: tl.embedding(w, mk([[0, 1.0]])))
    raises(RuntimeError, "'weight' must be 2-D", lambda: tl.embedding(mk(vals((4,))), ix([0])))


def test_embedding_dense_backward():
    g = vals((2, 3, 4))
    i = np.array([[0, 2, 0], [5, 2, 1]])
    ref = np.zeros((6, 4))
    for pos in np.ndindex(2, 3):
        ref[i[pos]] += g[pos]
    same(tl.embedding_dense_backward(mk(g, tl.float64), ix(i), 6, -1, False), ref, tl.float64)
    ref_pad = ref.copy()
    ref_pad[2] = 0
    same(tl.embedding_dense_backward(mk(g, tl.float64), ix(i), 6, 2, False), ref_pad, tl.float64)
    cnt = np.bincount(i.reshape(-1), minlength=6)
    ref_freq = np.zeros((6, 4))
    for pos in np.ndindex(2, 3):
        ref_freq[i[pos]] += g[pos] / cnt[i[pos]]
    np.testing.assert_allclose(npv(tl.embedding_dense_backward(mk(g), ix(i, tl.int32), 6, -1, True)), ref_freq,
                               rtol=1e-6)
    r = tl.embedding_dense_backward(mk(g, tl.bfloat16), ix(i), 6, -1, False)
    assert r.dtype is tl.bfloat16 and r.shape == (6, 4)
    raises(IndexError, "index out of range in self",
           lambda: tl.embedding_dense_backward(mk(g), ix(i), 5, -1, False))


@needs_torch
def test_embedding_against_torch():
    w0, i0 = R.standard_normal((7, 5)), R.integers(0, 7, size=(3, 4))
    for pad, freq in ((-1, False), (3, False), (-1, True), (0, True)):
        wt = torch.tensor(w0, requires_grad=True)
        e = torch.embedding(wt, torch.from_numpy(i0), pad, freq)
        g0 = R.standard_normal(e.shape)
        e.backward(torch.from_numpy(g0))
        w = mk(w0, tl.float64)
        w.requires_grad_(True)
        r = tl.embedding(w, ix(i0), pad, freq)
        r.backward(mk(g0, tl.float64))
        np.testing.assert_array_equal(npv(r), e.detach().numpy())
        np.testing.assert_allclose(npv(w.grad), wt.grad.numpy(), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------ tril / triu


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_tril_triu_dtypes(dt):
    a = vals((2, 4, 5), dt)
    for k in (0, 1, -2, 7, -9):
        same(tl.tril(mk(a, dt), k), np.tril(a, k), dt)
        same(mk(a, dt).triu(k), np.triu(a, k), dt)


def test_tril_triu_variants():
    a = vals((5, 3))
    x = mk(a).t()                                     # (3, 5) non-contiguous
    same(tl.tril(x, 1), np.tril(a.T, 1))
    y = mk(a)
    assert y.tril_(-1) is y
    same(y, np.tril(a, -1))
    z = mk(a).t()
    z.triu_()
    same(z, np.triu(a.T))
    out = tl.empty(0)
    assert tl.triu(mk(a), 1, out=out) is out
    same(out, np.triu(a, 1))
    out = tl.empty(3, 5).t()
    tl.tril(mk(a), out=out)
    same(out, np.tril(a))
    same(tl.tril(mk(np.zeros((0, 3)))), np.zeros((0, 3)))
    b = vals((2, 3, 4, 4))
    same(tl.triu(mk(b)[:, 1], -1), np.triu(b[:, 1], -1))     # batched, a strided view
    r = tl.tril(tl.empty(3, 4, device="meta"))
    assert r.device.type == "meta" and r.shape == (3, 4)
    raises(RuntimeError, "tril: input tensor must have at least 2 dimensions", lambda: tl.tril(mk(vals((3,)))))
    raises(RuntimeError, "triu: input tensor must have at least 2 dimensions", lambda: tl.triu(mk(1.0)))
    raises(RuntimeError, "Expected out tensor to have dtype float, but got long int instead",
           lambda: tl.tril(mk(a), out=tl.empty(5, 3, dtype=tl.int64)))


# ---------------------------------------------------------------- autograd


def test_backward_formulas():
    a = vals((4, 5))
    g = vals((4, 3))
    x = leaf(a)
    tl.index_select(x, 1, ix([4, 0, 4])).backward(mk(g, tl.float64))
    ref = np.zeros((4, 5))
    np.add.at(ref, (slice(None), [4, 0, 4]), g)
    np.testing.assert_array_equal(npv(x.grad), ref)
    x = leaf(a)
    i = np.array([[1, 1, 3], [0, 0, 0], [2, 4, 2], [3, 3, 3]])
    tl.gather(x, 1, ix(i)).backward(mk(g, tl.float64))
    ref = np.zeros((4, 5))
    for pos in np.ndindex(4, 3):
        ref[pos[0], i[pos]] += g[pos]
    np.testing.assert_array_equal(npv(x.grad), ref)
    x, s = leaf(a), leaf(vals((4, 3)))
    it = np.array([[0, 1, 2], [4, 3, 2], [1, 0, 3], [2, 4, 0]])
    y = tl.scatter(x, 1, ix(it), s)
    gy = vals((4, 5))
    y.backward(mk(gy, tl.float64))
    np.testing.assert_array_equal(npv(x.grad), np_scatter(gy, 1, it, 0.0))
    np.testing.assert_array_equal(npv(s.grad), np_gather(gy, 1, it))
    m = R.random((4, 5)) < 0.5
    x, v = leaf(a), leaf(np.array(2.0))
    tl.masked_fill(x, mk(m, tl.bool), v).backward(mk(gy, tl.float64))
    np.testing.assert_array_equal(npv(x.grad), np.where(m, 0.0, gy))
    np.testing.assert_array_equal(npv(v.grad), np.array(gy[m].sum()))
    x = leaf(a)
    tl.triu(x, 1).backward(mk(gy, tl.float64))
    np.testing.assert_array_equal(npv(x.grad), np.triu(gy, 1))
