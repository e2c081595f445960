"""Shape helpers, *_copy / *_scatter variants and small pointwise aliases
(kernels/native/shape_helpers.c, kernels/native/view_copy.c).

Values against numpy always (exact: small integers), against torch when
installed (values, dtypes, errors); odd shapes, non-contiguous inputs, 0-dim
and empty tensors, and gradients through the composites."""
import numpy as np
import pytest

import torchlet as tl

from ops_helpers import ALL, NAMES, needs_torch, torch
from shape_index_helpers import leaf, make_vals, mk, npv, raises, same, tt

R = np.random.default_rng(2026)
vals = make_vals(R)


def alias(r, x):
    """r is x's tensor (the binding wraps it in a new Python object)"""
    return r.data_ptr() == x.data_ptr() and r.shape == x.shape and r.stride() == x.stride() and r.dtype is x.dtype


def pieces(ts, refs, dt=None):
    assert isinstance(ts, tuple) and len(ts) == len(refs)
    for t, r in zip(ts, refs):
        same(t, r, dt)


# ------------------------------------------------------------ views and flips


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_ravel_flips_dtypes(dt):
    a = vals((3, 4, 2), dt)
    x = mk(a, dt)
    same(tl.ravel(x), a.ravel(), dt)
    same(x.ravel(), a.ravel(), dt)
    same(tl.fliplr(x), np.fliplr(a), dt)
    same(x.flipud(), np.flipud(a), dt)


def test_ravel_views_and_copies():
    a = vals((3, 5))
    x = mk(a)
    r = x.ravel()
    assert r.data_ptr() == x.data_ptr()              # contiguous: a view
    xt = x.t()
    same(xt.ravel(), a.T.ravel())                     # non-contiguous: a copy
    same(tl.ravel(mk(np.float64(3.0))), np.array([3.0]))
    same(tl.ravel(mk(np.zeros((0, 4)))), np.zeros(0))
    same(x[:, ::2].fliplr(), np.fliplr(a[:, ::2]))


def test_flip_errors():
    raises(RuntimeError, "Input must be >= 2-d.", lambda: tl.fliplr(mk(vals((3,)))))
    raises(RuntimeError, "Input must be >= 1-d.", lambda: tl.flipud(mk(np.float64(1.0))))


@pytest.mark.parametrize("k", [-5, -1, 0, 1, 2, 3, 4, 7])
def test_rot90(k):
    a = vals((3, 4, 5))
    x = mk(a)
    same(tl.rot90(x, k), np.rot90(a, k))
    same(x.rot90(k, [1, 2]), np.rot90(a, k, (1, 2)))
    same(tl.rot90(x, k, [-1, 0]), np.rot90(a, k, (2, 0)))
    same(tl.rot90(x.transpose(0, 2), k), np.rot90(a.transpose(2, 1, 0), k))


def test_rot90_errors():
    x = mk(vals((3, 4)))
    raises(RuntimeError, "expected total rotation dims == 2, but got dims = 1", lambda: tl.rot90(x, 1, [0]))
    raises(RuntimeError, "expected total dims >= 2, but got total dims = 1", lambda: tl.rot90(mk(vals((3,)))))
    raises(RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and dim1 = -2",
           lambda: tl.rot90(x, 1, [0, -2]))
    raises(RuntimeError, "expected rotation dims to be different, but got dim0 = 2 and dim1 = 0",
           lambda: tl.rot90(x, 1, [2, 0]))   # |2 - 0| == ndim: checked before the range
    raises(RuntimeError, "Rotation dim0 out of range, dim0 = 3", lambda: tl.rot90(x, 1, [3, 0]))
    raises(RuntimeError, "Rotation dim1 out of range, dim1 = -3", lambda: tl.rot90(x, 1, [0, -3]))


# ------------------------------------------------------------ tensor_split


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 9])
def test_tensor_split_sections(n):
    a = vals((7, 3))
    x = mk(a)
    pieces(tl.tensor_split(x, n), np.array_split(a, n))
    pieces(x.tensor_split(n, dim=-1), np.array_split(a, n, axis=1))
    pieces(tl.tensor_split(x.t(), n, 1), np.array_split(a.T, n, axis=1))
    pieces(tl.tensor_split(x, tl.tensor(n)), np.array_split(a, n))


@pytest.mark.parametrize("idx", [[], [2], [1, 4], [3, 1], [-2, 6], [0, 9, 20]])
def test_tensor_split_indices(idx):
    a = vals((7, 3))
    x = mk(a)
    pieces(tl.tensor_split(x, idx), np.split(a, idx))
    pieces(tl.tensor_split(x, tl.tensor(idx, dtype=tl.int64)), np.split(a, idx))
    ti = tl.tensor([v for v in idx for _ in (0, 1)], dtype=tl.int64)[::2]   # strided indices tensor
    pieces(tl.tensor_split(x, ti), np.split(a, idx))


def test_tensor_split_views_and_errors():
    x = mk(vals((6, 2)))
    assert all(p.data_ptr() == x[2 * i].data_ptr() for i, p in enumerate(tl.tensor_split(x, 3)))
    s = mk(np.float64(1.0))
    msg = "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
    raises(RuntimeError, msg, lambda: tl.tensor_split(s, 2))
    raises(RuntimeError, msg, lambda: tl.tensor_split(s, [1]))
    raises(RuntimeError, "number of sections must be larger than 0, got 0", lambda: tl.tensor_split(x, 0))
    raises(RuntimeError, "tensor_split expected tensor_indices_or_sections to have dtype of long, but got Float",
           lambda: tl.tensor_split(x, tl.tensor([1.0])))
    raises(RuntimeError, "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional "
           "tensor, but got a tensor with 2 dims", lambda: tl.tensor_split(x, tl.tensor([[1]])))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: tl.tensor_split(x, 2, 2))


def test_hvdsplit():
    a = vals((4, 6, 8))
    x = mk(a)
    pieces(tl.hsplit(x, 3), np.hsplit(a, 3))
    pieces(x.vsplit([1, 3]), np.vsplit(a, [1, 3]))
    pieces(tl.dsplit(x, 4), np.dsplit(a, 4))
    pieces(tl.dsplit(x, [5, 2]), np.dsplit(a, [5, 2]))
    v = vals((6,))
    pieces(tl.hsplit(mk(v), 2), np.hsplit(v, 2))
    pieces(tl.hsplit(mk(v), [4]), np.hsplit(v, [4]))
    raises(RuntimeError, "torch.hsplit attempted to split along dimension 1, but the size of the dimension 6 is not "
           "divisible by the split_size 4!", lambda: tl.hsplit(x, 4))
    raises(RuntimeError, "torch.vsplit attempted to split along dimension 0, but the size of the dimension 4 is not "
           "divisible by the split_size 0!", lambda: tl.vsplit(x, 0))
    raises(RuntimeError, "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!",
           lambda: tl.vsplit(mk(v), 2))
    raises(RuntimeError, "torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 1 dimensions!",
           lambda: tl.dsplit(mk(v), [1]))
    raises(RuntimeError, "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions!",
           lambda: tl.hsplit(mk(np.float64(1.0)), 1))


# ------------------------------------------------------ column_stack / dstack


def test_column_stack_dstack():
    a, b, c = vals((4,)), vals((4, 2)), vals(())
    same(tl.column_stack([mk(a), mk(b), mk(a)]), np.column_stack([a, b, a]))
    same(tl.column_stack([mk(c), mk(c)]), np.column_stack([c, c]))
    same(tl.column_stack([mk(b).t().t()]), b)
    same(tl.dstack([mk(a), mk(a)]), np.dstack([a, a]))
    same(tl.dstack([mk(b), mk(b).t().t()]), np.dstack([b, b]))
    d = vals((2, 3, 4))
    same(tl.dstack([mk(d), mk(d[:, :, :1])]), np.dstack([d, d[:, :, :1]]))
    assert tl.dstack([mk(a, tl.int32), mk(a)]).dtype is tl.float32
    out = tl.empty((4, 3))
    r = tl.column_stack([mk(a), mk(b)], out=out)
    assert r is out
    same(out, np.column_stack([a, b]))
    out = tl.empty((1, 4, 2))
    tl.dstack([mk(a), mk(a)], out=out)
    same(out, np.dstack([a, a]))
    raises(RuntimeError, "column_stack expects a non-empty TensorList", lambda: tl.column_stack([]))
    raises(RuntimeError, "dstack expects a non-empty TensorList", lambda: tl.dstack([]))


# ------------------------------------------------ unsafe_chunk / unsafe_split


def test_unsafe_chunk_split():
    a = vals((7, 3))
    x = mk(a)
    pieces(tl.unsafe_chunk(x, 3), np.split(a, [3, 6]))
    pieces(x.unsafe_split(2, 1), np.split(a, [2], axis=1))
    pieces(tl.unsafe_chunk(mk(np.zeros((0, 2))), 2), [np.zeros((0, 2))] * 2)
    raises(RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0", lambda: tl.unsafe_chunk(x, 0))
    raises(RuntimeError, "chunk expects at least a 1-dimensional tensor", lambda: tl.unsafe_chunk(mk(np.float64(1)), 1))
    raises(RuntimeError, "split expects split_size be non-negative, but got split_size=-1",
           lambda: tl.unsafe_split(x, -1))


# ---------------------------------------------------------- pointwise aliases


def test_positive_true_divide_square():
    a = vals((3, 4)) - 50
    x = mk(a)
    assert alias(tl.positive(x), x)
    raises(RuntimeError, "The `+` operator, on a bool tensor is not supported.", lambda: tl.positive(mk(a, tl.bool)))
    b = vals((4,)) + 1
    np.testing.assert_allclose(npv(tl.true_divide(x, mk(b))), a / b, rtol=1e-6)
    np.testing.assert_allclose(npv(x.true_divide(2)), a / 2)
    assert tl.true_divide(mk(a, tl.int64), 2).dtype is tl.float32
    y = x.clone()
    y.true_divide_(mk(b))
    np.testing.assert_allclose(npv(y), a / b, rtol=1e-6)
    out = tl.empty((3, 4))
    tl.true_divide(x, mk(b), out=out)
    np.testing.assert_allclose(npv(out), a / b, rtol=1e-6)
    same(tl.square(x), a * a)
    same(x.t().square(), (a * a).T)
    assert tl.square(mk(a, tl.int32)).dtype is tl.int32
    y = x.clone()
    tl.square_(y)
    same(y, a * a)
    out = tl.empty(0)
    tl.square(x, out=out)
    same(out, a * a)


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_isreal_conj_real(dt):
    x = mk(vals((2, 3), dt), dt)
    same(tl.isreal(x), np.ones((2, 3)), tl.bool)
    for f in (tl.conj, tl.resolve_conj, tl.resolve_neg, tl.conj_physical, tl.real):
        assert alias(f(x), x)
    assert alias(x.conj(), x) and alias(x.resolve_conj(), x) and alias(x.conj_physical(), x)


# ----------------------------------------------------- diagflat / sum_to_size


@pytest.mark.parametrize("k", [-2, 0, 1, 4])
def test_diagflat(k):
    a = vals((2, 3))
    same(tl.diagflat(mk(a), k), np.diagflat(a, k))
    same(mk(a).t().diagflat(k), np.diagflat(a.T, k))
    same(tl.diagflat(mk(np.float64(2.0))), np.diagflat([2.0]))


def test_sum_to_size():
    a = vals((2, 3, 4))
    x = mk(a, tl.float64)
    same(x.sum_to_size(3, 1), a.sum(0).sum(1, keepdims=True))
    same(x.sum_to_size([1, 3, 4]), a.sum(0, keepdims=True))
    same(x.sum_to_size(()), a.sum())
    assert alias(x.sum_to_size(2, 3, 4), x)
    raises(RuntimeError, "size {[5]} is not expandable to size {[2, 3, 4]}.", lambda: x.sum_to_size(5))
    raises(RuntimeError, "size {[1, 2, 3, 4]} is not expandable to size {[2, 3, 4]}.",
           lambda: x.sum_to_size(1, 2, 3, 4))


# ------------------------------------------------------------------ gradients


def _gc(fn, *arrays):
    return tl.autograd.gradcheck(fn, [leaf(a) for a in arrays])


def test_gradients():
    a = R.standard_normal((3, 4))
    assert _gc(lambda x: tl.rot90(x, 3), a)
    assert _gc(lambda x: tl.rot90(x.t(), -2), a)
    assert _gc(lambda x: tl.unsafe_split(x, 2, 1)[1] * 2, a)
    assert _gc(lambda x: tl.tensor_split(x, [1, 3], 1)[1].sum() + tl.hsplit(x, 2)[0].sum(), a)
    assert _gc(lambda x: tl.diagflat(x, -1), a)
    assert _gc(lambda x: x.sum_to_size(1, 4), a)
    assert _gc(lambda x, y: tl.dstack([x, y]) * 1, a, a)
    assert _gc(lambda x: tl.square(x) + tl.true_divide(x, 3.0), a)


# ---------------------------------------------------------------- vs torch


@needs_torch
def test_against_torch():
    a = vals((4, 6))
    x, t = mk(a), torch.from_numpy(a).float()
    for f in (lambda m, v: m.rot90(v, 3, [1, 0]), lambda m, v: m.fliplr(v), lambda m, v: m.ravel(v.t()),
              lambda m, v: m.diagflat(v, 2), lambda m, v: m.column_stack([v, v]), lambda m, v: m.dstack([v]),
              lambda m, v: m.square(v), lambda m, v: m.isreal(v), lambda m, v: m.true_divide(v, 3)):
        r, e = f(tl, x), f(torch, t)
        assert NAMES[r.dtype] == str(e.dtype).split(".")[-1]
        np.testing.assert_allclose(npv(r), e.double().numpy(), rtol=1e-6)
    for f in (lambda m, v: m.tensor_split(v, 4, 1), lambda m, v: m.vsplit(v, [1, 3]), lambda m, v: m.hsplit(v, 3),
              lambda m, v: m.unsafe_chunk(v, 3, 1)):
        rs, es = f(tl, x), f(torch, t)
        assert len(rs) == len(es)
        for r, e in zip(rs, es):
            np.testing.assert_array_equal(npv(r), e.double().numpy())
            assert tt(r).dtype == e.dtype
    assert str(torch.square(torch.tensor([True])).dtype).endswith(NAMES[tl.square(tl.tensor([True])).dtype])


# ------------------------------------------------------------ *_copy operators


def test_view_copies():
    a = vals((3, 4, 5))
    x = mk(a)
    cases = [(tl.alias_copy(x), a), (tl.diagonal_copy(x, 1, 0, 2), np.diagonal(a, 1, 0, 2)),
             (tl.expand_copy(mk(a[:1]), [2, 4, 5]), np.broadcast_to(a[:1], (2, 4, 5))),
             (tl.permute_copy(x, [2, 0, 1]), a.transpose(2, 0, 1)), (tl.t_copy(x[0]), a[0].T),
             (tl.transpose_copy(x, 0, -1), a.swapaxes(0, 2)), (tl.unsqueeze_copy(x, 1), a[:, None]),
             (tl.squeeze_copy(mk(a[:1, :, :1])), a[0, :, 0]), (tl.squeeze_copy(mk(a[:1]), 0), a[0]),
             (tl.squeeze_copy(mk(a[:1, :, :1]), [0, 2]), a[0, :, 0]),
             (tl.view_copy(x, [12, 5]), a.reshape(12, 5)), (tl.view_copy(x.transpose(0, 1), [-1]), a.swapaxes(0, 1).ravel()),
             (tl.as_strided_copy(x, [2, 2], [5, 1], 3), np.lib.stride_tricks.as_strided(a.ravel()[3:], (2, 2), (40, 8))),
             (tl.narrow_copy(x, 2, 1, 3), a[:, :, 1:4]), (x.narrow_copy(-1, 0, 0), a[:, :, :0])]
    for r, e in cases:
        same(r, e)
        assert r.is_contiguous() and r.data_ptr() != x.data_ptr()
    pieces(tl.split_with_sizes_copy(x, [1, 3], 1), np.split(a, [1], 1))
    pieces(tl.unbind_copy(x, 2), [a[:, :, i] for i in range(5)])
    assert all(p.is_contiguous() for p in tl.unbind_copy(x, 2))
    raises(RuntimeError, "start (2) + length (4) exceeds dimension size (5).", lambda: tl.narrow_copy(x, 2, 2, 4))


def test_scatters():
    a, s = vals((4, 5)), vals((4,))
    x = mk(a)
    e = a.copy()
    e[:, 2] = s
    same(tl.select_scatter(x, mk(s), 1, 2), e)
    same(x.select_scatter(mk(s), 1, -3), e)
    e = a.copy()
    e[1:4:2] = a[:2] + 1
    same(tl.slice_scatter(x, mk(a[:2] + 1), 0, 1, None, 2), e)
    e = a.copy()
    e[:, 3:] = 7
    same(tl.slice_scatter(x.t(), mk(np.full((2, 4), 7.0)), 0, 3).t(), e)
    e = a.copy()
    np.fill_diagonal(e[:, 1:], -1)
    same(tl.diagonal_scatter(x, mk(-np.ones(4)), 1), e)
    same(x, a)   # self untouched
    raises(RuntimeError, "expected src to have a size equal to the slice of self. src size = [3], slice size = [4]",
           lambda: tl.select_scatter(x, mk(vals((3,))), 1, 0))


def test_factories():
    r = tl.scalar_tensor(3)
    assert r.shape == () and r.dtype is tl.float32 and r.item() == 3
    assert tl.scalar_tensor(True, dtype=tl.int64).item() == 1
    assert tl.scalar_tensor(2.5, dtype=tl.float64).dtype is tl.float64
    e = tl.empty_permuted((2, 3, 4), (2, 0, 1))
    assert tuple(e.shape) == (2, 3, 4) and e.stride() == (3, 1, 6)
    raises(RuntimeError, "Number of dimensions in size does not match the length of the physical_layout; i.e. "
           "len(size) = 2 is not equal to len(physical_layout) = 3", lambda: tl.empty_permuted((2, 3), (0, 1, 2)))
    raises(RuntimeError, "Duplicate dim not allowed", lambda: tl.empty_permuted((2, 3), (0, 0)))
    x = mk(vals((2,)), tl.int32)
    n = x.new_empty_strided((2, 3), (1, 2))
    assert n.dtype is tl.int32 and n.stride() == (1, 2)
    assert x.new_empty_strided((2,), (1,), dtype=tl.float64).dtype is tl.float64


def test_copy_and_scatter_gradients():
    a = R.standard_normal((3, 4))
    assert _gc(lambda x: tl.diagonal_copy(x, 1) * 2, a)
    assert _gc(lambda x: tl.permute_copy(x, [1, 0]) + tl.t_copy(x) + tl.transpose_copy(x, 0, 1), a)
    assert _gc(lambda x: tl.expand_copy(x[:1], [2, 4]) + tl.view_copy(x, [4, 3]).t()[:1], a)
    assert _gc(lambda x: tl.unbind_copy(x, 1)[2] + tl.split_with_sizes_copy(x, [1, 2])[1].sum(0)[:3], a)
    assert _gc(lambda x, s: tl.select_scatter(x, s[0], 0, 1), a, a)
    assert _gc(lambda x, s: tl.slice_scatter(x, s[:, 1:3], 1, 1, 3), a, a)
    assert _gc(lambda x, s: tl.diagonal_scatter(x, s[0, :3]), a, a)


# ---------------------------------------------------------------- integration


def test_trapezoid():
    y = R.standard_normal((3, 5))
    x = np.sort(R.standard_normal(5))
    Y = mk(y, tl.float64)
    np.testing.assert_allclose(npv(tl.trapezoid(Y, mk(x, tl.float64))), np.trapezoid(y, x), rtol=1e-12)
    np.testing.assert_allclose(npv(tl.trapezoid(Y, dx=0.5, dim=0)), np.trapezoid(y, dx=0.5, axis=0), rtol=1e-12)
    np.testing.assert_allclose(npv(tl.trapz(Y.t(), dx=2.0, dim=0)), np.trapezoid(y.T, dx=2.0, axis=0), rtol=1e-12)
    X = R.standard_normal((3, 5))
    np.testing.assert_allclose(npv(tl.trapz(Y, mk(X, tl.float64))), np.trapezoid(y, X), rtol=1e-12)
    y3 = R.standard_normal((2, 3, 5))   # x with fewer dims: ones in front
    np.testing.assert_allclose(npv(tl.trapezoid(mk(y3, tl.float64), mk(X, tl.float64))), np.trapezoid(y3, X),
                               rtol=1e-12)
    same(tl.trapezoid(mk(np.zeros((3, 0)))), np.zeros(3))
    assert tl.trapezoid(mk(np.arange(4.0), tl.int64)).dtype is tl.float32
    raises(RuntimeError, "trapezoid: There must be one `x` value for each sample point",
           lambda: tl.trapezoid(Y, mk(x[:4])))
    raises(RuntimeError, "trapezoid: received a bool input for `y`, but bool is not supported",
           lambda: tl.trapezoid(mk(y, tl.bool)))
    raises(RuntimeError, "trapezoid: Currently, we only support dx as a real number.", lambda: tl.trapezoid(Y, dx=True))
    raises(IndexError, "Dimension specified as -1 but tensor has no dimensions",
           lambda: tl.trapezoid(mk(np.float64(1.0))))


def test_cumulative_trapezoid():
    y = R.standard_normal((3, 5))
    x = np.sort(R.standard_normal(5))
    Y = mk(y, tl.float64)
    dy = (y[:, 1:] + y[:, :-1]) / 2
    np.testing.assert_allclose(npv(tl.cumulative_trapezoid(Y, mk(x, tl.float64))), np.cumsum(dy * np.diff(x), 1),
                               rtol=1e-12)
    np.testing.assert_allclose(npv(tl.cumulative_trapezoid(Y, dx=3)), np.cumsum(dy * 3, 1), rtol=1e-12)
    np.testing.assert_allclose(npv(tl.cumulative_trapezoid(Y, dim=0)),
                               np.cumsum((y[1:] + y[:-1]) / 2, 0), rtol=1e-12)
    raises(RuntimeError, "cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported",
           lambda: tl.cumulative_trapezoid(Y, mk(x, tl.bool)))


def test_integration_gradients():
    y, x = R.standard_normal((3, 4)), np.sort(R.standard_normal(4))
    assert _gc(lambda a, b: tl.trapezoid(a, b), y, x)
    assert _gc(lambda a: tl.trapz(a, dx=0.3, dim=0), y)
    assert _gc(lambda a, b: tl.cumulative_trapezoid(a, b), y, x)
    assert _gc(lambda a: tl.cumulative_trapezoid(a.t(), dx=2), y)


def test_rdiv():
    a = vals((2, 3)) + 1
    x = mk(a, tl.float64)
    np.testing.assert_allclose(npv(x.__rdiv__(2)), 2 / a)
    np.testing.assert_allclose(npv(x.t().__rdiv__(-3.5)), -3.5 / a.T)
    b = vals((3,)) + 1
    np.testing.assert_allclose(npv(x.__rdiv__(mk(b, tl.float64))), b / a)   # a tensor: other / self
    np.testing.assert_allclose(npv(x.__rtruediv__(mk(b, tl.float64))), b / a)
    assert x.__rdiv__("a") is NotImplemented


def test_unravel_index():
    shape = (3, 4, 5)
    flat = R.integers(0, 60, size=(2, 7))
    got = tl.unravel_index(tl.tensor(flat), shape)
    assert isinstance(got, tuple) and len(got) == 3
    for g, e in zip(got, np.unravel_index(flat, shape)):
        same(g, e, tl.int64)
    same(tl.unravel_index(tl.tensor(7, dtype=tl.int32), 5)[0], np.array(2), tl.int64)
    for g, e in zip(tl.unravel_index(tl.tensor([-1, 13]), (4, 5)), ([3, 2], [4, 3])):
        same(g, np.array(e), tl.int64)   # negative indices count from the end (floor division)
    with pytest.raises(TypeError, match="^expected 'indices' to be integer dtype, but got torchlet.float32$"):
        tl.unravel_index(tl.tensor([1.0]), (2,))
    with pytest.raises(TypeError, match="^expected 'shape' sequence to only contain ints, but got <class 'float'>$"):
        tl.unravel_index(tl.tensor([1]), (2.0,))
    with pytest.raises(ValueError, match=r"^'shape' cannot have negative values, but got \(2, -1\)$"):
        tl.unravel_index(tl.tensor([1]), (2, -1))


def test_vdot():
    a, b = R.standard_normal(5), R.standard_normal(5)
    r = tl.vdot(mk(a, tl.float64), mk(b, tl.float64))
    assert r.shape == () and r.dtype is tl.float64
    np.testing.assert_allclose(r.item(), np.vdot(a, b), rtol=1e-12)
    np.testing.assert_allclose(mk(a).vdot(mk(b)[::1]).item(), np.vdot(a, b), rtol=1e-5)
    raises(RuntimeError, "1D tensors expected, but got 2D and 1D tensors", lambda: tl.vdot(mk(vals((2, 2))), mk(a)))
    raises(RuntimeError, "dot : expected both vectors to have same dtype, but found Float and Double",
           lambda: tl.vdot(mk(a), mk(b, tl.float64)))
    assert _gc(lambda x, y: tl.vdot(x, y), a, b)


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
def test_combinations(r):
    import itertools
    a = vals((4,))
    for rep, gen in ((False, itertools.combinations), (True, itertools.combinations_with_replacement)):
        got = tl.combinations(mk(a), r, with_replacement=rep)
        want = np.array(list(gen(a, r))) if r else np.zeros(0)
        if r and not len(want):
            want = np.zeros((0, r))
        same(got, want, tl.float32)
    same(tl.combinations(mk(a, tl.int64)[::2]), np.array(list(itertools.combinations(a[::2], 2))), tl.int64)


def test_combinations_errors_and_grad():
    raises(RuntimeError, "Expect a 1D vector, but got shape [2, 2]", lambda: tl.combinations(mk(vals((2, 2)))))
    raises(RuntimeError, "Expect a non-negative number, but got -1", lambda: tl.combinations(mk(vals((3,))), -1))
    assert _gc(lambda x: tl.combinations(x, 2) * 1.5, R.standard_normal(4))
    assert _gc(lambda x: tl.combinations(x, 3, True).sum(1), R.standard_normal(3))


def test_nonzero_static():
    a = (vals((3, 4)) > 60).astype(np.float64)
    nz = np.argwhere(a)
    for size in (0, 2, len(nz), len(nz) + 3):
        want = np.full((size, 2), -1)
        want[:min(size, len(nz))] = nz[:size]
        same(tl.nonzero_static(mk(a), size=size), want, tl.int64)
    same(mk(a).t().nonzero_static(size=4, fill_value=9)[:1], np.argwhere(a.T)[:1], tl.int64)
    same(tl.nonzero_static(mk(np.float64(2.0)), size=2), np.zeros((2, 0)), tl.int64)
    raises(RuntimeError, "nonzero_static: 'size' must be an non-negative integer, but got size: -1",
           lambda: tl.nonzero_static(mk(a), size=-1))
