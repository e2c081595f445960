"""index_copy (index_copy.out structured, index_copy_, index_copy) and
index_fill.int_Scalar / index_fill_.int_Scalar (kernels/native/index_ops.c).

Values against numpy always (exact: these operators move elements), against
torch when installed: every dtype, every dim (negative too), odd shapes,
non-contiguous self / source / index, 0-dim tensors, empty indices, repeated
indices (the last copy wins), out= and in-place, Meta tensors; every error
with PyTorch's type and wording, nothing written by a refused call; the
derivatives (PyTorch's formulas: self `grad.index_fill(dim, index, 0)`,
source `grad.index_select(dim, index)`) by finite differences through
torchlet.autograd.gradcheck / gradgradcheck and against torch."""
import warnings

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import ALL, NAMES, needs_torch, torch
from shape_index_helpers import ix, leaf, make_vals, mk, npv, raises, same, tt

R = np.random.default_rng(6068)
vals = make_vals(R)


def np_index_copy(a, dim, idx, src):
    """out = a; out[..., idx[i], ...] = src[..., i, ...] along dim, in index order"""
    out = np.array(a, dtype=np.float64, copy=True)
    idx = np.atleast_1d(np.asarray(idx))
    o = out.reshape(1) if out.ndim == 0 else out
    s = np.asarray(src, dtype=np.float64)
    s = s.reshape(1) if s.ndim == 0 else s
    om, sm = np.moveaxis(o, dim, 0), np.moveaxis(s, dim if s.ndim == o.ndim else 0, 0)
    for i, j in enumerate(idx):
        om[j] = sm[i]
    return out


def np_index_fill(a, dim, idx, value):
    out = np.array(a, dtype=np.float64, copy=True)
    o = out.reshape(1) if out.ndim == 0 else out
    size = o.shape[dim]
    om = np.moveaxis(o, dim, 0)
    for j in np.atleast_1d(np.asarray(idx)):
        om[j % size] = value
    return out


def src_shape(shape, dim, n):
    s = list(shape)
    s[dim] = n
    return tuple(s)


# ------------------------------------------------------------ index_copy


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_index_copy_dtypes(dt):
    a, src = vals((4, 5), dt), vals((4, 3), dt)
    i = np.array([4, 0, 2])
    ref = np_index_copy(a, 1, i, src)
    same(tl.index_copy(mk(a, dt), 1, ix(i), mk(src, dt)), ref, dt)
    same(mk(a, dt).index_copy(-1, ix(i), mk(src, dt)), ref, dt)
    x = mk(a, dt)
    assert x.index_copy_(1, ix(i), mk(src, dt)) is x
    same(x, ref, dt)
    out = tl.empty(0, dtype=dt)
    assert tl.index_copy(mk(a, dt), 1, ix(i), mk(src, dt), out=out) is out
    same(out, ref, dt)
    r = tl.index_copy(mk(a, dt).t(), 0, ix(i), mk(src, dt).t())     # strided, every item size
    same(r, ref.T, dt)


@pytest.mark.parametrize("shape", [(7,), (3, 5), (5, 1, 3), (2, 3, 5, 7)])
def test_index_copy_every_dim(shape):
    for dim in range(-len(shape), len(shape)):
        size = shape[dim]
        for n in (1, size, size + 2):                 # one, a permutation, repeats
            i = R.permutation(size)[:n] if n <= size else R.integers(0, size, size=n)
            a, src = vals(shape), vals(src_shape(shape, dim, n))
            ref = np_index_copy(a, dim, i, src)
            same(tl.index_copy(mk(a), dim, ix(i), mk(src)), ref)
            x = mk(a)
            x.index_copy_(dim, ix(i), mk(src))
            same(x, ref)


def test_index_copy_repeated_index_last_wins():
    a, src = np.zeros((4, 3)), np.arange(9.0).reshape(3, 3)
    same(tl.index_copy(mk(a), 0, ix([0, 0, 1]), mk(src)), np.array([[3, 4, 5], [6, 7, 8], [0, 0, 0], [0, 0, 0.0]]))
    same(tl.index_copy(mk(a), 0, ix([2, 2, 2]), mk(src))[2], src[2])


def test_index_copy_non_contiguous():
    a, src = vals((6, 5)), vals((3, 6))
    i = np.array([4, 1, 3])
    ref = np_index_copy(a.T, 0, i, src)                         # self (5, 6)
    same(tl.index_copy(mk(a).t(), 0, ix(i), mk(src)), ref)       # transposed self
    same(tl.index_copy(mk(a).t(), 0, ix(i), mk(src.T).t()), ref)  # transposed source
    stepped = ix(np.array([4, 9, 1, 9, 3]))[::2]                  # a stepped index view
    assert not stepped.is_contiguous()
    same(tl.index_copy(mk(a).t(), 0, stepped, mk(src)), ref)
    # in place into a view: the base sees it
    base = mk(a)
    view = base.t()
    view.index_copy_(0, ix(i), mk(src))
    same(base, ref.T)
    # a stepped self slice (every other row)
    b = vals((8, 3))
    base = mk(b)
    base[::2].index_copy_(1, ix([2, 0]), mk(vals((4, 2)) * 0 + 7))
    want = b.copy()
    want[::2, 2] = want[::2, 0] = 7
    same(base, want)
    # out= that is non-contiguous
    out = tl.zeros(6, 5).t()
    tl.index_copy(mk(a).t(), 0, ix(i), mk(src), out=out)
    same(out, ref)


def test_index_copy_zero_dim():
    same(tl.index_copy(mk(3.0), 0, ix([0]), mk(5.0)), np.array(5.0))
    same(tl.index_copy(mk(3.0), -1, ix(0), mk(5.0)), np.array(5.0))
    same(tl.index_copy(mk(3.0), 0, ix([0]), mk([5.0])), np.array(5.0))          # 0-dim self, [1] source
    same(tl.index_copy(mk(3.0), 0, ix([0, 0, 0]), mk([1.0, 2.0, 6.0])), np.array(6.0))
    same(tl.index_copy(mk([1.0, 2.0, 3.0]), 0, ix([1]), mk(9.0)), np.array([1.0, 9.0, 3.0]))  # 0-dim source
    same(tl.index_copy(mk([1.0, 2.0, 3.0]), 0, ix(2), mk(9.0)), np.array([1.0, 2.0, 9.0]))    # 0-dim index
    same(tl.index_copy(mk([1.0, 2.0, 3.0]), 0, ix(2), mk([9.0])), np.array([1.0, 2.0, 9.0]))
    x = mk(3.0)
    assert x.index_copy_(0, ix(0), mk(4.0)) is x
    same(x, np.array(4.0))


def test_index_copy_empty():
    a = vals((4, 3))
    empty = ix(np.zeros(0, np.int64))
    same(tl.index_copy(mk(a), 0, empty, mk(np.zeros((0, 3)))), a)
    same(tl.index_copy(mk(a), 1, empty, mk(np.zeros((4, 0)))), a)
    # nothing moves, so the indices are not read (as PyTorch's kernel)
    same(tl.index_copy(mk(np.zeros((0, 3))), 1, ix([7]), mk(np.zeros((0, 1)))), np.zeros((0, 3)))
    same(tl.index_copy(mk(np.zeros((2, 0))), 0, ix([5, -5]), mk(np.zeros((2, 0)))), np.zeros((2, 0)))
    # elements move into a dim of size 0: every index is out of bounds
    raises(IndexError, "index_copy_(): index 0 is out of bounds for dimension 0 with size 0",
           lambda: tl.index_copy(mk(np.zeros((0, 3))), 0, ix([0]), mk(np.ones((1, 3)))))


def test_index_copy_errors():
    a, src = vals((4, 3)), vals((2, 3))
    x = mk(a)
    raises(RuntimeError, "index_copy_(): Expected a long tensor for index, but got Float",
           lambda: x.index_copy_(0, mk([0.0, 1.0]), mk(src)))
    raises(RuntimeError, "index_copy_(): Expected a long tensor for index, but got Int",
           lambda: x.index_copy_(0, ix([0, 1], tl.int32), mk(src)))
    raises(RuntimeError, "index_copy_(): Expected a long tensor for index, but got Float",
           lambda: tl.index_copy(x, 0, mk(np.zeros(0)), mk(np.zeros((0, 3)))))     # also when empty
    raises(RuntimeError, "index_copy_(): self and source expected to have the same dtype, but got (self) Float "
           "and (source) Double", lambda: x.index_copy_(0, ix([0, 1]), mk(src, tl.float64)))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: x.index_copy_(2, ix([0, 1]), mk(src)))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got -3)",
           lambda: tl.index_copy(x, -3, ix([0, 1]), mk(src)))
    raises(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
           lambda: tl.index_copy(mk(3.0), 1, ix(0), mk(5.0)))
    raises(IndexError, "index_copy_(): index 7 is out of bounds for dimension 0 with size 4",
           lambda: x.index_copy_(0, ix([0, 7]), mk(src)))
    raises(IndexError, "index_copy_(): index -1 is out of bounds for dimension 0 with size 4",
           lambda: x.index_copy_(0, ix([-1, 1]), mk(src)))
    raises(IndexError, "index_copy_(): index 3 is out of bounds for dimension 1 with size 3",
           lambda: x.index_copy_(1, ix([3]), mk(vals((4, 1)))))
    raises(IndexError, "index_copy_(): index 1 is out of bounds for dimension 0 with size 1",
           lambda: tl.index_copy(mk(3.0), 0, ix(1), mk(5.0)))
    raises(IndexError, "index_copy_(): Index should have dimension 1 or 0 (got 2)",
           lambda: x.index_copy_(0, ix([[0, 1]]), mk(src)))
    raises(IndexError, "index_copy_(): Number of indices (3) should be equal to source.size(dim) (2)",
           lambda: x.index_copy_(0, ix([0, 1, 2]), mk(src)))
    raises(IndexError, "index_copy_(): When source is scalar, index should have one element (got 2)",
           lambda: x.index_copy_(0, ix([0, 1]), mk(1.0)))
    raises(IndexError, "index_copy_(): When source and destination are not scalars, their dimensionality must "
           "match. Source dimensionality (3), destination dimensionality (2)",
           lambda: x.index_copy_(0, ix([0, 1]), mk(np.ones((2, 3, 1)))))
    raises(RuntimeError, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
           "shape: 3 at dimension 0 and source slice shape: 4 at dimension 0.",
           lambda: x.index_copy_(0, ix([0, 1]), mk(np.ones((2, 4)))))
    raises(RuntimeError, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
           "shape: 4 at dimension 1 and source slice shape: 3 at dimension 0.",
           lambda: x.index_copy_(1, ix([0, 1]), mk(np.ones((3, 5)))))
    raises(RuntimeError, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
           "shape: 2 4 at dimension 1 and source slice shape: 2 5 at dimension 0.",
           lambda: tl.index_copy(mk(np.zeros((2, 3, 4))), 1, ix([0, 1]), mk(np.ones((2, 2, 5)))))
    raises(RuntimeError, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
           "shape: 3 at dimension 0 and source slice shape:  at dimension 0.",
           lambda: x.index_copy_(0, ix([0]), mk(1.0)))
    raises(RuntimeError, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
           "shape:  at dimension 0 and source slice shape: 1 at dimension 0.",
           lambda: tl.index_copy(mk(3.0), 0, ix([0]), mk([[1.0]])))
    # in place / out=: overlaps refused (PyTorch's assert_no_internal_overlap / assert_no_overlap)
    raises(RuntimeError, "unsupported operation: some elements of the input tensor and the written-to tensor refer "
           "to a single memory location. Please clone() the tensor before performing the operation.",
           lambda: x.index_copy_(0, ix([2, 3]), x[:2]))
    raises(RuntimeError, "unsupported operation: more than one element of the written-to tensor refers to a single "
           "memory location. Please clone() the tensor before performing the operation.",
           lambda: mk(np.zeros((1, 3))).expand(4, 3).index_copy_(0, ix([0, 1]), mk(src)))
    raises(RuntimeError, "Expected out tensor to have dtype float, but got double instead",
           lambda: tl.index_copy(x, 0, ix([0, 1]), mk(src), out=tl.zeros(4, 3, dtype=tl.float64)))
    same(x, a)     # nothing written by the refused calls
    # the functional form of a source that overlaps self is fine (a new result)
    same(tl.index_copy(x, 0, ix([2, 3]), x[:2]), np_index_copy(a, 0, [2, 3], a[:2]))


def test_index_copy_out_resize_warns():
    a, src = vals((4, 3)), vals((2, 3))
    out = tl.zeros(2)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized since it had shape \\[2\\]"):
        r = tl.index_copy(mk(a), 0, ix([3, 0]), mk(src), out=out)
    assert r is out
    same(out, np_index_copy(a, 0, [3, 0], src))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl.index_copy(mk(a), 0, ix([3, 0]), mk(src), out=tl.empty(0))   # an empty out= takes any shape


def test_index_copy_meta():
    m = tl.zeros(4, 3, device="meta")
    r = tl.index_copy(m, 0, tl.tensor([0, 9], device="meta"), tl.ones(2, 3, device="meta"))
    assert r.device.type == "meta" and tuple(r.shape) == (4, 3)
    assert m.index_copy_(1, tl.tensor([2], device="meta"), tl.ones(4, 1, device="meta")) is m
    raises(RuntimeError, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
           "shape: 3 at dimension 0 and source slice shape: 4 at dimension 0.",
           lambda: m.index_copy(0, tl.tensor([0, 1], device="meta"), tl.ones(2, 4, device="meta")))
    raises(RuntimeError, "index_copy_(): self, index and source expected to be in the same device, but got (self) "
           "cpu, (index) meta, and (source) cpu",
           lambda: tl.zeros(4, 3).index_copy(0, tl.tensor([0, 1], device="meta"), tl.ones(2, 3)))


# ------------------------------------------------------------- derivatives


def test_index_copy_grad_values():
    a, src = R.standard_normal((5, 4)), R.standard_normal((3, 4))
    g = R.standard_normal((5, 4))
    x, s = leaf(a), leaf(src)
    r = tl.index_copy(x, 0, ix([4, 0, 2]), s)
    assert r.grad_fn.name() == "IndexCopyBackward0"
    r.backward(mk(g, tl.float64))
    gx = g.copy()
    gx[[4, 0, 2]] = 0
    same(x.grad, gx)
    same(s.grad, g[[4, 0, 2]])
    # only self requires grad: source gets none
    x = leaf(a)
    tl.index_copy(x, 0, ix([1]), mk(src[:1], tl.float64)).sum().backward()
    same(x.grad, np.where(np.arange(5)[:, None] == 1, 0.0, 1.0) * np.ones((5, 4)))
    # in place on a non-leaf
    x, s = leaf(a), leaf(R.standard_normal((5, 3)))
    y = x * 1.0
    y.index_copy_(1, ix([3, 0, 1]), s)
    assert y.grad_fn.name() == "IndexCopyBackward0"
    y.backward(mk(g, tl.float64))
    gx = g.copy()
    gx[:, [3, 0, 1]] = 0
    same(x.grad, gx)
    same(s.grad, g[:, [3, 0, 1]])


@pytest.mark.parametrize("case", range(6))
def test_index_copy_gradcheck(case):
    f64 = lambda a: mk(a, tl.float64)   # noqa: E731
    fns = [
        ((5, 4), (2, 4), lambda a, s: tl.index_copy(a, 0, ix([3, 1]), s)),
        ((4, 5), (4, 3), lambda a, s: a.index_copy(-1, ix([4, 0, 2]), s)),
        ((5, 4), (3, 4), lambda a, s: tl.index_copy(a.t(), 1, ix([0, 4, 2]), s.t())),    # non-contiguous
        ((2, 3, 4), (2, 3, 2), lambda a, s: a.clone().index_copy_(2, ix([3, 0]), s)),
        ((5,), (), lambda a, s: tl.index_copy(a, 0, ix([2]), s)),                         # 0-dim source
        ((), (), lambda a, s: tl.index_copy(a, 0, ix(0), s)),                             # 0-dim both
    ]
    sa, ss, fn = fns[case]
    inputs = [f64(R.standard_normal(sa)).requires_grad_(True), f64(R.standard_normal(ss)).requires_grad_(True)]
    assert tl.autograd.gradcheck(fn, inputs)
    assert tl.autograd.gradgradcheck(fn, inputs)


# ------------------------------------------------------------ index_fill


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_index_fill_dtypes(dt):
    a = vals((4, 5), dt)
    v = 1 if dt is tl.bool else 7
    ref = np_index_fill(a, 1, [4, -5, 2], v)
    same(tl.index_fill(mk(a, dt), 1, ix([4, -5, 2]), v), ref, dt)
    same(mk(a, dt).index_fill(-1, ix([4, 0, 2]), v), ref, dt)
    x = mk(a, dt)
    assert x.index_fill_(1, ix([4, -5, 2]), v) is x
    same(x, ref, dt)
    same(tl.index_fill(mk(a, dt).t(), 0, ix([4, 0, 2]), v), ref.T, dt)


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 5)])
def test_index_fill_every_dim(shape):
    for dim in range(-len(shape), len(shape)):
        size = shape[dim]
        i = R.integers(-size, size, size=size + 1)
        a = vals(shape)
        ref = np_index_fill(a, dim, i, -3.5)
        same(tl.index_fill(mk(a), dim, ix(i), -3.5), ref)
        perm = tuple(range(len(shape)))[::-1]
        x = mk(a.transpose(perm)).permute(perm)          # non-contiguous self (for 2+ dims)
        assert x.index_fill_(dim, ix(i), -3.5) is x
        same(x, ref)


def test_index_fill_zero_dim_empty_and_errors():
    same(tl.index_fill(mk(3.0), 0, ix([0]), 5), np.array(5.0))
    same(tl.index_fill(mk(3.0), -1, ix(-1), 5), np.array(5.0))
    a = vals((4, 3))
    same(tl.index_fill(mk(a), 0, ix(np.zeros(0, np.int64)), 5), a)
    same(tl.index_fill(mk(np.zeros((0, 3))), 1, ix([9]), 5), np.zeros((0, 3)))   # nothing to fill: not read
    same(tl.index_fill(mk(a), 0, ix(np.array([3, 9, 1]))[::2], 0), np_index_fill(a, 0, [3, 1], 0))
    x = mk(a)
    raises(IndexError, "index_fill_(): Expected dtype int64 for index.", lambda: x.index_fill_(0, mk([0.0]), 1))
    raises(IndexError, "index_fill_(): Expected dtype int64 for index.",
           lambda: x.index_fill_(0, ix([0], tl.int32), 1))
    raises(IndexError, "index_fill_(): Expected dtype int64 for index.", lambda: x.index_fill_(0, mk(np.zeros(0)), 1))
    raises(IndexError, "index 4 is out of bounds for dimension 0 with size 4", lambda: x.index_fill_(0, ix([0, 4]), 1))
    raises(IndexError, "index -5 is out of bounds for dimension 0 with size 4", lambda: x.index_fill_(0, ix([-5]), 1))
    raises(IndexError, "index 3 is out of bounds for dimension 1 with size 3", lambda: tl.index_fill(x, 1, ix(3), 1))
    raises(IndexError, "index 1 is out of bounds for dimension 0 with size 1",
           lambda: tl.index_fill(mk(3.0), 0, ix(1), 5))
    raises(RuntimeError, "Index has to be a vector/scalar", lambda: x.index_fill_(0, ix([[0]]), 1))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: x.index_fill_(2, ix([0]), 1))
    raises(RuntimeError, "unsupported operation: some elements of the input tensor and the written-to tensor refer "
           "to a single memory location. Please clone() the tensor before performing the operation.",
           lambda: (lambda i: i.index_fill_(0, i, 0))(ix([0, 1, 2])))
    same(x, a)
    # an expanded self: PyTorch's deprecation warning, then every alias is filled
    e = mk(np.zeros((1, 3))).expand(4, 3)
    with pytest.warns(UserWarning, match="^Use of index_fill_ on expanded tensors is deprecated. Please clone"):
        e.index_fill_(0, ix([0]), 5)
    same(e, np.full((4, 3), 5.0))


def test_index_fill_meta_and_grad():
    m = tl.zeros(4, 3, device="meta")
    r = m.index_fill(0, tl.tensor([0, 9], device="meta"), 5)
    assert r.device.type == "meta" and tuple(r.shape) == (4, 3)
    a, g = R.standard_normal((4, 5)), R.standard_normal((4, 5))
    x = leaf(a)
    r = x.index_fill(1, ix([4, -1, 0]), 2.0)
    assert r.grad_fn.name() == "IndexFillBackward0"
    r.backward(mk(g, tl.float64))
    gx = g.copy()
    gx[:, [4, 0]] = 0
    same(x.grad, gx)
    inputs = [mk(a, tl.float64).requires_grad_(True)]
    for fn in (lambda t: tl.index_fill(t, 1, ix([4, 0, -2]), 1.5), lambda t: t.t().index_fill(0, ix(3), 0.0),
               lambda t: (t * 1.0).index_fill_(0, ix([1, 1, 3]), 2.0)):
        assert tl.autograd.gradcheck(fn, inputs)
        assert tl.autograd.gradgradcheck(fn, inputs)


# ----------------------------------------------------------------- torch


def tt_np(e):
    """a torch tensor's values as float64 (bfloat16 through float32)"""
    return (e.to(torch.float32) if e.dtype == torch.bfloat16 else e).numpy().astype(np.float64)


def _outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok", npv(r) if lib is tl else tt_np(r)


def _same_outcomes(cases):
    """each case gives the same values, or the same error type and message, in torchlet and torch"""
    for fn in cases:
        got, want = _outcome(tl, fn), _outcome(torch, fn)
        assert got[0] == want[0], (got, want)
        if got[0] == "ok":
            np.testing.assert_array_equal(got[1], want[1])
        else:
            assert got[1] == want[1]


@needs_torch
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_index_copy_against_torch(dt):
    for shape in [(5,), (3, 4), (2, 5, 3)]:
        perm = tuple(range(len(shape)))[::-1]
        for dim in range(-len(shape), len(shape)):
            size = shape[dim]
            n = int(R.integers(0, size + 3))                  # empty, fewer, repeats
            i = R.integers(0, size, size=n)
            a, src = vals(shape, dt), vals(src_shape(shape, dim, n), dt)
            x, s = mk(a, dt), mk(src, dt)
            r = tl.index_copy(x, dim, ix(i), s)
            e = torch.index_copy(tt(x), dim, torch.from_numpy(i), tt(s))
            assert r.dtype is dt
            same(r, tt_np(e))
            # in place into a non-contiguous self (a permuted view of a base)
            base = mk(a.transpose(perm), dt)
            tbase = tt(base)
            assert base.permute(perm).index_copy_(dim, ix(i), s) is not None
            tbase.permute(perm).index_copy_(dim, torch.from_numpy(i), tt(s))
            same(base, tt_np(tbase))


@needs_torch
def test_index_copy_errors_and_edges_match_torch():
    cases = [
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0.0, 1.0]), L.ones(2, 3)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0, 1], dtype=L.int32), L.ones(2, 3)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0, 1]), L.ones(2, 3, dtype=L.float64)),
        lambda L: L.zeros(4, 3).index_copy(2, L.tensor([0, 1]), L.ones(2, 3)),
        lambda L: L.zeros(4, 3).index_copy(-3, L.tensor([0, 1]), L.ones(2, 3)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0, 7]), L.ones(2, 3)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([-1, 1]), L.ones(2, 3)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0, 1]), L.ones(2, 4)),
        lambda L: L.zeros(4, 3).index_copy(1, L.tensor([0, 1]), L.ones(3, 5)),
        lambda L: L.zeros(2, 3, 4).index_copy(1, L.tensor([0, 1]), L.ones(2, 2, 5)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([[0, 1]]), L.ones(2, 3)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0, 1, 2]), L.ones(2, 3)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0, 1]), L.ones(2, 3, 1)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0, 1]), L.tensor(1.0)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0]), L.tensor(1.0)),
        lambda L: L.zeros(4).index_copy(0, L.tensor([2]), L.tensor(1.0)),
        lambda L: L.zeros(4).index_copy(0, L.tensor(2), L.tensor(1.0)),
        lambda L: L.tensor(3.0).index_copy(0, L.tensor([0]), L.tensor([1.0])),
        lambda L: L.tensor(3.0).index_copy(0, L.tensor([0]), L.tensor([[1.0]])),
        lambda L: L.tensor(3.0).index_copy(0, L.tensor([0, 0]), L.tensor([1.0, 2.0])),
        lambda L: L.tensor(3.0).index_copy(-1, L.tensor(0), L.tensor(5.0)),
        lambda L: L.tensor(3.0).index_copy(1, L.tensor(0), L.tensor(5.0)),
        lambda L: L.tensor(3.0).index_copy(0, L.tensor(1), L.tensor(5.0)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([], dtype=L.int64), L.ones(0, 3)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([]), L.ones(0, 3)),
        lambda L: L.zeros(2, 0).index_copy(0, L.tensor([7]), L.ones(1, 0)),
        lambda L: L.zeros(4, 3).index_copy(0, L.tensor([0, 0, 1]), L.arange(9.0).view(3, 3)),
        lambda L: (lambda x: x.index_copy_(0, L.tensor([2, 3]), x[:2]))(L.zeros(4, 3)),
        lambda L: L.zeros(1, 3).expand(4, 3).index_copy_(0, L.tensor([0, 1]), L.ones(2, 3)),
        lambda L: L.index_copy(L.zeros(4, 3), 0, L.tensor([0, 1]), L.ones(2, 3), out=L.zeros(4, 3, dtype=L.float64)),
    ]
    _same_outcomes(cases)


@needs_torch
def test_index_fill_against_torch():
    cases = [
        lambda L: L.arange(12.0).view(4, 3).index_fill(0, L.tensor([0, -1]), 0),
        lambda L: L.arange(12.0).view(4, 3).index_fill(0, L.tensor([0, -5]), 0),
        lambda L: L.arange(12.0).view(4, 3).index_fill(1, L.tensor([3]), 0),
        lambda L: L.arange(12.0).view(4, 3).t().index_fill(0, L.tensor([2, 0, 2]), -1.5),
        lambda L: L.arange(12).view(4, 3).index_fill(1, L.tensor(1), 7),
        lambda L: L.arange(12.0).view(4, 3).index_fill(0, L.tensor([0.0]), 0),
        lambda L: L.arange(12.0).view(4, 3).index_fill(0, L.tensor([0], dtype=L.int32), 0),
        lambda L: L.arange(12.0).view(4, 3).index_fill(0, L.tensor([[0]]), 0),
        lambda L: L.arange(12.0).view(4, 3).index_fill(2, L.tensor([0]), 0),
        lambda L: L.arange(12.0).view(4, 3).index_fill(0, L.tensor([], dtype=L.int64), 0),
        lambda L: L.tensor(3.0).index_fill(-1, L.tensor(-1), 5),
        lambda L: L.tensor(3.0).index_fill(0, L.tensor(1), 5),
        lambda L: L.zeros(4, 3, dtype=L.bool).index_fill(1, L.tensor([1]), True),
    ]
    _same_outcomes(cases)


@needs_torch
@pytest.mark.parametrize("case", ["rows", "repeated", "transposed", "zero_dim_source", "inplace"])
def test_index_copy_gradients_match_torch(case):
    a, src = R.standard_normal((5, 4)), R.standard_normal((3, 4))

    def run(L, conv, idx):
        x, s = conv(a), conv(src)
        x.requires_grad_(True)
        s.requires_grad_(True)
        if case == "rows":
            r = L.index_copy(x, 0, idx([4, 0, 2]), s)
        elif case == "repeated":      # PyTorch's formula: every copy of a repeated index gets the gradient
            r = x.index_copy(0, idx([3, 3, 0]), s)
        elif case == "transposed":
            r = L.index_copy(x.t(), 1, idx([1, 4]), s[:2].t())
        elif case == "zero_dim_source":
            r = L.index_copy(x[0], 0, idx([2]), s[0, 0])
        else:
            r = (x * 1.0).index_copy_(0, idx([1, 3, 2]), s)
        g = np.random.default_rng(5).standard_normal(tuple(r.shape))
        r.backward(conv(g))
        return r.grad_fn.name(), [npv(t.grad) if L is tl else t.grad.numpy() for t in (x, s)]

    got = run(tl, lambda v: mk(v, tl.float64), ix)
    want = run(torch, lambda v: torch.from_numpy(np.array(v)), lambda v: torch.tensor(v))
    assert got[0] == want[0]
    for g, w in zip(got[1], want[1]):
        np.testing.assert_array_equal(g, w)
