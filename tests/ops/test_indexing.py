"""Advanced indexing: index.Tensor, index_put / index_put_ /
_index_put_impl_, Tensor.__getitem__ / __setitem__ over them, and split /
unbind as explicit ops. Against numpy always (patterns where numpy and
PyTorch agree) and against torch when installed (all patterns)."""
import warnings

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import ALL, NAMES, needs_torch, torch
from shape_index_helpers import ix, leaf, make_vals, mk, npv, raises, same, tt

RNG = np.random.default_rng(606)
vals = make_vals(RNG)

# index patterns over a [5, 6, 7] tensor, as functions of a namespace giving
# `arr` (an index array builder) and `mask` (bool array builder); numpy and
# PyTorch agree on all of these (no int separated from an advanced index)
SHAPE = (5, 6, 7)
_M01 = RNG.random((5, 6)) > 0.5
_M2 = RNG.random((6,)) > 0.4
_M3 = RNG.random((5, 6, 7)) > 0.7
PATTERNS = {
    "long": lambda A, M: (A([4, 0, -1, 2, 2]),),
    "long-2d": lambda A, M: (A([[0, 1], [4, -5]]),),
    "list": lambda A, M: ([3, 1, 3],),
    "two-adjacent": lambda A, M: (A([0, 4, 2]), A([5, -1, 0])),
    "two-broadcast": lambda A, M: (A([[0], [3]]), A([1, 2, 5])),
    "three": lambda A, M: (A([0, 4]), A([1, 1]), A([6, -7])),
    "slice-then-adv": lambda A, M: (slice(1, 4), A([5, 0])),
    "adv-slice-adv": lambda A, M: (A([0, 4, 1]), slice(None, None, 2), A([1, 6, 0])),
    "adv-none-adv": lambda A, M: (slice(None), A([0, 5]), None, A([1, 6])),
    "ellipsis-adv": lambda A, M: (Ellipsis, A([[6, 0], [3, 3]])),
    "adv-ellipsis": lambda A, M: (A([1, 2]), Ellipsis),
    "none-first": lambda A, M: (None, A([1, 4])),
    "mask-2d": lambda A, M: (M(_M01),),
    "mask-1d-dim1": lambda A, M: (slice(None), M(_M2)),
    "mask-full": lambda A, M: (M(_M3),),
    "mask-and-long": lambda A, M: (M(_M01), A([2])),
    "int-then-adv": lambda A, M: (2, A([0, 5, 5])),
    "ints-adjacent": lambda A, M: (A([3, 1]), 4),
    "empty-index": lambda A, M: (A(np.zeros((0,), np.int64)),),
    "empty-2d-index": lambda A, M: (slice(None), A(np.zeros((2, 0), np.int64))),
    "stepped-then-adv": lambda A, M: (slice(None, None, 2), slice(1, None), A([0, 3])),
}


def _np_ns():
    return (lambda v: np.array(v, dtype=np.int64)), (lambda m: np.array(m))


def _tl_ns():
    return (lambda v: ix(v)), (lambda m: tl.tensor(np.array(m)))


def _torch_ns():
    return (lambda v: torch.tensor(np.array(v, dtype=np.int64))), (lambda m: torch.tensor(np.array(m)))


def _np_idx(idx):
    return tuple(np.array(e) if isinstance(e, list) else e for e in idx)


@pytest.mark.parametrize("name", list(PATTERNS))
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
def test_getitem_patterns_like_numpy(name, layout):
    base = vals((7, 6, 5))
    n = {"contiguous": base.transpose(2, 1, 0).copy(), "transposed": base.transpose(2, 1, 0),
         "stepped": vals((10, 6, 14))[::2, :, ::2]}[layout]
    x = {"contiguous": mk(n), "transposed": mk(base).permute(2, 1, 0),
         "stepped": None}[layout]
    if x is None:
        full = mk(np.zeros((10, 6, 14)))
        full[::2, :, ::2] = mk(n)
        x = full[::2, :, ::2]
    assert tuple(x.shape) == SHAPE and np.array_equal(npv(x), n)
    f = PATTERNS[name]
    same(x[f(*_tl_ns())], n[_np_idx(f(*_np_ns()))])


@needs_torch
@pytest.mark.parametrize("name", list(PATTERNS))
def test_getitem_patterns_like_torch(name):
    n = vals(SHAPE)
    f = PATTERNS[name]
    got = mk(n)[f(*_tl_ns())]
    want = torch.from_numpy(n)[f(*_torch_ns())]
    same(got, want.numpy())


@needs_torch
@pytest.mark.parametrize("idx", [
    (0, slice(None), [1, 2]),          # PyTorch: the int selects first (numpy moves the index dims first)
    (slice(None), 1, [0, 6, 2]),
    ([[0, 1], [1, 2]],),               # a list holding lists is a tuple of indices (PyTorch's legacy rule)
    ([0, [1, 2]],),
    ([0.7, 2.2],),                     # numbers in a list truncate to long
    ([True, False, True, True, False],),
    (True,), (False, 0), (0, True), (None, False),
    ([],),
], ids=repr)
def test_getitem_torch_rules(idx):
    n = vals(SHAPE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.from_numpy(n)[idx[0] if len(idx) == 1 and isinstance(idx[0], list) else idx]
    got = mk(n)[idx[0] if len(idx) == 1 and isinstance(idx[0], list) else idx]
    same(got, want.numpy())


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_getitem_dtypes(dt):
    n = vals((4, 9), dt)
    x = mk(n, dt)
    same(x[ix([3, 0, 3]), ix([8, -9, 4])], n[[3, 0, 3], [8, 0, 4]], dt)
    same(x[:, ix([[1], [7]])], n[:, [[1], [7]]], dt)      # element gather along the last dim
    same(x[tl.tensor(n > 50)], n[n > 50], dt)
    same(x.t()[ix([8, 1])], n.T[[8, 1]], dt)


def test_int32_and_uint8_indices():
    n = vals((4, 3))
    x = mk(n)
    same(x[ix([3, 1], tl.int32)], n[[3, 1]])
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        got = x[ix([1, 0, 0, 1], tl.uint8)]
    same(got, n[[0, 3]])


def test_zero_dim_and_empty():
    s = mk(np.array(3.0))
    same(s[None], np.array([3.0]))
    same(s[...], np.array(3.0))
    same(s[True], np.array([3.0]))
    same(s[False], np.zeros((0,)))
    same(s[tl.tensor(True)], np.array([3.0]))
    e = mk(np.zeros((0, 3)))
    same(e[ix(np.zeros(0, np.int64))], np.zeros((0, 3)))
    same(e[:, ix([2, 0])], np.zeros((0, 2)))
    same(e[tl.tensor(np.zeros((0, 3), bool))], np.zeros((0,)))
    n = vals((3, 4))
    same(mk(n)[ix(3 - 1)], n[2])                        # a 0-dim long tensor is an int (a view)
    same(tl.index(mk(n), [ix(np.array(2))]), n[np.array(2)])   # ...and a 0-dim index to the operator
    same(mk(n)[ix([[]])], np.zeros((1, 0, 4)))


def test_getitem_basic_only_is_a_view_advanced_is_a_copy():
    x = mk(vals((3, 4)))
    v = x[1:, ::2]
    v.fill_(-1.0)
    assert x[2, 2].item() == -1.0
    c = x[[0, 1]]
    c.fill_(-7.0)
    assert x[0, 0].item() != -7.0


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_index_operator_and_out(layout):
    n = vals((6, 5))
    x = mk(n) if layout == "contiguous" else mk(n.T.copy()).t()
    i, j = ix([5, 0, 5]), ix([[4], [0]])
    same(tl.index(x, [i]), n[[5, 0, 5]])
    same(x.index([None, j]), n[:, [[4], [0]]])
    same(tl.index(x, [i, None]), n[[5, 0, 5], :])
    out = tl.empty(0)
    r = tl.index(x, [i, ix([1, 2, 3])], out=out)
    assert r is out
    same(out, n[[5, 0, 5], [1, 2, 3]])
    strided = tl.zeros(3, 2).t()                            # non-contiguous out keeps its strides
    tl.index(x, [ix([[1, 2, 3], [0, 0, 0]]), ix([4])], out=strided)
    same(strided, n[[[1, 2, 3], [0, 0, 0]], [4]])
    raises(RuntimeError, "index_out: self (Float) and result (Long) must have the same scalar type",
           lambda: tl.index(x, [i], out=tl.empty(0, dtype=tl.int64)))
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        tl.index(x, [i], out=tl.empty(2))


def test_meta_shapes():
    m = tl.empty(5, 6, 7, device="meta")
    r = m[ix([0, 1]), :, ix([[1], [2], [3]])]
    assert r.is_meta and tuple(r.shape) == (3, 2, 6)
    assert tuple(tl.index(m, [None, ix([1, 1, 1])]).shape) == (5, 3, 7)
    m[ix([0])] = tl.empty(6, 7, device="meta")           # index_put_ on meta: shapes checked only
    with pytest.raises(NotImplementedError):
        m[tl.empty(5, dtype=tl.bool, device="meta")]


# ------------------------------------------------------------------ setitem

SET = [
    ("long-scalar", lambda A, M: (A([4, 0, -1]),), lambda s: 7.0),
    ("long-row", lambda A, M: (A([4, 0]),), lambda s: s.vals((6, 7))),
    ("two-value-broadcast", lambda A, M: (A([0, 4, 2]), A([5, -1, 0])), lambda s: s.vals((7,))),
    ("mask", lambda A, M: (M(_M01),), lambda s: s.vals((1, 7))),
    ("mask-full", lambda A, M: (M(_M3),), lambda s: -3.0),
    ("slice-adv", lambda A, M: (slice(1, 4), A([5, 0])), lambda s: s.vals((3, 2, 7))),
    ("adv-slice-adv", lambda A, M: (A([0, 4, 1]), slice(None, None, 2), A([1, 6, 0])), lambda s: s.vals((3, 3))),
    ("ellipsis", lambda A, M: (Ellipsis, A([6, 0])), lambda s: s.vals((2,))),
    ("leading-ones", lambda A, M: (A([1, 3]),), lambda s: s.vals((1, 1, 2, 6, 7))),
    ("empty", lambda A, M: (A(np.zeros(0, np.int64)),), lambda s: 5.0),
    ("int-then-adv", lambda A, M: (2, A([0, 5])), lambda s: s.vals((2, 7))),
]


class _Vals:
    """the same value arrays for every library"""
    def __init__(self):
        self.rng = np.random.default_rng(7)

    def vals(self, shape):
        return self.rng.integers(0, 100, size=shape).astype(np.float64)


def _value(v, lib):
    if isinstance(v, float):
        return v
    return {"np": v, "tl": mk(v, tl.float64), "torch": torch.from_numpy(v.copy()) if torch else None}[lib]


@pytest.mark.parametrize("name, idx, val", SET, ids=[s[0] for s in SET])
def test_setitem_like_numpy(name, idx, val):
    n = vals(SHAPE)
    x = mk(n, tl.float64)
    v = val(_Vals())
    x[idx(*_tl_ns())] = _value(v, "tl")
    nv = v.reshape(v.shape[2:]) if name == "leading-ones" else v   # numpy keeps no leading-ones rule
    n[_np_idx(idx(*_np_ns()))] = nv
    same(x, n)


@needs_torch
@pytest.mark.parametrize("name, idx, val", SET, ids=[s[0] for s in SET])
def test_setitem_like_torch(name, idx, val):
    n = vals(SHAPE)
    x, t = mk(n, tl.float64), torch.from_numpy(n.copy())
    v = val(_Vals())
    x[idx(*_tl_ns())] = _value(v, "tl")
    t[idx(*_torch_ns())] = _value(v, "torch")
    same(x, t.numpy())


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_setitem_dtypes_scalar_and_tensor(dt):
    n = vals((5, 4), dt)
    x = mk(n, dt)
    x[ix([4, 1]), ix([0, 3])] = 1
    n[[4, 1], [0, 3]] = 1
    v = vals((4,), dt)
    x[tl.tensor(n[:, 0] > 50)] = mk(v, dt)
    n[n[:, 0] > 50] = v
    same(x, n, dt)
    y = mk(n, dt).t()                                       # into a transposed view
    y[:, ix([2])] = mk(v[:1], dt)
    n[2, :] = v[0]
    same(y.t(), n, dt)


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_index_put_accumulate_repeats(dt):
    n = vals((6, 3), dt)
    i = np.array([0, 5, 0, 0, 2, 5])
    v = vals((6, 3), dt)
    got = tl.index_put(mk(n, dt), [ix(i)], mk(v, dt), accumulate=True)
    want = n.copy()
    np.add.at(want, i, v)
    if dt is tl.bool:
        want = (want != 0).astype(np.float64)
    elif dt in (tl.uint8, tl.int8):
        want = want.astype(np.int64).astype(np.dtype(NAMES[dt])).astype(np.float64)
    same(got, want, dt)


def test_index_put_variants():
    n = vals((4, 5))
    x = mk(n)
    v = vals((2, 5))
    r = x.index_put_([ix([3, 1])], mk(v))
    assert r is x
    n2 = n.copy()
    n2[[3, 1]] = v
    same(x, n2)
    y = tl.index_put(mk(n), [None, ix([4, 4, 0])], mk(np.array([1.0, 2.0, 3.0])), True)
    n3 = n.copy()
    np.add.at(n3, (slice(None), [4, 4, 0]), np.array([1.0, 2.0, 3.0]))
    same(y, n3)
    z = tl._index_put_impl_(mk(n), [ix([0])], mk(np.array(9.0)), False, False)
    n4 = n.copy()
    n4[0] = 9
    same(z, n4)
    out = tl.empty(0)
    tl.index_put(mk(n), [ix([1])], mk(np.array(5.0)), out=out)
    n5 = n.copy()
    n5[1] = 5
    same(out, n5)


@needs_torch
def test_index_put_accumulate_like_torch():
    n = vals((7, 4))
    i = np.array([[6, 0, 6], [6, 6, 1]])
    j = np.array([3, 3, 0])
    v = vals((3,))
    got = tl.index_put(mk(n), [ix(i), ix(j)], mk(v), accumulate=True)
    want = torch.from_numpy(n).index_put((torch.tensor(i), torch.tensor(j)), torch.from_numpy(v), accumulate=True)
    same(got, want.numpy())


# ------------------------------------------------------------------ errors

def test_errors():
    x = mk(vals((3, 4)))
    raises(IndexError, "index 5 is out of bounds for dimension 0 with size 3", lambda: x[ix([5])])
    # PyTorch's "dimension" is the index tensor's ordinal, not the indexed dim
    raises(IndexError, "index -5 is out of bounds for dimension 0 with size 4", lambda: x[:, ix([0, -5])])
    raises(IndexError, "index 4 is out of bounds for dimension 1 with size 4", lambda: x[ix([0]), ix([4])])
    raises(IndexError, "index 7 is out of bounds for dimension 0 with size 4", lambda: tl.index(x, [None, ix([7])]))
    raises(IndexError, "tensors used as indices must be long, int, byte or bool tensors", lambda: x[tl.tensor([0.5])])
    raises(IndexError, "tensors used as indices must be long, int, byte or bool tensors",
           lambda: tl.index(x, [ix([0], tl.int16)]))
    raises(IndexError, "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]",
           lambda: x[ix([0, 1]), ix([0, 1, 2])])
    raises(IndexError, "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] "
                       "at index 0", lambda: x[tl.tensor([True, False])])
    raises(IndexError, "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [3, 4] "
                       "at index 1", lambda: x[:, tl.tensor([True, False, True])])
    raises(IndexError, "too many indices for tensor of dimension 2 (got 3)", lambda: tl.index(x, [ix([0])] * 3))
    raises(IndexError, "too many indices for tensor of dimension 2", lambda: x[ix([0]), ix([0]), ix([0])])
    raises(IndexError, "at least one index must be provided", lambda: tl.index(x, []))
    raises(RuntimeError, "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of "
                         "shape [1, 4]", lambda: x.index_put_([ix([0])], mk(np.ones(3))))
    raises(RuntimeError, "Index put requires the source and destination dtypes match, got Float for the destination "
                         "and Long for the source.", lambda: x.index_put_([ix([0])], ix([1, 2, 3, 4])))
    raises(IndexError, "index 9 is out of bounds for dimension 0 with size 3",
           lambda: x.index_put_([ix([9])], mk(np.array(1.0))))
    raises(TypeError, "can't assign a list to a torch.FloatTensor", lambda: x.__setitem__([0, 1], [1, 2]))
    raises(TypeError, "can't assign a numpy.ndarray to a torch.FloatTensor", lambda: x.__setitem__([0], np.ones(4)))
    raises(RuntimeError, "unsupported operation: some elements of the input tensor and the written-to tensor refer "
                         "to a single memory location. Please clone() the tensor before performing the operation.",
           lambda: x.index_put_([ix([0])], x[1]))
    before = npv(x).copy()
    with pytest.raises(IndexError):
        x[ix([0, 1, 7])] = 1.0                              # checked before anything is written
    same(x, before)


@needs_torch
def test_error_texts_match_torch():
    n = vals((3, 4))
    cases = [lambda X, A, M: X[A([5])], lambda X, A, M: X[:, A([0, -5])],
             lambda X, A, M: X[A([0, 1]), A([0, 1, 2])], lambda X, A, M: X[M([True, False])],
             lambda X, A, M: X[:, M([True, False, True])],
             lambda X, A, M: X.index_put_((A([0]),), X.new_ones(3) if hasattr(X, "new_ones") else tl.ones(3))]
    for f in cases:
        errs = []
        for X, (A, M) in ((mk(n), _tl_ns()), (torch.from_numpy(n).float(), _torch_ns())):
            try:
                f(X, A, M)
                errs.append(None)
            except Exception as e:  # noqa: BLE001
                errs.append((type(e).__name__, str(e)))
        assert errs[0] == errs[1]


# ------------------------------------------------------------------ autograd

@needs_torch
@pytest.mark.parametrize("fn", [
    lambda x, A: x[A([2, 0, 2, 2])],
    lambda x, A: x[:, A([[1], [1], [3]])],
    lambda x, A: x[A([0, 2]), A([3, 3])],
    lambda x, A: x[x > 0.5],
    lambda x, A: x.t()[A([1, 1])],
], ids=["rows-repeats", "cols-2d", "points", "mask", "transposed"])
def test_getitem_gradients_like_torch(fn):
    n = RNG.standard_normal((3, 4))
    g_tl = leaf(n)
    fn(g_tl, ix).pow(2).sum().backward()
    g_t = torch.from_numpy(n.copy()).requires_grad_()
    fn(g_t, lambda v: torch.tensor(v)).pow(2).sum().backward()
    np.testing.assert_allclose(npv(g_tl.grad), g_t.grad.numpy())


def test_grad_fn_names():
    x = leaf(vals((3, 4)))
    assert type(x[[0, 2]].grad_fn).__name__ == "IndexBackward0"
    assert type(x[0, [1, 2]].grad_fn).__name__ == "IndexBackward0"
    assert type(x[x > 10].grad_fn).__name__ == "IndexBackward0"
    y = x * 1.0
    y[[0, 1]] = 0.0
    assert type(y.grad_fn).__name__ == "IndexPutBackward0"
    assert type(tl.index_put(x, [ix([0])], mk(np.array(1.0), tl.float64)).grad_fn).__name__ == "IndexPutBackward0"
    a, b = x.split(2)
    assert type(a.grad_fn).__name__ == "SplitBackward0" and a.grad_fn is b.grad_fn
    assert type(x.split_with_sizes([1, 3], 1)[0].grad_fn).__name__ == "SplitWithSizesBackward0"
    assert type(x.unbind(1)[2].grad_fn).__name__ == "UnbindBackward0"
    assert type(x.chunk(2)[0].grad_fn).__name__ == "SplitBackward0"     # chunk: a composite over split


def test_setitem_gradients():
    n = RNG.standard_normal((4, 3))
    x = leaf(n)
    v = leaf(RNG.standard_normal((2,)))
    y = x * 2.0
    y[ix([3, 0]), ix([1, 1])] = v * 3.0
    (y * y).sum().backward()
    want_x = 8.0 * n
    want_x[[3, 0], [1, 1]] = 0.0
    np.testing.assert_allclose(npv(x.grad), want_x)
    np.testing.assert_allclose(npv(v.grad), 18.0 * npv(v.detach()))
    # through a basic view: index_put_ on x[1:] rebases x's history (CopySlices)
    z = leaf(n)
    w = z * 1.0
    w[1:][ix([0, 0])] = 0.0                                # repeated target, scalar value
    w.sum().backward()
    want = np.ones((4, 3))
    want[1] = 0.0
    np.testing.assert_allclose(npv(z.grad), want)


def test_split_unbind_gradients_and_views():
    n = RNG.standard_normal((5, 3))
    x = leaf(n)
    p = x.split(2)
    assert [tuple(t.shape) for t in p] == [(2, 3), (2, 3), (1, 3)]
    assert [t.data_ptr() - x.data_ptr() for t in p] == [0, 48, 96]      # views into x
    (p[0] * 2.0).sum().backward()                           # the pieces without gradient count as zeros
    want = np.zeros((5, 3))
    want[:2] = 2.0
    np.testing.assert_allclose(npv(x.grad), want)
    y = leaf(n)
    u = y.unbind(1)
    (u[0] * u[2]).sum().backward()
    want = np.zeros((5, 3))
    want[:, 0], want[:, 2] = n[:, 2], n[:, 0]
    np.testing.assert_allclose(npv(y.grad), want)
